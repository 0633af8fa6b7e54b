package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
)

// Config is how the server was started (flags of `recall lsp`).
type Config struct {
	DB, Index string
	Logger    *slog.Logger
	// Getenv replaces os.Getenv for engine discovery (tests).
	Getenv func(string) string
	// PollInterval is how often the watcher looks at the history's files;
	// 0 = DefaultPollInterval.
	PollInterval time.Duration
	// MaxLag bounds the index's lag behind a history that keeps changing;
	// 0 = DefaultMaxLag.
	MaxLag time.Duration
	// NoRedact is the default of initializationOptions.noRedact (the
	// --no-redact flag).
	NoRedact bool
	// pinned, set by the daemon, are the history and index the forwarder
	// resolved for this connection (initializationOptions.db/index were
	// resolved there, relative to the client's working directory).
	pinned *engine.Resolved
	// hosts are the open engines this server shares (the daemon's); nil =
	// its own.
	hosts *hosts
	// beforeSync runs before each background sync (tests).
	beforeSync func(context.Context)
}

// DefaultPollInterval: a stat of two files per second costs nothing and
// keeps results within about two seconds of OpenCode's writes.
const DefaultPollInterval = time.Second

// stopWait bounds how long shutdown waits for a background sync to notice
// its cancellation (a sync checks between sessions).
const stopWait = 5 * time.Second

// InitOptions are the initializationOptions a client may send.
type InitOptions struct {
	DB             string `json:"db,omitempty"`
	Index          string `json:"index,omitempty"`
	ExcludeSession string `json:"excludeSession,omitempty"`
	Watch          *bool  `json:"watch,omitempty"`
	NoRedact       *bool  `json:"noRedact,omitempty"`
}

// initOptionNames lists the fields of InitOptions for error messages.
const initOptionNames = "db, index, excludeSession, watch, noRedact"

type lifecycle int

const (
	stateNew lifecycle = iota
	stateRunning
	stateShutdown
)

// Server is one LSP connection's state.
type Server struct {
	cfg    Config
	base   context.Context // the connection's lifetime
	log    *slog.Logger
	conn   jsonrpc2.Conn
	client protocol.Client

	mu          sync.Mutex
	state       lifecycle
	host        *host
	opts        InitOptions
	watching    bool
	progressCap bool // client accepts window/workDoneProgress/create
	lensRefresh bool // client accepts workspace/codeLens/refresh
	docs        map[uri.URI]string
	inflight    map[jsonrpc2.ID]context.CancelFunc
	exited      chan bool   // true: clean exit after shutdown
	outbox      chan func() // notifications from background work, in order
	// testHook, when set, runs before each command (tests: a slow or
	// panicking command).
	testHook atomic.Pointer[func(context.Context)]
}

// NewServer makes a server; Run serves one connection.
func NewServer(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxLag <= 0 {
		cfg.MaxLag = DefaultMaxLag
	}
	if cfg.hosts == nil {
		cfg.hosts = newHosts()
	}
	return &Server{cfg: cfg, log: cfg.Logger, docs: map[uri.URI]string{},
		inflight: map[jsonrpc2.ID]context.CancelFunc{}, exited: make(chan bool, 1),
		outbox: make(chan func(), outboxSize)}
}

// Run serves rwc until the client sends exit or the transport ends; it
// reports whether the client shut down cleanly.
func (s *Server) Run(ctx context.Context, rwc io.ReadWriteCloser) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.base = ctx
	s.conn = jsonrpc2.NewConn(newStream(rwc, MaxMessageBytes, s.log), jsonrpc2.WithCodec(codec{}))
	s.client = protocol.ClientDispatcher(s.conn)
	go s.deliver(ctx)
	s.conn.Go(ctx, s.handle)
	clean := false
	select {
	case clean = <-s.exited:
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	cancel()
	// Closing the transport first makes any write to a departed client fail
	// at once, so stopping the watcher cannot hang on it. A blocking stdin
	// read may outlive the close, which is harmless: the process exits next.
	rwc.Close()
	s.stop()
	select {
	case <-s.conn.Done():
	case <-time.After(time.Second):
	}
	return clean
}

// stop leaves the engine: the last connection on it stops its background
// work and closes it (idempotent).
func (s *Server) stop() {
	s.mu.Lock()
	h := s.host
	s.host = nil
	s.mu.Unlock()
	if h != nil {
		h.release(s)
	}
}

