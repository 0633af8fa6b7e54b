package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func dataEnv(dir string) func(string) string {
	return func(k string) string { return map[string]string{"XDG_DATA_HOME": dir}[k] }
}

// The cursor key is made once, private, outside every index; another
// engine of the same user signs with the same key, so a cursor from one
// reads in the other.
func TestCursorKeyFile(t *testing.T) {
	data := t.TempDir()
	db := fixture(t, "v1")
	open := func(ix string) *Engine {
		return openSynced(t, Options{DBPath: db, IndexPath: ix, Getenv: dataEnv(data)})
	}
	a := open(filepath.Join(t.TempDir(), "a.db"))
	path := filepath.Join(data, "recall", "cursor.key")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != cursorKeyBytes {
		t.Errorf("cursor key %v, %d bytes; want 0600 and %d bytes", fi.Mode(), fi.Size(), cursorKeyBytes)
	}
	b := open(filepath.Join(t.TempDir(), "b.db"))
	if !bytes.Equal(a.key, b.key) {
		t.Fatal("a second engine made another key")
	}
	hit := search(t, a, "ERR_QUOTA_7731").Hits[0]
	if _, err := b.Read(context.Background(), ReadParams{Cursor: hit.Cursor}); err != nil {
		t.Errorf("a cursor of one index does not read in another of the same history: %v", err)
	}
	if n := a.Notices(); len(n) != 0 {
		t.Errorf("notices %q", n)
	}
}

// A key others could read or write, another user's, a symlink, or one of
// the wrong size is refused with what to do; nothing is overwritten.
func TestCursorKeyRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(t *testing.T, path string)
		want  string
	}{
		"open to others": {func(t *testing.T, p string) { writeKey(t, p, 0o644) }, "chmod 600"},
		"wrong size":     {func(t *testing.T, p string) { os.WriteFile(p, []byte("short"), 0o600) }, "holds 5 bytes"},
		"symlink": {func(t *testing.T, p string) {
			target := filepath.Join(t.TempDir(), "k")
			writeKey(t, target, 0o600)
			os.Symlink(target, p)
		}, "symlink"},
		"another user's": {func(t *testing.T, p string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root: gives the key file to another user")
			}
			writeKey(t, p, 0o600)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "belongs to user 65534"},
	} {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			path := filepath.Join(data, "recall", "cursor.key")
			os.MkdirAll(filepath.Dir(path), 0o700)
			tc.setup(t, path)
			before, _ := os.ReadFile(path)
			_, err := Open(context.Background(), Options{DBPath: fixture(t, "v1"), IndexPath: filepath.Join(t.TempDir(), "i.db"), Getenv: dataEnv(data)})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want an error naming %s and %q", err, path, tc.want)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("the refused key file was changed")
			}
		})
	}
}

func writeKey(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, bytes.Repeat([]byte{7}, cursorKeyBytes), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}
