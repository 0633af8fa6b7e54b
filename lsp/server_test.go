package lsp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	_ "modernc.org/sqlite"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/internal/historytest"
)

func wireCode(t *testing.T, err error) jsonrpc2.Code {
	t.Helper()
	var we *jsonrpc2.Error
	if !errors.As(err, &we) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return we.Code
}

func TestBeforeInitialize(t *testing.T) {
	s := startSession(t, sessionOptions{skipInit: true})
	_, err := s.call("recall/search", map[string]any{"query": "x"})
	if got := wireCode(t, err); got != jsonrpc2.ServerNotInitialized {
		t.Errorf("search before initialize: code %d, want -32002", got)
	}
	_, err = s.call("shutdown", nil)
	if got := wireCode(t, err); got != jsonrpc2.ServerNotInitialized {
		t.Errorf("shutdown before initialize: code %d, want -32002", got)
	}
	s.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///a", "languageId": "x", "version": 1, "text": "ses_x"}})
	s.initialize(sessionOptions{})
	if _, err := s.call("recall/status", map[string]any{}); err != nil {
		t.Fatalf("status after initialize: %v", err)
	}
}

func TestShutdownExit(t *testing.T) {
	s := startSession(t, sessionOptions{})
	if clean := s.shutdown(); !clean {
		t.Error("exit after shutdown should be a clean exit")
	}
}

