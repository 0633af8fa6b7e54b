package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/source"
)

// The OpenCode reader tells a sync what changed (source.ChangeTracker).
var _ source.ChangeTracker = (*Source)(nil)

// A sync after any write to the history used to recompute every session's
// stamp by walking the whole message and part tables: 2.0-2.4 s at 845k
// parts on the benchmark machine, and the server does it at least every
// few seconds while OpenCode streams a turn. StampsSince reads only what
// changed since the last sync's mark. What it relies on, checked on
// OpenCode 1.18.33 (its projector, and the fixtures it wrote):
//
//   - OpenCode writes every change to a session's messages and parts
//     through its event log: the row of the event table and the projected
//     row are written in one transaction, and the event's aggregate_id is
//     the session. Updates in place (a part streamed, a tool finishing, a
//     compaction marking old parts) and deletions (a revert's clean-up)
//     all append events. The one writer without events we know of,
//     `opencode import`, inserts new rows (found by rowid); an import over
//     an existing session's rows was not checked and rests on the daily
//     walk below. The session row's own fields are read whole every sync.
//   - SQLite gives an inserted row the largest rowid plus one, so rows
//     inserted since a mark have larger rowids than the mark's largest,
//     as long as the row that had it is still there (checked).
//
// Whatever else happens is caught by a count of each table (a deletion the
// new rows do not account for: each session's count is compared), and by a
// whole walk at least once a day and whenever the mark cannot be used.

// changeMarkVersion is bumped whenever the mark or the stamp format
// changes, so a mark of another format makes the next sync walk.
const changeMarkVersion = 2

// wholeWalkEvery bounds how long the stamps rest on the change signals
// alone: past it, a sync walks every table again.
const wholeWalkEvery = 24 * time.Hour

// listEvery bounds how long syncs rest on SessionsSince, which trusts the
// event log, new rowids and the session count alone: past it, a sync lists
// every session again (ListSessions and StampsSince), which also finds a
// session row a writer without events changed in place (a rename), and a
// message or part it deleted (the tables' counts).
const listEvery = 5 * time.Minute

// maxExactLookups: past this many sessions to look up one by one (or an
// eighth of the history, if more), a whole walk is cheaper. A lookup costs
// about as much as reading the session's rows through part_session_idx.
const maxExactLookups = 256

// changeMark is where a history's tables stood when a sync read them.
type changeMark struct {
	V        int    `json:"v"`
	Identity string `json:"identity"` // the file (source.Identity)
	Walked   int64  `json:"walked"`   // unix ms of the last whole walk
	Listed   int64  `json:"listed"`   // unix ms of the last sync that listed every session
	// Tables is where the tracked tables stood at the last listing (what
	// StampsSince starts from); Seen, at the last sync of either kind
	// (what SessionsSince starts from).
	Tables map[string]tableMark `json:"tables"`
	Seen   map[string]tableMark `json:"seen"`
	// Session is the session table's largest rowid and count as of the
	// last sync: rows past it are new sessions; a count short of it with
	// them, a session deleted.
	Session tableMark `json:"session"`
}

// parseMark reads a mark of this format and this file, made within the
// last day; ok false for any other. A mark of version 1 (before Listed,
// Seen and Session) holds the same tables for the same stamps, so an index
// made before them is not walked whole once more (at 4.2M parts the walk
// took minutes from a cold page cache): StampsSince reads it, and
// SessionsSince declines it for its lack of Seen.
func (s *Source) parseMark(mark string, now int64) (changeMark, bool) {
	var p changeMark
	ok := mark != "" && json.Unmarshal([]byte(mark), &p) == nil && (p.V == changeMarkVersion || p.V == 1) &&
		p.Identity == s.id.String() && time.Duration(now-p.Walked)*time.Millisecond < wholeWalkEvery && now >= p.Walked
	return p, ok
}

// tableMark is one table's largest rowid, the id of its row, and its count
// (of a table the stamps count: N is 0 for the event table).
type tableMark struct {
	Max int64  `json:"max"`
	ID  string `json:"id"`
	N   int64  `json:"n"`
}

// trackedTable is a table whose rows belong to one session, by keyCol.
type trackedTable struct {
	name, keyCol string
	counted      bool // part of the stamp: deletions are looked for
}