// post queues a notification from background work; deliver sends them in
// order. A client that stopped reading loses them rather than stalling the
// work (or, in the daemon, the other clients).
func (s *Server) post(f func()) {
	select {
	case s.outbox <- f:
	default:
		s.log.Warn("client is not reading; dropped a notification")
	}
}

func (s *Server) deliver(ctx context.Context) {
	for {
		select {
		case f := <-s.outbox:
			f()
		case <-ctx.Done():
			return
		}
	}
}

// handle is the one entry point for every incoming message. Notifications
// run inline, in wire order (document changes must land before the hover
// that follows them); calls other than the lifecycle ones are released to
// run concurrently so a slow search never holds up a hover.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	method := req.Method()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "recall: internal error in %s: %v", echo(method), r)
			if !req.IsCall() {
				err = nil // a notification error would end the connection
			}
		}
	}()
	if !req.IsCall() {
		s.notification(ctx, method, req.Params())
		return nil, nil
	}
	if method == protocol.MethodShutdown {
		return s.shutdown(ctx)
	}
	if method != protocol.MethodInitialize {
		jsonrpc2.Async(ctx)
	}
	// The request's own context is pooled by jsonrpc2 and must not be the
	// parent of anything that outlives this call (a context's watcher
	// goroutine would touch it after recycling); cancellation comes from
	// our own map, fed by $/cancelRequest.
	ctx, cancel := context.WithCancel(s.base)
	id := req.ID()
	s.mu.Lock()
	s.inflight[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
		cancel()
	}()
	start := time.Now()
	result, err = s.call(ctx, method, req.Params())
	err = rpcError(err)
	s.log.Debug("request", "method", method, "ms", time.Since(start).Milliseconds(), "err", err)
	if err == nil && result == nil {
		result = jsonrpc2.RawMessage("null")
	}
	return result, err
}

// call dispatches one request after the lifecycle checks.
func (s *Server) call(ctx context.Context, method string, raw jsonrpc2.RawMessage) (any, error) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == protocol.MethodInitialize:
		if state != stateNew {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already called")
		}
		return s.initialize(ctx, raw)
	case state == stateNew:
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized; send initialize first")
	case state == stateShutdown:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down; send exit")
	}
	if h, ok := requestHandlers[method]; ok {
		return h(s, ctx, raw)
	}
	if name, ok := customCommand(method); ok {
		return s.runCommand(ctx, name, json.RawMessage(raw), nil)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "recall lsp does not handle %s", echo(method))
}

// shutdown marks the server shut down in wire order (an exit right behind
// it must see it), then releases the read loop before stopping the watcher:
// the watcher may be waiting on the client, whose reply needs the read loop.
func (s *Server) shutdown(ctx context.Context) (any, error) {
	s.mu.Lock()
	state := s.state
	if state == stateRunning {
		s.state = stateShutdown
	}
	s.mu.Unlock()
	switch state {
	case stateNew:
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized; send initialize first")
	case stateShutdown:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down; send exit")
	}
	jsonrpc2.Async(ctx)
	s.stop()
	return jsonrpc2.RawMessage("null"), nil
}

type requestHandler func(s *Server, ctx context.Context, raw jsonrpc2.RawMessage) (any, error)

var requestHandlers map[string]requestHandler

func init() {
	requestHandlers = map[string]requestHandler{
		protocol.MethodWorkspaceExecuteCommand:      (*Server).executeCommand,
		protocol.MethodWorkspaceSymbol:              (*Server).symbols,
		protocol.MethodTextDocumentHover:            (*Server).hover,
		protocol.MethodTextDocumentCodeLens:         (*Server).codeLens,
		protocol.MethodWorkspaceTextDocumentContent: (*Server).textDocumentContent,
		methodTranscript:                            (*Server).transcript,
	}
}

