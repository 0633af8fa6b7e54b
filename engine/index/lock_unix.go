//go:build unix

package index

import (
	"context"
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
	f, err := os.OpenFile(indexPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open index lock: %w", err)
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

// TryLockWriter takes the lock only if it is free.
func TryLockWriter(indexPath string) (*WriterLock, bool, error) {
	f, err := os.OpenFile(indexPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("open index lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock index: %w", err)
	}
	return &WriterLock{f: f}, true, nil
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