// trackedTables lists the tables the mark follows; none when the history
// has no event log (an OpenCode before it, whose updates in place leave no
// trace but the rows themselves).
func (s *Source) trackedTables() []trackedTable {
	if !s.hasEvents {
		return nil
	}
	t := []trackedTable{{"event", "aggregate_id", false}}
	if s.hasV1 {
		t = append(t, trackedTable{"message", "session_id", true}, trackedTable{"part", "session_id", true})
	}
	if s.hasV2 {
		t = append(t, trackedTable{"session_message", "session_id", true})
	}
	return t
}

// changes is what changesSince found.
type changes struct {
	whole   bool            // walk every table: the mark was of no use
	flagged map[string]bool // sessions whose rows may have changed
	next    changeMark
}

// changesSince reads the tables' marks now and, against prev, the sessions
// whose rows may have changed; old holds the stamps given at prev (their
// counts find deletions). Everything is read in one transaction, so the new
// mark and what was found agree; it is read before any stamp, so a write
// landing after it is found again by the next sync.
func (s *Source) changesSince(ctx context.Context, prev string, old map[string]string) (changes, error) {
	tables := s.trackedTables()
	now := time.Now().UnixMilli()
	ch := changes{whole: true, flagged: map[string]bool{}, next: changeMark{V: changeMarkVersion, Identity: s.id.String(), Walked: now, Tables: map[string]tableMark{}}}
	if len(tables) == 0 {
		return ch, nil
	}
	p, usable := s.parseMark(prev, now)
	usable = usable && len(p.Tables) == len(tables)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return ch, describeDBError(s.dbPath, err)
	}
	defer tx.Rollback()
	for _, t := range tables {
		m, err := s.lastRow(ctx, tx, t.name)
		if err != nil {
			return ch, err
		}
		// Only the stamps' tables are counted: the event table is the
		// history's largest (three quarters of a real one) and its count
		// would decide nothing.
		if t.counted {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t.name).Scan(&m.N); err != nil {
				return ch, describeDBError(s.dbPath, err)
			}
		}
		ch.next.Tables[t.name] = m
		if !usable {
			continue
		}
		pm, ok := p.Tables[t.name]
		if !ok {
			usable = false
			continue
		}
		kept, err := s.kept(ctx, tx, t.name, pm)
		if err != nil {
			return ch, err
		}
		if !kept && !t.counted {
			// New events may have taken the rowids of deleted ones.
			usable = false
			continue
		}
		added, err := s.sessionsWithRowsAfter(ctx, tx, t, pm.Max, ch.flagged)
		if err != nil {
			return ch, err
		}
		if t.counted && (!kept || m.N != pm.N+added) {
			// Rows went that the new ones do not account for: compare
			// each session's count with its stamp's.
			if err := s.flagRecounted(ctx, tx, t, old, ch.flagged); err != nil {
				return ch, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return ch, describeDBError(s.dbPath, err)
	}
	if usable {
		ch.whole, ch.next.Walked = false, p.Walked
	}
	return ch, nil
}

// lastRow is table's largest rowid and the id of its row (zero when empty).
func (s *Source) lastRow(ctx context.Context, tx *sql.Tx, table string) (tableMark, error) {
	var m tableMark
	err := tx.QueryRowContext(ctx, `SELECT rowid, coalesce(id,'') FROM `+table+` ORDER BY rowid DESC LIMIT 1`).Scan(&m.Max, &m.ID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return m, describeDBError(s.dbPath, err)
	}
	return m, nil
}

