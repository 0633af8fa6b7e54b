package engine

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// A sync that writes allocates fast and keeps little: a cold sync of 226k
// parts allocates 2.1 GB while 7 MB stays live, so with the default GOGC
// of 100 the collector's target sat 7–9 MB above the live heap and it ran
// every 40 ms (387 cycles in 16 s), each cycle marking the whole live heap.
// While a sync writes, the target is kept at least syncHeapRoom above
// the live heap: the same work in fewer cycles, for at most syncHeapRoom
// more memory. A heap already larger than that (a server holding vectors)
// gets the collector's own target, so the room never doubles a large heap.
// docs/benchmarks.md ("Room for the collector, and the merges at the
// end") has the measurements.
const syncHeapRoom = 32 << 20

// maxSyncGCPercent bounds the percent set for a near-empty heap (a sync's
// first transaction), which is recomputed at every commit as the heap grows.
const maxSyncGCPercent = 800

// gcRoom is the process's collector setting while syncs hold it: one sync
// after another, several engines in one process, each counts.
var gcRoom struct {
	sync.Mutex
	holders int
	prev    int // the percent before the first holder (GOGC's, or a caller's)
	cur     int // the percent the holders set last

	// start: the start room is on (giveStartRoom), startPrev the percent
	// it replaced; startGiven: a process gets it once.
	start, startGiven bool
	startPrev         int
}

// A process that runs one command (Options.OneCommand) allocates its first
// startHeap bytes without a collection. The runtime's first target is
// 4 MB, and a CLI search allocates about that much, so its one
// collection came at the end: its mark work, and the fresh memory of
// its metadata, cost the search 6-10 ms of CPU and about 150 of its page
// faults (845k parts; docs/benchmarks.md, "What a CLI process pays
// besides its search"). The first collection ends the room (a finalizer
// on an object it frees), so a command that keeps much (vectors, a long
// session) is collected as before from there on, and a sync that writes
// ends it before it takes its own room.
const (
	startHeap    = 16 << 20
	startPercent = startHeap * 100 / (4 << 20) // the runtime's first target is 4 MB x percent/100
)

// startSentinel is freed by the first collection after giveStartRoom.
type startSentinel struct{ _ *byte }

// giveStartRoom gives this process the start room, once, unless its
// collector is off or set as wide already.
func giveStartRoom() {
	gcRoom.Lock()
	defer gcRoom.Unlock()
	if gcRoom.startGiven || gcRoom.holders > 0 {
		return
	}
	gcRoom.startGiven = true
	prev := debug.SetGCPercent(startPercent)
	if prev < 0 || prev >= startPercent {
		debug.SetGCPercent(prev)
		return
	}
	gcRoom.start, gcRoom.startPrev = true, prev
	runtime.SetFinalizer(new(startSentinel), func(*startSentinel) {
		gcRoom.Lock()
		defer gcRoom.Unlock()
		endStartRoomLocked()
	})
}

// endStartRoomLocked puts back the percent the start room replaced,
// unless something else has set one since.
func endStartRoomLocked() {
	if !gcRoom.start {
		return
	}
	gcRoom.start = false
	if now := debug.SetGCPercent(gcRoom.startPrev); now != startPercent {
		debug.SetGCPercent(now) // set by someone else since: theirs stays
	}
}

// gcHold is one sync's hold on the collector's room (holdGCRoom).
type gcHold struct{ released bool }

// holdGCRoom widens the collector's target for a sync until release; the
// sync calls adjust as its heap grows (at each commit).
func holdGCRoom() *gcHold {
	gcRoom.Lock()
	defer gcRoom.Unlock()
	endStartRoomLocked()
	if gcRoom.holders == 0 {
		// Read by setting: a wider percent for the moment (a narrower
		// one could start a collection), unless the caller's is wider.
		gcRoom.prev = debug.SetGCPercent(maxSyncGCPercent)
		gcRoom.cur = maxSyncGCPercent
		if gcRoom.prev < 0 {
			debug.SetGCPercent(gcRoom.prev)
		}
	}
	gcRoom.holders++
	setRoomLocked()
	return &gcHold{}
}

// adjust sets the percent again for the live heap as it is now.
func (h *gcHold) adjust() {
	gcRoom.Lock()
	defer gcRoom.Unlock()
	if !h.released {
		setRoomLocked()
	}
}

// release ends the hold; the last one out puts the percent back.
func (h *gcHold) release() {
	gcRoom.Lock()
	defer gcRoom.Unlock()
	if h.released {
		return
	}
	h.released = true
	if gcRoom.holders--; gcRoom.holders == 0 && gcRoom.prev >= 0 {
		debug.SetGCPercent(gcRoom.prev)
	}
}

func setRoomLocked() {
	if gcRoom.prev < 0 {
		return // GOGC=off: the caller manages the collector (GOMEMLIMIT)
	}
	gcRoom.cur = roomPercent(liveHeap(gcRoom.cur), gcRoom.prev)
	debug.SetGCPercent(gcRoom.cur)
}

// roomPercent is the GC percent that puts the target syncHeapRoom above a
// live heap of live bytes, never below prev nor above maxSyncGCPercent
// (unless prev is).
func roomPercent(live uint64, prev int) int {
	p := maxSyncGCPercent
	if live > 0 && syncHeapRoom*100/live < uint64(maxSyncGCPercent) {
		p = int(syncHeapRoom * 100 / live)
	}
	return max(p, prev)
}

// liveHeap is about the heap the last collection marked live (0 before
// one), from the goal it set under percent, the collector's percent now.
// (runtime/metrics reads it exactly, but linking that package cost every
// CLI process 2-4 ms of its start: docs/benchmarks.md, "What a CLI
// process pays besides its search".) The runtime's goal is live + (live +
// stacks + globals) x percent/100, at least 4 MB x percent/100, so live is
// (goal - stacks x percent/100) / (1 + percent/100), the globals (a few
// hundred KB here) left out. Below the 4 MB floor the estimate is the
// floor's, which roomPercent caps the same. TestLiveHeapEstimate holds it
// to runtime/metrics' /gc/heap/live:bytes.
func liveHeap(p int) uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.NumGC == 0 {
		return 0
	}
	if p < 0 {
		return ms.HeapAlloc
	}
	stacks := ms.StackInuse * uint64(p) / 100
	if ms.NextGC <= stacks {
		return 0
	}
	return (ms.NextGC - stacks) * 100 / uint64(100+p)
}
