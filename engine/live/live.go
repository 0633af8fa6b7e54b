// Package live keeps one engine's indexes fresh while a server runs: the
// watcher that polls the history and syncs after it changed, the
// first-sync gate that early requests wait on, and the background
// embedding scheduler. It is transport-free: a server subscribes to its
// events (syncs, failures, progress) and tells its clients.
//
// The shape is zoekt's DirectoryWatcher: Start and Stop, a Ready channel,
// WaitUntilReady. Nothing here blocks an interactive query: reads answer
// from the index as it is while a sync or an embedding run works.
package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/embed"
)

// Budgets of the background work.
const (
	// DefaultPoll: a stat of two files per second costs nothing and keeps
	// results within about two seconds of OpenCode's writes.
	DefaultPoll = time.Second
	// DefaultMaxLag bounds how far the index lags behind a history that
	// never goes quiet (OpenCode streaming a long turn writes several times
	// a second): the watcher syncs at least this often while changes keep
	// coming, or less often when a sync takes long (Config.Pace).
	DefaultMaxLag = 5 * time.Second
	// DefaultPace bounds the watcher's share of a core: a sync starts at
	// least DefaultPace times the last one's time after that one started. A
	// sync after a write reads only the sessions written to, but lists
	// every session: 0.4-0.5 s at 30k sessions, 2.7-4 s at 150k
	// (docs/benchmarks.md); synced every 5 s, the largest history would
	// keep half a core busy while OpenCode streams.
	DefaultPace = 10
	// unpacedSync: a sync quicker than this (any history up to a few
	// thousand sessions) is never followed by a wait.
	unpacedSync = 100 * time.Millisecond
	// DefaultFirstSyncWait is how long the first sync waits for another
	// process's writer lock, so a second server on a fresh index answers
	// once that sync is done rather than from a half-written index. A fresh
	// index over a large history takes tens of seconds; servers bound their
	// requests' wait for the first sync by the same figure.
	DefaultFirstSyncWait = 60 * time.Second
	// DefaultStopWait bounds how long Stop waits for a sync or an embedding
	// batch to notice its cancellation (both check between steps).
	DefaultStopWait = 5 * time.Second
)

// Errors of WaitUntilReady.
var (
	// ErrNotReady: the first sync did not end within the wait; the caller
	// may answer from the index as it is (its freshness says stale).
	ErrNotReady = errors.New("the first sync of the index has not finished")
	// ErrStopped: the service stopped before its first sync ended.
	ErrStopped = errors.New("the index watcher stopped")
)

// Config tunes a Service; zero values are the defaults.
type Config struct {
	Poll   time.Duration
	MaxLag time.Duration
	// Pace: a sync that took over 100 ms starts the next no sooner than
	// Pace times its time after it started (DefaultPace; negative: never).
	Pace          int
	FirstSyncWait time.Duration
	StopWait      time.Duration
	Logger        *slog.Logger
	// BeforeSync, when set, runs before each background sync with its
	// context (tests only: a slow or held sync).
	BeforeSync func(context.Context)
}

// Task names a kind of background work in progress reports.
type Task string

// The tasks.
const (
	TaskIndex Task = "indexing" // a sync: counts sessions
	TaskEmbed Task = "embedding"
)

// Progress is one report of a run of background work. A run reports from
// its first step with work left, at most once per percent; End follows
// only a run that reported.
type Progress struct {
	Task        Task
	Run         uint64 // which run: one progress display per run
	Done, Total int
	End         bool
}

// SyncEvent is a sync that ran: the watcher's, or one a door ran
// (Synced).
type SyncEvent struct {
	Result engine.SyncResult
	// NewLock: the history is locked and it was not at the sync before.
	// The watcher retries a locked history every poll; say so once.
	NewLock bool
}

// Subscriber receives a service's events. Callbacks run on the service's
// goroutines and must not block (queue, then return).
type Subscriber struct {
	OnSync     func(SyncEvent)
	OnError    func(error) // a background sync failed
	OnProgress func(Progress)
}

// Service is the live loop of one engine.
type Service struct {
	eng *engine.Engine
	cfg Config
	log *slog.Logger

	ctx    context.Context // ends with Stop
	cancel context.CancelFunc
	ready  chan struct{} // closed when the first background sync ended

	// turn makes the engine's syncs take turns: the watcher's and the ones
	// doors run (Turn). Across processes the index's writer lock does that.
	turn sync.Mutex

	stopOnce sync.Once
	mu       sync.Mutex
	subs     map[int]Subscriber
	nextSub  int
	runs     uint64
	started  bool
	watching chan struct{} // closed when the watcher returns
	lockSaid bool          // NewLock was given for the current locked streak
	embedRun *engine.EmbedRun
	again    bool          // a sync asked for one more embedding run
	embedded chan struct{} // closed when the current embedding run's goroutine returns
}