// sessionTableMark is the session table's largest rowid, its row's id and
// the table's count, read in one transaction (tx's, when not nil).
func (s *Source) sessionTableMark(ctx context.Context, tx *sql.Tx) (tableMark, error) {
	if tx == nil {
		var err error
		if tx, err = s.db.BeginTx(ctx, nil); err != nil {
			return tableMark{}, describeDBError(s.dbPath, err)
		}
		defer tx.Rollback()
	}
	m, err := s.lastRow(ctx, tx, "session")
	if err != nil {
		return m, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM session`).Scan(&m.N); err != nil {
		return m, describeDBError(s.dbPath, err)
	}
	return m, nil
}

// kept reports whether the row with the mark's largest rowid is still
// there: every row inserted since has a larger one.
func (s *Source) kept(ctx context.Context, tx *sql.Tx, table string, pm tableMark) (bool, error) {
	if pm.Max == 0 {
		return true, nil
	}
	var id string
	err := tx.QueryRowContext(ctx, `SELECT coalesce(id,'') FROM `+table+` WHERE rowid = ?`, pm.Max).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, describeDBError(s.dbPath, err)
	}
	return err == nil && id == pm.ID, nil
}

// sessionsWithRowsAfter flags the sessions with rows after rowid max and
// returns how many rows that is.
func (s *Source) sessionsWithRowsAfter(ctx context.Context, tx *sql.Tx, t trackedTable, max int64, flagged map[string]bool) (int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT coalesce(`+t.keyCol+`,''), count(*) FROM `+t.name+` WHERE rowid > ? GROUP BY 1`, max)
	if err != nil {
		return 0, describeDBError(s.dbPath, err)
	}
	defer rows.Close()
	var added int64
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return 0, describeDBError(s.dbPath, err)
		}
		flagged[id] = true
		added += n
	}
	return added, rows.Err()
}

// flagRecounted flags the sessions whose count of rows in t differs from
// their stamp's in old (through the table's session index: no row is read).
func (s *Source) flagRecounted(ctx context.Context, tx *sql.Tx, t trackedTable, old map[string]string, flagged map[string]bool) error {
	rows, err := tx.QueryContext(ctx, `SELECT `+t.keyCol+`, count(*) FROM `+t.name+` WHERE `+t.keyCol+` IS NOT NULL GROUP BY 1`)
	if err != nil {
		return describeDBError(s.dbPath, err)
	}
	defer rows.Close()
	counts := map[string]int64{}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return describeDBError(s.dbPath, err)
		}
		counts[id] = n
	}
	if err := rows.Err(); err != nil {
		return describeDBError(s.dbPath, err)
	}
	for id, st := range old {
		f, ok := parseStamp(st)
		if !ok || f.agg(t.name).n != counts[id] {
			flagged[id] = true
		}
	}
	return nil
}

// StampsSince is Stamps for sessions (as ListSessions listed them, with
// listing, or a subset), reading only what changed since mark; old holds
// the stamps this
// source gave at mark, as given. next is the mark for the next call. A mark
// it cannot use ("", another file's, another format's, a day old) makes it
// walk every table as Stamps does; so does a change to many sessions.
func (s *Source) StampsSince(ctx context.Context, mark string, old map[string]string, sessions []model.Session, listing string) (source.Stamped, error) {
	if err := s.ready(ctx); err != nil {
		return source.Stamped{}, err
	}
	out := source.Stamped{Stamps: map[string]string{}, Walked: true}
	stamps := out.Stamps
	listed := time.Now().UnixMilli()
	if s.db != nil {
		ch, err := s.changesSince(ctx, mark, old)
		if err != nil {
			return source.Stamped{}, err
		}
		rows := stampRows(sessions)
		var exact []int // rows whose aggregates are looked up
		if !ch.whole {
			for i := range rows {
				r := &rows[i]
				f, ok := parseStamp(old[r.id])
				if ok && !ch.flagged[r.id] {
					r.m, r.p, r.v = f.m, f.p, f.v
				} else {
					exact = append(exact, i)
				}
			}
			if len(exact) > max(maxExactLookups, len(rows)/8) {
				ch.whole = true
			}
		}
		if ch.whole {
			if err := s.walkAggregates(ctx, rows); err != nil {
				return source.Stamped{}, err
			}
			ch.next.Walked = time.Now().UnixMilli()
		} else if err := s.lookUpAggregates(ctx, rows, exact); err != nil {
			return source.Stamped{}, err
		}
		for _, r := range rows {
			stamps[r.id] = r.stamp()
		}
		if out.Walked = ch.whole; !ch.whole {
			out.Lookups = len(exact)
		}
		if len(ch.next.Tables) > 0 {
			// What SessionsSince starts from: this listing. A session
			// inserted after it has a larger rowid than its mark's; one
			// deleted since leaves the count short.
			ch.next.Listed, ch.next.Seen = listed, ch.next.Tables
			if listing == "" || json.Unmarshal([]byte(listing), &ch.next.Session) != nil {
				ch.next.Session = tableMark{N: -1}
			}
			b, _ := json.Marshal(ch.next)
			out.Next = string(b)
		}
	}
	if s.storageDir != "" {
		legacy, err := s.legacyStamps()
		if err != nil {
			return source.Stamped{}, err
		}
		for _, ss := range sessions {
			if st, ok := legacy[ss.ID]; ok && ss.Era == EraJSON {
				stamps[ss.ID] = st
			}
		}
	}
	return out, nil
}

