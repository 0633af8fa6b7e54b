package lsp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// fixtureDB is the repo's real OpenCode 1.18.33 history (see
// testdata/opencode/v1/manifest.json for its sessions).
var fixtureDB = filepath.Join("..", "testdata", "opencode", "v1", "opencode.db")

// testClient is an editor: it answers the server's requests and records
// its notifications.
type testClient struct {
	protocol.UnimplementedClient
	mu       sync.Mutex
	logs     []string
	progress []string // "token kind"
	titles   []string // titles of begun progress
	created  []string
	custom   map[string][]json.RawMessage
	notified chan string
}

func (c *testClient) LogMessage(_ context.Context, p *protocol.LogMessageParams) error {
	c.mu.Lock()
	c.logs = append(c.logs, p.Message)
	c.mu.Unlock()
	return nil
}

func (c *testClient) WorkDoneProgressCreate(_ context.Context, p *protocol.WorkDoneProgressCreateParams) error {
	c.mu.Lock()
	c.created = append(c.created, tokenString(p.Token))
	c.mu.Unlock()
	return nil
}

func (c *testClient) Progress(_ context.Context, p *protocol.ProgressParams) error {
	var v struct {
		Kind  string `json:"kind"`
		Title string `json:"title"`
	}
	_ = json.Unmarshal(p.Value, &v)
	c.mu.Lock()
	if v.Kind == "begin" {
		c.titles = append(c.titles, v.Title)
	}
	c.progress = append(c.progress, tokenString(p.Token)+" "+v.Kind)
	c.mu.Unlock()
	return nil
}

func (c *testClient) CodeLensRefresh(context.Context) error { return nil }

func tokenString(t protocol.ProgressToken) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// session is one in-process server and its client over net.Pipe.
type session struct {
	t      testing.TB
	ctx    context.Context
	conn   jsonrpc2.Conn
	client *testClient
	server *Server
	index  string
	done   chan bool
}

type sessionOptions struct {
	db          string
	index       string // default: a fresh one
	initOptions map[string]any
	noProgress  bool // client without window.workDoneProgress
	skipInit    bool
	noWait      bool // initialize without waiting for the first sync
	// config adjusts the server's Config (poll interval, hooks).
	config func(*Config)
	// dataDir prepares $XDG_DATA_HOME before the server starts.
	dataDir func(dir string)
	// home is $XDG_DATA_HOME (default: the session's own): servers of one
	// user share it, and with it the cursor key.
	home string
	// defaultIndexes: no --index (several sources each have their own,
	// under home).
	defaultIndexes bool
}

// startSession serves a fresh index over the fixture and connects a client.
func startSession(t testing.TB, o sessionOptions) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	dir := t.TempDir()
	if o.db == "" {
		o.db = fixtureDB
	}
	srvConn, cliConn := net.Pipe()
	logs := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	if o.dataDir != nil {
		o.dataDir(dir)
	}
	if o.index == "" && !o.defaultIndexes {
		o.index = filepath.Join(dir, "index.db")
	}
	home := dir
	if o.home != "" {
		home = o.home
	}
	cfg := Config{DB: []string{o.db}, Index: o.index, PollInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Getenv: func(k string) string {
			if k == "XDG_DATA_HOME" || k == "HOME" {
				return home
			}
			return ""
		}}
	if o.config != nil {
		o.config(&cfg)
	}
	srv := NewServer(cfg)
	done := make(chan bool, 1)
	go func() { done <- srv.Run(context.Background(), srvConn) }()
	tc, conn := connectClient(ctx, cliConn)
	s := &session{t: t, ctx: ctx, conn: conn, client: tc, server: srv, index: o.index, done: done}
	t.Cleanup(func() {
		conn.Close()
		cliConn.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	if !o.skipInit {
		s.initialize(o)
	}
	return s
}

// connectClient runs a test editor on one end of a transport.
func connectClient(ctx context.Context, rwc io.ReadWriteCloser) (*testClient, jsonrpc2.Conn) {
	tc := &testClient{custom: map[string][]json.RawMessage{}, notified: make(chan string, 100)}
	conn := jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(rwc), jsonrpc2.WithCodec(codec{}))
	conn.Go(ctx, protocol.ClientHandler(tc, func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		method := strings.Clone(req.Method()) // borrowed from the frame buffer
		tc.mu.Lock()
		tc.custom[method] = append(tc.custom[method], append(json.RawMessage(nil), req.Params()...))
		tc.mu.Unlock()
		select {
		case tc.notified <- method:
		default:
		}
		return jsonrpc2.MethodNotFoundHandler(ctx, req)
	}))
	return tc, conn
}

func (s *session) initialize(o sessionOptions) json.RawMessage {
	s.t.Helper()
	caps := map[string]any{"workspace": map[string]any{"codeLens": map[string]any{"refreshSupport": true}}}
	if !o.noProgress {
		caps["window"] = map[string]any{"workDoneProgress": true}
	}
	params := map[string]any{"processId": nil, "rootUri": nil, "capabilities": caps}
	if o.initOptions != nil {
		params["initializationOptions"] = o.initOptions
	}
	res, err := s.call("initialize", params)
	if err != nil {
		s.t.Fatalf("initialize: %v", err)
	}
	s.notify("initialized", map[string]any{})
	if w, ok := o.initOptions["watch"]; (!ok || w == true) && !o.noWait {
		s.waitFor(methodIndexUpdated)
	}
	return res
}

// call sends a request; params are encoded with encoding/json, the result
// comes back raw.
func (s *session) call(method string, params any) (json.RawMessage, error) {
	return s.callCtx(s.ctx, method, params)
}

func (s *session) callCtx(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		s.t.Fatal(err)
	}
	var res jsonrpc2.RawMessage
	err = protocol.Call(ctx, s.conn, method, jsonrpc2.RawMessage(raw), &res)
	return json.RawMessage(res), err
}

func (s *session) notify(method string, params any) {
	raw, _ := json.Marshal(params)
	if err := s.conn.Notify(s.ctx, method, jsonrpc2.RawMessage(raw)); err != nil {
		s.t.Fatalf("notify %s: %v", method, err)
	}
}

// waitFor waits for a custom notification from the server.
func (s *session) waitFor(method string) json.RawMessage {
	s.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		s.client.mu.Lock()
		got := s.client.custom[method]
		s.client.mu.Unlock()
		if len(got) > 0 {
			return got[0]
		}
		select {
		case <-s.client.notified:
		case <-deadline:
			s.client.mu.Lock()
			defer s.client.mu.Unlock()
			s.t.Fatalf("no %s from the server (client conn err %v; progress %v; logs %v; custom %v)", method, s.conn.Err(),
				s.client.progress, s.client.logs, s.client.custom)
		}
	}
}

func (s *session) shutdown() bool {
	s.t.Helper()
	if _, err := s.call("shutdown", nil); err != nil {
		s.t.Fatalf("shutdown: %v", err)
	}
	s.notify("exit", nil)
	select {
	case clean := <-s.done:
		s.done <- clean
		return clean
	case <-time.After(5 * time.Second):
		s.t.Fatal("server did not exit")
	}
	return false
}

// copyFixture copies the fixture database into dir (tests that change it).
func copyFixture(t testing.TB) string {
	t.Helper()
	src, err := os.Open(fixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "opencode.db")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// testLog collects the server's log; a failing test prints it.
type testLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
