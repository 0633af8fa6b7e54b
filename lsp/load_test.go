//go:build unix

package lsp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recallhq/recall/engine"
)

// Load test budgets: three clients, a bounded number of requests each,
// while a fourth forces full re-indexes of a history big enough that one
// takes seconds (loadCopies × the v1 fixture: ~1,200 sessions, ~22k parts;
// a tenth of it under the race detector, which slows the engine tenfold).
const (
	loadClients  = 3
	loadRequests = 100
	maxReindexes = 5
)

var loadCopies = map[bool]int{false: 120, true: 12}[raceEnabled]

// bigHistory copies the v1 fixture and multiplies its sessions (with
// their messages and parts) copies times under fresh ids, the way
// engine/sync_test.go makes new sessions; titles get the copy number.
func bigHistory(t testing.TB, copies int) string {
	t.Helper()
	db := copyFixture(t)
	w, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	run := func(q string, args ...any) {
		if _, err := w.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	run(`BEGIN`)
	run(`CREATE TEMP TABLE s0 AS SELECT * FROM session`)
	run(`CREATE TEMP TABLE m0 AS SELECT * FROM message`)
	run(`CREATE TEMP TABLE p0 AS SELECT * FROM part`)
	for k := 1; k <= copies; k++ {
		sfx := fmt.Sprintf("K%d", k)
		run(`CREATE TEMP TABLE s1 AS SELECT * FROM temp.s0`)
		run(`UPDATE temp.s1 SET id = id || ?1, parent_id = CASE WHEN parent_id IS NULL THEN NULL ELSE parent_id || ?1 END,
			title = title || ' (copy ' || ?2 || ')', time_created = time_created - ?2 * 60000, time_updated = time_updated - ?2 * 60000`, sfx, k)
		run(`INSERT INTO session SELECT * FROM temp.s1`)
		run(`DROP TABLE temp.s1`)
		run(`INSERT INTO message SELECT id || ?1, session_id || ?1, time_created, time_updated, data FROM temp.m0`, sfx)
		run(`INSERT INTO part SELECT id || ?1, message_id || ?1, session_id || ?1, time_created, time_updated, data FROM temp.p0`, sfx)
	}
	run(`COMMIT`)
	return db
}

// presync builds the index of db at ix (the servers then start on an
// index that is up to date: their own first syncs are idle).
func presync(t testing.TB, db, ix string) time.Duration {
	t.Helper()
	eng, err := engine.Open(context.Background(), engine.Options{DBPath: db, IndexPath: ix, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	start := time.Now()
	if _, err := eng.Sync(context.Background(), engine.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// loadReport is what one load run measured.
type loadReport struct {
	requests, errors, duringSync int
	p50, p99, max                time.Duration
	reindexes                    int
	reindexTook                  []time.Duration
	perMethod                    map[string]time.Duration // p50
}

func (r loadReport) String() string {
	var methods []string
	for m, d := range r.perMethod {
		methods = append(methods, fmt.Sprintf("%s %v", m, d.Round(10*time.Microsecond)))
	}
	slices.Sort(methods)
	return fmt.Sprintf("%d requests (%d while a forced sync ran), %d errors; p50 %v, p99 %v, max %v; %d forced syncs took %v; p50 by method: %s",
		r.requests, r.duringSync, r.errors, r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.max.Round(time.Millisecond),
		r.reindexes, r.reindexTook, strings.Join(methods, ", "))
}

// runLoad drives loadRequests mixed requests from each client at once
// while reindexer forces full syncs back to back (at most maxReindexes).
func runLoad(t *testing.T, clients []*session, reindexer *session) loadReport {
	t.Helper()
	// What the requests need: a cursor, ids for hovers, a file path.
	raw, err := clients[0].call("recall/search", map[string]any{"query": "ERR_QUOTA_7731", "limit": 5})
	if err != nil {
		t.Fatal(err)
	}
	var sr struct {
		Hits []struct{ Cursor, SessionID, MessageID string }
	}
	if err := json.Unmarshal(raw, &sr); err != nil || len(sr.Hits) == 0 {
		t.Fatalf("no hits to read: %s", raw)
	}
	hit := sr.Hits[0]
	doc := "file:///load-ids.txt"
	text := hit.SessionID + "\n" + hit.MessageID + "\n"
	for _, c := range clients {
		c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": doc, "languageId": "text", "version": 1, "text": text}})
	}
	queries := []string{"rounding drift invoice", "ERR_QUOTA_7731", "worker.log error code", "normalize_invoice_totals", "changelog entry", ""}
	kinds := []func(n int) (string, any){
		func(n int) (string, any) {
			return "recall/search", map[string]any{"query": queries[n%len(queries)], "limit": 10}
		},
		func(int) (string, any) {
			return "recall/read", map[string]any{"cursor": hit.Cursor, "format": "chatml"}
		},
		func(int) (string, any) { return "recall/sessions", map[string]any{"limit": 20} },
		func(int) (string, any) { return "recall/status", map[string]any{} },
		func(n int) (string, any) {
			return "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": doc}, "position": map[string]any{"line": n % 2, "character": 6}}
		},
		func(n int) (string, any) {
			return "workspace/symbol", map[string]any{"query": []string{"invoice", "nightly worker", "copy 7"}[n%3]}
		},
		func(int) (string, any) {
			return "workspace/textDocumentContent", map[string]any{"uri": "recall:/session/" + hit.SessionID + "?around=" + hit.MessageID}
		},
		func(int) (string, any) {
			return "recall/files", map[string]any{"path": "/tmp/ocgen/recall-v1/projects/ledger/CHANGELOG.md", "limit": 20}
		},
	}

	var syncing atomic.Bool
	rep := loadReport{perMethod: map[string]time.Duration{}}
	loadDone := make(chan struct{})
	reindexDone := make(chan struct{})
	begun := make(chan struct{})
	go func() {
		defer close(reindexDone)
		for i := 0; i < maxReindexes; i++ {
			if i > 0 {
				select {
				case <-loadDone:
					return
				default:
				}
			}
			syncing.Store(true)
			if i == 0 {
				close(begun)
			}
			start := time.Now()
			_, err := reindexer.call("workspace/executeCommand", map[string]any{"command": "recall.reindex"})
			syncing.Store(false)
			rep.reindexTook = append(rep.reindexTook, time.Since(start).Round(10*time.Millisecond))
			rep.reindexes++
			if err != nil {
				t.Errorf("reindex: %v", err)
			}
		}
	}()
	<-begun
	time.Sleep(100 * time.Millisecond) // the forced sync is under way

	type sample struct {
		method string
		d      time.Duration
		during bool
		err    error
	}
	samples := make(chan sample, loadClients*loadRequests)
	var wg sync.WaitGroup
	for ci, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range loadRequests {
				method, params := kinds[(n+ci)%len(kinds)](n)
				during := syncing.Load()
				start := time.Now()
				_, err := c.call(method, params)
				samples <- sample{method, time.Since(start), during && syncing.Load(), err}
			}
		}()
	}
	wg.Wait()
	close(loadDone)
	close(samples)
	<-reindexDone
	var all []time.Duration
	by := map[string][]time.Duration{}
	for s := range samples {
		rep.requests++
		if s.err != nil {
			rep.errors++
			t.Errorf("%s: %v", s.method, s.err)
		}
		if s.during {
			rep.duringSync++
		}
		all = append(all, s.d)
		by[s.method] = append(by[s.method], s.d)
	}
	pct := func(ds []time.Duration, p float64) time.Duration {
		slices.Sort(ds)
		return ds[min(len(ds)-1, int(float64(len(ds))*p))]
	}
	rep.p50, rep.p99, rep.max = pct(all, 0.50), pct(all, 0.99), pct(all, 1)
	for m, ds := range by {
		rep.perMethod[m] = pct(ds, 0.50)
	}
	return rep
}

// Three editors on one index, each its own in-process server, answer 100
// mixed requests each with no error while a fourth forces full re-indexes.
func TestLoadInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	db := bigHistory(t, loadCopies)
	ix := filepath.Join(t.TempDir(), "index.db")
	t.Logf("history: %d copies of the v1 fixture; first sync %v", loadCopies, presync(t, db, ix).Round(time.Millisecond))
	var clients []*session
	home := t.TempDir() // one user: one cursor key
	for range loadClients + 1 {
		clients = append(clients, startSession(t, sessionOptions{db: db, index: ix, noWait: true, home: home}))
	}
	rep := runLoad(t, clients[:loadClients], clients[loadClients])
	t.Logf("in-process, %d servers on one index: %v", loadClients, rep)
	if rep.errors > 0 || rep.duringSync == 0 {
		t.Errorf("%d errors, %d requests during a forced sync", rep.errors, rep.duringSync)
	}
}