// agg is a session's rows in one table: how many, and their latest update.
type agg struct {
	n   int64
	max int64
}

// stampRow is what a session's stamp is made of.
type stampRow struct {
	id        string
	upd, arch int64
	titleLen  int
	revert    string // the revert point's message id
	m, p, v   agg    // message, part, session_message rows
}

// stamp formats r; parseStamp reads it back. Changing the format means
// bumping changeMarkVersion.
func (r stampRow) stamp() string {
	b := make([]byte, 0, 96)
	for i, n := range []int64{r.upd, r.arch, r.m.n, r.m.max, r.p.n, r.p.max, r.v.n, r.v.max, int64(r.titleLen)} {
		b = strconv.AppendInt(b, n, 10)
		b = append(b, "//:/:/://"[i]) // upd/arch/mn:mmax/pn:pmax/vn:vmax/len/revert
	}
	return string(append(b, r.revert...))
}

// stampFields is a parsed stamp's row aggregates.
type stampFields struct{ m, p, v agg }

func (f stampFields) agg(table string) agg {
	switch table {
	case "message":
		return f.m
	case "part":
		return f.p
	}
	return f.v
}

// parseStamp reads the aggregates back from a stamp stampRow.stamp made.
func parseStamp(st string) (stampFields, bool) {
	var f stampFields
	fields := strings.SplitN(st, "/", 7)
	if len(fields) != 7 {
		return f, false
	}
	for i, a := range []*agg{&f.m, &f.p, &f.v} {
		n, max, ok := strings.Cut(fields[2+i], ":")
		var err1, err2 error
		a.n, err1 = strconv.ParseInt(n, 10, 64)
		a.max, err2 = strconv.ParseInt(max, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return f, false
		}
	}
	return f, true
}

// stampRows is the session rows' part of each stamp, for the sessions the
// database holds (a row of the JSON tree has its own stamp).
func stampRows(sessions []model.Session) []stampRow {
	out := make([]stampRow, 0, len(sessions))
	for _, ss := range sessions {
		if ss.Era == EraJSON {
			continue
		}
		out = append(out, stampRow{id: ss.ID, upd: ss.Updated, arch: ss.Archived, titleLen: len(ss.Title), revert: ss.RevertMsgID})
	}
	return out
}

func describeRowsErr(path string, err error) error {
	if err != nil {
		return describeDBError(path, err)
	}
	return nil
}

// walkAggregates sets every row's aggregates from whole tables (zero in a
// table holding none of the session's rows). They go straight into rows,
// found by id through one map of rows' own ids. A map of every session's
// aggregates per table, keyed by ids read again, was held while a cold
// sync plans, when its memory peaks: at 4.2M parts the largest heap a
// collection found there was 133-135 MB with them, 123-125 without
// (docs/benchmarks.md, "A cold index's plan off the scanned heap").
func (s *Source) walkAggregates(ctx context.Context, rows []stampRow) error {
	at := make(map[string]int, len(rows))
	for i := range rows {
		r := &rows[i]
		r.m, r.p, r.v = agg{}, agg{}, agg{}
		at[r.id] = i
	}
	collect := func(q string, dst func(*stampRow) *agg) error {
		rs, err := s.db.QueryContext(ctx, q)
		if err != nil {
			return describeDBError(s.dbPath, err)
		}
		defer rs.Close()
		var id sql.RawBytes // copied into again for each row
		for rs.Next() {
			var a agg
			if err := rs.Scan(&id, &a.n, &a.max); err != nil {
				return describeDBError(s.dbPath, err)
			}
			if i, ok := at[string(id)]; ok {
				*dst(&rows[i]) = a
			}
		}
		return describeRowsErr(s.dbPath, rs.Err())
	}
	if s.hasV1 {
		// Side by side on the handle's two connections: each walks a
		// whole table (at 845k parts the parts' walk takes 2-3 s here,
		// the messages' 1). They set different fields of the rows.
		var msgErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			msgErr = collect(`SELECT session_id, count(*), coalesce(max(time_updated),0) FROM message GROUP BY session_id`,
				func(r *stampRow) *agg { return &r.m })
		}()
		err := collect(`SELECT session_id, count(*), coalesce(max(time_updated),0) FROM part GROUP BY session_id`,
			func(r *stampRow) *agg { return &r.p })
		<-done
		if err = errors.Join(err, msgErr); err != nil {
			return err
		}
	}
	if s.hasV2 {
		return collect(`SELECT session_id, count(*), coalesce(max(time_updated),0) + coalesce(max(seq),0) FROM session_message GROUP BY session_id`,
			func(r *stampRow) *agg { return &r.v })
	}
	return nil
}

