package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureDB(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "opencode", "v1", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type run struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, args ...string) run {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, nil, &out, &errb)
	return run{code, out.String(), errb.String()}
}

// The machine contract: one JSON object on stdout, nothing else, with every
// field scripts read.
func TestSearchJSONContract(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	r := cli(t, "search", "--db", db, "--index", ix, "--json", "--limit", "3", "--", "ERR_QUOTA_7731")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var res map[string]any
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", r.stdout)
	}
	hits, _ := res["hits"].([]any)
	if len(hits) == 0 || len(hits) > 3 {
		t.Fatalf("want 1-3 hits, got %d", len(hits))
	}
	for _, f := range []string{"cursor", "sessionId", "messageId", "partId", "title", "directory", "role", "kind", "tool", "time", "score", "snippet", "highlights"} {
		if _, ok := hits[0].(map[string]any)[f]; !ok {
			t.Errorf("hit lacks %q", f)
		}
	}
	// A query that starts with a dash after -- is a query, not a flag.
	if r := cli(t, "search", "--db", db, "--index", ix, "--json", "--", "-x", "ERR_QUOTA_7731"); r.code != 0 {
		t.Errorf("dash query: exit %d %s", r.code, r.stderr)
	}
}

func TestEveryCommandJSON(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	r := cli(t, "search", "--db", db, "--index", ix, "--json", "ERR_QUOTA_7731")
	var sr struct {
		Hits []struct {
			Cursor, SessionID string
		}
	}
	json.Unmarshal([]byte(r.stdout), &sr)
	if len(sr.Hits) == 0 {
		t.Fatal("no hits")
	}
	out := filepath.Join(t.TempDir(), "export.md")
	for _, args := range [][]string{
		{"read", sr.Hits[0].Cursor},
		{"read", "--mode", "tail", "--format", "markdown", sr.Hits[0].Cursor},
		{"sessions", "--limit", "3"},
		{"sessions", "--filter", "invoice"},
		{"status"},
		{"sync"},
		{"export", sr.Hits[0].SessionID, "--format", "markdown", "-o", out},
	} {
		r := cli(t, append(append([]string{}, args...), "--db", db, "--index", ix, "--json")...)
		if r.code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Errorf("%v: stdout is not one JSON value: %v", args, err)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "ERR_QUOTA_7731") {
		t.Errorf("export file: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"search", "--after", "last tuesday", "x"}, 2, "2026-11-01"},
		{[]string{"search", "--limit", "many", "x"}, 2, "whole number"},
		{[]string{"search", "--limit", "500", "x"}, 2, "1 to 200"},
		{[]string{"search", "--kind", "thoughts", "x"}, 2, "reasoning"},
		{[]string{"search", "--bogus", "x"}, 2, "unknown flag"},
		{[]string{"read"}, 2, "cursor"},
		{[]string{"read", "--limit", "51", "rc1.x.y"}, 2, "1 to 50"},
		{[]string{"frobnicate"}, 2, "recall help"},
		{[]string{"read", "rc1.eA.zz"}, 1, "search again"},
		{[]string{"export", "ses_nope"}, 1, "recall sessions"},
	} {
		args := append(append([]string{}, c.args...), "--db", db, "--index", ix)
		if c.args[0] == "frobnicate" {
			args = c.args
		}
		r := cli(t, args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, r.code, r.stderr, c.code, c.want)
		}
		if r.stdout != "" {
			t.Errorf("%v: stdout not empty on error: %q", c.args, r.stdout)
		}
	}
	r := cli(t, "search", "--db", filepath.Join(t.TempDir(), "missing.db"), "x")
	if r.code != 1 || !strings.Contains(r.stderr, "missing.db") {
		t.Errorf("missing db: exit %d %q", r.code, r.stderr)
	}
}

// User text can never cause an FTS syntax error.
func TestQueriesNeverBreakFTS(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	for _, q := range []string{`"unclosed`, `a AND OR NOT`, `NEAR(x y)`, `col:value`, `*`, `^start`, `-`, `"" -""`, `(((`, `a"b"c`, `\x00`, `'; DROP TABLE docs; --`} {
		r := cli(t, "search", "--db", db, "--index", ix, "--json", "--", q)
		if r.code != 0 {
			t.Errorf("query %q: exit %d: %s", q, r.code, r.stderr)
		}
	}
}

func TestDecodeParams(t *testing.T) {
	c, _ := Lookup("search")
	if _, err := c.Decode([]byte(`{"query":"x","limt":3}`)); !IsParamError(err) || !strings.Contains(err.Error(), "limt") || !strings.Contains(err.Error(), "limit") {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := c.Decode([]byte(`{"query":"x","limit":"3"}`)); !IsParamError(err) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("wrong type: %v", err)
	}
	if _, err := c.Decode([]byte(`[1,2]`)); !IsParamError(err) {
		t.Errorf("array params: %v", err)
	}
	p, err := Search.decode(nil)
	if err != nil || p.Query != "" {
		t.Errorf("empty params: %v", err)
	}
}

// The table, the CLI help and the reference docs never drift apart: every
// CLI command and flag is in docs/commands.md (lsp's flags in
// docs/wire.md), every field has help.
func TestTableDocumented(t *testing.T) {
	var docs strings.Builder
	for _, name := range []string{"commands.md", "wire.md"} {
		b, err := os.ReadFile(filepath.Join("..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	doc := docs.String()
	for _, c := range All() {
		spec := c.Spec()
		if spec.Summary == "" {
			t.Errorf("%s: no summary", spec.Name)
		}
		if spec.Doors&CLI != 0 && !strings.Contains(doc, "recall "+spec.Name) {
			t.Errorf("docs/commands.md does not document `recall %s`", spec.Name)
		}
		for _, f := range c.Fields() {
			if f.Help == "" && (f.Flag != "" || f.Arg != "") {
				t.Errorf("%s.%s has no help", spec.Name, f.JSON)
			}
			if f.Flag != "" && spec.Doors&CLI != 0 && !strings.Contains(doc, f.FlagName()) {
				t.Errorf("docs/commands.md does not mention %s %s", spec.Name, f.FlagName())
			}
		}
	}
}

// The progress bar of a sync says the command is finishing once every
// session is written (recording the sync, merging the full-text index
// after a bulk load: half a minute on a 4M-part history), rather than
// clearing itself and leaving the terminal silent; runCLI clears it, and
// only a bar that drew anything writes to the terminal.
func TestProgressBarSaysFinishing(t *testing.T) {
	var b strings.Builder
	sb := progressBar(&b)
	bar := sb.update
	bar(10, 40)
	if !strings.Contains(b.String(), "10/40 sessions") {
		t.Fatalf("mid-sync the bar reads %q", b.String())
	}
	bar(40, 40)
	if got := b.String(); !strings.HasSuffix(got, "\r\033[Kindexing: finishing") {
		t.Errorf("with every session written the bar ends %q", got[max(0, len(got)-40):])
	}
	b.Reset()
	sb.clear()
	if b.String() != "\r\033[K" {
		t.Errorf("clearing the bar wrote %q", b.String())
	}
	b.Reset()
	small := progressBar(&b)
	small.update(5, 10)
	small.clear()
	if b.Len() != 0 {
		t.Errorf("a sync of under 20 sessions drew or cleared %q", b.String())
	}
}
