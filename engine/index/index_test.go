package index

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// The tests below write a small history through the Writer, as a sync
// does, and read it back through each query method:
//
//	ses_root   /w/app    "Pelican deploy"   user text, assistant bash call
//	ses_child  /w/app    subagent of ses_root, assistant text
//	ses_other  /w/apple  "Pelican again"    user text, assistant reasoning
type fixtureSession struct {
	s    model.Session
	root string
	msgs []model.Message
}

func textPart(id, kind, text string) model.Part {
	return model.Part{ID: id, Type: kind, Kind: model.Kind(kind), Text: text}
}

var history = []fixtureSession{
	{
		s:    model.Session{ID: "ses_root", Title: "Pelican deploy", Directory: "/w/app", Created: 1000, Updated: 1500, Era: "v1"},
		root: "ses_root",
		msgs: []model.Message{
			{ID: "msg_r1", Role: "user", Created: 1000, Parts: []model.Part{textPart("prt_r1", "text", "deploy the pelican service")}},
			{ID: "msg_r2", Role: "assistant", Created: 1100, Parts: []model.Part{
				textPart("prt_r2", "text", "running the pelican build"),
				{ID: "prt_r3", Type: "tool", Kind: model.KindTool, Tool: "bash", Status: "completed",
					Input: `{"command":"make pelican"}`, Output: "ERR_PELICAN_42 in build", Paths: []string{"/w/app/Makefile"}},
			}},
			{ID: "msg_r3", Role: "user", Created: 1200, Parts: []model.Part{textPart("prt_r4", "text", "thanks")}},
		},
	},
	{
		s:    model.Session{ID: "ses_child", ParentID: "ses_root", Title: "Explore (@explore subagent)", Directory: "/w/app", Created: 1300, Updated: 1300},
		root: "ses_root",
		msgs: []model.Message{
			{ID: "msg_c1", Role: "assistant", Created: 1300, Parts: []model.Part{textPart("prt_c1", "text", "kestrel pelican count")}},
		},
	},
	{
		s:    model.Session{ID: "ses_other", Title: "Pelican again", Directory: "/w/apple", Created: 2000, Updated: 2500},
		root: "ses_other",
		msgs: []model.Message{
			{ID: "msg_o1", Role: "user", Created: 2000, Parts: []model.Part{textPart("prt_o1", "text", "the pelican is back")}},
			{ID: "msg_o2", Role: "assistant", Created: 2100, Parts: []model.Part{textPart("prt_o2", "reasoning", "quiet pelican thoughts")}},
		},
	},
}

func testIndex(t *testing.T) *Index {
	t.Helper()
	return indexOf(t, history)
}

