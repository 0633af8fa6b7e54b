package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/source"
)

// writer changes a fixture copy the way OpenCode does: every change to a
// session's messages or parts appends an event of that session in the same
// transaction (its projector), except where a step says it plays another
// writer.
type writer struct {
	t   *testing.T
	db  *sql.DB
	now int64 // the writer's clock, ms; each write moves it on
	n   int   // ids made
}

func newWriter(t *testing.T, path string) *writer {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &writer{t: t, db: db, now: time.Now().UnixMilli()}
}

func (w *writer) exec(q string, args ...any) {
	w.t.Helper()
	if _, err := w.db.Exec(q, args...); err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
}

func (w *writer) id(prefix string) string {
	w.n++
	return fmt.Sprintf("%s_zz%08d", prefix, w.n)
}

func (w *writer) tick() int64 { w.now += 7; return w.now }

// event appends an event of session sid, as OpenCode's projector does.
func (w *writer) event(sid, typ string) {
	w.t.Helper()
	w.exec(`INSERT INTO event_sequence(aggregate_id, seq) VALUES (?, 0)
		ON CONFLICT(aggregate_id) DO UPDATE SET seq = seq + 1`, sid)
	w.exec(`INSERT INTO event(id, aggregate_id, seq, type, data)
		VALUES (?, ?, (SELECT seq FROM event_sequence WHERE aggregate_id = ?), ?, '{}')`, w.id("evt"), sid, sid, typ)
}

func (w *writer) one(q string, args ...any) string {
	w.t.Helper()
	var v string
	if err := w.db.QueryRow(q, args...).Scan(&v); err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
	return v
}

