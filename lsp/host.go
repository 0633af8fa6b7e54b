package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/live"
)

// outboxSize bounds the notifications queued for one client; a client
// that stops reading loses progress reports, never stalls the indexer.
const outboxSize = 1024

// hostKey names one open engine: connections that read the same
// histories into the same indexes with the same redaction share it.
type hostKey struct {
	sources  string // the sources, as JSON
	index    string
	noRedact bool
}

func newHostKey(specs []engine.SourceSpec, index string, noRedact bool) hostKey {
	b, _ := json.Marshal(specs)
	return hostKey{sources: string(b), index: index, noRedact: noRedact}
}

// specs are the sources the key names.
func (k hostKey) specs() []engine.SourceSpec {
	var specs []engine.SourceSpec
	json.Unmarshal([]byte(k.sources), &specs)
	return specs
}

// hosts is a process's open engines: a server over stdio has its own; the
// daemon shares one among all its connections.
type hosts struct {
	mu   sync.Mutex
	open map[hostKey]*host
	// linger keeps a host open, its watcher running, after its last
	// connection leaves, until closeAll: the daemon's, so the next client
	// (an editor restarting, the next OpenCode run, a CLI command) finds
	// the engine warm rather than opening it again. A CLI search through
	// a daemon whose host had closed paid the engine's open each time and
	// took longer than one run in its own process (93 / 75 ms p50 at 845k
	// parts).
	linger bool
}

func newHosts() *hosts { return &hosts{open: map[hostKey]*host{}} }

// hostConfig is what a host needs besides its key.
type hostConfig struct {
	log          *slog.Logger
	getenv       func(string) string
	poll, maxLag time.Duration
	beforeSync   func(context.Context)
}

// host is one open engine and its live loop (watcher, first-sync gate,
// embedding), one of each however many connections share it. It lives
// until its last connection leaves.
type host struct {
	key  hostKey
	set  *hosts
	eng  *engine.Engine
	live *live.Service
	log  *slog.Logger

	mu    sync.Mutex
	conns map[*Server]func() // each connection and its unsubscribe
}

// acquire returns the host for key, opening its engine on first use, and
// subscribes s to its events.
func (hs *hosts) acquire(ctx context.Context, key hostKey, cfg hostConfig, s *Server) (*host, error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.open[key]
	if h == nil {
		eng, err := engine.Open(ctx, engine.Options{Sources: key.specs(), IndexPath: key.index, NoRedact: key.noRedact,
			Logger: cfg.log, Getenv: cfg.getenv})
		if err != nil {
			return nil, err
		}
		svc := live.New(eng, live.Config{Poll: cfg.poll, MaxLag: cfg.maxLag, Logger: cfg.log, BeforeSync: cfg.beforeSync})
		h = &host{key: key, set: hs, eng: eng, live: svc, log: cfg.log, conns: map[*Server]func(){}}
		hs.open[key] = h
	}
	h.mu.Lock()
	h.conns[s] = h.live.Subscribe(s.subscriber())
	h.mu.Unlock()
	return h, nil
}

// release drops s; the last one out stops the live loop and closes the
// engine.
func (h *host) release(s *Server) {
	h.set.mu.Lock()
	h.mu.Lock()
	if unsubscribe := h.conns[s]; unsubscribe != nil {
		unsubscribe()
		delete(h.conns, s)
	}
	last := len(h.conns) == 0 && !h.set.linger
	if last {
		delete(h.set.open, h.key)
	}
	h.mu.Unlock()
	h.set.mu.Unlock()
	if last {
		h.close()
	}
}

// close stops the host's live loop and closes its engine.
func (h *host) close() {
	h.live.Stop()
	done := h.live.Turn() // a request's sync may still be writing
	h.eng.Close()
	done()
}

// closeAll closes every host still open (a lingering set's, when the
// daemon exits).
func (hs *hosts) closeAll() {
	hs.mu.Lock()
	open := hs.open
	hs.open = map[hostKey]*host{}
	hs.mu.Unlock()
	for _, h := range open {
		h.close()
	}
}

// waitReady waits for the first background sync to end (starting the
// watcher for a client that never sent initialized), at most
// live.DefaultFirstSyncWait; past it, or once the engine is closing, the
// request answers from the index as it is, with index.stale set. ctx (the
// request's, cancelled by $/cancelRequest) ends the wait with its error.
func (h *host) waitReady(ctx context.Context) error {
	h.live.Start()
	err := h.live.WaitUntilReady(ctx, live.DefaultFirstSyncWait)
	switch {
	case errors.Is(err, live.ErrNotReady):
		h.log.Warn("answering before the first sync finished", "waited", live.DefaultFirstSyncWait)
		return nil
	case errors.Is(err, live.ErrStopped):
		return nil
	}
	return err
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
