//go:build unix

package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/lsp/daemon"
)

// cliRun is one `recall …` through commands.Main, in this process, with
// the environment the test set (t.Setenv).
type cliRun struct {
	code           int
	stdout, stderr string
}

func runMain(args ...string) cliRun {
	var out, errb bytes.Buffer
	code := commands.Main(args, strings.NewReader(""), &out, &errb)
	return cliRun{code, out.String(), errb.String()}
}

// warmEnv points the CLI's environment at the test daemons' directories.
func warmEnv(t *testing.T, d *testDaemons) {
	t.Setenv("XDG_RUNTIME_DIR", d.runtime)
	t.Setenv("XDG_DATA_HOME", d.data)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(d.data, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(d.data, "config"))
	t.Setenv("HOME", d.data)
	t.Setenv("RECALL_NO_DAEMON", "")
	t.Setenv("OPENCODE_DB", "")
	t.Setenv("RECALL_CONFIG", "")
}

// withoutTook drops the result's timing, the one field two runs of the
// same search may not share.
func withoutTook(t *testing.T, s string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	delete(m, "tookMs")
	b, _ := json.Marshal(m)
	return string(b)
}

// A CLI command with a daemon running for its history (an editor or the
// OpenCode plugin started it) runs in the daemon's warm engine, and prints
// exactly what it prints in its own process: the text, the JSON, the
// errors and exit codes. It syncs first there as it does alone, so a
// change to the history shows at once. The editor has left before: the
// daemon keeps its engine open for the next client.
func TestCLIRunsInARunningDaemon(t *testing.T) {
	d := newTestDaemons(t, time.Minute)
	d.server.PollInterval = time.Hour // no watcher sync between the runs
	var served atomic.Int32
	d.server.BeforeCommand = func(context.Context) { served.Add(1) }
	warmEnv(t, d)
	db := copyFixture(t)
	ix := filepath.Join(t.TempDir(), "index.db")
	editor := d.forward(map[string]any{"db": db, "index": ix})
	if !editor.shutdown() {
		t.Fatal("editor shutdown")
	}
	// --verbose: every notice every time (once-a-day ones too), so the
	// second run says what the first said.
	g := []string{"--db", db, "--index", ix, "--verbose"}

	// both runs a command alone and through the daemon; the daemon must
	// have run it (or refused it, for an error) exactly once.
	both := func(args ...string) (alone, warm cliRun) {
		t.Helper()
		t.Setenv("RECALL_NO_DAEMON", "1")
		before := served.Load()
		alone = runMain(append(args, g...)...)
		if n := served.Load() - before; n != 0 {
			t.Errorf("%v with RECALL_NO_DAEMON=1: the daemon ran %d commands", args, n)
		}
		t.Setenv("RECALL_NO_DAEMON", "")
		before = served.Load()
		warm = runMain(append(args, g...)...)
		if n := served.Load() - before; n != 1 {
			t.Errorf("%v: the daemon ran %d commands, want 1", args, n)
		}
		if alone.code != warm.code || alone.stderr != warm.stderr {
			t.Errorf("%v: alone exit %d %q, through the daemon exit %d %q", args, alone.code, alone.stderr, warm.code, warm.stderr)
		}
		return alone, warm
	}

	alone, warm := both("search", "--json", "--quiet", "rounding")
	if alone.code != 0 || withoutTook(t, alone.stdout) != withoutTook(t, warm.stdout) {
		t.Fatalf("search --json: alone (exit %d)\n%s\nthrough the daemon\n%s", alone.code, alone.stdout, warm.stdout)
	}
	var res struct {
		Hits []struct{ Cursor, SessionID, PartID string }
	}
	if err := json.Unmarshal([]byte(alone.stdout), &res); err != nil || len(res.Hits) == 0 {
		t.Fatalf("search found nothing to read: %v", err)
	}
	hit := res.Hits[0]
	part := ""
	for _, h := range res.Hits {
		if h.PartID != "" {
			part = h.PartID
			break
		}
	}
	texts := [][]string{
		{"search", "rounding"},
		{"search", "ERR_QUOTA_7731"},
		{"search", "--limit", "3", "--explain", "invoice"},
		{"sessions", "--limit", "5"},
		{"read", hit.Cursor},
		{"cite", hit.SessionID},
		{"read", "ses_doesnotexist"}, // an error: the CLI says it in its own words
		{"search", "--before", "2d", "rounding"},
	}
	if part != "" {
		texts = append(texts, []string{"get", part})
	}
	for _, args := range texts {
		alone, warm := both(args...)
		if alone.stdout != warm.stdout {
			t.Errorf("%v: alone\n%s\nthrough the daemon\n%s", args, alone.stdout, warm.stdout)
		}
	}

	// A change to the history: the next command through the daemon sees it.
	touchTitle(t, db, "Renamed while the daemon ran")
	before := served.Load()
	r := runMain(append([]string{"sessions", "--json", "--filter", "Renamed while"}, g...)...)
	if served.Load() != before+1 || r.code != 0 || !strings.Contains(r.stdout, "Renamed while the daemon ran") {
		t.Errorf("after a rename, sessions through the daemon (ran %d): exit %d %s %s", served.Load()-before, r.code, r.stdout, r.stderr)
	}
	// --no-sync and --log-file run in this process.
	before = served.Load()
	runMain(append([]string{"search", "--no-sync", "rounding"}, g...)...)
	runMain(append([]string{"search", "--log-file", filepath.Join(t.TempDir(), "log"), "rounding"}, g...)...)
	if n := served.Load() - before; n != 0 {
		t.Errorf("--no-sync and --log-file: the daemon ran %d commands, want 0", n)
	}
}