// New makes the service of eng; Start starts it.
func New(eng *engine.Engine, cfg Config) *Service {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Pace == 0 {
		cfg.Pace = DefaultPace
	}
	if cfg.MaxLag <= 0 {
		cfg.MaxLag = DefaultMaxLag
	}
	if cfg.FirstSyncWait <= 0 {
		cfg.FirstSyncWait = DefaultFirstSyncWait
	}
	if cfg.StopWait <= 0 {
		cfg.StopWait = DefaultStopWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{eng: eng, cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel, ready: make(chan struct{}),
		subs: map[int]Subscriber{}}
}

// Engine is the engine the service keeps fresh.
func (s *Service) Engine() *engine.Engine { return s.eng }

// Start starts the watcher: a first sync, then a poll of the history. It
// is idempotent, and does nothing once the service stopped.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.ctx.Err() != nil {
		return
	}
	s.started = true
	s.watching = make(chan struct{})
	go s.watch(s.watching)
}

// Stop ends the background work and waits for it, at most
// Config.StopWait; it is idempotent. The engine stays open (its owner
// closes it, after taking a Turn: a door's sync may still be writing).
func (s *Service) Stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		s.mu.Lock()
		waits := []chan struct{}{s.watching, s.embedded}
		s.mu.Unlock()
		deadline := time.NewTimer(s.cfg.StopWait)
		defer deadline.Stop()
		for _, done := range waits {
			if done == nil {
				continue
			}
			select {
			case <-done:
			case <-deadline.C:
				s.log.Warn("background work did not stop in time", "waited", s.cfg.StopWait)
				return
			}
		}
	})
}

// Ready is closed once the first background sync ended (synced, failed
// or found the history locked).
func (s *Service) Ready() <-chan struct{} { return s.ready }

// WaitUntilReady waits for the first background sync to end, at most max.
// It returns at once when it has; ctx's error when ctx ends first (a
// cancelled request); ErrNotReady when max passed, ErrStopped when the
// service stopped first. It does not start the service.
func (s *Service) WaitUntilReady(ctx context.Context, max time.Duration) error {
	select {
	case <-s.ready:
		return nil
	default:
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-s.ready:
		return nil
	case <-t.C:
		return ErrNotReady
	case <-s.ctx.Done():
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Subscribe adds a subscriber; cancel removes it.
func (s *Service) Subscribe(sub Subscriber) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextSub
	s.nextSub++
	s.subs[id] = sub
	return func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

func (s *Service) subscribers() []Subscriber {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Subscriber, 0, len(s.subs))
	for _, sub := range s.subs {
		out = append(out, sub)
	}
	return out
}

// Turn waits for the engine's turn to sync and returns the func that
// ends it: a door runs its syncs (the sync command, a sync before a
// request) in turn with the watcher's.
func (s *Service) Turn() (done func()) {
	s.turn.Lock()
	return s.turn.Unlock
}

// Synced announces a sync: every subscriber hears of it, and new
// documents get their vectors. The watcher calls it for its own syncs; a
// door calls it for the syncs it ran.
func (s *Service) Synced(res engine.SyncResult) {
	s.mu.Lock()
	ev := SyncEvent{Result: res, NewLock: res.Locked && !s.lockSaid}
	s.lockSaid = res.Locked
	s.mu.Unlock()
	for _, sub := range s.subscribers() {
		if sub.OnSync != nil {
			sub.OnSync(ev)
		}
	}
	if !res.Idle && res.Added+res.Updated+res.Deleted > 0 {
		s.embed()
	}
}

// watch keeps the indexes fresh: a first sync at start (waiting for another
// process's writer lock), then a stat poll of every source's files (the
// engine's fingerprint joins them; a sync of the sources that did not
// change costs two stats each). A
// change syncs once the files have stopped changing for one poll (OpenCode
// writes a turn in bursts), or after MaxLag of continuous changes at the
// latest, and not until Config.Pace times the last sync's time after it
// started (a sync of a large history lists every session).
func (s *Service) watch(done chan struct{}) {
	defer close(done)
	ctx := s.ctx
	last := s.eng.SourceFingerprint()
	// A history locked by a writer leaves a change unread (dirty): the
	// next poll tries again rather than wait for another change.
	// The first sync's time paces nothing: it may have built the index.
	dirty, _ := s.backgroundSync(ctx, s.cfg.FirstSyncWait)
	var cost time.Duration
	dirtySince, lastEnd := time.Now(), time.Now()
	close(s.ready)
	s.embed()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	syncNow := func() {
		dirty, cost = s.backgroundSync(ctx, 0)
		lastEnd = time.Now()
		if cost < unpacedSync {
			cost = 0
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Paced: a sync waits Pace-1 times the last one's time after it
		// ended, whether the history went quiet or not.
		paced := s.cfg.Pace < 0 || time.Since(lastEnd) >= time.Duration(s.cfg.Pace-1)*cost
		fp := s.eng.SourceFingerprint()
		switch {
		case fp != last:
			if !dirty {
				dirty, dirtySince = true, time.Now()
			}
			last = fp
			if time.Since(dirtySince) >= s.cfg.MaxLag && paced {
				syncNow()
			}
		case dirty && paced:
			syncNow()
		}
	}
}

// backgroundSync runs one sync for the watcher and reports whether the
// history was locked (the change is still to be read), and how long it took.
func (s *Service) backgroundSync(ctx context.Context, lockWait time.Duration) (locked bool, took time.Duration) {
	// took is the sync's own time (and the test hook's), not the wait for
	// an embedding batch to yield its turn.
	start := time.Now()
	if s.cfg.BeforeSync != nil {
		s.cfg.BeforeSync(ctx)
	}
	hook := time.Since(start)
	done := s.Turn()
	defer done()
	start = time.Now()
	since := func() time.Duration { return hook + time.Since(start) }
	if ctx.Err() != nil {
		return false, since()
	}
	rep := s.reporter(TaskIndex)
	res, err := s.eng.Sync(ctx, engine.SyncOptions{LockWait: lockWait,
		Progress: func(p engine.SyncProgress) { rep.report(p.Done, p.Total) }})
	rep.end()
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("background sync", "err", err)
			for _, sub := range s.subscribers() {
				if sub.OnError != nil {
					sub.OnError(err)
				}
			}
		}
		return false, since()
	}
	s.log.Info("background sync", "idle", res.Idle, "added", res.Added, "updated", res.Updated, "deleted", res.Deleted,
		"busy", res.Busy, "locked", res.Locked, "replaced", res.Replaced, "ms", res.TookMS)
	s.Synced(res)
	return res.Locked, since()
}

