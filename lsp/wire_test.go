//go:build unix

package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/recallhq/recall/lsp/daemon"
)

// wireClient speaks raw bytes to a server, so a test can send what no
// well-behaved client library would: broken headers, wrong lengths,
// invalid UTF-8. Every frame the server sends is kept raw.
type wireClient struct {
	t      *testing.T
	w      io.Writer
	frames chan wireFrame // closed when the server closes the connection
	mu     sync.Mutex
	errors []string // error replies with a null id (the framing errors)
}

type wireFrame struct {
	raw []byte // header and body, as sent
	msg map[string]any
	err error // a frame that does not parse (the test fails on it)
}

func newWireClient(t *testing.T, w io.Writer, r io.Reader) *wireClient {
	c := &wireClient{t: t, w: w, frames: make(chan wireFrame, 1000)}
	go func() {
		defer close(c.frames)
		br := bufio.NewReader(r)
		for {
			raw, msg, err := readRawFrame(br)
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) {
				return
			}
			c.frames <- wireFrame{raw: raw, msg: msg, err: err}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// readRawFrame reads one frame strictly: exactly one Content-Length, a
// body that is one JSON object.
func readRawFrame(r *bufio.Reader) ([]byte, map[string]any, error) {
	var raw []byte
	n := -1
	for {
		line, err := r.ReadString('\n')
		raw = append(raw, line...)
		if err != nil {
			if len(raw) == 0 {
				return nil, nil, io.EOF
			}
			return raw, nil, fmt.Errorf("truncated header %q: %w", raw, err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return raw, nil, fmt.Errorf("header line %q", line)
		}
		if strings.EqualFold(k, "Content-Length") {
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return raw, nil, fmt.Errorf("header line %q", line)
			}
		}
	}
	if n < 0 {
		return raw, nil, fmt.Errorf("frame without Content-Length: %q", raw)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return raw, nil, fmt.Errorf("truncated body: %w", err)
	}
	raw = append(raw, body...)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return raw, nil, fmt.Errorf("frame body %q: %w", body, err)
	}
	return raw, m, nil
}

func frameOf(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func requestBody(id int, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// send writes raw bytes; a write to a closed connection shows up as the
// connection being closed.
func (c *wireClient) send(s string) { _, _ = io.WriteString(c.w, s) }

// await returns the reply to id; closed is true when the server closed
// the connection first. Frames on the way must be valid UTF-8 and
// well-formed; server requests are answered.
func (c *wireClient) await(id int, within time.Duration) (reply map[string]any, closed bool) {
	c.t.Helper()
	timeout := time.After(within)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return nil, true
			}
			if f.err != nil {
				c.t.Fatalf("server sent a malformed frame: %v", f.err)
			}
			if !utf8.Valid(f.raw) {
				c.t.Errorf("a reply is not valid UTF-8: %q", f.raw)
			}
			m := f.msg
			if m["method"] != nil && m["id"] != nil {
				c.send(frameOf(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, mustJSON(m["id"]))))
				continue
			}
			if m["method"] == nil && m["id"] == nil && m["error"] != nil {
				c.mu.Lock()
				c.errors = append(c.errors, fmt.Sprint(m["error"]))
				c.mu.Unlock()
				continue
			}
			if m["method"] == nil && m["id"] == float64(id) {
				return m, false
			}
		case <-timeout:
			c.t.Fatalf("no reply to request %d within %v: the server is deaf (framing errors heard: %v)", id, within, c.framingErrors())
		}
	}
}

// awaitClose waits for the server to close the connection; it returns
// the replies seen on the way.
func (c *wireClient) awaitClose(within time.Duration) []map[string]any {
	c.t.Helper()
	var seen []map[string]any
	timeout := time.After(within)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return seen
			}
			if f.err != nil {
				c.t.Fatalf("server sent a malformed frame: %v", f.err)
			}
			seen = append(seen, f.msg)
		case <-timeout:
			c.t.Fatalf("the server neither closed the connection nor stopped within %v (replies: %v)", within, seen)
		}
	}
}