// anySession is a random session that has parts.
func (w *writer) anySession(r *rand.Rand) string {
	return w.one(`SELECT session_id FROM part GROUP BY session_id ORDER BY session_id LIMIT 1 OFFSET ?`,
		r.Intn(atoi(w.one(`SELECT count(DISTINCT session_id) FROM part`))))
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

func (w *writer) addPart(sid string, event bool) {
	msg := w.one(`SELECT id FROM message WHERE session_id = ? ORDER BY id DESC LIMIT 1`, sid)
	t := w.tick()
	w.exec(`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, '{"type":"text","text":"added"}')`,
		w.id("prt"), msg, sid, t, t)
	if event {
		w.event(sid, "message.part.updated.1")
	}
}

func (w *writer) updatePart(sid string, event bool) {
	w.exec(`UPDATE part SET data = '{"type":"text","text":"changed"}', time_updated = ? WHERE id = (SELECT id FROM part WHERE session_id = ? ORDER BY id LIMIT 1)`, w.tick(), sid)
	if event {
		w.event(sid, "message.part.updated.1")
	}
}

func (w *writer) updateMessage(sid string) {
	w.exec(`UPDATE message SET time_updated = ? WHERE id = (SELECT id FROM message WHERE session_id = ? ORDER BY id DESC LIMIT 1)`, w.tick(), sid)
	w.event(sid, "message.updated.1")
}

func (w *writer) deleteNewestPart(event bool) {
	sid := w.one(`SELECT session_id FROM part ORDER BY rowid DESC LIMIT 1`)
	w.exec(`DELETE FROM part WHERE rowid = (SELECT max(rowid) FROM part)`)
	if event {
		w.event(sid, "message.part.removed.1")
	}
}

func (w *writer) deleteOldPart(sid string, event bool) {
	w.exec(`DELETE FROM part WHERE id = (SELECT id FROM part WHERE session_id = ? ORDER BY id LIMIT 1)`, sid)
	if event {
		w.event(sid, "message.part.removed.1")
	}
}

// importSession adds a session with a message and parts and no events, as
// `opencode import` does.
func (w *writer) importSession() {
	sid, mid := w.id("ses"), w.id("msg")
	t := w.tick()
	w.exec(`INSERT INTO session(id, project_id, slug, directory, title, version, time_created, time_updated)
		SELECT ?, project_id, 'imported', directory, 'imported', version, ?, ? FROM session LIMIT 1`, sid, t, t)
	w.exec(`INSERT INTO message(id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, '{"role":"user","time":{"created":1}}')`, mid, sid, t, t)
	for range 3 {
		w.exec(`INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, '{"type":"text","text":"imported"}')`, w.id("prt"), mid, sid, t, t)
	}
}

// deleteSession removes a session with its rows and events (OpenCode's
// cascade; the test's handle does not enforce foreign keys).
func (w *writer) deleteSession(sid string) {
	for _, q := range []string{`DELETE FROM part WHERE session_id = ?`, `DELETE FROM message WHERE session_id = ?`,
		`DELETE FROM event WHERE aggregate_id = ?`, `DELETE FROM event_sequence WHERE aggregate_id = ?`, `DELETE FROM session WHERE id = ?`} {
		w.exec(q, sid)
	}
}

// tracker follows a source from sync to sync as the engine does: the mark
// and the stamps of the last call.
type tracker struct {
	t    *testing.T
	s    *Source
	mark string
	old  map[string]string
}

// next reads the stamps since the last call, checks them against a whole
// walk, and returns how they were read.
func (tr *tracker) next(step string) source.Stamped {
	tr.t.Helper()
	read := listAndStamp(tr.t, step, tr.s, tr.mark, tr.old)
	got := read.Stamps
	want, err := tr.s.Stamps(context.Background())
	if err != nil {
		tr.t.Fatal(err)
	}
	if len(got) != len(want) {
		tr.t.Errorf("%s: %d stamps, a whole walk gives %d", step, len(got), len(want))
	}
	for id, st := range want {
		if got[id] != st {
			tr.t.Errorf("%s: session %s stamped %q, a whole walk gives %q", step, id, got[id], st)
		}
	}
	tr.mark, tr.old = read.Next, got
	return read
}

// startTracking opens a copy of a fixture, a writer on it, and a tracker
// that has made its first (whole) call.
func startTracking(t *testing.T, fixture string) (*tracker, *writer) {
	path := copyFixture(t, fixture)
	tr := &tracker{t: t, s: open(t, path)}
	w := newWriter(t, path)
	tr.next("first")
	return tr, w
}

// A sync after a write reads only the sessions written to, and its stamps
// are those of a whole walk, whatever OpenCode wrote: parts streamed in
// place, new parts and messages, deletions (the newest row's too, whose
// rowid a new row may take), renames, sessions imported without events or
// deleted.
func TestStampsSinceReadOnlyWhatChanged(t *testing.T) {
	path := copyFixture(t, "v1")
	s := open(t, path)
	w := newWriter(t, path)
	tr := &tracker{t: t, s: s}
	if r := tr.next("first"); !r.Walked {
		t.Fatalf("first call: %d lookups, want a whole walk (no mark)", r.Lookups)
	}
	if r := tr.next("nothing written"); r.Walked || r.Lookups != 0 {
		t.Errorf("nothing written: walked %v after %d lookups, want no walk and no lookup", r.Walked, r.Lookups)
	}
	rnd := rand.New(rand.NewSource(1))
	a, b := w.anySession(rnd), ""
	for b = w.anySession(rnd); b == a; b = w.anySession(rnd) {
	}
	steps := []struct {
		name    string
		write   func()
		lookups int // sessions looked up; -1: a whole walk
	}{
		{"a part streamed in place", func() { w.updatePart(a, true) }, 1},
		{"a message finished", func() { w.updateMessage(b) }, 1},
		{"a new part", func() { w.addPart(a, true) }, 1},
		{"two sessions written", func() { w.addPart(a, true); w.updatePart(b, true) }, 2},
		{"the newest part removed", func() { w.deleteNewestPart(true) }, 1},
		{"the newest part removed and its rowid taken by another session", func() {
			w.deleteNewestPart(true)
			w.addPart(b, true)
		}, 2},
		{"an old part removed", func() { w.deleteOldPart(b, true) }, 1},
		{"a part removed by a writer without events", func() { w.deleteOldPart(a, false) }, 1},
		{"a session imported", func() { w.importSession() }, 1},
		{"a rename", func() {
			w.exec(`UPDATE session SET title = 'renamed, longer than before', time_updated = ? WHERE id = ?`, w.tick(), a)
			w.event(a, "session.updated.1")
		}, 1},
		{"a rename by a writer without events", func() {
			w.exec(`UPDATE session SET title = 'renamed again', time_updated = ? WHERE id = ?`, w.tick(), a)
		}, 0},
		{"a session deleted (not the last written)", func() { w.deleteSession(b) }, 0},
		{"the newest events deleted with their session", func() {
			w.deleteSession(w.one(`SELECT aggregate_id FROM event ORDER BY rowid DESC LIMIT 1`))
		}, -1},
	}
	for _, st := range steps {
		st.write()
		r := tr.next(st.name)
		switch {
		case st.lookups < 0 && !r.Walked:
			t.Errorf("%s: %d lookups, want a whole walk", st.name, r.Lookups)
		case st.lookups >= 0 && (r.Walked || r.Lookups != st.lookups):
			t.Errorf("%s: walked %v after %d lookups, want %d lookups", st.name, r.Walked, r.Lookups, st.lookups)
		}
	}

	// A mark a day old, or of another file, is not used.
	var m changeMark
	if err := json.Unmarshal([]byte(tr.mark), &m); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*changeMark){
		"a day old":       func(m *changeMark) { m.Walked -= wholeWalkEvery.Milliseconds() },
		"another file":    func(m *changeMark) { m.Identity += "x" },
		"an older format": func(m *changeMark) { m.V = 0 },
	} {
		c := m
		change(&c)
		b, _ := json.Marshal(c)
		tr.mark = string(b)
		if r := tr.next(name); !r.Walked {
			t.Errorf("a mark of %s: %d lookups, want a whole walk", name, r.Lookups)
		}
	}
}

