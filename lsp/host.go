package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/embed"
)

// Background-work budgets.
const (
	// firstSyncWait bounds how long a history request waits for the first
	// background sync (a fresh index over a large history takes tens of
	// seconds; past this the request answers from the index as it is, with
	// index.stale set). The first sync also waits this long for another
	// process's writer lock, so a second server on a fresh index answers
	// once that sync is done rather than from a half-written index.
	firstSyncWait = 60 * time.Second
	// DefaultMaxLag bounds how far the index lags behind a history that
	// never goes quiet (OpenCode streaming a long turn writes several times
	// a second): the watcher syncs at least this often while changes keep
	// coming. A sync of a few changed sessions takes tens of milliseconds.
	DefaultMaxLag = 5 * time.Second
	// outboxSize bounds the notifications queued for one client; a client
	// that stops reading loses progress reports, never stalls the indexer.
	outboxSize = 1024
)

// hostKey names one open engine: connections that read the same history
// into the same index with the same redaction share it.
type hostKey struct {
	source, index string
	noRedact      bool
}

// hosts is a process's open engines: a server over stdio has its own; the
// daemon shares one among all its connections.
type hosts struct {
	mu   sync.Mutex
	open map[hostKey]*host
}

func newHosts() *hosts { return &hosts{open: map[hostKey]*host{}} }

// hostConfig is what a host needs besides its key.
type hostConfig struct {
	log          *slog.Logger
	getenv       func(string) string
	poll, maxLag time.Duration
	// beforeSync, when set, runs before each background sync (tests: a
	// slow first sync).
	beforeSync func(context.Context)
}

// acquire returns the host for key, opening its engine on first use, and
// counts s as one of its connections.
func (hs *hosts) acquire(ctx context.Context, key hostKey, cfg hostConfig, s *Server) (*host, error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h := hs.open[key]
	if h == nil {
		eng, err := engine.Open(ctx, engine.Options{DBPath: key.source, IndexPath: key.index, NoRedact: key.noRedact,
			Logger: cfg.log, Getenv: cfg.getenv})
		if err != nil {
			return nil, err
		}
		hctx, cancel := context.WithCancel(context.Background())
		h = &host{key: key, set: hs, eng: eng, log: cfg.log, poll: cfg.poll, maxLag: cfg.maxLag,
			beforeSync: cfg.beforeSync, ctx: hctx, cancel: cancel, ready: make(chan struct{})}
		hs.open[key] = h
	}
	h.mu.Lock()
	h.subs = append(h.subs, s)
	h.mu.Unlock()
	return h, nil
}

// host is one open engine and its background work: the watcher (with the
// first-sync gate) and embedding runs, one of each however many
// connections share it. It lives until its last connection leaves.
type host struct {
	key          hostKey
	set          *hosts
	eng          *engine.Engine
	log          *slog.Logger
	poll, maxLag time.Duration
	beforeSync   func(context.Context)
	ctx          context.Context // cancelled when the last connection leaves
	cancel       context.CancelFunc

	// syncMu makes this engine's syncs take turns (the watcher's and the
	// ones requests ask for); across processes the index lock does that.
	syncMu sync.Mutex

	mu         sync.Mutex
	subs       []*Server
	watching   bool
	watchDone  chan struct{}
	ready      chan struct{} // closed when the first background sync ended
	lockSaid   bool          // the lock notice was given for the current locked streak
	embedRun   *engine.EmbedRun
	embedAgain bool
	embedDone  chan struct{}
}

// subscribers is a snapshot of the connections to notify.
func (h *host) subscribers() []*Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Server(nil), h.subs...)
}

// release drops s; the last one out stops the background work and closes
// the engine.
func (h *host) release(s *Server) {
	h.set.mu.Lock()
	h.mu.Lock()
	for i, sub := range h.subs {
		if sub == s {
			h.subs = append(h.subs[:i], h.subs[i+1:]...)
			break
		}
	}
	last := len(h.subs) == 0
	if last {
		delete(h.set.open, h.key)
	}
	watchDone, embedDone := h.watchDone, h.embedDone
	h.mu.Unlock()
	h.set.mu.Unlock()
	if !last {
		return
	}
	h.cancel()
	for _, done := range []chan struct{}{watchDone, embedDone} {
		if done == nil {
			continue
		}
		select {
		case <-done:
		case <-time.After(stopWait):
			h.log.Warn("background work did not stop in time")
		}
	}
	h.syncMu.Lock() // a request's sync may still be writing
	h.eng.Close()
	h.syncMu.Unlock()
}

// startWatch starts the watcher once.
func (h *host) startWatch() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watching || h.ctx.Err() != nil {
		return
	}
	h.watching = true
	h.watchDone = make(chan struct{})
	go h.watch(h.ctx, h.watchDone)
}