// The path a user takes first: an editor set up with no options (the
// plugin's setup({})) starts the daemon on the default history and index,
// and `recall search` with no flags, or with the history named by a
// relative path, runs in it.
func TestCLIDefaultsRunInTheEditorsDaemon(t *testing.T) {
	d := newTestDaemons(t, time.Minute)
	var served atomic.Int32
	d.server.BeforeCommand = func(context.Context) { served.Add(1) }
	warmEnv(t, d)
	home := filepath.Join(d.data, "opencode")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyFixture(t), filepath.Join(home, "opencode.db")); err != nil {
		t.Fatal(err)
	}
	editor := d.forward(nil)
	defer editor.shutdown()
	t.Chdir(d.data)
	for _, args := range [][]string{
		{"search", "--json", "rounding"},
		{"search", "--json", "--db", filepath.Join("opencode", "opencode.db"), "rounding"},
	} {
		before := served.Load()
		r := runMain(args...)
		if r.code != 0 || !strings.Contains(r.stdout, `"hits":[{`) {
			t.Errorf("%v: exit %d %s %s", args, r.code, r.stdout, r.stderr)
		}
		if n := served.Load() - before; n != 1 {
			t.Errorf("%v beside the editor's daemon: the daemon ran %d commands, want 1", args, n)
		}
	}
}

// With no daemon, a CLI command runs in its own process and makes
// nothing while looking for one (no runtime directory); a socket whose
// daemon accepts and never answers costs it a bounded wait, not a hang.
func TestCLIWithoutADaemon(t *testing.T) {
	d := newTestDaemons(t, time.Minute)
	warmEnv(t, d)
	rt := filepath.Join(d.runtime, "fresh")
	t.Setenv("XDG_RUNTIME_DIR", rt)
	db := copyFixture(t)
	ix := filepath.Join(t.TempDir(), "index.db")
	g := []string{"--db", db, "--index", ix}
	if r := runMain(append([]string{"search", "--json", "rounding"}, g...)...); r.code != 0 || !strings.Contains(r.stdout, `"hits":[{`) {
		t.Fatalf("search without a daemon: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(rt); !os.IsNotExist(err) {
		t.Errorf("looking for a daemon made %s (%v)", rt, err)
	}

	// A hung daemon: the socket accepts, the handshake never comes.
	res, err := engine.Resolve(engine.Options{Sources: []engine.SourceSpec{{Path: db}}, IndexPath: ix, Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	sock, _, _, err := daemon.Paths(os.Getenv, daemon.Key(res))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	r := runMain(append([]string{"search", "--json", "rounding"}, g...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"hits":[{`) {
		t.Fatalf("search beside a hung daemon: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("search beside a hung daemon took %v", took)
	}
}

// The daemon's engines outlive their last connection until the daemon
// exits: the next client finds the engine open.
func TestDaemonHostsLinger(t *testing.T) {
	db := copyFixture(t)
	ix := filepath.Join(t.TempDir(), "index.db")
	for _, linger := range []bool{false, true} {
		hs := newHosts()
		hs.linger = linger
		s := NewServer(Config{})
		key := newHostKey([]engine.SourceSpec{{Path: db}}, ix, false)
		h, err := hs.acquire(context.Background(), key, hostConfig{log: s.log, getenv: os.Getenv}, s)
		if err != nil {
			t.Fatal(err)
		}
		h.release(s)
		hs.mu.Lock()
		kept := hs.open[key] == h
		hs.mu.Unlock()
		if kept != linger {
			t.Errorf("linger %v: host kept after its last connection: %v", linger, kept)
		}
		hs.closeAll()
		if len(hs.open) != 0 {
			t.Errorf("closeAll left %d hosts", len(hs.open))
		}
		if _, err := h.eng.Sessions(context.Background(), engine.SessionsParams{Limit: 1}); err == nil {
			t.Errorf("linger %v: the engine still answers after its host closed", linger)
		}
	}
}
