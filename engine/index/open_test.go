package index

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// Handles opened while others close: the last connection to close
// checkpoints the WAL away holding the index exclusively, and a handle
// opening then used to fail its connection's extension registration with
// SQLITE_BUSY ("automatic extension loading failed"), before its
// busy_timeout was set: 2 of 240 `recall sessions` run three at a time.
func TestOpenWhileOthersClose(t *testing.T) {
	p := filepath.Join(privateDir(t), "i.db")
	openIndex(t, p).Close()
	ctx := context.Background()
	const workers, rounds = 4, 60
	errs := make(chan error, workers*rounds)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				ix, err := OpenWith(ctx, p, Options{OneCommand: true})
				if err != nil {
					errs <- err
					continue
				}
				var n int
				if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
					errs <- err
				}
				ix.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed == 0 {
			t.Errorf("open or read while other handles close: %v", err)
		}
		failed++
	}
	if failed > 0 {
		t.Errorf("%d of %d opens failed", failed, workers*rounds)
	}
}
