//go:build unix

package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/lsp/frame"
)

// fixtureDB is the repo's real OpenCode history: the forwarder resolves
// the client's db like the server would.
var fixtureDB = filepath.Join("..", "..", "testdata", "opencode", "v1", "opencode.db")

// echoServe stands in for an LSP session (package lsp's): it answers each
// frame with the same body, until the client leaves.
func echoServe(_ context.Context, conn io.ReadWriteCloser, _ Hello) bool {
	defer conn.Close()
	r := frame.NewReader(conn, frame.MaxMessageBytes)
	for {
		f, err := r.Next(frame.MaxMessageBytes)
		if err != nil {
			return true
		}
		fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%s", len(f.Body), f.Body)
	}
}

// testEnv runs daemons in this process, as `recall lsp --daemon` would in
// its own, for the forwarders under test.
type testEnv struct {
	t             *testing.T
	runtime, data string
	idle          time.Duration
	spawned       atomic.Int32
	mu            sync.Mutex
	done          []chan error
}

func newTestEnv(t *testing.T, idle time.Duration) *testEnv {
	rt, err := os.MkdirTemp("", "rcl") // a Unix socket path must stay under 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	return &testEnv{t: t, runtime: rt, data: t.TempDir(), idle: idle}
}

func (e *testEnv) getenv(k string) string {
	switch k {
	case "XDG_RUNTIME_DIR":
		return e.runtime
	case "XDG_DATA_HOME", "HOME":
		return e.data
	}
	return ""
}

func (e *testEnv) spawn(sock, _ string) error {
	e.spawned.Add(1)
	done := make(chan error, 1)
	e.mu.Lock()
	e.done = append(e.done, done)
	e.mu.Unlock()
	go func() { done <- Run(context.Background(), Config{Socket: sock, Idle: e.idle, Serve: echoServe}) }()
	return nil
}

// client is an editor talking through a forwarder.
type client struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *frame.Reader
	code chan int
}

func (e *testEnv) forward(db, ix string) *client {
	t := e.t
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	fw := &Forwarder{Getenv: e.getenv, Log: slog.New(slog.DiscardHandler), Spawn: e.spawn}
	c := &client{t: t, in: inW, out: frame.NewReader(outR, frame.MaxMessageBytes), code: make(chan int, 1)}
	go func() {
		code, err := fw.Run(context.Background(), inR, outW)
		if err != nil {
			t.Errorf("forwarder: %v", err)
		}
		outW.Close()
		c.code <- code
	}()
	t.Cleanup(func() { inW.Close() })
	c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"db":"` + db + `","index":"` + ix + `"}}}`)
	return c
}

func (c *client) send(body string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatal(err)
	}
}

// roundTrip sends a message and waits for the daemon's answer to it.
func (c *client) roundTrip(body string) {
	c.t.Helper()
	c.send(body)
	got := make(chan string, 1)
	go func() {
		f, err := c.out.Next(frame.MaxMessageBytes)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(f.Body)
	}()
	select {
	case b := <-got:
		if b != body {
			c.t.Fatalf("the daemon answered %q to %q", b, body)
		}
	case <-time.After(10 * time.Second):
		c.t.Fatalf("no answer to %q", body)
	}
}

// leave sends shutdown and exit and closes stdin; it returns the
// forwarder's exit code.
func (c *client) leave() int {
	c.t.Helper()
	c.roundTrip(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`)
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	c.in.Close()
	go func() { // what is left, up to the daemon's end
		for {
			if _, err := c.out.Next(frame.MaxMessageBytes); err != nil {
				return
			}
		}
	}()
	select {
	case code := <-c.code:
		return code
	case <-time.After(10 * time.Second):
		c.t.Fatal("the forwarder did not return")
	}
	return -1
}

func (e *testEnv) waitExited(within time.Duration) {
	e.t.Helper()
	e.mu.Lock()
	done := append([]chan error(nil), e.done...)
	e.mu.Unlock()
	for _, c := range done {
		select {
		case err := <-c:
			if err != nil {
				e.t.Errorf("daemon: %v", err)
			}
		case <-time.After(within):
			e.t.Fatalf("the daemon did not exit within %v", within)
		}
	}
}

