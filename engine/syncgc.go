package engine

import (
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

var syncGC struct {
	sync.Mutex
	holders int // syncs under way in this process
	saved   int // the percent before the first of them
}

// raiseGCForSync sets syncGCPercent until the returned func is called (by
// every sync that called it: the last one restores the setting). A GOGC
// the user set, or a higher or disabled target, is left alone.
func raiseGCForSync() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	syncGC.Lock()
	defer syncGC.Unlock()
	if syncGC.holders == 0 {
		syncGC.saved = debug.SetGCPercent(syncGCPercent)
		if syncGC.saved < 0 || syncGC.saved > syncGCPercent {
			debug.SetGCPercent(syncGC.saved)
		}
	}
	syncGC.holders++
	return func() {
		syncGC.Lock()
		defer syncGC.Unlock()
		syncGC.holders--
		if syncGC.holders == 0 {
			debug.SetGCPercent(syncGC.saved)
		}
	}
}