// embed starts a background embedding run when a model is installed; one
// run at a time (a sync during a run asks for one more after it). Without
// a model it does nothing: search notices the lexical fallback itself.
func (s *Service) embed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	if s.embedRun != nil {
		s.again = true
		return
	}
	if ms, err := s.eng.ModelStore().List(); err != nil || len(ms) == 0 {
		return
	}
	rep := s.reporterLocked(TaskEmbed)
	run := s.eng.StartEmbedding(s.ctx, engine.EmbedOptions{Progress: func(p engine.EmbedProgress) { rep.report(p.Done, p.Total) }})
	s.embedRun, s.embedded = run, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		res, err := run.Result()
		rep.end()
		switch {
		case err == nil:
			s.log.Info("embedding", "embedded", res.Embedded, "cached", res.Cached, "done", res.Done, "total", res.Total, "ms", res.TookMS)
		case errors.Is(err, context.Canceled), errors.Is(err, embed.ErrNoModel):
		default:
			s.log.Warn("embedding", "err", err)
		}
		s.mu.Lock()
		again := s.again && err == nil
		s.embedRun, s.again = nil, false
		s.mu.Unlock()
		if again {
			s.embed()
		}
	}(s.embedded)
}

// reporter reports one run of background work to the subscribers there
// were when it began. It begins at the first report with work left and
// sends at most one report per percent.
type reporter struct {
	subs  []Subscriber
	task  Task
	run   uint64
	mu    sync.Mutex
	begun bool
	last  int
}

func (s *Service) reporter(task Task) *reporter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reporterLocked(task)
}

func (s *Service) reporterLocked(task Task) *reporter {
	s.runs++
	r := &reporter{task: task, run: s.runs, last: -1}
	for _, sub := range s.subs {
		if sub.OnProgress != nil {
			r.subs = append(r.subs, sub)
		}
	}
	return r
}

func (r *reporter) report(done, total int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.begun && done >= total {
		return // nothing to do: no progress at all
	}
	pct := 0
	if total > 0 {
		pct = 100 * done / total
	}
	if r.begun && pct == r.last {
		return
	}
	r.begun, r.last = true, pct
	for _, sub := range r.subs {
		sub.OnProgress(Progress{Task: r.task, Run: r.run, Done: done, Total: total})
	}
}

func (r *reporter) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.begun {
		return
	}
	for _, sub := range r.subs {
		sub.OnProgress(Progress{Task: r.task, Run: r.run, End: true})
	}
}