// randomWrites makes one to four random writes in OpenCode's manner, each
// with its session's event except an archive when archiveEvent is false (a
// writer without events).
func (w *writer) randomWrites(rnd *rand.Rand, archiveEvent bool) {
	for range 1 + rnd.Intn(4) {
		sid := w.anySession(rnd)
		switch rnd.Intn(7) {
		case 0:
			w.updatePart(sid, true)
		case 1:
			w.addPart(sid, true)
		case 2:
			w.updateMessage(sid)
		case 3:
			w.deleteNewestPart(true)
		case 4:
			w.deleteOldPart(sid, true)
		case 5:
			w.importSession()
		case 6:
			w.exec(`UPDATE session SET time_archived = ?, time_updated = ? WHERE id = ?`, w.tick(), w.tick(), sid)
			if archiveEvent {
				w.event(sid, "session.updated.1")
			}
		}
	}
}

// Random writes in OpenCode's manner, several between two calls: the
// stamps always equal a whole walk's.
func TestStampsSinceAgreesWithAWholeWalk(t *testing.T) {
	tr, w := startTracking(t, "v1")
	rnd := rand.New(rand.NewSource(7))
	walks := 0
	for i := range 60 {
		w.randomWrites(rnd, false)
		if r := tr.next(fmt.Sprintf("round %d", i)); r.Walked {
			walks++
		}
		if t.Failed() {
			return
		}
	}
	if walks > 0 {
		t.Errorf("%d of 60 rounds walked every table; none should", walks)
	}
}

// The change tracking needs OpenCode's event log; a history without one is
// walked every time (and gives no mark).
func TestStampsSinceWithoutAnEventLogWalks(t *testing.T) {
	path := copyFixture(t, "v1")
	w := newWriter(t, path)
	w.exec(`DROP TABLE event`)
	w.exec(`DROP TABLE event_sequence`)
	s := open(t, path)
	tr := &tracker{t: t, s: s}
	tr.next("first")
	if tr.mark != "" {
		t.Errorf("mark %q without an event log, want none", tr.mark)
	}
	w.updatePart(w.anySession(rand.New(rand.NewSource(1))), false)
	if r := tr.next("a part updated"); !r.Walked {
		t.Errorf("%d lookups, want a whole walk", r.Lookups)
	}
}

// The stamp's format is what every index holds: a change would make the
// first sync after an upgrade re-read every session (at 845k parts, longer
// than a cold index). parseStamp reads back what stamp wrote.
func TestStampFormatIsKept(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	for range 2000 {
		n := func() int64 { return rnd.Int63n(1 << uint(1+rnd.Intn(62))) }
		r := stampRow{upd: n(), arch: n(), titleLen: int(n() % 1000), revert: []string{"", "msg_228a8fc9c001IZZtxQHN5zh0Ls"}[rnd.Intn(2)],
			m: agg{n(), n()}, p: agg{n(), n()}, v: agg{n(), n()}}
		want := fmt.Sprintf("%d/%d/%d:%d/%d:%d/%d:%d/%d/%s", r.upd, r.arch, r.m.n, r.m.max, r.p.n, r.p.max, r.v.n, r.v.max, r.titleLen, r.revert)
		if got := r.stamp(); got != want {
			t.Fatalf("stamp %q, the stored format is %q", got, want)
		}
		f, ok := parseStamp(want)
		if !ok || f.m != r.m || f.p != r.p || f.v != r.v {
			t.Fatalf("parseStamp(%q) = %+v, %v", want, f, ok)
		}
	}
}

