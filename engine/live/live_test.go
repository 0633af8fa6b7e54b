package live

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/embed/bertgen"
	"github.com/recallhq/recall/internal/historytest"
)

// fixtureDB is the repo's real OpenCode 1.18.33 history (10 sessions).
var fixtureDB = filepath.Join("..", "..", "testdata", "opencode", "v1", "opencode.db")

const renamed = "ses_dd7571907ffe5vPpW7vxTE77tW"

// copyFixture copies the fixture history (tests that change it).
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

// openEngine opens an engine over db with a fresh index; dataDir, when
// set, prepares $XDG_DATA_HOME (a model) first.
func openEngine(t testing.TB, db string, dataDir func(string)) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	if dataDir != nil {
		dataDir(dir)
	}
	eng, err := engine.Open(context.Background(), engine.Options{DBPath: db, IndexPath: filepath.Join(dir, "index.db"),
		Getenv: func(k string) string {
			if k == "XDG_DATA_HOME" || k == "HOME" {
				return dir
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// start runs a service over eng for the test.
func start(t testing.TB, eng *engine.Engine, cfg Config) *Service {
	t.Helper()
	s := New(eng, cfg)
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// events records what a subscriber hears.
type events struct {
	mu       sync.Mutex
	syncs    []SyncEvent
	errs     []error
	progress []Progress
	synced   chan struct{}
}

func subscribe(s *Service) *events {
	ev := &events{synced: make(chan struct{}, 100)}
	s.Subscribe(Subscriber{
		OnSync: func(e SyncEvent) {
			ev.mu.Lock()
			ev.syncs = append(ev.syncs, e)
			ev.mu.Unlock()
			select {
			case ev.synced <- struct{}{}:
			default:
			}
		},
		OnError: func(err error) {
			ev.mu.Lock()
			ev.errs = append(ev.errs, err)
			ev.mu.Unlock()
		},
		OnProgress: func(p Progress) {
			ev.mu.Lock()
			ev.progress = append(ev.progress, p)
			ev.mu.Unlock()
		},
	})
	return ev
}

// waitSync waits for a sync that satisfies ok.
func (ev *events) waitSync(t testing.TB, within time.Duration, ok func(engine.SyncResult) bool) engine.SyncResult {
	t.Helper()
	deadline := time.After(within)
	for seen := 0; ; {
		ev.mu.Lock()
		got := append([]SyncEvent(nil), ev.syncs[seen:]...)
		ev.mu.Unlock()
		for _, e := range got {
			seen++
			if ok(e.Result) {
				return e.Result
			}
		}
		select {
		case <-ev.synced:
		case <-deadline:
			t.Fatalf("no such sync within %v (%d syncs)", within, seen)
		}
	}
}

func setTitle(t testing.TB, w *sql.DB, title string) {
	t.Helper()
	if err := historytest.Rename(w, renamed, title); err != nil {
		t.Fatal(err)
	}
}

func indexedTitle(t testing.TB, eng *engine.Engine) string {
	t.Helper()
	res, err := eng.Sessions(context.Background(), engine.SessionsParams{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Sessions {
		if s.ID == renamed {
			return s.Title
		}
	}
	return ""
}

// The first-sync gate: WaitUntilReady waits while the first sync runs,
// gives up at its bound (ErrNotReady) or when the request is cancelled,
// and returns at once when the first sync is done; Ready is closed then.
func TestFirstSyncGate(t *testing.T) {
	hold := make(chan struct{})
	var entered atomic.Bool
	eng := openEngine(t, fixtureDB, nil)
	s := start(t, eng, Config{Poll: 50 * time.Millisecond, BeforeSync: func(ctx context.Context) {
		entered.Store(true)
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}})
	ev := subscribe(s)
	if err := s.WaitUntilReady(context.Background(), 100*time.Millisecond); !errors.Is(err, ErrNotReady) {
		t.Fatalf("wait while the first sync is held: %v, want ErrNotReady", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if err := s.WaitUntilReady(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	select {
	case <-s.Ready():
		t.Fatal("ready before the first sync")
	default:
	}
	if !entered.Load() {
		t.Fatal("the first sync never started")
	}
	close(hold)
	if err := s.WaitUntilReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	<-s.Ready()
	if got := ev.waitSync(t, time.Second, func(engine.SyncResult) bool { return true }); got.Added != 10 {
		t.Errorf("first sync: %+v, want the 10 sessions added", got)
	}
	start := time.Now()
	if err := s.WaitUntilReady(context.Background(), time.Minute); err != nil || time.Since(start) > 10*time.Millisecond {
		t.Errorf("a wait after the first sync: %v after %v", err, time.Since(start))
	}
}

// A change is synced once the history is quiet for a poll, without any
// request asking; Start twice is one watcher.
func TestWatcherSyncsAChange(t *testing.T) {
	db := copyFixture(t)
	eng := openEngine(t, db, nil)
	var syncs atomic.Int32
	s := start(t, eng, Config{Poll: 50 * time.Millisecond, BeforeSync: func(context.Context) { syncs.Add(1) }})
	s.Start()
	ev := subscribe(s)
	if err := s.WaitUntilReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	setTitle(t, w, "Renamed for the live watcher")
	ev.waitSync(t, 10*time.Second, func(r engine.SyncResult) bool { return r.Updated == 1 })
	if got := indexedTitle(t, eng); got != "Renamed for the live watcher" {
		t.Errorf("indexed title %q after the watcher's sync", got)
	}
	time.Sleep(300 * time.Millisecond) // six quiet polls: no more syncs
	if n := syncs.Load(); n != 2 {
		t.Errorf("%d background syncs, want 2 (the first, the change's): two watchers, or syncs of an unchanged history", n)
	}
}

// openCodeConn is a connection like OpenCode's own: WAL, and a busy
// timeout for the moments a sync reads.
func openCodeConn(t *testing.T, db string) *sql.DB {
	t.Helper()
	w, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	w.SetMaxOpenConns(1)
	return w
}

// A history that never goes quiet (OpenCode streaming a long turn) is
// still synced at least every MaxLag: before, the watcher waited for a
// quiet poll that never came. (Moved here from lsp: it is the loop's.)
func TestBoundedLagUnderBusyWriter(t *testing.T) {
	db := copyFixture(t)
	const poll, maxLag = 100 * time.Millisecond, 600 * time.Millisecond
	eng := openEngine(t, db, nil)
	// MaxLag alone: under the race detector a sync of the fixture takes
	// long enough to be paced (TestSlowSyncsArePaced is of that).
	s := start(t, eng, Config{Poll: poll, MaxLag: maxLag, Pace: -1})
	ev := subscribe(s)
	if err := s.WaitUntilReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	w := openCodeConn(t, db)
	var written atomic.Int64
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond): // several writes per poll: never quiet
			}
			if err := historytest.Rename(w, renamed, fmt.Sprintf("Busy writer title %d", n)); err != nil {
				t.Errorf("writer: %v", err)
				return
			}
			written.Store(int64(n))
		}
	}()
	const busyFor = 3 * time.Second
	time.Sleep(busyFor)
	// Still writing: the index holds a title written within the lag bound.
	lagBound := maxLag + 2*poll + 700*time.Millisecond // plus a sync and scheduling on a loaded machine
	before := written.Load() - int64(lagBound/(25*time.Millisecond)) - 5
	title := indexedTitle(t, eng)
	close(stop)
	<-writerDone
	var best int64 = -1
	fmt.Sscanf(title, "Busy writer title %d", &best)
	ev.mu.Lock()
	updates := 0
	for _, e := range ev.syncs {
		if e.Result.Updated > 0 {
			updates++
		}
	}
	ev.mu.Unlock()
	t.Logf("busy writer: %d writes, %d syncs in %v; the index held title %d (bound: >= %d)", written.Load(), updates, busyFor, best, before)
	if updates < 2 {
		t.Errorf("%d syncs in %v of continuous writes, want at least 2 (one per %v)", updates, busyFor, maxLag)
	}
	if best < before {
		t.Errorf("the index held title %d while %d were written: lagging more than %v", best, written.Load(), lagBound)
	}
}

// Under continuous writes, a sync that takes long is followed by a longer
// wait: the watcher's syncs stay a bounded share of a core whatever the
// history's size (a sync lists every session).
func TestSlowSyncsArePaced(t *testing.T) {
	db := copyFixture(t)
	const poll, maxLag, syncCost = 50 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond
	eng := openEngine(t, db, nil)
	var mu sync.Mutex
	var starts []time.Time
	s := start(t, eng, Config{Poll: poll, MaxLag: maxLag, BeforeSync: func(context.Context) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(syncCost) // a sync of a large history
	}})
	if err := s.WaitUntilReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	w := openCodeConn(t, db)
	deadline := time.Now().Add(5 * time.Second)
	for n := 1; time.Now().Before(deadline); n++ {
		if err := historytest.Rename(w, renamed, fmt.Sprintf("Paced writer title %d", n)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Millisecond) // several writes per poll: never quiet
	}
	mu.Lock()
	defer mu.Unlock()
	if len(starts) < 2 {
		t.Fatalf("%d syncs in 5 s of continuous writes; want the first and at least one more", len(starts))
	}
	for i := 2; i < len(starts); i++ { // the first is the start's; the second follows it by MaxLag
		if gap := starts[i].Sub(starts[i-1]); gap < DefaultPace*syncCost-poll {
			t.Errorf("sync %d began %v after the one before, which took %v: want at least %v between them", i, gap, syncCost, DefaultPace*syncCost)
		}
	}
	t.Logf("%d syncs in 5 s of continuous writes, each taking %v", len(starts), syncCost)
}

// NewLock is said once per locked streak, for the watcher's syncs and a
// door's alike.
func TestNewLockOncePerStreak(t *testing.T) {
	s := New(nil, Config{})
	ev := subscribe(s)
	for _, locked := range []bool{true, true, false, true, true} {
		s.Synced(engine.SyncResult{Locked: locked, Idle: true})
	}
	var got []bool
	for _, e := range ev.syncs {
		got = append(got, e.NewLock)
	}
	if fmt.Sprint(got) != "[true false false true false]" {
		t.Errorf("NewLock over locked, locked, free, locked, locked: %v", got)
	}
}

// Stop is bounded even when a sync ignores its cancellation, idempotent,
// and a stopped service does not start again; waiters are released.
func TestStopBoundedAndIdempotent(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	eng := openEngine(t, fixtureDB, nil)
	entered := make(chan struct{})
	s := New(eng, Config{StopWait: 200 * time.Millisecond, BeforeSync: func(context.Context) {
		close(entered)
		<-stuck // ignores ctx
	}})
	s.Start()
	<-entered
	waited := make(chan error, 1)
	go func() { waited <- s.WaitUntilReady(context.Background(), time.Minute) }()
	start := time.Now()
	s.Stop()
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("Stop with a stuck sync took %v, want about StopWait (200ms)", d)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, ErrStopped) {
			t.Errorf("a waiter when the service stopped: %v, want ErrStopped", err)
		}
	case <-time.After(time.Second):
		t.Error("Stop left a waiter waiting")
	}
	start = time.Now()
	s.Stop()
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("a second Stop took %v", d)
	}
	s.mu.Lock()
	before := s.watching
	s.mu.Unlock()
	s.Start()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching != before {
		t.Error("Start after Stop started a watcher")
	}
}

// installModel puts a tiny random BERT model in the data dir's model store.
func installModel(t testing.TB) func(string) {
	return func(dir string) {
		m, err := bertgen.Generate(bertgen.Tiny(7))
		if err != nil {
			t.Fatal(err)
		}
		snap := filepath.Join(t.TempDir(), "snapshot")
		if err := os.MkdirAll(snap, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteDir(snap, bertgen.Safetensors); err != nil {
			t.Fatal(err)
		}
		if _, err := (embed.Store{Dir: filepath.Join(dir, "recall", "models")}).Import(context.Background(), snap, "test/tiny"); err != nil {
			t.Fatal(err)
		}
	}
}

// With a model installed, the first sync is followed by an embedding run;
// syncs during a run ask for one more run after it (however many syncs),
// and runs never overlap.
func TestEmbeddingScheduler(t *testing.T) {
	eng := openEngine(t, fixtureDB, installModel(t))
	s := New(eng, Config{Poll: time.Hour}) // the first sync only
	t.Cleanup(s.Stop)
	var once sync.Once
	var overlap atomic.Bool
	s.Subscribe(Subscriber{OnProgress: func(p Progress) {
		if p.Task != TaskEmbed || p.End {
			return
		}
		once.Do(func() {
			// Mid-run, three syncs that changed the index.
			for range 3 {
				s.Synced(engine.SyncResult{Updated: 1})
			}
		})
	}})
	s.Start()
	deadline := time.Now().Add(60 * time.Second)
	quiet := 0
	for quiet < 10 { // 200 ms without a run, once one began: the scheduler is done
		s.mu.Lock()
		running, runs := s.embedRun != nil, s.runs
		s.mu.Unlock()
		if running || runs < 2 { // the first sync's reporter, then the first run's
			quiet = 0
		} else {
			quiet++
		}
		if runs > 3 {
			overlap.Store(true)
		}
		if time.Now().After(deadline) {
			t.Fatal("embedding runs did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := eng.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Semantic.Total == 0 || st.Semantic.Embedded != st.Semantic.Total {
		t.Errorf("after the runs: %+v, want every document embedded", st.Semantic)
	}
	// Reporters made: the first sync's, then one per embedding run.
	s.mu.Lock()
	runs := s.runs
	s.mu.Unlock()
	if runs != 3 || overlap.Load() {
		t.Errorf("%d embedding runs, want 2: the first, and one more for the three syncs during it", runs-1)
	}
}

// The watcher watches every source: a change in the second one is synced,
// and only that source re-reads anything.
func TestWatcherSyncsEachSource(t *testing.T) {
	first, second := copyFixture(t), copyFixture(t)
	dir := t.TempDir()
	eng, err := engine.Open(context.Background(), engine.Options{
		Sources: []engine.SourceSpec{{Name: "one", Path: first}, {Name: "two", Path: second}},
		Getenv: func(k string) string {
			if k == "XDG_DATA_HOME" || k == "HOME" {
				return dir
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	s := start(t, eng, Config{Poll: 50 * time.Millisecond})
	ev := subscribe(s)
	if err := s.WaitUntilReady(context.Background(), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	setTitle(t, w, "Renamed in the second source")
	got := ev.waitSync(t, 10*time.Second, func(r engine.SyncResult) bool { return r.Updated == 1 })
	if len(got.Sources) != 2 || got.Sources[0].Updated != 0 || got.Sources[1].Updated != 1 || !got.Sources[0].Idle {
		t.Errorf("the change's sync: %+v", got.Sources)
	}
}
