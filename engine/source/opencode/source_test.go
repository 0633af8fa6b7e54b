package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/recallhq/recall/engine/model"
)

// The committed fixtures (testdata/opencode, see its README). Ids come
// from each fixture's manifest.json, never from the test.
const fixtures = "../../../testdata/opencode"

type manifest struct {
	Sessions []struct {
		Key, ID, Title, Driver string
		Archived, Deleted      bool
	}
}

func readManifest(t *testing.T, name string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Sessions) == 0 {
		t.Fatalf("%s: manifest lists no sessions", name)
	}
	return m
}

func (m manifest) id(t *testing.T, key string) string {
	t.Helper()
	for _, s := range m.Sessions {
		if s.Key == key {
			return s.ID
		}
	}
	t.Fatalf("manifest has no session %s", key)
	return ""
}

// copyFixture copies a fixture to a temp dir (tests may change the copy)
// and returns what to open: the database, or the data dir of the JSON tree.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(fixtures, name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if name == "legacy" {
		return dst
	}
	return filepath.Join(dst, "opencode.db")
}

func open(t *testing.T, path string) *Source {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func messages(t *testing.T, s *Source, ss model.Session) []model.Message {
	t.Helper()
	var out []model.Message
	err := s.Messages(context.Background(), ss, func(m *model.Message) error {
		out = append(out, *m)
		return nil
	})
	if err != nil {
		t.Fatalf("messages of %s: %v", ss.ID, err)
	}
	return out
}

func byID(t *testing.T, s *Source) map[string]model.Session {
	t.Helper()
	list, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]model.Session{}
	for _, ss := range list {
		if _, dup := out[ss.ID]; dup {
			t.Errorf("session %s listed twice", ss.ID)
		}
		out[ss.ID] = ss
	}
	return out
}

// Each database era lists the manifest's sessions (deleted ones gone, the
// rest with their titles, archive flags and eras), plus only subagent
// sessions of those.
func TestSessionsMatchManifest(t *testing.T) {
	for _, fx := range []string{"v1", "v2", "secrets"} {
		t.Run(fx, func(t *testing.T) {
			m := readManifest(t, fx)
			s := open(t, copyFixture(t, fx))
			got := byID(t, s)
			listed := map[string]bool{}
			for _, want := range m.Sessions {
				listed[want.ID] = true
				ss, ok := got[want.ID]
				switch {
				case want.Deleted:
					if ok {
						t.Errorf("%s (deleted) is listed", want.Key)
					}
					continue
				case !ok:
					t.Errorf("%s %s is missing", want.Key, want.ID)
					continue
				}
				if ss.Title != want.Title {
					t.Errorf("%s: title %q, want %q", want.Key, ss.Title, want.Title)
				}
				if (ss.Archived != 0) != want.Archived {
					t.Errorf("%s: archived %d, want %v", want.Key, ss.Archived, want.Archived)
				}
				era := EraV1
				if want.Driver == "v2" {
					era = EraV2
				}
				if ss.Era != era {
					t.Errorf("%s: era %s, want %s", want.Key, ss.Era, era)
				}
			}
			for id, ss := range got {
				if !listed[id] && !listed[ss.ParentID] {
					t.Errorf("%s is neither in the manifest nor a subagent of a session in it", id)
				}
			}
			stamps, err := s.Stamps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(stamps) != len(got) {
				t.Errorf("%d stamps for %d sessions", len(stamps), len(got))
			}
			if n, w := s.Skipped(); n != 0 {
				t.Errorf("a clean fixture skipped %d rows: %v", n, w)
			}
		})
	}
}

// Messages come in display order (by time, a session's first message is
// the user's), and each session has as many user turns as the manifest
// says were sent.
func TestMessagesInOrder(t *testing.T) {
	for _, fx := range []string{"v1", "v2"} {
		t.Run(fx, func(t *testing.T) {
			m := readManifest(t, fx)
			s := open(t, copyFixture(t, fx))
			sessions := byID(t, s)
			for _, want := range m.Sessions {
				ss, ok := sessions[want.ID]
				if !ok {
					continue
				}
				msgs := messages(t, s, ss)
				if len(msgs) == 0 {
					t.Errorf("%s: no messages", want.Key)
					continue
				}
				if msgs[0].Role != "user" {
					t.Errorf("%s: first message is %s's", want.Key, msgs[0].Role)
				}
				for i := 1; i < len(msgs); i++ {
					if msgs[i].Created < msgs[i-1].Created {
						t.Errorf("%s: message %d (%s) is older than the one before it", want.Key, i, msgs[i].ID)
					}
				}
				parts := 0
				for _, msg := range msgs {
					parts += len(msg.Parts)
					if msg.SessionID != ss.ID {
						t.Errorf("%s: message %s says session %s", want.Key, msg.ID, msg.SessionID)
					}
				}
				if parts == 0 {
					t.Errorf("%s: no parts", want.Key)
				}
			}
		})
	}
}