// The v2 engine's session_message rows are tracked the same way: a row
// appended, one updated in place and the newest removed, each with its
// session's event.
func TestStampsSinceFollowsSessionMessages(t *testing.T) {
	tr, w := startTracking(t, "v2")
	sid := w.one(`SELECT session_id FROM session_message ORDER BY rowid LIMIT 1`)
	steps := []struct {
		name  string
		write func()
	}{
		{"a message appended", func() {
			w.exec(`INSERT INTO session_message(id, session_id, type, seq, time_created, time_updated, data)
				SELECT ?, session_id, 'user', (SELECT max(seq) + 1 FROM session_message WHERE session_id = ?), ?, ?, data FROM session_message WHERE session_id = ? LIMIT 1`,
				w.id("msg"), sid, w.tick(), w.now, sid)
			w.event(sid, "session.next.prompted.1")
		}},
		{"a message updated in place", func() {
			w.exec(`UPDATE session_message SET time_updated = ? WHERE id = (SELECT id FROM session_message WHERE session_id = ? ORDER BY seq LIMIT 1)`, w.tick(), sid)
			w.event(sid, "session.next.text.ended.1")
		}},
		{"the newest message removed", func() {
			w.exec(`DELETE FROM session_message WHERE rowid = (SELECT max(rowid) FROM session_message)`)
			w.event(sid, "session.next.reverted.1")
		}},
	}
	for _, st := range steps {
		st.write()
		if r := tr.next(st.name); r.Walked || r.Lookups != 1 {
			t.Errorf("%s: walked %v after %d lookups, want 1 lookup", st.name, r.Walked, r.Lookups)
		}
	}
}

// lister follows a source from sync to sync the way the engine does once
// it has a mark: SessionsSince while the source can tell what changed, a
// listing of every session (Sessions, StampsSince) when it declines; known
// is every session's stamp as the syncs so far read it.
type lister struct {
	t     *testing.T
	s     *Source
	mark  string
	known map[string]string
}

// list is a sync that lists every session.
func (l *lister) list() {
	l.t.Helper()
	read := listAndStamp(l.t, "a listing", l.s, l.mark, l.known)
	l.mark, l.known = read.Next, read.Stamps
}

// listAndStamp is a sync's listing: every session (ListSessions) and the
// stamps read since mark (StampsSince), old holding those it read then.
func listAndStamp(t *testing.T, step string, s *Source, mark string, old map[string]string) source.Stamped {
	t.Helper()
	ctx := context.Background()
	sessions, listing, err := s.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	read, err := s.StampsSince(ctx, mark, old, sessions, listing)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return read
}

