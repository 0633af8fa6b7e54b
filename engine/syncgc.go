package engine

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// syncGCPercent is the garbage collector's target while a sync writes. A
// sync allocates and drops its texts at a high rate over a small live heap,
// so at Go's default (100) the collector ran often enough to cost about a
// tenth of a cold sync's CPU: interleaved CLI cold syncs of the 32k-part
// clone took 7.3 CPU-seconds at 400 against 8.1 at 100, peak RSS 94 MB
// against 75 MB (the budget is 150 MB).
const syncGCPercent = 400

// syncMemoryLimit caps what the higher GC target may let the Go heap grow
// to (a soft limit: past it the collector runs as often as it must): at
// 400 alone the 847k-part cold sync passed 216 MB RSS, against 114 MB at
// Go's default, and the budget is 150 MB. SQLite's page caches are outside
// it (the driver allocates them itself).
const syncMemoryLimit = 80 << 20

var syncGC struct {
	sync.Mutex
	holders int   // syncs under way in this process
	saved   int   // the percent before the first of them
	limit   int64 // the memory limit before the first of them
}

// raiseGCForSync sets syncGCPercent and syncMemoryLimit until the returned
// func is called (by every sync that called it: the last one restores the
// settings). A GOGC or GOMEMLIMIT the user set, or settings the program
// changed already, are left alone.
func raiseGCForSync() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	syncGC.Lock()
	defer syncGC.Unlock()
	if syncGC.holders == 0 {
		syncGC.limit = debug.SetMemoryLimit(-1)
		syncGC.saved = debug.SetGCPercent(syncGCPercent)
		if syncGC.saved < 0 || syncGC.saved > syncGCPercent || syncGC.limit != math.MaxInt64 {
			// Tuned already (by the program): leave it so.
			debug.SetGCPercent(syncGC.saved)
		} else {
			debug.SetMemoryLimit(syncMemoryLimit)
		}
	}
	syncGC.holders++
	return func() {
		syncGC.Lock()
		defer syncGC.Unlock()
		syncGC.holders--
		if syncGC.holders == 0 {
			debug.SetGCPercent(syncGC.saved)
			debug.SetMemoryLimit(syncGC.limit)
		}
	}
}