func TestRequestAfterShutdown(t *testing.T) {
	s := startSession(t, sessionOptions{})
	if _, err := s.call("shutdown", nil); err != nil {
		t.Fatal(err)
	}
	_, err := s.call("recall/search", map[string]any{"query": "x"})
	if got := wireCode(t, err); got != jsonrpc2.InvalidRequest {
		t.Errorf("request after shutdown: code %d, want -32600", got)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	s := startSession(t, sessionOptions{})
	s.notify("exit", nil)
	select {
	case clean := <-s.done:
		s.done <- clean
		if clean {
			t.Error("exit without shutdown must not be clean (exit code 1)")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server did not exit")
	}
}

// The initial sync is reported as work-done progress created by the
// server, and announced with recall/indexUpdated.
func TestProgress(t *testing.T) {
	s := startSession(t, sessionOptions{})
	var res struct{ Added int }
	if err := json.Unmarshal(s.waitFor(methodIndexUpdated), &res); err != nil || res.Added != 10 {
		t.Fatalf("indexUpdated = %+v (%v), want 10 sessions added", res, err)
	}
	s.client.mu.Lock()
	created, prog := append([]string(nil), s.client.created...), append([]string(nil), s.client.progress...)
	s.client.mu.Unlock()
	if len(created) != 1 {
		t.Fatalf("workDoneProgress/create calls: %v, want 1", created)
	}
	if len(prog) < 2 || prog[0] != created[0]+" begin" || prog[len(prog)-1] != created[0]+" end" {
		t.Fatalf("progress = %v, want begin … end under %s", prog, created[0])
	}
	// A client-requested reindex reports under the client's own token.
	raw, _ := json.Marshal(map[string]any{"command": "recall.reindex", "workDoneToken": "mine"})
	var out jsonrpc2.RawMessage
	if err := protocol.Call(s.ctx, s.conn, "workspace/executeCommand", jsonrpc2.RawMessage(raw), &out); err != nil {
		t.Fatal(err)
	}
	s.client.mu.Lock()
	defer s.client.mu.Unlock()
	if !strings.Contains(strings.Join(s.client.progress, ","), `"mine" begin`) {
		t.Errorf("reindex progress = %v, want it under the client's token", s.client.progress)
	}
	if len(s.client.created) != 1 {
		t.Errorf("the server created a token although the client sent one: %v", s.client.created)
	}
}

// Without window.workDoneProgress the server never sends create.
func TestNoProgressCapability(t *testing.T) {
	s := startSession(t, sessionOptions{noProgress: true})
	s.client.mu.Lock()
	defer s.client.mu.Unlock()
	if len(s.client.created) != 0 || len(s.client.progress) != 0 {
		t.Errorf("progress sent to a client without the capability: %v %v", s.client.created, s.client.progress)
	}
}

// $/cancelRequest cancels the context the engine's SQLite queries run on.
func TestCancellation(t *testing.T) {
	var hook atomic.Pointer[func(context.Context)]
	s := startSession(t, sessionOptions{config: hookCommands(&hook)})
	entered, cancelled := make(chan struct{}), make(chan error, 1)
	slow := func(ctx context.Context) {
		close(entered)
		<-ctx.Done() // a long query: only cancellation ends it
		cancelled <- ctx.Err()
	}
	hook.Store(&slow)
	ctx, cancel := context.WithCancel(s.ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.callCtx(ctx, "recall/search", map[string]any{"query": "rounding"})
		errc <- err
	}()
	<-entered
	cancel() // protocol.Call sends $/cancelRequest
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("client side: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the command's context ended with %v, want cancelled", err)
	}
	// The server answered the cancelled request (with -32800, see
	// TestCancelledRequestCode) and stays usable.
	hook.Store(nil)
	if _, err := s.call("recall/search", map[string]any{"query": "rounding"}); err != nil {
		t.Fatalf("search after a cancelled one: %v", err)
	}
}

// hookCommands makes Config.BeforeCommand run whatever hook holds.
func hookCommands(hook *atomic.Pointer[func(context.Context)]) func(*Config) {
	return func(c *Config) {
		c.BeforeCommand = func(ctx context.Context) {
			if h := hook.Load(); h != nil {
				(*h)(ctx)
			}
		}
	}
}

// The server answers a cancelled request with RequestCancelled (checked on
// the server side, where the client's own context error cannot mask it).
func TestCancelledRequestCode(t *testing.T) {
	err := rpcError(context.Canceled)
	if got := wireCode(t, err); got != protocol.CodeRequestCancelled {
		t.Errorf("code %d, want -32800", got)
	}
	if got := wireCode(t, rpcError(&commands.ParamError{Field: "limit", Msg: "bad"})); got != jsonrpc2.InvalidParams {
		t.Errorf("ParamError code %d, want -32602", got)
	}
}

// A panic in a handler becomes an internal error; the server keeps serving.
func TestPanicRecovered(t *testing.T) {
	var hook atomic.Pointer[func(context.Context)]
	s := startSession(t, sessionOptions{config: hookCommands(&hook)})
	boom := func(context.Context) { panic("boom") }
	hook.Store(&boom)
	_, err := s.call("recall/status", map[string]any{})
	if got := wireCode(t, err); got != jsonrpc2.InternalError || !strings.Contains(err.Error(), "boom") {
		t.Errorf("panic: %v (code %d), want -32603 naming it", err, got)
	}
	hook.Store(nil)
	if _, err := s.call("recall/status", map[string]any{}); err != nil {
		t.Fatalf("status after a panic: %v", err)
	}
}

// The watcher notices a change to the history and syncs it without any
// request asking.
func TestWatcherSyncsChanges(t *testing.T) {
	db := copyFixture(t)
	s := startSession(t, sessionOptions{db: db})
	s.client.mu.Lock()
	s.client.custom[methodIndexUpdated] = nil
	s.client.mu.Unlock()
	src, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := historytest.Rename(src, "ses_dd7571907ffe5vPpW7vxTE77tW", "Renamed by the watcher test"); err != nil {
		t.Fatal(err)
	}
	var res struct{ Updated int }
	if err := json.Unmarshal(s.waitFor(methodIndexUpdated), &res); err != nil || res.Updated == 0 {
		t.Fatalf("indexUpdated = %+v (%v), want an updated session", res, err)
	}
	raw, err := s.call("workspace/symbol", map[string]any{"query": "Renamed by the watcher"})
	if err != nil || !strings.Contains(string(raw), "Renamed by the watcher test") {
		t.Fatalf("symbol after the change: %s (%v)", raw, err)
	}
}

// With watch off, each request syncs first, like the CLI.
func TestNoWatchSyncsPerRequest(t *testing.T) {
	s := startSession(t, sessionOptions{initOptions: map[string]any{"watch": false}})
	raw, err := s.call("recall/search", map[string]any{"query": "ERR_QUOTA_7731", "limit": 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "Investigate nightly worker failure") {
		t.Errorf("search with watch off did not sync first: %s", raw)
	}
}

func TestBadInitializationOptions(t *testing.T) {
	s := startSession(t, sessionOptions{skipInit: true})
	_, err := s.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"databse": "x"}})
	if got := wireCode(t, err); got != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "databse") {
		t.Errorf("unknown option: %v, want -32602 naming it", err)
	}
	_, err = s.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"db": "/nonexistent/opencode.db"}})
	if err == nil || !strings.Contains(err.Error(), "initializationOptions.db") {
		t.Errorf("missing db: %v, want an error saying what to fix", err)
	}
}