// next is a sync after a write: what SessionsSince returned (ok false: it
// declined, and the sync listed every session). Either way, every stamp
// known after it must be a whole walk's.
func (l *lister) next(step string) (changed []string, ok bool) {
	l.t.Helper()
	ctx := context.Background()
	ch, ok, err := l.s.SessionsSince(ctx, l.mark)
	if err != nil {
		l.t.Fatalf("%s: %v", step, err)
	}
	if ok {
		for _, ss := range ch.Sessions {
			changed = append(changed, ss.ID)
			l.known[ss.ID] = ch.Stamps[ss.ID]
		}
		sort.Strings(changed)
		l.mark = ch.Next
		if ch.Total != len(l.known) {
			l.t.Errorf("%s: Total %d, the history holds %d sessions", step, ch.Total, len(l.known))
		}
	} else {
		l.list()
	}
	want, err := l.s.Stamps(ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	if len(l.known) != len(want) {
		l.t.Errorf("%s: %d sessions known, a whole walk gives %d", step, len(l.known), len(want))
	}
	for id, st := range want {
		if l.known[id] != st {
			l.t.Errorf("%s (ok %v): session %s stamped %q, a whole walk gives %q", step, ok, id, l.known[id], st)
		}
	}
	return changed, ok
}

// A sync after OpenCode's writes reads only the sessions written to, found
// through the event log, new rowids and the session count, and their
// stamps are a whole walk's; it declines what only a listing can tell.
func TestSessionsSinceReturnsWhatChanged(t *testing.T) {
	path := copyFixture(t, "v1")
	w := newWriter(t, path)
	l := &lister{t: t, s: open(t, path)}
	if _, ok, err := l.s.SessionsSince(context.Background(), ""); ok || err != nil {
		t.Fatalf("no mark: ok %v, err %v; want declined", ok, err)
	}
	l.list()
	rnd := rand.New(rand.NewSource(1))
	a, b := w.anySession(rnd), ""
	for b = w.anySession(rnd); b == a; b = w.anySession(rnd) {
	}
	imported := func() string { return w.one(`SELECT id FROM session ORDER BY rowid DESC LIMIT 1`) }
	var newest string
	steps := []struct {
		name  string
		write func()
		want  func() []string // nil: declined
	}{
		{"nothing written", func() {}, func() []string { return []string{} }},
		{"a part streamed in place", func() { w.updatePart(a, true) }, func() []string { return []string{a} }},
		{"a message finished", func() { w.updateMessage(b) }, func() []string { return []string{b} }},
		{"two sessions written", func() { w.addPart(a, true); w.updatePart(b, true) }, func() []string { return sorted(a, b) }},
		{"an old part removed", func() { w.deleteOldPart(b, true) }, func() []string { return []string{b} }},
		{"a session imported (no events)", func() { w.importSession() }, func() []string { return []string{imported()} }},
		{"a rename", func() {
			w.exec(`UPDATE session SET title = 'renamed, longer than before', time_updated = ? WHERE id = ?`, w.tick(), a)
			w.event(a, "session.updated.1")
		}, func() []string { return []string{a} }},
		{"an archive", func() {
			w.exec(`UPDATE session SET time_archived = ?, time_updated = ? WHERE id = ?`, w.tick(), w.now, b)
			w.event(b, "session.updated.1")
		}, func() []string { return []string{b} }},
		{"the newest part removed (a revert)", func() {
			newest = w.one(`SELECT session_id FROM part ORDER BY rowid DESC LIMIT 1`)
			w.deleteNewestPart(true)
		}, func() []string { return []string{newest} }},
		{"a part added in its rowid", func() { w.addPart(a, true) }, func() []string { return []string{a} }},
		{"a session deleted", func() { w.deleteSession(b) }, nil},
		{"a part added after the deletion", func() { w.addPart(a, true) }, func() []string { return []string{a} }},
	}
	for _, st := range steps {
		st.write()
		got, ok := l.next(st.name)
		switch want := st.want; {
		case want == nil && ok:
			t.Errorf("%s: returned %v, want declined (a listing tells)", st.name, got)
		case want != nil && !ok:
			t.Errorf("%s: declined, want %v", st.name, want())
		case want != nil && !slices.Equal(got, want()) && !(len(got) == 0 && len(want()) == 0):
			t.Errorf("%s: returned %v, want %v", st.name, got, want())
		}
	}

	// A mark whose listing is listEvery old, or of another file, is not
	// used: a writer without events is found by the listing.
	w.exec(`UPDATE session SET title = 'renamed without an event' WHERE id = ?`, a)
	var m changeMark
	if err := json.Unmarshal([]byte(l.mark), &m); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*changeMark){
		"a listing listEvery old": func(m *changeMark) { m.Listed -= listEvery.Milliseconds() },
		"another file":            func(m *changeMark) { m.Identity += "x" },
		"an older format":         func(m *changeMark) { m.V = 0 },
		"version 1":               func(m *changeMark) { *m = changeMark{V: 1, Identity: m.Identity, Walked: m.Walked, Tables: m.Tables} },
	} {
		c := m
		change(&c)
		b, _ := json.Marshal(c)
		if _, ok, err := l.s.SessionsSince(context.Background(), string(b)); ok || err != nil {
			t.Errorf("a mark of %s: ok %v, err %v; want declined", name, ok, err)
		}
	}
	aged := m
	aged.Listed -= listEvery.Milliseconds()
	js, _ := json.Marshal(aged)
	l.mark = string(js)
	if _, ok := l.next("a rename by a writer without events, once a listing is due"); ok {
		t.Error("a listing was due; SessionsSince answered")
	}
}

func sorted(ids ...string) []string { slices.Sort(ids); return ids }