// lookUpAggregates reads the aggregates of rows[i] for each i in which, one
// session at a time through each table's session index.
func (s *Source) lookUpAggregates(ctx context.Context, rows []stampRow, which []int) error {
	if len(which) == 0 {
		return nil
	}
	type q struct {
		sql string
		dst func(*stampRow) *agg
	}
	var qs []q
	if s.hasV1 {
		qs = append(qs,
			q{`SELECT count(*), coalesce(max(time_updated),0) FROM message WHERE session_id = ?`, func(r *stampRow) *agg { return &r.m }},
			q{`SELECT count(*), coalesce(max(time_updated),0) FROM part WHERE session_id = ?`, func(r *stampRow) *agg { return &r.p }})
	}
	if s.hasV2 {
		qs = append(qs, q{`SELECT count(*), coalesce(max(time_updated),0) + coalesce(max(seq),0) FROM session_message WHERE session_id = ?`, func(r *stampRow) *agg { return &r.v }})
	}
	for _, q := range qs {
		stmt, err := s.db.PrepareContext(ctx, q.sql)
		if err != nil {
			return describeDBError(s.dbPath, err)
		}
		for _, i := range which {
			a := q.dst(&rows[i])
			if err := stmt.QueryRowContext(ctx, rows[i].id).Scan(&a.n, &a.max); err != nil {
				stmt.Close()
				return describeDBError(s.dbPath, err)
			}
		}
		stmt.Close()
	}
	return nil
}

// The OpenCode reader lists what changed (source.ChangeLister).
var _ source.ChangeLister = (*Source)(nil)

// SessionsSince is the sessions whose rows changed since mark, found
// without listing the others, with their stamps (as StampsSince gives
// them): those with events, messages or parts written since (rowids past
// the mark's), and the sessions inserted since. It declines (ok false)
// where only a listing of every session can tell: no usable mark, the
// last listing listEvery ago, the newest event or session the mark names
// gone, a session deleted (the count of sessions short), a session whose
// row is gone, more than maxExactLookups sessions changed, or a JSON tree
// beside the database.
//
// At 4.2M parts (150k sessions) listing every session, reading every
// stored stamp and counting the tables made every sync after a write take
// 1.2-1.3 s; this reads a few sessions' rows and counts the session table
// alone: 7-9 ms (docs/benchmarks.md, "A sync after a write lists no
// sessions").
func (s *Source) SessionsSince(ctx context.Context, mark string) (source.Changed, bool, error) {
	if err := s.ready(ctx); err != nil {
		return source.Changed{}, false, err
	}
	tables := s.trackedTables()
	if s.db == nil || s.storageDir != "" || len(tables) == 0 {
		return source.Changed{}, false, nil
	}
	now := time.Now().UnixMilli()
	p, ok := s.parseMark(mark, now)
	if !ok || p.Session.N < 0 || len(p.Seen) != len(tables) || now < p.Listed ||
		time.Duration(now-p.Listed)*time.Millisecond >= listEvery {
		return source.Changed{}, false, nil
	}
	next := p
	next.Seen = map[string]tableMark{}
	flagged := map[string]bool{}
	ok, err := s.changedSince(ctx, p, &next, tables, flagged)
	if err != nil || !ok {
		return source.Changed{}, false, err
	}
	delete(flagged, "")
	if len(flagged) > maxExactLookups {
		return source.Changed{}, false, nil
	}
	sessions, ok, err := s.sessionsByID(ctx, flagged)
	if err != nil || !ok {
		return source.Changed{}, false, err
	}
	rows := stampRows(sessions)
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	if err := s.lookUpAggregates(ctx, rows, all); err != nil {
		return source.Changed{}, false, err
	}
	out := source.Changed{Sessions: sessions, Stamps: make(map[string]string, len(rows)), Total: int(next.Session.N)}
	for _, r := range rows {
		out.Stamps[r.id] = r.stamp()
	}
	b, _ := json.Marshal(next)
	out.Next = string(b)
	return out, true, nil
}

