package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The cursor key signs cursors (cursor.go). It is the user's, not an
// index's: it lives outside every index, so a cursor outlives an index
// rebuild and names a place in any of the user's sources.
const (
	cursorKeyName  = "cursor.key"
	cursorKeyBytes = 32
)

// CursorKeyPath is where the cursor key is kept:
// $XDG_DATA_HOME/recall/cursor.key.
func CursorKeyPath(getenv func(string) string) string {
	return filepath.Join(DataDir(getenv), cursorKeyName)
}

// loadCursorKey reads the user's cursor key, making one the first time.
// A key file others may read or write, or another user's, is refused: who
// holds the key can sign cursors. On a data dir Recall cannot write, the
// key lives as long as the process, and notice says so.
func loadCursorKey(getenv func(string) string) (key []byte, notice string, err error) {
	path := CursorKeyPath(getenv)
	key, err = readCursorKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, "", err
	}
	key = make([]byte, cursorKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("make a cursor key: %w", err)
	}
	err = saveCursorKey(path, key)
	switch {
	case errors.Is(err, fs.ErrExist):
		// Another process made it first: use that one.
		key, err = readCursorKey(path)
		return key, "", err
	case cannotWrite(err):
		return key, fmt.Sprintf("cannot keep the cursor key in %s (%v); cursors from this run stop working when it ends", filepath.Dir(path), errors.Unwrap(err)), nil
	case err != nil:
		return nil, "", err
	}
	return key, "", nil
}

// saveCursorKey writes key to a private temporary file (created O_EXCL)
// and links it in place: link fails when the key exists, so two processes
// starting at once agree on one key, and no process ever reads a key half
// written (a plain O_EXCL create of the file itself would allow that).
func saveCursorKey(path string, key []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cursor key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".cursor.key-*") // 0600, O_EXCL
	if err != nil {
		return fmt.Errorf("cursor key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cursor key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("cursor key: %w", err)
	}
	return nil
}

// readCursorKey reads the key at path, refusing one that is not a private
// regular file of this user holding a key.
func readCursorKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("the cursor key %s is a symlink; remove it (rm %s) and Recall makes a new one", path, path)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cursor key: %w", err)
	}
	remove := fmt.Sprintf("remove it (rm %s) and Recall makes a new one (cursors made with it stop working)", path)
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the cursor key %s is not a regular file; %s", path, remove)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("the cursor key %s belongs to user %d, not to you (%d): whoever owns it can sign cursors; %s", path, st.Uid, os.Geteuid(), remove)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("the cursor key %s is open to other users (mode %04o): whoever reads it can sign cursors; make it private (chmod 600 %s) or %s", path, perm, path, remove)
	}
	key, err := io.ReadAll(io.LimitReader(f, cursorKeyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read cursor key %s: %w", path, err)
	}
	if len(key) != cursorKeyBytes {
		return nil, fmt.Errorf("the cursor key %s holds %d bytes, not a %d-byte key; %s", path, len(key), cursorKeyBytes, remove)
	}
	return key, nil
}

// cannotWrite reports storage Recall may not write (read-only, or not
// the user's to write).
func cannotWrite(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}