// The legacy JSON tree holds some of v1's sessions, exported from the same
// run: each reads as the same messages, in the same order, with the same
// parts, as from the database.
func TestLegacyTreeReadsLikeTheDatabase(t *testing.T) {
	db := open(t, copyFixture(t, "v1"))
	tree := open(t, copyFixture(t, "legacy"))
	if eras := tree.Eras(); len(eras) != 1 || eras[0] != EraJSON {
		t.Fatalf("legacy eras %v, want [json]", eras)
	}
	fromDB := byID(t, db)
	fromTree := byID(t, tree)
	if len(fromTree) == 0 {
		t.Fatal("the legacy tree lists no sessions")
	}
	total := 0
	for id, ts := range fromTree {
		ds, ok := fromDB[id]
		if !ok {
			t.Errorf("%s: in the tree, not in the v1 database", id)
			continue
		}
		if ts.Era != EraJSON || ts.Title != ds.Title || ts.ParentID != ds.ParentID {
			t.Errorf("%s: tree says %q (era %s, parent %q), database %q (parent %q)", id, ts.Title, ts.Era, ts.ParentID, ds.Title, ds.ParentID)
		}
		tm, dm := messages(t, tree, ts), messages(t, db, ds)
		if len(tm) != len(dm) {
			t.Errorf("%s: %d messages from the tree, %d from the database", id, len(tm), len(dm))
			continue
		}
		for i := range tm {
			if tm[i].ID != dm[i].ID || len(tm[i].Parts) != len(dm[i].Parts) {
				t.Errorf("%s: message %d is %s with %d parts in the tree, %s with %d in the database",
					id, i, tm[i].ID, len(tm[i].Parts), dm[i].ID, len(dm[i].Parts))
			}
		}
		total += len(tm)
	}
	if total == 0 {
		t.Error("no messages compared")
	}
}

// withDB changes a fixture copy through a writable handle of the test's
// own (the reader never writes).
func withDB(t *testing.T, path string, fn func(db *sql.DB)) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fn(db)
}

// A session reverted to a message hides that message and everything after
// it, as OpenCode does.
func TestRevertHidesLaterMessages(t *testing.T) {
	path := copyFixture(t, "v1")
	sid := readManifest(t, "v1").id(t, "L1")
	s := open(t, path)
	all := messages(t, s, byID(t, s)[sid])
	if len(all) < 4 {
		t.Fatalf("L1 has %d messages; the test needs a few", len(all))
	}
	cut := all[len(all)/2].ID
	s.Close()
	withDB(t, path, func(db *sql.DB) {
		if _, err := db.Exec(`UPDATE session SET revert = json_object('messageID', ?) WHERE id = ?`, cut, sid); err != nil {
			t.Fatal(err)
		}
	})
	s = open(t, path)
	ss := byID(t, s)[sid]
	if ss.RevertMsgID != cut {
		t.Fatalf("revert point %q, want %q", ss.RevertMsgID, cut)
	}
	got := messages(t, s, ss)
	if len(got) != len(all)/2 {
		t.Fatalf("%d messages after the revert, want the %d before %s", len(got), len(all)/2, cut)
	}
	for i, m := range got {
		if m.ID != all[i].ID {
			t.Errorf("message %d is %s, want %s", i, m.ID, all[i].ID)
		}
	}
}