// changedSince flags the sessions with rows in tables past p.Seen and the
// sessions inserted since p.Session, and sets next's Seen and Session, in
// one read transaction; ok false when a row p names is gone or a session
// was deleted.
func (s *Source) changedSince(ctx context.Context, p changeMark, next *changeMark, tables []trackedTable, flagged map[string]bool) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, describeDBError(s.dbPath, err)
	}
	defer tx.Rollback()
	for _, t := range tables {
		pm, ok := p.Seen[t.name]
		if !ok {
			return false, nil
		}
		// The event table's newest rows go only with their session (a
		// deletion the session count finds); new events may then take their
		// rowids. A message or part table's newest row goes in a revert,
		// with an event of its session, and so does every row OpenCode
		// writes after it, whatever rowid it takes: only a writer without
		// events is missed, which the listing finds.
		if kept, err := s.kept(ctx, tx, t.name, pm); err != nil || (!kept && !t.counted) {
			return false, err
		}
		m, err := s.lastRow(ctx, tx, t.name)
		if err != nil {
			return false, err
		}
		if _, err := s.sessionsWithRowsAfter(ctx, tx, t, pm.Max, flagged); err != nil {
			return false, err
		}
		next.Seen[t.name] = m
	}
	if kept, err := s.kept(ctx, tx, "session", p.Session); err != nil || !kept {
		return false, err
	}
	cur, err := s.sessionTableMark(ctx, tx)
	if err != nil {
		return false, err
	}
	added, err := s.sessionsWithRowsAfter(ctx, tx, trackedTable{name: "session", keyCol: "id"}, p.Session.Max, flagged)
	if err != nil {
		return false, err
	}
	if cur.N != p.Session.N+added {
		return false, nil // a session deleted
	}
	next.Session = cur
	return true, describeRowsErr(s.dbPath, tx.Commit())
}

// sessionsByID reads the session rows of ids; ok false when one is gone.
func (s *Source) sessionsByID(ctx context.Context, ids map[string]bool) ([]model.Session, bool, error) {
	if len(ids) == 0 {
		return nil, true, nil
	}
	stmt, err := s.db.PrepareContext(ctx, `SELECT `+sessionColumns+` FROM session WHERE id = ?`)
	if err != nil {
		return nil, false, describeDBError(s.dbPath, err)
	}
	defer stmt.Close()
	var v2 *sql.Stmt
	if s.hasV2 {
		if v2, err = s.db.PrepareContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM session_message WHERE session_id = ? LIMIT 1)`); err != nil {
			return nil, false, describeDBError(s.dbPath, err)
		}
		defer v2.Close()
	}
	var sc sessionScanner
	out := make([]model.Session, 0, len(ids))
	for id := range ids {
		rows, err := stmt.QueryContext(ctx, id)
		if err != nil {
			return nil, false, describeDBError(s.dbPath, err)
		}
		ss, ok := model.Session{}, false
		if rows.Next() {
			ss, ok = sc.scan(s, rows)
		}
		err = errors.Join(rows.Err(), rows.Close())
		if err != nil {
			return nil, false, describeDBError(s.dbPath, err)
		}
		if !ok {
			return nil, false, nil
		}
		if v2 != nil {
			var n int
			if err := v2.QueryRowContext(ctx, id).Scan(&n); err != nil {
				return nil, false, describeDBError(s.dbPath, err)
			}
			if n > 0 {
				ss.Era = EraV2
			}
		}
		out = append(out, ss)
	}
	return out, true, nil
}
