//go:build unix

package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// WriterLock is held by the one process that may write the index; readers
// never take it.
type WriterLock struct{ f *os.File }

// LockWriter takes the writer lock beside the index file, waiting until ctx
// ends. A lock left by a killed process is released by the kernel with it.
func LockWriter(ctx context.Context, indexPath string) (*WriterLock, error) {
	f, err := openLock(indexPath)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &WriterLock{f: f}, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("lock index: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("another recall process is updating the index; try again in a moment (%w)", ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// openLock opens the lock file under the rules of the index itself: made
// with O_EXCL, never through a symlink, never another user's.
func openLock(indexPath string) (*os.File, error) {
	f, err := openOwnFile(indexPath, indexPath+".lock")
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return nil, err
		}
		return nil, fmt.Errorf("open index lock %s.lock: %w", indexPath, ExplainWrite(indexPath, err))
	}
	return f, nil
}

// Unlock releases the lock.
func (l *WriterLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
