package engine

import (
	"context"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestRoomPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live       uint64
		prev, want int
	}{
		{0, 100, maxSyncGCPercent},      // no collection yet
		{2 * mb, 100, maxSyncGCPercent}, // capped
		{8 * mb, 100, 400},              // 32 MB above 8
		{16 * mb, 100, 200},
		{32 * mb, 100, 100},
		{200 * mb, 100, 100}, // a large heap keeps the collector's own target
		{16 * mb, 300, 300},  // never below the caller's
		{2 * mb, 1000, 1000}, // nor above it when it is higher still
		{200 * mb, 50, 50},   // a caller's tighter setting on a large heap
		{64 * mb, 0, 50},     // GOGC=0 on a heap past the room: widened to it
	} {
		if got := roomPercent(c.live, c.prev); got != c.want {
			t.Errorf("roomPercent(%d MB, %d) = %d, want %d", c.live/mb, c.prev, got, c.want)
		}
	}
}

// While a sync writes, the collector has room above a small live heap,
// and the percent it had is back afterwards; a higher one is kept, and a
// collector switched off stays off. Not parallel: the percent is the
// process's.
func TestSyncGivesTheCollectorRoom(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, prev := range []int{100, 1000, -1} {
		debug.SetGCPercent(prev)
		runtime.GC()
		if live := liveHeap(prev); prev == 100 && live >= syncHeapRoom {
			t.Fatalf("the test process's live heap is %d MB, past the room (%d MB): the test cannot tell", live>>20, syncHeapRoom>>20)
		}
		e, err := Open(context.Background(), Options{DBPath: fixture(t, "v1"), IndexPath: filepath.Join(t.TempDir(), "index.db"), Getenv: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		var during []int
		_, err = e.Sync(context.Background(), SyncOptions{Progress: func(SyncProgress) { during = append(during, gcPercent()) }})
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		after := gcPercent()
		if len(during) == 0 {
			t.Fatal("the sync reported no progress")
		}
		for _, p := range during {
			if (prev == 100 && p <= 100) || (prev != 100 && p != prev) {
				t.Errorf("GOGC %d: the percent while the sync wrote was %d", prev, p)
				break
			}
		}
		if after != prev {
			t.Errorf("GOGC %d: after the sync the percent is %d", prev, after)
		}
	}
}

// A process that runs one command allocates its first startHeap bytes
// without a collection: Open with OneCommand widens the percent, once a
// process; the first collection puts the process's own back; and a sync
// that writes ends the room before it takes its own, so the percent it
// leaves behind is the process's. Not parallel: the percent is the
// process's.
func TestOneCommandStartRoom(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	fresh := func() {
		gcRoom.Lock()
		gcRoom.start, gcRoom.startGiven = false, false
		gcRoom.Unlock()
	}
	ctx := context.Background()
	db := fixture(t, "v1")
	ix := filepath.Join(t.TempDir(), "index.db")
	openAt(t, db, ix).Close()

	fresh()
	e, err := Open(ctx, Options{DBPath: db, IndexPath: ix, Getenv: noEnv, OneCommand: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if got := gcPercent(); got != startPercent {
		t.Fatalf("a one-command engine left the percent at %d, want %d (a first collection at %d MB)", got, startPercent, startHeap>>20)
	}
	for deadline := time.Now().Add(5 * time.Second); gcPercent() != 100 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := gcPercent(); got != 100 {
		t.Fatalf("after the first collection the percent is %d, want the process's 100 back", got)
	}
	e, err = Open(ctx, Options{DBPath: db, IndexPath: ix, Getenv: noEnv, OneCommand: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if got := gcPercent(); got != 100 {
		t.Errorf("a second one-command engine in the process set the percent to %d; the room is given once", got)
	}

	fresh()
	e, err = Open(ctx, Options{DBPath: fixture(t, "v1"), IndexPath: filepath.Join(t.TempDir(), "index.db"), Getenv: noEnv, OneCommand: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(ctx, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := gcPercent(); got != 100 {
		t.Errorf("after a sync in a one-command process the percent is %d, want the process's 100", got)
	}
}

// liveHeap, read from the collector's goal, is within 15% of what
// runtime/metrics says the last collection marked live (the package the
// binary no longer links), at the percents a sync sets.
func TestLiveHeapEstimate(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	keep := make([][]byte, 0, 64)
	for _, mb := range []int{8, 24, 64} {
		for len(keep) < mb {
			keep = append(keep, make([]byte, 1<<20))
		}
		for _, p := range []int{100, 200, 800} {
			debug.SetGCPercent(p)
			runtime.GC()
			s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(s)
			want := s[0].Value.Uint64()
			got := liveHeap(p)
			if floor := uint64(4<<20) * uint64(p) / 100 * 100 / uint64(100+p); want < floor {
				want = floor // below the runtime's 4 MB floor the goal is the floor's
			}
			t.Logf("%d MB kept, percent %d: liveHeap %.1f MB, runtime/metrics %.1f MB", mb, p, float64(got)/(1<<20), float64(want)/(1<<20))
			if got < want*85/100 || got > want*115/100 {
				t.Errorf("%d MB kept, percent %d: liveHeap %.1f MB, runtime/metrics %.1f MB", mb, p, float64(got)/(1<<20), float64(want)/(1<<20))
			}
			if got := gcPercent(); got != p {
				t.Fatalf("gcPercent read %d, set %d", got, p)
			}
		}
	}
	runtime.KeepAlive(keep)
}

// gcPercent is the collector's percent now (-1: off), read by setting it
// and putting it back (tests only: the engine knows what it set).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}