// Neovim encodes an empty Lua table as [] (issue 14): `[]`, `{}`, null
// and no options at all mean "no options"; any other array is an error that
// names the field.
func TestEmptyInitializationOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		opts any
		omit bool
	}{
		{name: "empty array", opts: []any{}},
		{name: "empty object", opts: map[string]any{}},
		{name: "null", opts: nil},
		{name: "absent", omit: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startSession(t, sessionOptions{skipInit: true})
			params := map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}
			if !c.omit {
				params["initializationOptions"] = c.opts
			}
			raw, err := s.call("initialize", params)
			if err != nil {
				t.Fatalf("initialize with %s initializationOptions: %v", c.name, err)
			}
			if !strings.Contains(string(raw), `"executeCommandProvider"`) {
				t.Errorf("initialize result has no capabilities: %s", raw)
			}
		})
	}
	s := startSession(t, sessionOptions{skipInit: true})
	_, err := s.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": []any{"db", "/x"}})
	if got := wireCode(t, err); got != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "initializationOptions") ||
		!strings.Contains(err.Error(), "object") {
		t.Errorf("a non-empty array: %v, want -32602 saying initializationOptions must be an object", err)
	}
}

// The advertised list and the docs follow the command table.
func TestCommandListFollowsTable(t *testing.T) {
	names := CommandNames()
	for _, c := range commands.ServerCommands() {
		if !contains(names, "recall."+c.Spec().Name) {
			t.Errorf("server command %s is not advertised", c.Spec().Name)
		}
		if _, ok := customCommand("recall/" + c.Spec().Name); !ok {
			t.Errorf("server command %s has no custom request", c.Spec().Name)
		}
	}
	for _, c := range commands.All() {
		if c.Spec().Doors&commands.Server == 0 && contains(names, "recall."+c.Spec().Name) {
			t.Errorf("CLI-only command %s is advertised", c.Spec().Name)
		}
	}
	if !contains(names, "recall.reindex") {
		t.Error("recall.reindex is not advertised")
	}
	wire := readFile(t, filepath.Join("..", "docs", "wire.md"))
	for _, n := range names {
		if !strings.Contains(wire, "`"+n+"`") {
			t.Errorf("docs/wire.md does not document %s", n)
		}
	}
	if !strings.Contains(wire, ShowFileSessions) || !strings.Contains(wire, methodIndexUpdated) || !strings.Contains(wire, methodTranscript) {
		t.Error("docs/wire.md does not document the lens command, recall/indexUpdated or recall/transcript")
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// forget of a session the index does not hold is bad params (-32602),
// naming the session and how to list ids; it used to be -32603.
func TestForgetUnknownSession(t *testing.T) {
	s := startSession(t, sessionOptions{})
	_, err := s.call("recall/forget", map[string]any{"session": "ses_nope"})
	if got := wireCode(t, err); got != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "ses_nope") || !strings.Contains(err.Error(), "recall sessions") {
		t.Errorf("forget ses_nope: code %d, %v; want -32602 naming the session and `recall sessions`", got, err)
	}
}

// A query over engine.MaxQueryBytes is bad params (-32602) naming the
// field, answered at once (a 50 MiB query used to run for seconds).
func TestHugeQueryRefused(t *testing.T) {
	s := startSession(t, sessionOptions{})
	bound := 5 * time.Second
	if raceEnabled {
		bound *= 10 // decoding 50 MiB of JSON takes 12-20 s under the race detector
	}
	start := time.Now()
	_, err := s.call("recall/search", map[string]any{"query": strings.Repeat("deadbeef ", 50<<20/9)})
	if got := wireCode(t, err); got != jsonrpc2.InvalidParams || !strings.Contains(err.Error(), "query") || time.Since(start) > bound {
		t.Errorf("50 MiB query: code %d, %.200v after %v; want -32602 naming query, at once", got, err, time.Since(start))
	}
}
