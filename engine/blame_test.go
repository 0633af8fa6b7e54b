package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// blameFixture is testdata/opencode/blame: five real OpenCode sessions
// that wrote and edited billing/tiers.py in turn (B1 write, B2 two edits
// with a failed test run between, B3 edit, B4 apply_patch, B5 an edit that
// did not apply). after/billing/tiers.py is the file as OpenCode left it.
type blameFixture struct {
	db, file string
	after    string            // the file's text as OpenCode left it
	keys     map[string]string // session id -> scenario key
}

func loadBlameFixture(t *testing.T) blameFixture {
	t.Helper()
	db := fixture(t, "blame")
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(db), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Projects map[string]string `json:"projects"`
		Sessions []struct{ Key, ID string }
	}
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(filepath.Dir(db), "after", "billing", "tiers.py"))
	if err != nil {
		t.Fatal(err)
	}
	fx := blameFixture{db: db, file: filepath.Join(man.Projects["billing"], "billing", "tiers.py"), after: string(after), keys: map[string]string{}}
	for _, s := range man.Sessions {
		fx.keys[s.ID] = s.Key
	}
	return fx
}

// owners renders a blame as one scenario key (or "-") per line.
func (fx blameFixture) owners(res BlameResult) []string {
	out := make([]string, res.Lines)
	for i := range out {
		out[i] = "-"
	}
	for _, r := range res.Ranges {
		for l := r.StartLine; l <= r.EndLine; l++ {
			out[l-1] = fx.keys[r.SessionID]
		}
	}
	return out
}

func TestBlameRealHistory(t *testing.T) {
	fx := loadBlameFixture(t)
	e := openAt(t, fx.db, filepath.Join(t.TempDir(), "index.db"))
	ctx := context.Background()

	// The file as OpenCode left it: every line comes from a session, the
	// newest writer of a line wins (B3 rewrote B1's return, B4 added a
	// tier, B2 the import and the constant with their blank lines).
	res, err := e.Blame(ctx, BlameOptions{Path: fx.file, Text: fx.after, HasText: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"B1",                         // """Tiered unit prices…"""
		"B2",                         // (blank, written with the import)
		"B2",                         // from decimal import Decimal
		"B1",                         // (blank)
		"B1",                         // TIERS = [
		"B1",                         //     (100, 0.10),
		"B1",                         //     (1000, 0.08),
		"B4",                         //     (10000, 0.06),  apply_patch
		"B1",                         // ]
		"B2",                         // (blank)
		"B2",                         // MINIMUM_CHARGE = …
		"B1", "B1", "B1", "B1", "B1", // blanks, def, for, if
		"B3", // return round(units * unit_price, 2)
		"B1", // return units * TIERS[-1][1]
	}
	if got := fx.owners(res); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("as OpenCode left it:\n got %v\nwant %v", got, want)
	}
	if res.Lines != 18 || res.Attributed != 18 {
		t.Errorf("lines %d attributed %d, want 18/18", res.Lines, res.Attributed)
	}
	tools := map[string]string{}
	for _, r := range res.Ranges {
		tools[fx.keys[r.SessionID]] = r.Tool
		if !strings.HasPrefix(r.MessageID, "msg_") || !strings.HasPrefix(r.PartID, "prt_") || r.Time == "" || r.Title == "" {
			t.Errorf("range %+v lacks ids, time or title", r)
		}
		if !strings.Contains(r.URI, "/session/"+r.SessionID+"/") || !strings.Contains(r.URI, "around="+r.MessageID) {
			t.Errorf("range URI %q does not open the message", r.URI)
		}
		checkPartInHistory(t, fx.db, r)
	}
	if tools["B1"] != "write" || tools["B3"] != "edit" || tools["B4"] != "apply_patch" {
		t.Errorf("tools %v", tools)
	}

	// A person edits the file after the sessions: changes line 6 and the
	// last line, and inserts a comment. Those lines are nobody's; every
	// other line keeps its author.
	lines := strings.Split(strings.TrimSuffix(fx.after, "\n"), "\n")
	lines[5] = "    (100, 0.12),"
	lines[17] = "    return round(units * TIERS[-1][1], 2)"
	edited := append(append(append([]string{}, lines[:15]...), "        # tiers are sorted by limit"), lines[15:]...)
	res, err = e.Blame(ctx, BlameOptions{Path: fx.file, Text: strings.Join(edited, "\n") + "\n", HasText: true})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"B1", "B2", "B2", "B1", "B1", "-", "B1", "B4", "B1", "B2", "B2", "B1", "B1", "B1", "B1", "-", "B1", "B3", "-"}
	if got := fx.owners(res); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after a person's edit:\n got %v\nwant %v", got, want)
	}
	if res.Lines != 19 || res.Attributed != 16 {
		t.Errorf("lines %d attributed %d, want 19/16", res.Lines, res.Attributed)
	}

	// :LINE narrows to the range holding the line.
	res, err = e.Blame(ctx, BlameOptions{Path: fx.file, Text: fx.after, HasText: true, Line: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ranges) != 1 || fx.keys[res.Ranges[0].SessionID] != "B4" || res.Ranges[0].StartLine != 8 || res.Ranges[0].EndLine != 8 {
		t.Errorf("line 8: %+v", res.Ranges)
	}

	// Pitfalls: B2's test run right after its edit failed, B5's edit did
	// not apply; B1's and B3's passing runs are not pitfalls.
	errs := map[string]string{}
	for _, p := range res.Pitfalls {
		errs[fx.keys[p.SessionID]] = p.Error
	}
	if len(res.Pitfalls) != 2 || !strings.Contains(errs["B2"], "NameError: name 'Decimal' is not defined") ||
		!strings.Contains(errs["B5"], "Could not find oldString") {
		t.Errorf("pitfalls %+v", res.Pitfalls)
	}
	files, err := e.FileSessions(ctx, fx.file, 0)
	if err != nil {
		t.Fatal(err)
	}
	if files.Total != 5 || len(files.Pitfalls) != 2 || fx.keys[files.Pitfalls[0].SessionID] != "B5" {
		t.Errorf("files: total %d pitfalls %+v", files.Total, files.Pitfalls)
	}
}