// waitReady waits for the first background sync to end, at most
// firstSyncWait; ctx (the request's, cancelled by $/cancelRequest) ends
// the wait with its error. Once the first sync is done it returns at once.
func (h *host) waitReady(ctx context.Context) error {
	select {
	case <-h.ready:
		return nil
	default:
	}
	h.startWatch() // a client that never sent initialized
	t := time.NewTimer(firstSyncWait)
	defer t.Stop()
	select {
	case <-h.ready:
	case <-t.C:
		h.log.Warn("answering before the first sync finished", "waited", firstSyncWait)
	case <-h.ctx.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// watch keeps the index fresh: a first sync at start, then a stat poll of
// the history's files. A change syncs once the files have stopped changing
// for one interval (OpenCode writes a turn in bursts), or after maxLag of
// continuous changes at the latest.
func (h *host) watch(ctx context.Context, done chan struct{}) {
	defer close(done)
	last := h.eng.SourceFingerprint()
	// A history locked by a writer leaves a change unread (dirty): the
	// next poll tries again rather than wait for another change.
	dirty, dirtySince := h.backgroundSync(ctx, firstSyncWait), time.Now()
	close(h.ready)
	h.embed()
	t := time.NewTicker(h.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fp := h.eng.SourceFingerprint()
		switch {
		case fp != last:
			if !dirty {
				dirty, dirtySince = true, time.Now()
			}
			last = fp
			if time.Since(dirtySince) >= h.maxLag {
				dirty = h.backgroundSync(ctx, 0)
			}
		case dirty:
			dirty = h.backgroundSync(ctx, 0)
		}
	}
}

// backgroundSync runs one sync for the watcher and reports whether the
// history was locked (the change is still to be read).
func (h *host) backgroundSync(ctx context.Context, lockWait time.Duration) (locked bool) {
	if h.beforeSync != nil {
		h.beforeSync(ctx)
	}
	h.syncMu.Lock()
	defer h.syncMu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	fan := h.fanout("Recall: indexing", "sessions")
	res, err := h.eng.Sync(ctx, engine.SyncOptions{LockWait: lockWait,
		Progress: func(p engine.SyncProgress) { fan.report(p.Done, p.Total) }})
	fan.end()
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("background sync", "err", err)
			for _, s := range h.subscribers() {
				s.post(func() {
					s.notify(s.base, protocol.MessageTypeWarning, fmt.Sprintf("updating the index failed: %v", err))
				})
			}
		}
		return false
	}
	h.log.Info("background sync", "idle", res.Idle, "added", res.Added, "updated", res.Updated, "deleted", res.Deleted,
		"busy", res.Busy, "locked", res.Locked, "replaced", res.Replaced, "ms", res.TookMS)
	h.synced(res)
	return res.Locked
}

// synced tells every connection about a sync (any connection's, or the
// watcher's) and gives new documents their vectors.
func (h *host) synced(res engine.SyncResult) {
	// The watcher retries a locked history every poll: say so once per
	// streak, not once a second.
	h.mu.Lock()
	sayLock := res.Locked && !h.lockSaid
	h.lockSaid = res.Locked
	h.mu.Unlock()
	for _, s := range h.subscribers() {
		s.post(func() { s.afterSync(s.base, res, sayLock) })
	}
	if !res.Idle && res.Added+res.Updated+res.Deleted > 0 {
		h.embed()
	}
}

// embed starts a background embedding run when a model is installed; one
// run at a time (a sync during a run asks for one more after it). Without
// a model it does nothing: search notices the lexical fallback itself.
func (h *host) embed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() != nil {
		return
	}
	if h.embedRun != nil {
		h.embedAgain = true
		return
	}
	if ms, err := h.eng.ModelStore().List(); err != nil || len(ms) == 0 {
		return
	}
	fan := h.fanoutLocked("Recall: embedding", "documents")
	run := h.eng.StartEmbedding(h.ctx, engine.EmbedOptions{Progress: func(p engine.EmbedProgress) { fan.report(p.Done, p.Total) }})
	h.embedRun, h.embedDone = run, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		res, err := run.Result()
		fan.end()
		switch {
		case err == nil:
			h.log.Info("embedding", "embedded", res.Embedded, "cached", res.Cached, "done", res.Done, "total", res.Total, "ms", res.TookMS)
		case errors.Is(err, context.Canceled), errors.Is(err, embed.ErrNoModel):
		default:
			h.log.Warn("embedding", "err", err)
		}
		h.mu.Lock()
		again := h.embedAgain && err == nil
		h.embedRun, h.embedAgain = nil, false
		h.mu.Unlock()
		if again {
			h.embed()
		}
	}(h.embedDone)
}

// fanout reports one piece of background work as work-done progress to
// every connection that accepts it, through their outboxes (a slow client
// never holds up the work). It begins at the first report with work left
// and sends at most one report per percent.
type fanout struct {
	subs  []*Server
	progs []*progress
	mu    sync.Mutex
	begun bool
	last  int
}

func (h *host) fanout(title, unit string) *fanout {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fanoutLocked(title, unit)
}

func (h *host) fanoutLocked(title, unit string) *fanout {
	f := &fanout{subs: append([]*Server(nil), h.subs...), last: -1}
	for _, s := range f.subs {
		p := s.newProgress(s.base, title, nil)
		p.unit = unit
		f.progs = append(f.progs, p)
	}
	return f
}

func (f *fanout) report(done, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.begun && done >= total {
		return // nothing to do: no progress at all
	}
	pct := 0
	if total > 0 {
		pct = 100 * done / total
	}
	if f.begun && pct == f.last {
		return
	}
	f.begun, f.last = true, pct
	for i, s := range f.subs {
		p := f.progs[i]
		s.post(func() { p.report(done, total) })
	}
}

func (f *fanout) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.begun {
		return
	}
	for i, s := range f.subs {
		p := f.progs[i]
		s.post(func() { p.end("") })
	}
}