// An index synced before SessionsSince holds a mark of version 1 (no
// listing, no Seen): the first sync after the upgrade reads what changed
// from it without walking every table, and SessionsSince, declining it,
// answers from the mark that sync records.
func TestVersion1MarkIsReadWithoutAWalk(t *testing.T) {
	tr, w := startTracking(t, "v1")
	var m changeMark
	if err := json.Unmarshal([]byte(tr.mark), &m); err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(map[string]any{"v": 1, "identity": m.Identity, "walked": m.Walked, "tables": m.Tables})
	tr.mark = string(old)
	sid := w.anySession(rand.New(rand.NewSource(2)))
	w.updatePart(sid, true)
	if _, ok, err := tr.s.SessionsSince(context.Background(), tr.mark); ok || err != nil {
		t.Fatalf("SessionsSince on a version-1 mark: ok %v, err %v; want declined", ok, err)
	}
	if r := tr.next("the first sync after the upgrade"); r.Walked || r.Lookups != 1 {
		t.Errorf("the first sync after the upgrade: walked %v after %d lookups, want 1 lookup", r.Walked, r.Lookups)
	}
	w.updatePart(sid, true)
	ch, ok, err := tr.s.SessionsSince(context.Background(), tr.mark)
	if err != nil || !ok || len(ch.Sessions) != 1 || ch.Sessions[0].ID != sid {
		t.Errorf("the sync after it: %+v, ok %v, err %v; want the session written to", ch.Sessions, ok, err)
	}
}

// A session inserted or deleted while a sync lists the others (after
// ListSessions, before StampsSince reads the tables' marks) is found by the
// next sync.
func TestSessionsSinceFindsWhatChangedDuringAListing(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		path := copyFixture(t, "v1")
		w := newWriter(t, path)
		l := &lister{t: t, s: open(t, path)}
		l.list()
		ctx := context.Background()
		sessions, listing, err := l.s.ListSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sid := sessions[len(sessions)/2].ID
		if deleted {
			w.deleteSession(sid)
		} else {
			w.importSession()
			sid = w.one(`SELECT id FROM session ORDER BY rowid DESC LIMIT 1`)
		}
		read, err := l.s.StampsSince(ctx, l.mark, l.known, sessions, listing)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := read.Stamps[sid]; ok != deleted {
			t.Fatal("the listing already holds the change; the test proves nothing")
		}
		l.mark, l.known = read.Next, read.Stamps
		got, ok := l.next("after the listing")
		switch {
		case deleted && ok:
			t.Errorf("a session deleted during the listing: returned %v; want declined (the next listing drops it)", got)
		case !deleted && (!ok || !slices.Equal(got, []string{sid})):
			t.Errorf("returned %v (ok %v), want the session inserted during the listing, %s", got, ok, sid)
		}
	}
}

// Random writes in OpenCode's manner (each with its session's event, the
// newest part's removal included), several between two syncs: what the
// syncs know always equals a whole walk, and every sync reads only what
// changed.
func TestSessionsSinceAgreesWithAWholeWalk(t *testing.T) {
	for _, fx := range []string{"v1", "v2"} {
		path := copyFixture(t, fx)
		w := newWriter(t, path)
		l := &lister{t: t, s: open(t, path)}
		l.list()
		rnd := rand.New(rand.NewSource(7))
		for i := range 60 {
			w.randomWrites(rnd, true)
			if _, ok := l.next(fmt.Sprintf("%s round %d", fx, i)); !ok {
				t.Errorf("%s round %d: declined; OpenCode's writes need no listing", fx, i)
			}
			if t.Failed() {
				return
			}
		}
	}
}

// A whole walk gives every row the aggregates a lookup of that session
// gives, and zero for a table holding none of its rows, whatever the row
// held before (rows carry an old stamp's aggregates until StampsSince
// decides to walk instead of looking up).
func TestWalkAggregatesAgreesWithLookups(t *testing.T) {
	for _, name := range []string{"v1", "v2"} {
		s := open(t, copyFixture(t, name))
		ctx := context.Background()
		sessions, err := s.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		walked, looked := stampRows(sessions), stampRows(sessions)
		if len(walked) < 2 {
			t.Fatalf("%s: %d sessions, want several", name, len(walked))
		}
		all := make([]int, len(looked))
		for i := range walked {
			all[i] = i
			walked[i].m, walked[i].p, walked[i].v = agg{99, 99}, agg{98, 98}, agg{97, 97}
		}
		if err := s.walkAggregates(ctx, walked); err != nil {
			t.Fatal(err)
		}
		if err := s.lookUpAggregates(ctx, looked, all); err != nil {
			t.Fatal(err)
		}
		counted := false
		for i := range walked {
			if walked[i] != looked[i] {
				t.Errorf("%s, session %s: walked %+v, looked up %+v", name, walked[i].id, walked[i], looked[i])
			}
			counted = counted || walked[i].m.n > 0 || walked[i].v.n > 0
		}
		if !counted {
			t.Errorf("%s: no session has rows counted; the test cannot tell", name)
		}
	}
}
