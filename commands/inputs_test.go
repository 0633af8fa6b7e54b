package commands

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recallhq/recall/engine"
)

// forget of a session the index does not hold is bad input (exit 2, and
// -32602 over JSON-RPC: see lsp), naming the session and how to list ids.
func TestForgetUnknownSession(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	r := cli(t, "forget", "ses_nope", "--db", db, "--index", ix)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "ses_nope") || !strings.Contains(r.stderr, "recall sessions") {
		t.Errorf("forget ses_nope: exit %d, stderr %q; want exit 2 naming the session and `recall sessions`", r.code, r.stderr)
	}
	c, _ := Lookup("forget")
	call, err := c.Decode(json.RawMessage(`{"session":"ses_nope"}`))
	if err != nil {
		t.Fatal(err)
	}
	eng := openEngine(t, db, ix)
	if _, err := call.Run(t.Context(), &Env{Engine: eng}); !IsParamError(err) {
		t.Errorf("forget ses_nope through the table: %v, want a ParamError", err)
	}
}

func openEngine(t *testing.T, db, ix string) *engine.Engine {
	t.Helper()
	eng, err := engine.Open(t.Context(), engine.Options{DBPath: db, IndexPath: ix, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// A query over MaxQueryBytes is refused at once with bounded memory, from
// the CLI and the JSON door alike (a 50 MiB query took 5-18 s and 470 MB).
func TestQueryTooLong(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	huge := strings.Repeat("deadbeef ", 50<<20/9)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := cli(t, "search", "--db", db, "--index", ix, "--", huge)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "query") || !strings.Contains(r.stderr, "16 KiB") {
		t.Errorf("50 MiB query: exit %d, stderr %.300q; want exit 2 naming query and the 16 KiB limit", r.code, r.stderr)
	}
	t.Logf("refused a %d MiB query in %v, %d MiB allocated", len(huge)>>20, took, (after.TotalAlloc-before.TotalAlloc)>>20)
	// One copy of the query is made joining the arguments; nothing else.
	if alloc := after.TotalAlloc - before.TotalAlloc; took > 2*time.Second || alloc > 2*uint64(len(huge)) {
		t.Errorf("refusing a 50 MiB query took %v and allocated %d MiB", took, alloc>>20)
	}
	for _, name := range []string{"search", "sessions"} {
		c, _ := Lookup(name)
		field := map[string]string{"search": "query", "sessions": "filter"}[name]
		raw, _ := json.Marshal(map[string]string{field: huge})
		if _, err := c.Decode(raw); !IsParamError(err) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s with a 50 MiB %s over JSON: %v, want a ParamError naming it", name, field, err)
		}
	}
	// A query at the limit is fine.
	if r := cli(t, "search", "--db", db, "--index", ix, "--json", "--", strings.Repeat("x", engine.MaxQueryBytes)); r.code != 0 {
		t.Errorf("query of exactly MaxQueryBytes: exit %d %s", r.code, r.stderr)
	}
}

// plantOutput appends text to the output of one tool call in a copy of the
// fixture and returns the copy.
func plantOutput(t *testing.T, text string) string {
	t.Helper()
	db := fixtureDB(t)
	w, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	res, err := w.Exec(`UPDATE part SET data = json_set(data, '$.state.output', json_extract(data, '$.state.output') || ?)
		WHERE id = (SELECT id FROM part WHERE json_extract(data, '$.type') = 'tool' AND json_extract(data, '$.tool') = 'bash'
			AND json_extract(data, '$.state.status') = 'completed' ORDER BY id LIMIT 1)`, "\n"+text+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("planted in %d parts", n)
	}
	return db
}

// Tokens longer than 64 characters (a sha512, a long request id, a base64
// blob) are indexed and found; a query of a long token that is nowhere is
// no matches, never "recent activity" passed off as results.
func TestLongTokensAreSearchable(t *testing.T) {
	sha512 := "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"
	blob := strings.Repeat("QUJDREVGR0hJSktMTU5PUA", 9) // 198 base64 characters
	db := plantOutput(t, "checksum "+sha512+" ok; payload "+blob)
	ix := filepath.Join(t.TempDir(), "i.db")
	for _, q := range []string{sha512, strings.ToUpper(sha512), blob} {
		var res engine.SearchResult
		decodeJSON(t, cli(t, "search", "--db", db, "--index", ix, "--json", "--", q), &res)
		if res.Mode == "recent" || len(res.Hits) == 0 || !strings.Contains(strings.ToLower(res.Hits[0].Snippet), strings.ToLower(q[:40])) {
			t.Errorf("search %.20s…: mode %s, %d hits (first %+v); want the planted output", q, res.Mode, len(res.Hits), res.Hits)
		}
	}
	absent := strings.Repeat("0123456789abcdef", 6) // 96 characters, nowhere in the history
	var res engine.SearchResult
	decodeJSON(t, cli(t, "search", "--db", db, "--index", ix, "--json", "--", absent), &res)
	if res.Mode == "recent" || len(res.Hits) != 0 {
		t.Errorf("absent long token: mode %s, %d hits; want no matches", res.Mode, len(res.Hits))
	}
	r := cli(t, "search", "--db", db, "--index", ix, "--", absent)
	if r.code != 0 || !strings.Contains(r.stdout, "no matches") {
		t.Errorf("absent long token, text output: exit %d %q", r.code, r.stdout)
	}
	// Longer than any indexed token: no matches, and a notice says why.
	tooLong := strings.Repeat("ab12", 100)
	decodeJSON(t, cli(t, "search", "--db", db, "--index", ix, "--json", "--", tooLong), &res)
	if res.Mode == "recent" || len(res.Hits) != 0 || !strings.Contains(strings.Join(res.Notices, " "), "256") {
		t.Errorf("400-character token: mode %s, %d hits, notices %q; want no matches and a notice naming the 256 limit", res.Mode, len(res.Hits), res.Notices)
	}
	// Nothing searchable at all (punctuation) is not recent activity either.
	decodeJSON(t, cli(t, "search", "--db", db, "--index", ix, "--json", "--", "!!! ???"), &res)
	if res.Mode == "recent" || len(res.Hits) != 0 || len(res.Notices) == 0 {
		t.Errorf("punctuation-only query: mode %s, %d hits, notices %q; want no matches with a notice", res.Mode, len(res.Hits), res.Notices)
	}
}

// export -o refuses anything but a regular file or a new path (exit 2),
// and leaves what it refused untouched; as root, a device node replaced by
// the export was the bug.
func TestExportRefusesSpecialFiles(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	r := cli(t, "sessions", "--db", db, "--index", ix, "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	id := firstSessionID(t, r.stdout)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	targets := map[string]string{"fifo": fifo, "directory": sub}
	if l := filepath.Join(dir, "link-to-fifo"); os.Symlink(fifo, l) == nil {
		targets["symlink to a fifo"] = l
	}
	var dev string
	if os.Geteuid() == 0 {
		dev = filepath.Join(dir, "null")
		// The numbers of /dev/null (1, 3) on Linux.
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
			t.Fatalf("mknod as root: %v", err)
		}
		targets["device node"] = dev
		l := filepath.Join(dir, "link-to-null")
		os.Symlink(dev, l)
		targets["symlink to a device node"] = l
	} else {
		t.Log("not root: the device node cases need mknod (CI runs as root)")
	}
	for what, target := range targets {
		r := cli(t, "export", id, "-o", target, "--db", db, "--index", ix)
		if r.code != ExitUsage || !strings.Contains(r.stderr, target) || !strings.Contains(r.stderr, "regular file") {
			t.Errorf("export -o %s: exit %d, stderr %q; want exit 2 naming the path and asking for a regular file", what, r.code, r.stderr)
		}
	}
	if dev != "" {
		if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("the device node after export -o: %v, %v", st.Mode(), err)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the fifo after export -o: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".recall-export") {
			t.Errorf("export left %s", e.Name())
		}
	}
	// A new path and an existing regular file are fine.
	for _, target := range []string{filepath.Join(dir, "new.md"), filepath.Join(dir, "new.md")} {
		if r := cli(t, "export", id, "-o", target, "--db", db, "--index", ix); r.code != 0 {
			t.Errorf("export -o %s: exit %d %s", target, r.code, r.stderr)
		}
	}
	// A symlink to a regular file is written through: the link stays.
	link := filepath.Join(dir, "link.md")
	os.Symlink(filepath.Join(dir, "new.md"), link)
	if r := cli(t, "export", id, "-o", link, "--db", db, "--index", ix); r.code != 0 {
		t.Errorf("export -o a symlink to a regular file: exit %d %s", r.code, r.stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink after export -o: %v %v", st, err)
	}
	// A missing directory: the message names the user's path, not a
	// temporary file's.
	missing := filepath.Join(dir, "no", "such", "dir", "out.md")
	r = cli(t, "export", id, "-o", missing, "--db", db, "--index", ix)
	if r.code == 0 || !strings.Contains(r.stderr, missing) || strings.Contains(r.stderr, ".recall-export") {
		t.Errorf("export -o into a missing directory: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A write error on stdout (a full disk: /dev/full) exits 1 with a message,
// for every command's text and JSON output.
func TestStdoutWriteErrors(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	var cursor string
	{
		var res engine.SearchResult
		decodeJSON(t, cli(t, "search", "--db", db, "--index", ix, "--json", "ERR_QUOTA_7731"), &res)
		if len(res.Hits) == 0 {
			t.Fatal("no hits")
		}
		cursor = res.Hits[0].Cursor
	}
	r := cli(t, "sessions", "--db", db, "--index", ix, "--json")
	id := firstSessionID(t, r.stdout)
	for _, args := range [][]string{
		{"status"}, {"status", "--json"},
		{"sessions"}, {"sessions", "--json"},
		{"search", "ERR_QUOTA_7731"}, {"search", "--json", "ERR_QUOTA_7731"}, {"search", "zzzqqqxxx"},
		{"read", cursor}, {"read", "--format", "json", cursor}, {"read", "--json", cursor},
		{"export", id}, {"export", "--format", "jsonl", id},
		{"files", "/nowhere"}, {"sync"}, {"version"}, {"help"},
	} {
		var stderr bytes.Buffer
		code := Main(append(args, "--db", db, "--index", ix), nil, full, &stderr)
		want := "recall " + args[0] + ": write output:"
		if code != ExitFailure || !strings.Contains(stderr.String(), want) {
			t.Errorf("%v > /dev/full: exit %d, stderr %q; want exit 1 and %q", args, code, stderr.String(), want)
		}
	}
}