// indexOf is a new index holding sessions, written in one transaction.
func indexOf(t *testing.T, sessions []fixtureSession) *Index {
	t.Helper()
	ix := openIndex(t, filepath.Join(privateDir(t), "i.db"))
	t.Cleanup(func() { ix.Close() })
	ctx := context.Background()
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range sessions {
		var c SessionCounts
		for ord := range fs.msgs {
			m := fs.msgs[ord]
			m.SessionID = fs.s.ID
			if err := w.PutMessage(ctx, &fs.s, fs.root, ord, &m, &c); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.PutSession(ctx, &fs.s, SessionMeta{RootID: fs.root, Stamp: "stamp-" + fs.s.ID, Now: 9}, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return ix
}

// docsOf renders candidates as sorted "session/part/kind".
func docsOf(cands []Candidate) string {
	var s []string
	for _, c := range cands {
		s = append(s, c.SessionID+"/"+c.PartID+"/"+c.Kind)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// Each query.Filter field narrows the FTS match as documented.
func TestMatchEachFilterField(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		f    query.Filter
		want string
	}{
		"none":        {query.Filter{}, "ses_child/prt_c1/text ses_other//title ses_other/prt_o1/text ses_other/prt_o2/reasoning ses_root//title ses_root/prt_r1/text ses_root/prt_r2/text ses_root/prt_r3/output ses_root/prt_r3/tool"},
		"directory":   {query.Filter{Directory: "/w/app/"}, "ses_child/prt_c1/text ses_root//title ses_root/prt_r1/text ses_root/prt_r2/text ses_root/prt_r3/output ses_root/prt_r3/tool"},
		"after":       {query.Filter{After: 2000}, "ses_other//title ses_other/prt_o1/text ses_other/prt_o2/reasoning"},
		"before":      {query.Filter{Before: 1100}, "ses_root//title ses_root/prt_r1/text"},
		"role":        {query.Filter{Roles: []query.Role{query.RoleUser}}, "ses_other/prt_o1/text ses_root/prt_r1/text"},
		"kind":        {query.Filter{Kinds: []model.Kind{model.KindReasoning, model.KindOutput}}, "ses_other/prt_o2/reasoning ses_root/prt_r3/output"},
		"tool":        {query.Filter{Tools: []string{"bash"}}, "ses_root/prt_r3/output ses_root/prt_r3/tool"},
		"session":     {query.Filter{Session: "ses_root", Kinds: []model.Kind{model.KindText}}, "ses_child/prt_c1/text ses_root/prt_r1/text ses_root/prt_r2/text"},
		"exclude":     {query.Filter{ExcludeSession: "ses_child"}, "ses_other//title ses_other/prt_o1/text ses_other/prt_o2/reasoning"},
		"exclude ?":   {query.Filter{ExcludeSession: "ses_not_indexed", Kinds: []model.Kind{model.KindReasoning}}, "ses_other/prt_o2/reasoning"},
		"combined":    {query.Filter{Directory: "/w/app", Roles: []query.Role{query.RoleAssistant}, After: 1100, Before: 1300}, "ses_root/prt_r2/text ses_root/prt_r3/output ses_root/prt_r3/tool"},
		"no such dir": {query.Filter{Directory: "/nowhere"}, ""},
	} {
		cands, err := ix.match(ctx, `"pelican"`, tc.f, 50)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := docsOf(cands); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, tc.want)
		}
	}
}

// Match ranks by BM25 (lower first) and keeps to its limit; Candidates
// applies the same filter to documents found another way (vectors).
func TestMatchLimitAndCandidates(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	cands, err := ix.match(ctx, `"pelican"`, query.Filter{}, 3)
	if err != nil || len(cands) != 3 {
		t.Fatalf("%d candidates (%v), want 3", len(cands), err)
	}
	for i := 1; i < len(cands); i++ {
		if cands[i].BM25 < cands[i-1].BM25 {
			t.Errorf("candidate %d ranks better than the one before it", i)
		}
	}
	all, _ := ix.match(ctx, `"pelican"`, query.Filter{}, 50)
	rids := make([]int64, len(all))
	for i, c := range all {
		rids[i] = c.DocRID
	}
	kept, err := ix.Candidates(ctx, rids, query.Filter{ExcludeSession: "ses_root"})
	if err != nil {
		t.Fatal(err)
	}
	if got := docsOf(kept); got != "ses_other//title ses_other/prt_o1/text ses_other/prt_o2/reasoning" {
		t.Errorf("candidates without ses_root's family: %s", got)
	}
	texts, err := ix.DocText(ctx, rids)
	if err != nil || len(texts) != len(rids) {
		t.Fatalf("doc text: %d of %d (%v)", len(texts), len(rids), err)
	}
	for _, c := range all {
		if c.Kind == "output" && texts[c.DocRID] != "ERR_PELICAN_42 in build" {
			t.Errorf("output text %q", texts[c.DocRID])
		}
	}
}

func TestRecentNewestFirst(t *testing.T) {
	ix := testIndex(t)
	got, err := ix.Recent(context.Background(), query.Filter{Directory: "/w/app"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The child's title and text share its time; the later-written
	// document (the title) comes first.
	if len(got) != 3 || got[0].Kind != "title" || got[1].PartID != "prt_c1" || got[2].PartID != "prt_r4" {
		t.Errorf("recent: %+v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Time > got[i-1].Time {
			t.Errorf("recent not newest first: %d after %d", got[i].Time, got[i-1].Time)
		}
	}
}

func TestWindowAndMessagePositions(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	msgs, err := ix.Window(ctx, "ses_root", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].ID != "msg_r2" || msgs[1].ID != "msg_r3" {
		t.Fatalf("window 1-2: %+v", msgs)
	}
	if len(msgs[0].Parts) != 2 || msgs[0].Parts[0].ID != "prt_r2" || msgs[0].Parts[1].Tool != "bash" ||
		msgs[0].Parts[1].Output != "ERR_PELICAN_42 in build" || msgs[0].Parts[1].Paths[0] != "/w/app/Makefile" {
		t.Errorf("parts of msg_r2: %+v", msgs[0].Parts)
	}
	if ord, err := ix.MessageOrd(ctx, "ses_root", "msg_r3"); err != nil || ord != 2 {
		t.Errorf("MessageOrd = %d, %v", ord, err)
	}
	if _, err := ix.MessageOrd(ctx, "ses_root", "msg_c1"); !errors.Is(err, ErrNoSession) {
		t.Errorf("another session's message: %v", err)
	}
	if id, err := ix.MessageIDAt(ctx, "ses_root", 0); err != nil || id != "msg_r1" {
		t.Errorf("MessageIDAt(0) = %q, %v", id, err)
	}
	if sid, ok, err := ix.MessageSession(ctx, "msg_c1"); err != nil || !ok || sid != "ses_child" {
		t.Errorf("MessageSession = %q %v %v", sid, ok, err)
	}
	if _, ok, err := ix.MessageSession(ctx, "msg_nope"); err != nil || ok {
		t.Errorf("unknown message found: %v %v", ok, err)
	}
	if sid, mid, ok, err := ix.PartLocation(ctx, "prt_r3"); err != nil || !ok || sid != "ses_root" || mid != "msg_r2" {
		t.Errorf("PartLocation = %q %q %v %v", sid, mid, ok, err)
	}
	if _, _, ok, err := ix.PartLocation(ctx, "prt_nope"); err != nil || ok {
		t.Errorf("unknown part found: %v %v", ok, err)
	}
}

func TestSessionsPagingAndFamilies(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	top, err := ix.Sessions(ctx, SessionQuery{Limit: 1})
	if err != nil || len(top) != 1 || top[0].ID != "ses_other" {
		t.Fatalf("first page: %+v %v", top, err)
	}
	next, err := ix.Sessions(ctx, SessionQuery{Limit: 1, AfterUpdated: top[0].Updated, AfterID: top[0].ID})
	if err != nil || len(next) != 1 || next[0].ID != "ses_root" {
		t.Fatalf("second page: %+v %v", next, err)
	}
	if last, _ := ix.Sessions(ctx, SessionQuery{Limit: 1, AfterUpdated: next[0].Updated, AfterID: next[0].ID}); len(last) != 0 {
		t.Errorf("a third page of top-level sessions: %+v", last)
	}
	if r := next[0]; r.Messages != 3 || r.Turns != 2 || r.ToolCalls != 1 || r.FirstPrompt != "deploy the pelican service" || r.Updated != 1500 {
		t.Errorf("ses_root counts: %+v", r)
	}
	if dir, _ := ix.Sessions(ctx, SessionQuery{Directory: "/w/app"}); len(dir) != 1 || dir[0].ID != "ses_root" {
		t.Errorf("directory /w/app: %+v", dir)
	}
	if any, _ := ix.Sessions(ctx, SessionQuery{AnyLevel: true}); len(any) != 3 {
		t.Errorf("every level: %d sessions", len(any))
	}
	kids, err := ix.Children(ctx, []string{"ses_root", "ses_other"})
	if err != nil || len(kids["ses_root"]) != 1 || kids["ses_root"][0].ID != "ses_child" || len(kids["ses_other"]) != 0 {
		t.Errorf("children: %+v %v", kids, err)
	}
	if root, ok, err := ix.RootOf(ctx, "ses_child"); err != nil || !ok || root != "ses_root" {
		t.Errorf("RootOf(child) = %q %v %v", root, ok, err)
	}
	if _, ok, _ := ix.RootOf(ctx, "ses_nope"); ok {
		t.Error("RootOf found an unknown session")
	}
	links, err := ix.SessionLinks(ctx)
	if err != nil || len(links) != 1 || links["ses_child"] != (SessionLink{Parent: "ses_root", Root: "ses_root"}) {
		t.Errorf("links: %+v %v", links, err)
	}
	if _, err := ix.Session(ctx, "ses_nope"); !errors.Is(err, ErrNoSession) {
		t.Errorf("unknown session: %v", err)
	}
}

func TestTitlesCountsStamps(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	titles, err := ix.Titles(ctx, []string{"ses_root", "ses_other", "ses_nope", "ses_root"})
	if err != nil || len(titles) != 2 || titles["ses_root"] != "Pelican deploy" || titles["ses_other"] != "Pelican again" {
		t.Errorf("titles: %q %v", titles, err)
	}
	c, err := ix.Counts(ctx)
	// 3 sessions; 6 messages; 7 parts; docs: 7 part texts... the bash
	// call gives two (input, output), and each titled session one more.
	if err != nil || c != (Counts{Sessions: 3, Messages: 6, Parts: 7, Documents: 11}) {
		t.Errorf("counts %+v %v", c, err)
	}
	if n, err := ix.DocCount(ctx); err != nil || n != c.Documents {
		t.Errorf("DocCount %d, Counts.Documents %d", n, c.Documents)
	}
	stamps, err := ix.Stamps(ctx)
	if err != nil || len(stamps) != 3 || stamps["ses_child"] != "stamp-ses_child" {
		t.Errorf("stamps: %q %v", stamps, err)
	}
	touching, total, err := ix.SessionsTouching(ctx, "/w/app/Makefile", 10)
	if err != nil || total != 1 || len(touching) != 1 || touching[0].ID != "ses_root" {
		t.Errorf("sessions touching the Makefile: %+v %d %v", touching, total, err)
	}
}

// Forget drops a family and remembers it; the vocabulary forgets its words.
func TestForgetAndForgotten(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Forget(ctx, []string{"ses_root", "ses_child"}, 42); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	gone, err := ix.Forgotten(ctx)
	if err != nil || len(gone) != 2 || !gone["ses_root"] || !gone["ses_child"] {
		t.Errorf("forgotten: %v %v", gone, err)
	}
	if _, err := ix.Session(ctx, "ses_root"); !errors.Is(err, ErrNoSession) {
		t.Errorf("a forgotten session is still indexed: %v", err)
	}
	if cands, _ := ix.match(ctx, `"ERR_PELICAN_42"`, query.Filter{}, 10); len(cands) != 0 {
		t.Errorf("a forgotten session's text is still found: %s", docsOf(cands))
	}
	terms, df, err := ix.Vocabulary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, term := range terms {
		if term == "kestrel" || term == "err_pelican_42" {
			t.Errorf("vocabulary keeps %q (df %d) of a forgotten session", term, df[i])
		}
		if term == "pelican" && df[i] != 3 {
			t.Errorf("pelican df %d, want 3 (ses_other's documents)", df[i])
		}
	}
	if stamps, _ := ix.Stamps(ctx); len(stamps) != 1 {
		t.Errorf("stamps after forget: %q", stamps)
	}
}

// Vectors go in and come out bit for bit; a known text is not stored
// twice; another model's vectors are refused; unused ones are collected.
func TestVectorStorageRoundTrip(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	kinds := []model.Kind{model.KindText, model.KindReasoning}
	if err := ix.ResetVectors(ctx, "m@1/3"); err != nil {
		t.Fatal(err)
	}
	pending, err := ix.PendingDocs(ctx, kinds, 0, 100)
	if err != nil || len(pending) != 6 {
		t.Fatalf("pending %v %v, want the 6 text and reasoning documents", pending, err)
	}
	for i := 1; i < len(pending); i++ {
		if pending[i] >= pending[i-1] {
			t.Fatalf("pending not newest first: %v", pending)
		}
	}
	vec := func(i int) []float32 { return []float32{float32(i), -0.5, float32(math.Pi)} }
	var puts []VectorPut
	for i, rid := range pending[:3] {
		puts = append(puts, VectorPut{DocRID: rid, Hash: []byte{byte(i), 1}, Vec: vec(i)})
	}
	puts = append(puts, VectorPut{DocRID: pending[3], Hash: []byte{0, 1}}) // same text as the first: cached
	gen0, _ := ix.VectorGeneration(ctx)
	old, cur, err := ix.PutVectors(ctx, "m@1/3", puts)
	if err != nil || old != gen0 || cur != gen0+1 {
		t.Fatalf("put: generation %d -> %d (%v), was %d", old, cur, err, gen0)
	}
	if embedded, total, err := ix.VectorCounts(ctx, kinds); err != nil || embedded != 4 || total != 6 {
		t.Errorf("counts %d/%d %v, want 4/6", embedded, total, err)
	}
	if ok, _ := ix.HasVectors(ctx); !ok {
		t.Error("HasVectors false after a put")
	}
	known, err := ix.KnownHashes(ctx, "m@1/3", [][]byte{{0, 1}, {9, 9}})
	if err != nil || !known[string([]byte{0, 1})] || known[string([]byte{9, 9})] {
		t.Errorf("known hashes %v %v", known, err)
	}
	got := map[int64][]byte{}
	err = ix.ScanVectors(ctx, "m@1/3", nil, func(r *VectorRow) error {
		got[r.DocRID] = append([]byte(nil), r.Vec...)
		if r.SessionID == "" || r.RootID == "" || r.Kind == "" {
			t.Errorf("row %d lacks its document fields: %+v", r.DocRID, r)
		}
		return nil
	})
	if err != nil || len(got) != 4 {
		t.Fatalf("scanned %d vectors (%v), want 4", len(got), err)
	}
	if string(got[pending[1]]) != string(EncodeVector(vec(1))) || string(got[pending[3]]) != string(EncodeVector(vec(0))) {
		t.Error("a vector did not come back bit for bit")
	}
	only := 0
	ix.ScanVectors(ctx, "m@1/3", []int64{pending[2]}, func(*VectorRow) error { only++; return nil })
	if only != 1 {
		t.Errorf("scan of one rid read %d rows", only)
	}
	if _, _, err := ix.PutVectors(ctx, "other@2/3", puts[:1]); err == nil || !strings.Contains(err.Error(), `"m@1/3"`) {
		t.Errorf("another model's vectors: %v", err)
	}
	hashes := 0
	ix.VectorHashes(ctx, func(int64, []byte) { hashes++ })
	if hashes != 4 {
		t.Errorf("%d vector hashes, want 4", hashes)
	}
	// Deleting a session drops its documents' vectors (trigger); GC then
	// removes the texts no document uses.
	w, _ := ix.BeginWrite(ctx)
	if err := w.DeleteSession(ctx, "ses_other"); err != nil {
		t.Fatal(err)
	}
	w.Commit(ctx)
	n, err := ix.GCVectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// pending is newest first: ses_other's two documents had the first
	// two vectors; the first one's text is still used by pending[3].
	if embedded, _, _ := ix.VectorCounts(ctx, kinds); embedded != 2 || n != 1 {
		t.Errorf("after deleting ses_other: %d vectors, %d collected; want 2 and 1", embedded, n)
	}
	if m, _ := ix.VectorModel(ctx); m != "m@1/3" {
		t.Errorf("vector model %q", m)
	}
}

// MatchExpr quotes every token, ORs the searchable terms (stopwords only
// when nothing else is left), keeps phrases in order and NOTs exclusions.
func TestMatchExpr(t *testing.T) {
	for in, want := range map[string]string{
		`the invoice`:                  `"invoice"`,
		`to be`:                        `"to" OR "be"`,
		`parseConfig "too many" -lazy`: `(("parse_config" OR "parse config") OR "too many") NOT ("lazy")`,
		`NEAR(a b)`:                    `"near" OR "b"`, // "a" is a stopword; NEAR is a word here
		`-only`:                        ``,
		// A quoted compound by its whole form (the index holds its parts
		// after it wherever it holds it); an excluded one as typed.
		`"users_email_key" -"ErrEmailTaken"`: `("users_email_key") NOT ("err_email_taken err email taken erremailtaken")`,
		`"create users_email_key"`:           `"create users_email_key users email key"`,
	} {
		if got := MatchExpr(query.Parse(in), nil, nil); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
	if got := MatchExpr(query.Parse("invoice drift"), nil, map[string]bool{"invoice": true}); got != `"drift"` {
		t.Errorf("skip: %s", got)
	}
}

// BenchmarkTitles: the titles of a page of hits (10 sessions), one batch
// query against the one query per session search used to make.
func BenchmarkTitles(b *testing.B) {
	ix := openIndex(b, filepath.Join(b.TempDir(), "i.db"))
	defer ix.Close()
	ctx := context.Background()
	w, _ := ix.BeginWrite(ctx)
	var ids []string
	for i := 0; i < 2000; i++ {
		s := model.Session{ID: "ses_" + strconv.Itoa(i), Title: "title " + strconv.Itoa(i), Directory: "/w"}
		if err := w.PutSession(ctx, &s, SessionMeta{RootID: s.ID}, SessionCounts{}); err != nil {
			b.Fatal(err)
		}
		if i%200 == 0 {
			ids = append(ids, s.ID)
		}
	}
	w.Commit(ctx)
	b.Run("batch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if t, err := ix.Titles(ctx, ids); err != nil || len(t) != len(ids) {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-per-session", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, id := range ids {
				var t string
				if err := ix.db.QueryRowContext(ctx, `SELECT title FROM sessions WHERE id = ?`, id).Scan(&t); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// A keyset position from another index of a merged listing: TiesNone keeps
// only strictly older sessions, TiesAll those as old too.
func TestSessionsKeysetTies(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	all, err := ix.Sessions(ctx, SessionQuery{AnyLevel: true})
	if err != nil || len(all) < 2 {
		t.Fatalf("%d sessions, %v", len(all), err)
	}
	u := all[0].Updated
	for ties, want := range map[Ties]func(SessionRow) bool{
		TiesNone: func(s SessionRow) bool { return s.Updated < u },
		TiesAll:  func(s SessionRow) bool { return s.Updated <= u },
	} {
		got, err := ix.Sessions(ctx, SessionQuery{AnyLevel: true, AfterUpdated: u, AfterID: all[0].ID, AfterTies: ties})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range all {
			if want(s) {
				n++
			}
		}
		if len(got) != n {
			t.Errorf("ties %d: %d sessions, want %d", ties, len(got), n)
		}
	}
}

// Every byte of a tool output up to OutputCap is findable: a token only in
// the middle of a 27 KB log (issue 12; the old 12 KiB head + 4 KiB tail
// left it out), and a failed model call's error, which has no part.
func TestMiddleOfLongOutputAndMessageErrorFound(t *testing.T) {
	ix := openIndex(t, filepath.Join(privateDir(t), "i.db"))
	defer ix.Close()
	ctx := context.Background()
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Repeat("INFO step ok\n", 1000) + "ERROR ZEBRA_MIDDLE_991 lost\n" + strings.Repeat("INFO step ok\n", 1000)
	s := model.Session{ID: "ses_log", Title: "long log", Directory: "/w", Created: 1}
	var c SessionCounts
	msgs := []model.Message{
		{ID: "msg_1", SessionID: s.ID, Role: "assistant", Created: 1, Parts: []model.Part{
			{ID: "prt_1", Type: "tool", Kind: model.KindTool, Tool: "bash", Status: "completed", Input: `{"command":"make"}`, Output: log}}},
		{ID: "msg_2", SessionID: s.ID, Role: "assistant", Created: 2, Error: "APIError: quokka_overloaded_error"},
	}
	for i := range msgs {
		if err := w.PutMessage(ctx, &s, s.ID, i, &msgs[i], &c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.PutSession(ctx, &s, SessionMeta{RootID: s.ID, Now: 1}, c); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"ZEBRA_MIDDLE_991": "ses_log/prt_1/output", "quokka_overloaded_error": "ses_log//output"} {
		cands, err := ix.match(ctx, MatchExpr(query.Parse(q), nil, nil), query.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := docsOf(cands); got != want {
			t.Errorf("%s: got %q, want %q", q, got, want)
		}
	}
}

// A bulk load's write lets more WAL pile up before a commit checkpoints
// it; the next write on the same connection is back at SQLite's default.
func TestBulkWriteCheckpoints(t *testing.T) {
	ix := testIndex(t)
	ix.db.SetMaxOpenConns(1) // every write on the one connection
	ctx := context.Background()
	pages := func(w *Writer) (n int) {
		if err := w.tx.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	w, err := ix.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := pages(w); n != defaultCheckpointPages {
		t.Errorf("a new write checkpoints after %d pages; want %d", n, defaultCheckpointPages)
	}
	w.Rollback()
	if w, err = ix.BeginBulkWrite(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pages(w); n != bulkCheckpointPages {
		t.Errorf("a bulk write checkpoints after %d pages; want %d", n, bulkCheckpointPages)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if w, err = ix.BeginWrite(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	if n := pages(w); n != defaultCheckpointPages {
		t.Errorf("the write after a bulk one on its connection checkpoints after %d pages; want %d", n, defaultCheckpointPages)
	}
}
