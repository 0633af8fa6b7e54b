// Package lsp serves the recall engine over the Language Server Protocol:
// decode, call the command table (or the engine), encode. No ranking or
// SQL here. This file holds a connection's lifecycle; dispatch.go the method
// tables; each method has its own file.
package lsp

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/recallhq/recall/engine"
)

// Config is how the server was started (flags of `recall lsp`).
type Config struct {
	// DB are the --db flags (NAME=PATH or PATH, several for several
	// histories); Index is --index (one history only).
	DB     []string
	Index  string
	Logger *slog.Logger
	// Getenv replaces os.Getenv for engine discovery (tests).
	Getenv func(string) string
	// PollInterval is how often the watcher looks at the history's files;
	// 0 = live.DefaultPoll.
	PollInterval time.Duration
	// MaxLag bounds the index's lag behind a history that keeps changing;
	// 0 = live.DefaultMaxLag.
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
	// BeforeCommand, when set, runs before each command with its context
	// (tests only: a slow, cancellable or panicking command).
	BeforeCommand func(context.Context)
}

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
}

// NewServer makes a server; Run serves one connection.
func NewServer(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
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

// options is a snapshot of the client's options.
type serverOptions struct {
	InitOptions
	watching bool
}

func (s *Server) options() serverOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return serverOptions{InitOptions: s.opts, watching: s.watching}
}