func (c *wireClient) framingErrors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// initialize starts the LSP session; watch is off so each request answers
// without waiting for the watcher's first sync.
func (c *wireClient) initialize() {
	c.t.Helper()
	c.send(frameOf(requestBody(1, "initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"watch": false}})))
	if m, closed := c.await(1, 20*time.Second); closed || m["result"] == nil {
		c.t.Fatalf("initialize: %v (closed %v)", m, closed)
	}
	c.send(frameOf(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
}

// badFrames are the framing errors a server must survive. Each carries a
// request (id 99) as its body.
func badFrames() []struct{ name, frame string } {
	body := requestBody(99, "recall/status", map[string]any{})
	return []struct{ name, frame string }{
		{"missing Content-Length", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body},
		{"negative Content-Length", "Content-Length: -20\r\n\r\n" + body},
		{"non-numeric Content-Length", "Content-Length: twelve\r\n\r\n" + body},
		{"zero Content-Length", "Content-Length: 0\r\n\r\n" + body},
		{"Content-Length too short", fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)-10, body)},
		{"Content-Length too long", fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)+200, body)},
		{"Content-Length too long by 3", fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)+3, body)},
	}
}

// afterBadFrame sends a bad frame and then ten valid requests, one at a
// time, each waiting for its answer as an editor does: every one must be
// answered (the server resynchronises on the next header).
func afterBadFrame(t *testing.T, c *wireClient, bad string) {
	t.Helper()
	c.initialize()
	c.send(bad)
	for i := range 10 {
		id := 100 + i
		c.send(frameOf(requestBody(id, "recall/status", map[string]any{})))
		m, closed := c.await(id, 10*time.Second)
		if closed {
			t.Fatalf("the server closed the connection after %d of 10 valid requests", i)
		}
		if m["error"] != nil || m["result"] == nil {
			t.Fatalf("request %d: %v", id, m)
		}
	}
	if errs := c.framingErrors(); len(errs) == 0 {
		t.Errorf("the bad frame got no error reply")
	}
}

// oversized declares a 1 TiB body and sends none: the server must answer
// or close at once, never sit on the connection.
const oversized = "Content-Length: 1099511627776\r\n\r\n"

func overLimit(t *testing.T, c *wireClient) {
	t.Helper()
	c.initialize()
	start := time.Now()
	c.send(oversized)
	replies := c.awaitClose(2 * time.Second)
	t.Logf("closed %v after the header", time.Since(start).Round(time.Millisecond))
	if len(replies) != 1 || !strings.Contains(fmt.Sprint(replies[0]["error"]), "64 MiB") {
		t.Errorf("replies before the close: %v, want one error naming the 64 MiB limit", replies)
	}
}

// wireDoor opens a raw connection to a server in one of its modes.
type wireDoor func(t *testing.T) *wireClient

func inProcessDoor(t *testing.T) *wireClient {
	srvConn, cli := net.Pipe()
	srv := NewServer(Config{DB: []string{fixtureDB}, Index: filepath.Join(t.TempDir(), "index.db")})
	done := make(chan bool, 1)
	go func() { done <- srv.Run(context.Background(), srvConn) }()
	t.Cleanup(func() {
		cli.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return newWireClient(t, cli, cli)
}

// daemonDoor is `recall lsp` as a forwarder in front of the shared daemon
// (both in this process).
func daemonDoor(t *testing.T) *wireClient {
	d := newTestDaemons(t, time.Minute)
	d.server.DB, d.server.Index = []string{fixtureDB}, filepath.Join(t.TempDir(), "index.db")
	fwConn, cli := net.Pipe()
	fw := &daemon.Forwarder{DB: []string{fixtureDB}, Index: d.server.Index, Getenv: d.getenv, Log: d.server.Logger, Spawn: d.spawn}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := fw.Run(context.Background(), fwConn, fwConn); err != nil {
			t.Errorf("forwarder: %v", err)
		}
		fwConn.Close()
	}()
	t.Cleanup(func() {
		cli.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the forwarder did not stop")
		}
	})
	return newWireClient(t, cli, cli)
}

