package engine

import (
	"context"
	"strings"
	"testing"
)

// Every storage era a user may have is read into the same model, and the
// facts planted in each fixture are found where they live.
func TestStorageEras(t *testing.T) {
	cases := []struct {
		fixture, query, kind, title string
	}{
		{"v1", "ERR_QUOTA_7731", "output", "Investigate nightly worker failure"},
		{"legacy", "ERR_QUOTA_7731", "output", "Investigate nightly worker failure"},
		{"v2", "tangerine dashboard", "text", "Raise the cache size (v2 engine)"},
		{"v2", "evict_stale_entries", "", "Eviction helper notes (v2 engine)"},
		{"v2", "marmalade-capacity", "reasoning", "Cache README touch-up (classic engine)"},
	}
	for _, c := range cases {
		t.Run(c.fixture+"/"+c.query, func(t *testing.T) {
			e := openFixture(t, c.fixture)
			res := search(t, e, c.query)
			if len(res.Hits) == 0 {
				t.Fatalf("no hits for %q", c.query)
			}
			h := res.Hits[0]
			if h.Title != c.title {
				t.Errorf("top hit in %q, want %q", h.Title, c.title)
			}
			if c.kind != "" && h.Kind != c.kind {
				t.Errorf("top hit kind %s, want %s", h.Kind, c.kind)
			}
			if len(h.Highlights) == 0 {
				t.Errorf("no highlight in snippet %q", h.Snippet)
			}
			for _, r := range h.Highlights {
				runes := []rune(h.Snippet)
				if r[0] < 0 || r[1] > len(runes) || r[0] >= r[1] {
					t.Fatalf("highlight %v outside snippet %q", r, h.Snippet)
				}
			}
		})
	}
}

func TestEraStatus(t *testing.T) {
	for fixture, era := range map[string]string{"v1": "v1", "v2": "v2", "legacy": "json"} {
		e := openFixture(t, fixture)
		st, err := e.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions == 0 || st.Parts == 0 || st.Documents == 0 {
			t.Errorf("%s: empty index: %+v", fixture, st)
		}
		if !strings.Contains(strings.Join(st.Eras, ","), era) {
			t.Errorf("%s: eras %v lack %s", fixture, st.Eras, era)
		}
	}
}

// Subagent sessions hang under their parent, and the v1 fixture's deleted
// session is nowhere.
func TestSessionsFamily(t *testing.T) {
	e := openFixture(t, "v1")
	res, err := e.Sessions(context.Background(), SessionsParams{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var parent *SessionInfo
	for i, s := range res.Sessions {
		if s.ParentID != "" {
			t.Errorf("top-level listing holds subagent %s", s.ID)
		}
		if strings.Contains(s.Title, "Throwaway") {
			t.Errorf("deleted session listed: %s", s.Title)
		}
		if len(s.Children) > 0 {
			parent = &res.Sessions[i]
		}
	}
	if parent == nil {
		t.Fatal("no session lists a subagent child")
	}
	kids, err := e.Sessions(context.Background(), SessionsParams{Parent: parent.ID})
	if err != nil || len(kids.Sessions) != len(parent.Children) {
		t.Fatalf("children of %s: %v %+v", parent.ID, err, kids)
	}
	// A subagent hit is excluded with its family.
	child := parent.Children[0].ID
	all := search(t, e, "currency")
	ex := search(t, e, "currency", func(p *SearchParams) { p.Filter.ExcludeSession = child })
	for _, h := range ex.Hits {
		if h.SessionID == parent.ID || h.SessionID == child {
			t.Errorf("excluded family still returned %s", h.SessionID)
		}
	}
	if len(all.Hits) <= len(ex.Hits) {
		t.Errorf("exclusion removed nothing (%d vs %d hits)", len(all.Hits), len(ex.Hits))
	}
	if res.Next != "" {
		t.Errorf("one page expected for the small fixture, got next %q", res.Next)
	}
	page, err := e.Sessions(context.Background(), SessionsParams{Limit: 2})
	if err != nil || len(page.Sessions) != 2 || page.Next == "" {
		t.Fatalf("page of 2: %v %+v", err, page)
	}
	page2, err := e.Sessions(context.Background(), SessionsParams{Limit: 2, Cursor: page.Next})
	if err != nil || len(page2.Sessions) == 0 || page2.Sessions[0].ID == page.Sessions[0].ID || page2.Sessions[0].ID == page.Sessions[1].ID {
		t.Fatalf("second page repeats the first: %v %+v", err, page2)
	}
}
