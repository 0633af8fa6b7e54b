package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/source"
)

// fakeHistory is an in-memory history read through fakeSource, an
// in-memory source.Source. They exist for what a real history cannot
// express on demand: a history that is not OpenCode's at all (the engine
// must need nothing beyond the interface), and a file identity that
// changes while every byte of content stays the same.
type fakeHistory struct {
	path     string
	mu       sync.Mutex
	id       source.Identity // what is "at the path" now
	version  int             // bumped by changes; part of the fingerprint
	sessions []model.Session
	msgs     map[string][]model.Message
	skipped  []model.Warning
	notice   string
}

// fakeSource is one open handle on a fakeHistory.
type fakeSource struct {
	h      *fakeHistory
	openID source.Identity // what this handle read
}

func (f *fakeSource) Path() string                    { return f.h.path }
func (f *fakeSource) Eras() []string                  { return []string{"fake"} }
func (f *fakeSource) Identity() source.Identity       { return f.openID }
func (f *fakeSource) Immutable() bool                 { return false }
func (f *fakeSource) ModTime() time.Time              { return time.UnixMilli(1_800_000_000_000) }
func (f *fakeSource) Notice() string                  { return f.h.notice }
func (f *fakeSource) Close() error                    { return nil }
func (f *fakeSource) Skipped() (int, []model.Warning) { return len(f.h.skipped), f.h.skipped }
func (f *fakeSource) ResetWarnings()                  {}

func (f *fakeSource) CurrentIdentity() (source.Identity, error) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	return f.h.id, nil
}

func (f *fakeSource) Fingerprint() string {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	return fmt.Sprintf("%s#%d", f.h.id, f.h.version)
}

func (f *fakeSource) Sessions(context.Context) ([]model.Session, error) { return f.h.sessions, nil }

func (f *fakeSource) Stamps(context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range f.h.sessions {
		out[s.ID] = "same-content"
	}
	return out, nil
}

func (f *fakeSource) Messages(_ context.Context, s model.Session, fn func(*model.Message) error) error {
	for i := range f.h.msgs[s.ID] {
		m := f.h.msgs[s.ID][i]
		if err := fn(&m); err != nil {
			return err
		}
	}
	return nil
}

func (h *fakeHistory) open(context.Context, string) (source.Source, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &fakeSource{h: h, openID: h.id}, nil
}

func newFakeHistory(path string) *fakeHistory {
	h := &fakeHistory{path: path, id: source.Identity{Dev: 1, Ino: 100, Header: "fake"},
		notice:  "the fake history hides nothing; said once",
		skipped: []model.Warning{{Where: "row 7", Reason: "unreadable"}}}
	h.sessions = []model.Session{
		{ID: "ses_fake1", Title: "Tune the pelican feeder", Directory: "/w/zoo", Created: 1_700_000_000_000, Updated: 1_700_000_100_000},
		{ID: "ses_fake2", ParentID: "ses_fake1", Title: "Count the fish (@explore subagent)", Directory: "/w/zoo", Created: 1_700_000_050_000},
	}
	h.msgs = map[string][]model.Message{
		"ses_fake1": {
			{ID: "msg_a1", SessionID: "ses_fake1", Role: "user", Created: 1_700_000_000_000,
				Parts: []model.Part{{ID: "prt_a1", Type: "text", Kind: model.KindText, Text: "why does the pelican feeder jam at dawn?"}}},
			{ID: "msg_a2", SessionID: "ses_fake1", Role: "assistant", Created: 1_700_000_001_000,
				Parts: []model.Part{{ID: "prt_a2", Type: "text", Kind: model.KindText, Text: "The HERRINGBONE_LATCH sticks when it is cold."}}},
		},
		"ses_fake2": {
			{ID: "msg_b1", SessionID: "ses_fake2", Role: "assistant", Created: 1_700_000_060_000,
				Parts: []model.Part{{ID: "prt_b1", Type: "text", Kind: model.KindText, Text: "Counted 41 sardines."}}},
		},
	}
	return h
}

// The engine reads a history only through source.Source: a history that is
// not OpenCode's syncs, searches and lists; its skipped rows and its notice
// reach the user; a new identity at the same path is reopened through the
// Opener and every session re-read, though its content is the same.
func TestEngineReadsThroughTheSourceInterface(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.fake")
	if err := os.WriteFile(path, nil, 0o600); err != nil { // Locate wants a path that exists
		t.Fatal(err)
	}
	fake := newFakeHistory(path)
	opens := 0
	opener := func(ctx context.Context, p string) (source.Source, error) {
		opens++
		return fake.open(ctx, p)
	}
	e, err := Open(context.Background(), Options{DBPath: path, IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: noEnv, OpenSource: opener})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n := e.Notices(); len(n) != 1 || n[0] != fake.notice {
		t.Errorf("notices %q, want the source's once", n)
	}
	res, err := e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 2 || res.Skipped != 1 || len(res.Warnings) != 1 || res.Warnings[0] != "row 7: unreadable" {
		t.Errorf("first sync %+v, want 2 added and the skipped row reported", res)
	}
	if len(res.Notices) != 0 {
		t.Errorf("the open's notice was repeated by the sync: %q", res.Notices)
	}
	hits := search(t, e, "HERRINGBONE_LATCH").Hits
	if len(hits) == 0 || hits[0].SessionID != "ses_fake1" || hits[0].Title != "Tune the pelican feeder" {
		t.Fatalf("search through the fake source: %+v", hits)
	}
	if ex := search(t, e, "sardines", func(p *SearchParams) { p.Filter.ExcludeSession = "ses_fake1" }).Hits; len(ex) != 0 {
		t.Errorf("excluding the root left its subagent's hits: %+v", ex)
	}
	st, err := e.Status(context.Background())
	if err != nil || st.Sessions != 2 || st.Eras[0] != "fake" {
		t.Errorf("status %+v %v", st, err)
	}

	// Same content, new file: the stamps match, the identity does not.
	fake.mu.Lock()
	fake.id.Ino, fake.version = 200, 1
	fake.mu.Unlock()
	res, err = e.Sync(context.Background(), SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Replaced || res.Updated != 2 || opens != 2 {
		t.Errorf("after a replace: %+v (opens %d), want Replaced, both sessions re-read, one reopen", res, opens)
	}
}