// checkPartInHistory: the range's part is a real part of that message and
// session in opencode.db.
func checkPartInHistory(t *testing.T, db string, r BlameRange) {
	t.Helper()
	h, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var n int
	if err := h.QueryRow(`SELECT count(*) FROM part WHERE id = ? AND message_id = ? AND session_id = ?`, r.PartID, r.MessageID, r.SessionID).Scan(&n); err != nil || n != 1 {
		t.Errorf("part %s of %s/%s not in the history (%d, %v)", r.PartID, r.SessionID, r.MessageID, n, err)
	}
}

func TestBlameFileErrors(t *testing.T) {
	fx := loadBlameFixture(t)
	e := openAt(t, fx.db, filepath.Join(t.TempDir(), "index.db"))
	_, err := e.Blame(context.Background(), BlameOptions{Path: filepath.Join(t.TempDir(), "missing.py")})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := e.Blame(context.Background(), BlameOptions{Path: fx.file, Text: fx.after, HasText: true, Line: 19}); err == nil || !strings.Contains(err.Error(), "line 19 is past its end (18 lines)") {
		t.Errorf("line past the end: %v", err)
	}
	res, err := e.Blame(context.Background(), BlameOptions{Path: t.TempDir() + "/x.py", Text: "print(1)\n", HasText: true})
	if err != nil || res.Lines != 1 || res.Attributed != 0 || len(res.Ranges) != 0 {
		t.Errorf("untouched file: %+v %v", res, err)
	}
}

func TestErrorLine(t *testing.T) {
	for in, want := range map[string]string{
		"Traceback (most recent call last):\n  File \"t.py\", line 3\nImportError: Failed to import\nTraceback:\nNameError: name 'x' is not defined\n\nFAILED (errors=1)": "NameError: name 'x' is not defined",
		"# pkg\n./a.go:3:2: error: undefined: x\n./a.go:4:2: error: y": "./a.go:3:2: error: undefined: x",
		"ok 1\nnot ok 2 - it failed\n1..2":                             "not ok 2 - it failed",
		"exit status 2":                                                "exit status 2",
	} {
		if got := errorLine(in); got != want {
			t.Errorf("errorLine(%q) = %q, want %q", in, got, want)
		}
	}
}