// A malformed part is skipped and counted, with a warning naming it; the
// session's other parts still come.
func TestMalformedPartSkipped(t *testing.T) {
	path := copyFixture(t, "v1")
	sid := readManifest(t, "v1").id(t, "L2")
	s := open(t, path)
	before := messages(t, s, byID(t, s)[sid])
	s.Close()
	count := func(msgs []model.Message) int {
		n := 0
		for _, m := range msgs {
			n += len(m.Parts)
		}
		return n
	}
	var victim string
	withDB(t, path, func(db *sql.DB) {
		err := db.QueryRow(`SELECT id FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text' ORDER BY id LIMIT 1`, sid).Scan(&victim)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE part SET data = '{"type":"text","text": broken' WHERE id = ?`, victim); err != nil {
			t.Fatal(err)
		}
	})
	s = open(t, path)
	after := messages(t, s, byID(t, s)[sid])
	if count(after) != count(before)-1 {
		t.Errorf("%d parts after the damage, want %d", count(after), count(before)-1)
	}
	n, warns := s.Skipped()
	if n != 1 || len(warns) != 1 || !strings.Contains(warns[0].Where, victim) {
		t.Errorf("skipped %d %+v, want one warning naming %s", n, warns, victim)
	}
	s.ResetWarnings()
	if n, _ := s.Skipped(); n != 0 {
		t.Errorf("ResetWarnings left %d", n)
	}
}

// The identity of an open history is that of the file at its path until
// the file is replaced.
func TestIdentityFollowsTheFile(t *testing.T) {
	path := copyFixture(t, "v1")
	s := open(t, path)
	cur, err := s.CurrentIdentity()
	if err != nil || !cur.Equal(s.Identity()) {
		t.Fatalf("current %v (%v), open %v", cur, err, s.Identity())
	}
	other := copyFixture(t, "v2")
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	cur, err = s.CurrentIdentity()
	if err != nil || cur.Equal(s.Identity()) {
		t.Errorf("after a rename over it: current %v (%v), still equal to %v", cur, err, s.Identity())
	}
}

// A missing history is a NotFoundError naming the path; nothing is made.
func TestMissingHistory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "opencode.db")
	_, err := Open(context.Background(), p)
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), p) {
		t.Fatalf("want NotFoundError naming %s, got %v", p, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 0 {
		t.Errorf("opening a missing history made %v", names)
	}
}

// Sessions holds each directory, project, agent and version once: the
// sessions sharing one share its bytes (a sync keeps the whole list for
// its length), and the values are the rows' own.
func TestSessionsShareRepeatedFields(t *testing.T) {
	s := open(t, copyFixture(t, "v1"))
	list, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	shared := 0
	for _, ss := range list {
		if ss.Directory == "" {
			continue
		}
		var dir string
		if err := s.db.QueryRow(`SELECT directory FROM session WHERE id = ?`, ss.ID).Scan(&dir); err != nil || dir != ss.Directory {
			t.Fatalf("%s: directory %q, the row's %q (%v)", ss.ID, ss.Directory, dir, err)
		}
		f, ok := first[ss.Directory]
		if !ok {
			first[ss.Directory] = ss.Directory
			continue
		}
		if unsafe.StringData(f) != unsafe.StringData(ss.Directory) {
			t.Errorf("%s: directory %q is a copy of its own", ss.ID, ss.Directory)
		}
		shared++
	}
	if shared == 0 {
		t.Fatal("no two sessions share a directory; the test checks nothing")
	}
}

// A lazily opened history reads as an opened one, from its first read;
// Check reports what Open would have; and a first read finding another
// file at the path than the one whose identity OpenLazily read fails
// rather than read it under the old identity.
func TestOpenLazily(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "v1")
	s, err := OpenLazily(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := open(t, path)
	if !s.Identity().Equal(want.Identity()) || s.Immutable() != want.Immutable() || s.Notice() != want.Notice() {
		t.Errorf("lazily: identity %v, immutable %v, notice %q; opened: %v, %v, %q",
			s.Identity(), s.Immutable(), s.Notice(), want.Identity(), want.Immutable(), want.Notice())
	}
	got, err := s.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := want.Sessions(ctx)
	if len(got) == 0 || len(got) != len(all) {
		t.Errorf("lazily opened history lists %d sessions, opened one %d", len(got), len(all))
	}

	text := filepath.Join(t.TempDir(), "notes.db")
	db, _ := sql.Open("sqlite", text)
	db.Exec(`CREATE TABLE notes(id INTEGER PRIMARY KEY)`)
	db.Close()
	bad, err := OpenLazily(text)
	if err != nil {
		t.Fatalf("OpenLazily reads no schema, yet: %v", err)
	}
	if err := bad.Check(ctx); err == nil || !strings.Contains(err.Error(), "unknown schema") {
		t.Errorf("Check of a database that is not OpenCode's: %v", err)
	}

	path = copyFixture(t, "v1")
	s2, err := OpenLazily(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	id := s2.Identity()
	if err := os.Rename(copyFixture(t, "v2"), path); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Sessions(ctx); err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("first read after the file was replaced: %v; want an error saying so", err)
	}
	if !s2.Identity().Equal(id) {
		t.Errorf("identity moved to the new file (%v, was %v) without a read of it", s2.Identity(), id)
	}
}
