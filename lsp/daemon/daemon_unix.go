//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Supported: Unix sockets, flock and setsid.
const Supported = true

// checkPrivateDir refuses a runtime directory another user could reach:
// it must be a real directory (not a symlink) the user owns; a too-open
// mode on our own directory is tightened.
func checkPrivateDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok {
		return fmt.Errorf("runtime dir %s is not a directory", dir)
	}
	if int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("runtime dir %s belongs to uid %d, not to us (%d)", dir, sys.Uid, os.Getuid())
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("runtime dir %s: %w", dir, err)
		}
	}
	return nil
}

// isPrivateDir reports whether dir is a directory of ours that no one
// else may enter, changing nothing (checkPrivateDir repairs the mode).
func isPrivateDir(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && st.IsDir() && int(sys.Uid) == os.Getuid() && st.Mode().Perm()&0o077 == 0
}

// lockDaemon takes the key's lock for the daemon's lifetime; the kernel
// drops it when the process dies, however it dies, which is what tells a
// stale socket file from a live daemon.
func lockDaemon(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errDaemonRunning
		}
		return nil, fmt.Errorf("daemon lock: %w", err)
	}
	// The pid, for people (and tests) looking for the daemon.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	return func() { f.Close() }, nil
}

// Spawn starts `recall lsp --daemon …` detached: its own session (no
// signal from the editor's terminal or process group reaches it), stdio on
// /dev/null, logs to its log file.
func Spawn(exe string, args []string) error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/" // never hold the editor's directory busy; every path it gets is absolute
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start daemon: %w", err)
	}
	go cmd.Wait() // reap it if it exits while we run (it usually outlives us)
	return nil
}