// The socket is 0600 in a 0700 directory; a connected client keeps the
// daemon alive past its idle time; once it left, the daemon exits and
// removes its socket; shutdown+exit makes the forwarder exit 0.
func TestSocketAndIdleExit(t *testing.T) {
	e := newTestEnv(t, 300*time.Millisecond)
	c := e.forward(fixtureDB, filepath.Join(t.TempDir(), "index.db"))
	socks, _ := filepath.Glob(filepath.Join(e.runtime, "recall", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets: %v", socks)
	}
	if st, err := os.Stat(socks[0]); err != nil || st.Mode().Perm() != 0o600 || st.Mode().Type() != os.ModeSocket {
		t.Errorf("socket %s: %v %v, want a 0600 socket", socks[0], st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(socks[0])); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("socket dir: %v %v, want 0700", st.Mode(), err)
	}
	time.Sleep(600 * time.Millisecond) // twice the idle time, connected
	c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"recall/status","params":{}}`)
	if code := c.leave(); code != 0 {
		t.Errorf("forwarder exit %d after shutdown+exit, want 0", code)
	}
	e.waitExited(5 * time.Second)
	if _, err := os.Stat(socks[0]); !os.IsNotExist(err) {
		t.Errorf("the idle daemon left its socket: %v", err)
	}
}

// A socket file left by a killed daemon (nobody listening, lock free) is
// replaced by a new daemon; a daemon started while one runs leaves it be.
func TestStaleSocket(t *testing.T) {
	e := newTestEnv(t, time.Minute)
	ix := filepath.Join(t.TempDir(), "index.db")
	db, _ := filepath.Abs(fixtureDB)
	dir, err := RuntimeDir(e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Resolve(engine.Options{DBPath: db, IndexPath: ix, Getenv: e.getenv})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, Key(res)+".sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // what a SIGKILL leaves behind
	if _, err := os.Stat(sock); err != nil {
		t.Fatal(err)
	}
	c := e.forward(db, ix)
	c.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"recall/status","params":{}}`)
	if n := e.spawned.Load(); n != 1 {
		t.Errorf("%d daemons started, want 1", n)
	}
	// A second daemon on the same socket sees the first one's lock.
	errc := make(chan error, 1)
	go func() { errc <- Run(context.Background(), Config{Socket: sock, Idle: time.Minute, Serve: echoServe}) }()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("second daemon: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a second daemon kept running beside the first")
	}
	c.roundTrip(`{"jsonrpc":"2.0","id":3,"method":"recall/status","params":{}}`)
}

// A forwarder that cannot reach a daemon hands over what it read, and the
// caller serves in-process.
func TestForwarderFallsBack(t *testing.T) {
	fw := &Forwarder{Getenv: func(string) string { return "" }, Log: slog.New(slog.DiscardHandler),
		Spawn: func(string, string) error { return os.ErrPermission }}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{},"initializationOptions":{"db":"` + fixtureDB + `","index":"` + filepath.Join(t.TempDir(), "i.db") + `"}}}`
	in := "Content-Length: " + strconv.Itoa(len(init)) + "\r\n\r\n" + init
	_, err := fw.Run(t.Context(), strings.NewReader(in), io.Discard)
	var fb *FallbackError
	if !errors.As(err, &fb) || string(fb.Consumed) != in {
		t.Fatalf("fallback: %v", err)
	}
}

// Without $XDG_RUNTIME_DIR the sockets live in a private directory under
// the user's own cache dir, not in the shared temp dir, where another user
// could create the directory first; only a path too long for a socket
// falls back to the temp dir (checked like any runtime dir).
func TestRuntimeDirWithoutXDG(t *testing.T) {
	home := t.TempDir()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	dir, err := RuntimeDir(env(map[string]string{"HOME": home}))
	if want := filepath.Join(home, ".cache", "recall", "run"); err != nil || dir != want {
		t.Fatalf("RuntimeDir = %q, %v; want %q", dir, err, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v %v, want 0700", dir, st.Mode(), err)
	}
	cache := filepath.Join(home, "cache")
	if dir, err := RuntimeDir(env(map[string]string{"HOME": home, "XDG_CACHE_HOME": cache})); err != nil || dir != filepath.Join(cache, "recall", "run") {
		t.Errorf("with XDG_CACHE_HOME: %q, %v", dir, err)
	}
	rt := filepath.Join(home, "rt")
	if dir, err := RuntimeDir(env(map[string]string{"HOME": home, "XDG_RUNTIME_DIR": rt})); err != nil || dir != filepath.Join(rt, "recall") {
		t.Errorf("with XDG_RUNTIME_DIR: %q, %v", dir, err)
	}
	long := filepath.Join(home, strings.Repeat("d", 90))
	if dir, err := RuntimeDir(env(map[string]string{"HOME": long})); err != nil || dir != filepath.Join(os.TempDir(), fmt.Sprintf("recall-%d", os.Getuid())) {
		t.Errorf("with a home too long for a socket path: %q, %v", dir, err)
	}
}