// notification handles a notification; errors are logged, never returned
// (jsonrpc2 would end the connection).
func (s *Server) notification(ctx context.Context, method string, raw jsonrpc2.RawMessage) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if method == protocol.MethodExit {
		select {
		case s.exited <- state == stateShutdown:
		default:
		}
		return
	}
	if state == stateNew {
		return // the spec: drop notifications before initialize
	}
	var err error
	switch method {
	case protocol.MethodInitialized:
		s.initialized()
	case protocol.MethodCancelRequest:
		err = s.cancelRequest(raw)
	case protocol.MethodTextDocumentDidOpen:
		var p protocol.DidOpenTextDocumentParams
		if err = protocol.Unmarshal(raw, &p); err == nil {
			s.setDoc(p.TextDocument.URI, p.TextDocument.Text)
		}
	case protocol.MethodTextDocumentDidChange:
		var p protocol.DidChangeTextDocumentParams
		if err = protocol.Unmarshal(raw, &p); err == nil {
			s.applyChanges(p.TextDocument.URI, p.ContentChanges)
		}
	case protocol.MethodTextDocumentDidClose:
		var p protocol.DidCloseTextDocumentParams
		if err = protocol.Unmarshal(raw, &p); err == nil {
			s.mu.Lock()
			delete(s.docs, p.TextDocument.URI)
			s.mu.Unlock()
		}
	}
	if err != nil {
		s.log.Warn("bad notification", "method", method, "err", err)
	}
}

func (s *Server) cancelRequest(raw jsonrpc2.RawMessage) error {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	var id jsonrpc2.ID
	var n int64
	var str string
	switch {
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(n)
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	default:
		return fmt.Errorf("malformed id %s", p.ID)
	}
	s.mu.Lock()
	cancel := s.inflight[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// decodeInitOptions reads initializationOptions. Absent, null, {} and []
// are no options: Neovim encodes an empty Lua table (setup({})) as [].
func decodeInitOptions(raw []byte) (InitOptions, error) {
	var opts InitOptions
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return opts, nil
	}
	if trimmed[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(trimmed, &list) == nil && len(list) == 0 {
			return opts, nil
		}
		return opts, jsonrpc2.Errorf(jsonrpc2.InvalidParams,
			"invalid initializationOptions: got an array, want an object such as {\"db\": \"/path/to/opencode.db\"}; valid fields: %s", initOptionNames)
	}
	dec := json.NewDecoder(bytesReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&opts); err != nil {
		return opts, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid initializationOptions: %v; valid fields: %s", err, initOptionNames)
	}
	return opts, nil
}

// initialize opens the engine with the client's options and answers with
// the capabilities.
func (s *Server) initialize(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initialize params: %v", err)
	}
	opts, err := decodeInitOptions(p.InitializationOptions)
	if err != nil {
		return nil, err
	}
	key := hostKey{source: firstNonEmpty(opts.DB, s.cfg.DB), index: firstNonEmpty(opts.Index, s.cfg.Index), noRedact: s.cfg.NoRedact}
	if key.source != "" {
		key.source, _ = filepath.Abs(key.source)
	}
	if p := s.cfg.pinned; p != nil {
		key.source, key.index = p.Source, p.Index
		if p.Demo {
			key.source = "" // found again by discovery, so the engine says it is the demo
		}
	}
	if opts.NoRedact != nil {
		key.noRedact = *opts.NoRedact
	}
	h, err := s.cfg.hosts.acquire(ctx, key, hostConfig{log: s.log, getenv: s.cfg.Getenv,
		poll: s.cfg.PollInterval, maxLag: s.cfg.MaxLag, beforeSync: s.cfg.beforeSync}, s)
	if errors.Is(err, engine.ErrIndexRefused) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initializationOptions.index: %v", err)
	}
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "recall cannot open the history: %v (set initializationOptions.db to an opencode.db)", err)
	}
	eng := h.eng
	caps := p.Capabilities
	s.mu.Lock()
	s.host, s.opts, s.state = h, opts, stateRunning
	s.watching = opts.Watch == nil || *opts.Watch
	s.progressCap = caps.Window != nil && caps.Window.WorkDoneProgress != nil && *caps.Window.WorkDoneProgress
	s.lensRefresh = caps.Workspace != nil && caps.Workspace.CodeLens != nil && caps.Workspace.CodeLens.RefreshSupport != nil && *caps.Workspace.CodeLens.RefreshSupport
	s.mu.Unlock()
	s.log.Info("initialize", "source", eng.SourcePath(), "index", eng.IndexPath(), "watch", s.watching, "noRedact", key.noRedact)
	return &protocol.InitializeResult{Capabilities: capabilities(), ServerInfo: protocol.ServerInfo{
		Name: "recall", Version: protocol.NewOptional(commands.Version)}}, nil
}

