package opencode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound means no OpenCode history exists at any of the places searched.
var ErrNotFound = errors.New("no OpenCode history found")

// NotFoundError lists the paths that were tried, so the message can say where
// to look and how to point Recall elsewhere.
type NotFoundError struct {
	Tried []string
	// Env names the variable the one path tried came from (OPENCODE_DB):
	// a history asked for by name, whose absence is an error like a --db
	// that is not there, never a reason to look elsewhere.
	Env string
}

func (e *NotFoundError) Error() string {
	if e.Env != "" {
		return fmt.Sprintf("no OpenCode database found (tried %s, from %s); fix or unset %s, or pass --db PATH",
			strings.Join(e.Tried, ", "), e.Env, e.Env)
	}
	return fmt.Sprintf("no OpenCode database found (tried %s); pass --db PATH or set OPENCODE_DB",
		strings.Join(e.Tried, ", "))
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Locate finds the OpenCode database the way OpenCode does: the explicit
// path, then OPENCODE_DB (absolute, or relative to the data dir; when set
// and not there, that is the error), then
// $XDG_DATA_HOME/opencode/opencode.db, then ~/.local/share/opencode/opencode.db.
// A data directory holding only the legacy JSON tree (storage/session) counts
// as history too. getenv is os.Getenv in production.
func Locate(explicit string, getenv func(string) string) (string, error) {
	var tried []string
	check := func(p string) (string, bool) {
		if p == "" {
			return "", false
		}
		tried = append(tried, p)
		if st, err := os.Stat(p); err == nil {
			if !st.IsDir() {
				return p, true
			}
			if hasLegacyTree(p) {
				return p, true
			}
			if db := filepath.Join(p, "opencode.db"); fileExists(db) {
				return db, true
			}
			return "", false
		}
		// A database that is gone but whose legacy tree is beside it.
		if dir := filepath.Dir(p); hasLegacyTree(dir) {
			return dir, true
		}
		return "", false
	}
	if explicit != "" {
		if p, ok := check(explicit); ok {
			return p, nil
		}
		return "", &NotFoundError{Tried: tried}
	}
	dataDir := getenv("XDG_DATA_HOME")
	if dataDir == "" {
		if home := getenv("HOME"); home != "" {
			dataDir = filepath.Join(home, ".local", "share")
		}
	}
	ocDir := ""
	if dataDir != "" {
		ocDir = filepath.Join(dataDir, "opencode")
	}
	if env := getenv("OPENCODE_DB"); env != "" && env != ":memory:" {
		if !filepath.IsAbs(env) && ocDir != "" {
			env = filepath.Join(ocDir, env)
		}
		if p, ok := check(env); ok {
			return p, nil
		}
		// OpenCode itself would use (and create) this path: falling back
		// to another history would show sessions the user did not ask for.
		return "", &NotFoundError{Tried: tried, Env: "OPENCODE_DB"}
	}
	if ocDir != "" {
		if p, ok := check(filepath.Join(ocDir, "opencode.db")); ok {
			return p, nil
		}
	}
	if home := getenv("HOME"); home != "" {
		p := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
		if len(tried) == 0 || tried[len(tried)-1] != p {
			if p, ok := check(p); ok {
				return p, nil
			}
		}
	}
	return "", &NotFoundError{Tried: tried}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// fileSize is the size of the regular file at p, and whether there is one.
func fileSize(p string) (int64, bool) {
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return 0, false
	}
	return st.Size(), true
}

func hasLegacyTree(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "storage", "session"))
	return err == nil && st.IsDir()
}