// The same load through the built binary: three `recall lsp` forwarders
// on one shared daemon, a fourth asking for the re-indexes.
func TestLoadDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	bin := recallBinary(t)
	const copies = 120 // the binary is never race-instrumented
	db := bigHistory(t, copies)
	dir := t.TempDir()
	ix := filepath.Join(dir, "index.db")
	start := time.Now()
	if out, err := exec.Command(bin, "sync", "--db", db, "--index", ix).CombinedOutput(); err != nil {
		t.Fatalf("recall sync: %v\n%s", err, out)
	}
	t.Logf("history: %d copies of the v1 fixture; first sync (recall sync) %v", copies, time.Since(start).Round(time.Millisecond))
	rt, err := os.MkdirTemp("", "rcl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(rt)
	env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+rt, "RECALL_NO_DAEMON=", "RECALL_DAEMON_IDLE=1s")
	var clients []*session
	for range loadClients + 1 {
		clients = append(clients, binarySession(t, bin, env, "--db", db, "--index", ix))
	}
	pid := daemonPID(t, rt)
	rep := runLoad(t, clients[:loadClients], clients[loadClients])
	t.Logf("daemon, %d forwarders over the built binary: %v", loadClients, rep)
	if rep.errors > 0 || rep.duringSync == 0 {
		t.Errorf("%d errors, %d requests during a forced sync", rep.errors, rep.duringSync)
	}
	for _, c := range clients {
		if !c.shutdown() {
			t.Error("a forwarder did not exit 0 after shutdown+exit")
		}
	}
	if again := daemonPID(t, rt); again != pid {
		t.Errorf("clients reached daemons %d and %d, want one", pid, again)
	}
	waitUntil(t, func() bool { return processGone(pid) }, "the idle daemon to exit")
}

// binarySession is a test editor speaking to `recall lsp args...` over its
// stdio, initialized.
func binarySession(t *testing.T, bin string, env []string, args ...string) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(bin, append([]string{"lsp"}, args...)...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- cmd.Wait() == nil }()
	tc, conn := connectClient(ctx, procPipe{stdout, stdin})
	s := &session{t: t, ctx: ctx, conn: conn, client: tc, done: done}
	t.Cleanup(func() {
		conn.Close()
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("recall lsp stderr:\n%s", stderr.String())
		}
	})
	s.initialize(sessionOptions{noWait: true})
	return s
}

type procPipe struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p procPipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p procPipe) Close() error                { p.w.Close(); return p.ReadCloser.Close() }