// initialized sends the engine's notices and starts the watcher, whose
// first sync may create work-done progress: a client accepts requests
// from the server only once it sent initialized (VS Code logs "Unhandled
// method" for a create that comes earlier). It runs inline, in wire order,
// so a request behind it finds the watcher started.
func (s *Server) initialized() {
	s.mu.Lock()
	h, watching, state := s.host, s.watching, s.state
	s.mu.Unlock()
	if h == nil || state != stateRunning {
		return
	}
	for _, n := range h.eng.Notices() {
		s.post(func() { s.notify(s.base, protocol.MessageTypeInfo, n) })
	}
	if watching {
		h.startWatch()
	}
}

func capabilities() protocol.ServerCapabilities {
	return protocol.ServerCapabilities{
		TextDocumentSync:        protocol.TextDocumentSyncKindFull,
		HoverProvider:           protocol.Boolean(true),
		WorkspaceSymbolProvider: protocol.Boolean(true),
		CodeLensProvider:        &protocol.CodeLensOptions{ResolveProvider: ptr(false)},
		ExecuteCommandProvider:  protocol.ExecuteCommandOptions{Commands: CommandNames()},
		Workspace: &protocol.WorkspaceOptions{
			TextDocumentContent: &protocol.TextDocumentContentOptions{Schemes: []string{Scheme}},
		},
	}
}

// engine returns the open engine, or an error once the server stopped.
func (s *Server) engine() (*engine.Engine, error) {
	h, err := s.currentHost()
	if err != nil {
		return nil, err
	}
	return h.eng, nil
}

func (s *Server) currentHost() (*host, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.host == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down")
	}
	return s.host, nil
}

// historyEngine is the engine for a request that reads the history: with
// the watcher on it first waits for the first background sync (bounded,
// cancellable), so the first answers never come silently from an empty
// index; later requests never wait.
func (s *Server) historyEngine(ctx context.Context) (*engine.Engine, error) {
	h, err := s.currentHost()
	if err != nil {
		return nil, err
	}
	if s.options().watching {
		if err := h.waitReady(ctx); err != nil {
			return nil, err
		}
	}
	return h.eng, nil
}

// notify sends a window/logMessage (and logs it).
func (s *Server) notify(ctx context.Context, typ protocol.MessageType, msg string) {
	s.log.Info("notice", "msg", msg)
	if err := s.client.LogMessage(context.WithoutCancel(ctx), &protocol.LogMessageParams{Type: typ, Message: "recall: " + msg}); err != nil {
		s.log.Warn("logMessage", "err", err)
	}
}

// rpcError maps an error to its JSON-RPC code: invalid input (a ParamError,
// a bad cursor or recall: URI) is -32602 with the message naming the field;
// a cancelled request is -32800; anything else -32603.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc2.Error
	switch {
	case errors.As(err, &wire):
		return wireError(wire.Code, wire.Message)
	case commands.IsParamError(err), errors.Is(err, engine.ErrBadCursor), errors.Is(err, errBadURI):
		return wireError(jsonrpc2.InvalidParams, err.Error())
	case errors.Is(err, context.Canceled):
		return jsonrpc2.NewError(protocol.CodeRequestCancelled, "request cancelled")
	}
	return wireError(jsonrpc2.InternalError, err.Error())
}

// Budgets for the client input an error message quotes back.
const (
	// maxEcho: a method, command name or URI is recognisable in far less.
	maxEcho = 120
	// maxErrorMessage bounds any error message on the wire; the longest
	// recall writes (a field list, a path and what to do) stay under 1 KiB.
	maxErrorMessage = 4 << 10
)

// echo makes client input fit to quote in a reply: valid UTF-8 (invalid
// bytes become U+FFFD) and clipped.
func echo(s string) string { return clip(strings.ToValidUTF8(s, "\uFFFD"), maxEcho) }

// wireError is an error as it goes on the wire. Every error reply passes
// here, so none carries invalid UTF-8 (a frame with it is not JSON and
// clients drop it) whatever input its message quotes.
func wireError(code jsonrpc2.Code, msg string) *jsonrpc2.Error {
	return jsonrpc2.NewError(code, clip(strings.ToValidUTF8(msg, "\uFFFD"), maxErrorMessage))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func ptr[T any](v T) *T { return &v }