// binaryDoor runs the built `recall lsp` with args over its stdio.
func binaryDoor(viaDaemon bool) wireDoor {
	return func(t *testing.T) *wireClient {
		bin := recallBinary(t)
		db, _ := filepath.Abs(fixtureDB)
		dir := t.TempDir()
		rt, err := os.MkdirTemp("", "rcl") // a socket path stays under 108 bytes
		if err != nil {
			t.Fatal(err)
		}
		env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+rt, "RECALL_DAEMON_IDLE=1s", "RECALL_NO_DAEMON=")
		args := []string{"lsp", "--stdio", "--db", db, "--index", filepath.Join(dir, "index.db")}
		if !viaDaemon {
			args = append(args, "--no-daemon")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close()
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			if viaDaemon {
				// The daemon exits 1 s after its last client.
				waitUntil(t, func() bool {
					socks, _ := filepath.Glob(filepath.Join(rt, "recall", "*.sock"))
					return len(socks) == 0
				}, "the idle daemon to exit")
			}
			os.RemoveAll(rt)
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr.String())
			}
		})
		return newWireClient(t, stdin, stdout)
	}
}

func wireDoors(t *testing.T) map[string]wireDoor {
	doors := map[string]wireDoor{"in-process": inProcessDoor, "daemon": daemonDoor}
	if !testing.Short() {
		doors["binary"] = binaryDoor(false)
		doors["binary daemon"] = binaryDoor(true)
	}
	return doors
}

// After any framing error the server answers the next ten requests, in
// every mode: in-process, through the forwarder and daemon, and the built
// binary both ways (issue 9: it was alive but deaf).
func TestFramingErrorsDoNotDeafen(t *testing.T) {
	for mode, door := range wireDoors(t) {
		t.Run(mode, func(t *testing.T) {
			for _, bf := range badFrames() {
				t.Run(bf.name, func(t *testing.T) { afterBadFrame(t, door(t), bf.frame) })
			}
		})
	}
}

// A declared length over MaxMessageBytes is answered and the connection
// closed within 2 s, in every mode (it used to swallow the connection).
func TestOversizedMessageCloses(t *testing.T) {
	for mode, door := range wireDoors(t) {
		t.Run(mode, func(t *testing.T) { overLimit(t, door(t)) })
	}
}

// No reply carries invalid UTF-8, even when it echoes client input that
// has some: a method name, a params field name, a command name, a
// session id, a cursor, a URI.
func TestRepliesAreValidUTF8(t *testing.T) {
	for mode, door := range map[string]wireDoor{"in-process": inProcessDoor, "daemon": daemonDoor} {
		t.Run(mode, func(t *testing.T) {
			c := door(t)
			c.initialize()
			bad := "\xff\xfe\xc3("
			reqs := []string{
				`{"jsonrpc":"2.0","id":10,"method":"recall/` + bad + `","params":{}}`,
				`{"jsonrpc":"2.0","id":11,"method":"` + bad + `","params":{}}`,
				`{"jsonrpc":"2.0","id":12,"method":"recall/search","params":{"query":"x","` + bad + `":1}}`,
				`{"jsonrpc":"2.0","id":13,"method":"workspace/executeCommand","params":{"command":"recall.` + bad + `","arguments":[]}}`,
				`{"jsonrpc":"2.0","id":14,"method":"recall/forget","params":{"session":"ses_` + bad + `"}}`,
				`{"jsonrpc":"2.0","id":15,"method":"recall/read","params":{"cursor":"` + bad + `"}}`,
				`{"jsonrpc":"2.0","id":16,"method":"recall/transcript","params":{"uri":"recall:///` + bad + `"}}`,
				`{"jsonrpc":"2.0","id":17,"method":"workspace/textDocumentContent","params":{"uri":"recall:///` + bad + `"}}`,
				`{"jsonrpc":"2.0","id":18,"method":"recall/sessions","params":{"after":"` + bad + `"}}`,
			}
			for i, r := range reqs {
				c.send(frameOf(r))
				m, closed := c.await(10+i, 10*time.Second)
				if closed {
					t.Fatalf("closed after %q", r)
				}
				if m["error"] == nil {
					t.Errorf("%s: want an error reply, got %v", r, m)
				}
				t.Logf("%d: %v", 10+i, m["error"])
			}
		})
	}
}
