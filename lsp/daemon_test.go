//go:build unix

package lsp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recallhq/recall/commands"

	"github.com/recallhq/recall/lsp/daemon"
)

// testDaemons runs daemons in this process for forwarders under test: the
// spawn function starts RunDaemon in a goroutine, as `recall lsp --daemon`
// would run in its own process.
type testDaemons struct {
	t       *testing.T
	runtime string // XDG_RUNTIME_DIR
	data    string // XDG_DATA_HOME
	idle    time.Duration
	server  Config
	spawned atomic.Int32
	mu      sync.Mutex
	done    []chan error
	logs    *testLog
}

func newTestDaemons(t *testing.T, idle time.Duration) *testDaemons {
	// A short runtime dir: a Unix socket path must stay under 108 bytes.
	rt, err := os.MkdirTemp("", "rcl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	d := &testDaemons{t: t, runtime: rt, data: t.TempDir(), idle: idle, logs: &testLog{}}
	d.server = Config{PollInterval: 50 * time.Millisecond, Getenv: d.getenv,
		Logger: slog.New(slog.NewTextHandler(d.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.logs.String())
		}
	})
	return d
}

func (d *testDaemons) getenv(k string) string {
	switch k {
	case "XDG_RUNTIME_DIR":
		return d.runtime
	case "XDG_DATA_HOME", "HOME":
		return d.data
	}
	return ""
}

func (d *testDaemons) spawn(sock, _ string) error {
	d.spawned.Add(1)
	done := make(chan error, 1)
	d.mu.Lock()
	d.done = append(d.done, done)
	d.mu.Unlock()
	go func() {
		done <- RunDaemon(context.Background(), DaemonConfig{Socket: sock, Idle: d.idle, Logger: d.server.Logger, Server: d.server})
	}()
	return nil
}

// waitExited waits for every daemon started so far to return.
func (d *testDaemons) waitExited(within time.Duration) {
	d.t.Helper()
	d.mu.Lock()
	done := append([]chan error(nil), d.done...)
	d.mu.Unlock()
	for _, c := range done {
		select {
		case err := <-c:
			if err != nil {
				d.t.Errorf("daemon: %v", err)
			}
		case <-time.After(within):
			d.t.Fatalf("the daemon did not exit within %v", within)
		}
	}
}

// forward connects a test editor through a forwarder (as `recall lsp`
// would run) to the daemons.
func (d *testDaemons) forward(initOptions map[string]any) *session {
	return d.forwardWith(sessionOptions{initOptions: initOptions})
}

// forwardWith is forward with options; a client joining a daemon whose
// first sync is done sets noWait (no recall/indexUpdated comes for it).
func (d *testDaemons) forwardWith(o sessionOptions) *session {
	t := d.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	fwConn, cliConn := net.Pipe()
	fw := &daemon.Forwarder{Getenv: d.getenv, Log: d.server.Logger, Spawn: d.spawn}
	done := make(chan bool, 1)
	go func() {
		code, err := fw.Run(ctx, fwConn, fwConn)
		if err != nil {
			t.Errorf("forwarder: %v", err)
		}
		fwConn.Close()
		done <- code == 0
	}()
	tc, conn := connectClient(ctx, cliConn)
	s := &session{t: t, ctx: ctx, conn: conn, client: tc, done: done}
	t.Cleanup(func() {
		conn.Close()
		cliConn.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("forwarder did not stop")
		}
	})
	if !o.skipInit {
		s.initialize(o)
	}
	return s
}

// Two clients on one daemon share one engine: a sync one of them asks for
// is announced to the other (no watcher poll in between: it polls hourly
// here) and its results show there.
func TestDaemonSharesOneEngine(t *testing.T) {
	d := newTestDaemons(t, time.Minute)
	d.server.PollInterval = time.Hour
	db := copyFixture(t)
	ix := filepath.Join(t.TempDir(), "index.db")
	opts := map[string]any{"db": db, "index": ix}
	a := d.forward(opts)
	b := d.forwardWith(sessionOptions{initOptions: opts, noWait: true})
	if n := d.spawned.Load(); n != 1 {
		t.Errorf("%d daemons started, want 1", n)
	}
	b.client.mu.Lock()
	b.client.custom[methodIndexUpdated] = nil
	b.client.mu.Unlock()
	touchTitle(t, db, "Renamed through client A")
	if _, err := a.call("recall/sync", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	var res struct{ Updated int }
	if err := json.Unmarshal(b.waitFor(methodIndexUpdated), &res); err != nil || res.Updated != 1 {
		t.Fatalf("client B heard %+v (%v) of client A's sync, want 1 updated", res, err)
	}
	raw, err := b.call("workspace/symbol", map[string]any{"query": "Renamed through client A"})
	if err != nil || !strings.Contains(string(raw), "Renamed through client A") {
		t.Fatalf("client B after A's sync: %s %v", raw, err)
	}
	for _, s := range []*session{a, b} {
		if !s.shutdown() {
			t.Error("shutdown+exit through the forwarder should exit 0")
		}
	}
}

func TestServeFlags(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	parse := func(args ...string) (ServeParams, error) {
		var p ServeParams
		err := commands.ParseFlags(&p, args, getenv)
		return p, err
	}
	f, err := parse("--stdio")
	if err != nil || f.NoDaemon || f.Daemon || f.DaemonIdle != DefaultDaemonIdle {
		t.Errorf("defaults: %+v %v", f, err)
	}
	env["RECALL_NO_DAEMON"], env["RECALL_DAEMON_IDLE"] = "1", "30s"
	if f, err = parse(); err != nil || !f.NoDaemon || f.DaemonIdle != 30*time.Second {
		t.Errorf("environment: %+v %v", f, err)
	}
	env = map[string]string{}
	if f, err = parse("--daemon", "--socket=/s.sock", "--daemon-idle", "2m"); err != nil || !f.Daemon || f.Socket != "/s.sock" || f.DaemonIdle != 2*time.Minute {
		t.Errorf("daemon flags: %+v %v", f, err)
	}
	for _, bad := range [][]string{{"--daemon"}, {"--daemon-idle", "soon"}, {"--daemon-idle", "-1s"}, {"--tcp"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	env["RECALL_DAEMON_IDLE"] = "soon"
	if _, err := parse(); err == nil || !strings.Contains(err.Error(), "RECALL_DAEMON_IDLE") {
		t.Errorf("a bad RECALL_DAEMON_IDLE: %v, want an error naming it", err)
	}
}

// Neovim's setup({}) sends initializationOptions as []: the forwarder must
// read that as no options and reach the daemon (it used to fail to decode
// it and serve in-process, without the shared engine), which then answers
// from the demo history since this HOME has none.
func TestForwarderEmptyArrayOptions(t *testing.T) {
	d := newTestDaemons(t, time.Minute)
	s := d.forwardWith(sessionOptions{skipInit: true})
	raw, err := s.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": []any{}})
	if err != nil || !strings.Contains(string(raw), `"executeCommandProvider"`) {
		t.Fatalf("initialize with []: %s %v", raw, err)
	}
	if n := d.spawned.Load(); n != 1 {
		t.Errorf("%d daemons started, want 1 (the forwarder fell back to serving in-process)", n)
	}
}
