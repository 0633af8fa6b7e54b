package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine"
)

// OPENCODE_DB naming a file that is not there fails as --db does (exit 1,
// the path named, nothing on stdout); it used to show the demo history
// and exit 0.
func TestOpencodeDBMissingFailsLikeDB(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	missing := filepath.Join(t.TempDir(), "typo", "opencode.db")
	byFlag := cli(t, "search", "--db", missing, "invoice")
	t.Setenv("OPENCODE_DB", missing)
	byEnv := cli(t, "search", "invoice")
	for name, r := range map[string]run{"--db": byFlag, "OPENCODE_DB": byEnv} {
		if r.code != ExitFailure || r.stdout != "" || !strings.Contains(r.stderr, missing) || strings.Contains(r.stderr, "demo") {
			t.Errorf("%s naming a missing file: exit %d, stdout %q, stderr %q; want exit 1 naming %s, no demo", name, r.code, r.stdout, r.stderr, missing)
		}
	}
	if !strings.Contains(byEnv.stderr, "OPENCODE_DB") {
		t.Errorf("the error does not say the path came from OPENCODE_DB: %q", byEnv.stderr)
	}
	// Set to a history that is there, it is read.
	t.Setenv("OPENCODE_DB", fixtureDB(t))
	if r := cli(t, "search", "--index", filepath.Join(t.TempDir(), "i.db"), "--quiet", "invoice"); r.code != 0 || !strings.Contains(r.stdout, "invoice") {
		t.Errorf("OPENCODE_DB naming a history: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A relative --directory is the directory under the working directory,
// in search and sessions as in files; it used to match nothing.
func TestRelativeDirectory(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	const abs = "/tmp/ocgen/recall-v1/projects/ledger" // where the fixture's sessions ran
	t.Chdir("/")
	for _, cmd := range [][]string{{"search", "invoice"}, {"sessions"}} {
		want := cli(t, append(cmd, "--db", db, "--index", ix, "--json", "--directory", abs)...)
		got := cli(t, append(cmd, "--db", db, "--index", ix, "--json", "--directory", strings.TrimPrefix(abs, "/"))...)
		if want.code != 0 || got.code != 0 {
			t.Fatalf("%s: exit %d/%d %s %s", cmd[0], want.code, got.code, want.stderr, got.stderr)
		}
		var w, g struct {
			Hits     []json.RawMessage `json:"hits"`
			Sessions []json.RawMessage `json:"sessions"`
		}
		decodeJSON(t, want, &w)
		decodeJSON(t, got, &g)
		if len(w.Hits)+len(w.Sessions) == 0 || len(g.Hits) != len(w.Hits) || len(g.Sessions) != len(w.Sessions) {
			t.Errorf("%s --directory relative: %d hits, %d sessions; absolute: %d, %d", cmd[0], len(g.Hits), len(g.Sessions), len(w.Hits), len(w.Sessions))
		}
	}
	// Over the wire too: the params normalise to the absolute path.
	p := &SearchParams{Directory: "."}
	if err := p.Validate(); err != nil || p.Directory != "/" {
		t.Errorf("directory . from / validated to %q (%v)", p.Directory, err)
	}
}

// export -o takes its format from the file's extension, refuses a
// --format the extension contradicts, and sends .json to .jsonl; it used
// to write ChatML into notes.md.
func TestExportFormatFromExtension(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	r := cli(t, "sessions", "--db", db, "--index", ix, "--json", "--limit", "1")
	id := firstSessionID(t, r.stdout)
	dir := t.TempDir()
	for _, c := range []struct{ file, start string }{{"notes.md", "# "}, {"notes.MARKDOWN", "# "}, {"s.jsonl", "{"}, {"s.txt", "<|im_start|>"}, {"s.chatml", "<|im_start|>"}, {"s", "<|im_start|>"}} {
		out := filepath.Join(dir, c.file)
		if r := cli(t, "export", id, "-o", out, "--db", db, "--index", ix, "--quiet"); r.code != 0 {
			t.Fatalf("export -o %s: exit %d %s", c.file, r.code, r.stderr)
		}
		b, _ := os.ReadFile(out)
		if !strings.HasPrefix(string(b), c.start) {
			t.Errorf("export -o %s starts %q, want %q", c.file, clipText(string(b), 40), c.start)
		}
		if c.start == "{" {
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if !json.Valid(sc.Bytes()) {
					t.Errorf("%s holds a line that is not JSON: %q", c.file, clipText(sc.Text(), 60))
					break
				}
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", filepath.Join(dir, "x.md"), "--format", "jsonl"}, "x.md says markdown"},
		{[]string{"-o", filepath.Join(dir, "x.json")}, ".jsonl"},
	} {
		r := cli(t, append([]string{"export", id, "--db", db, "--index", ix}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("export %v: exit %d %q; want exit 2 saying %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if r := cli(t, "export", id, "-o", filepath.Join(dir, "x.json"), "--format", "jsonl", "--db", db, "--index", ix, "--quiet"); r.code != 0 {
		t.Errorf("export -o x.json --format jsonl (asked for): exit %d %s", r.code, r.stderr)
	}
}

// -o into a directory that does not exist names that directory, never the
// temporary file export writes through.
func TestExportIntoMissingDirectory(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	id := firstSessionID(t, cli(t, "sessions", "--db", db, "--index", ix, "--json", "--limit", "1").stdout)
	dir := filepath.Join(t.TempDir(), "no", "such")
	r := cli(t, "export", id, "-o", filepath.Join(dir, "notes.md"), "--db", db, "--index", ix, "--quiet")
	if r.code == 0 || !strings.Contains(r.stderr, "the directory "+dir+" does not exist") || strings.Contains(r.stderr, ".recall-export") {
		t.Errorf("export into a missing directory: exit %d %q", r.code, r.stderr)
	}
}

// A partial search says so in text, as "partial": true does in JSON.
func TestPrintSearchPartial(t *testing.T) {
	var b bytes.Buffer
	printSearch(&b, engine.SearchResult{Partial: true, Corrections: []string{"invoise → invoice"}})
	for _, want := range []string{"partial:", "corrected: invoise → invoice", "no matches"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text of a partial, corrected search lacks %q:\n%s", want, b.String())
		}
	}
}

// The demo and no-model notices are said once a day (per demo index),
// not on every command; --verbose says them every time. They used to
// repeat on every command.
func TestRepeatedNoticesOnceADay(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("OPENCODE_DB", "")
	first := cli(t, "search", "invoice")
	if first.code != 0 || !strings.Contains(first.stderr, engine.DemoNotice) || !strings.Contains(first.stderr, engine.NoModelNotice) {
		t.Fatalf("first command: exit %d, stderr %q; want both notices", first.code, first.stderr)
	}
	again := cli(t, "search", "invoice")
	if again.code != 0 || strings.Contains(again.stderr, engine.DemoNotice) || strings.Contains(again.stderr, engine.NoModelNotice) {
		t.Errorf("the same notices again on the next command: %q", again.stderr)
	}
	verbose := cli(t, "search", "--verbose", "invoice")
	if !strings.Contains(verbose.stderr, engine.DemoNotice) || !strings.Contains(verbose.stderr, engine.NoModelNotice) {
		t.Errorf("--verbose does not say the notices: %q", verbose.stderr)
	}
	// --json keeps them in its notices whatever stderr said.
	var res engine.SearchResult
	decodeJSON(t, cli(t, "search", "--json", "invoice"), &res)
	if !slices.Contains(res.Notices, engine.NoModelNotice) {
		t.Errorf("--json lost the no-model notice: %v", res.Notices)
	}
}

// The README's first command on a machine with no OpenCode history: no
// flags, no config, a fresh HOME. It searches the bundled demo history and
// says so once on stderr, and the next run (same day) stays quiet.
func TestReadmeFirstCommandOnTheDemo(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "OPENCODE_DB", "RECALL_CONFIG"} {
		t.Setenv(v, "")
	}
	first := cli(t, "search", "webhook retry storm")
	if first.code != 0 || !strings.Contains(first.stdout, "Stop webhook retry storm with backoff and jitter") {
		t.Fatalf("recall search on a fresh HOME: exit %d\nstdout %q\nstderr %q", first.code, first.stdout, first.stderr)
	}
	if !strings.Contains(first.stderr, "demo") {
		t.Errorf("the first run does not say it searched the demo history: %q", first.stderr)
	}
	again := cli(t, "search", "webhook retry storm")
	if again.code != 0 || again.stdout != first.stdout || strings.Contains(again.stderr, "demo") {
		t.Errorf("the second run: exit %d, same hits %v, stderr %q (the demo notice is said once a day)", again.code, again.stdout == first.stdout, again.stderr)
	}
}

// Relative --db and --index, twice: the second run finds the index its
// first sync wrote for the same, unchanged history, so it takes the
// engine's lazy open of the history (which resolves the path itself),
// and answers as the first did.
func TestRelativePathsTwice(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "hist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fixtureDB(t), filepath.Join(root, "hist", "opencode.db")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	first := cli(t, "search", "--db", "hist/opencode.db", "--index", "idx/i.db", "--json", "ERR_QUOTA_7731")
	if first.code != 0 || !strings.Contains(first.stdout, "ERR_QUOTA_7731") {
		t.Fatalf("relative paths: exit %d\nstdout %q\nstderr %q", first.code, first.stdout, first.stderr)
	}
	again := cli(t, "search", "--db", "hist/opencode.db", "--index", "idx/i.db", "--json", "ERR_QUOTA_7731")
	strip := func(s string) string { return regexp.MustCompile(`"tookMs":\d+`).ReplaceAllString(s, "") }
	if again.code != 0 || strip(again.stdout) != strip(first.stdout) {
		t.Errorf("the second run with relative paths: exit %d, same result %v, stderr %q", again.code, strip(again.stdout) == strip(first.stdout), again.stderr)
	}
}
