//go:build unix

package lsp

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// pathState is a file's bytes and mode plus the names beside it.
func pathState(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	if data, err := os.ReadFile(p); err == nil {
		fmt.Fprintf(&b, "%x ", sha256.Sum256(data))
	}
	if fi, err := os.Lstat(p); err == nil {
		fmt.Fprintf(&b, "%v ", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	b.WriteString(strings.Join(names, ","))
	return b.String()
}

// An index path Recall may not use answers initialize with an error that
// names initializationOptions.index and the path, touches nothing, and
// leaves the server ready for an initialize with a good path.
func TestInitializeRefusesIndexPaths(t *testing.T) {
	db := copyFixture(t)
	dir := filepath.Join(t.TempDir(), "ix")
	os.Mkdir(dir, 0o700)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a database\n"), 0o600)
	readable := filepath.Join(t.TempDir(), "readable.db")
	os.WriteFile(readable, nil, 0o644)
	os.Chmod(readable, 0o644)
	s := startSession(t, sessionOptions{skipInit: true})
	for _, c := range []struct{ name, index, want string }{
		{"text file", text, "not a Recall index"},
		{"the history", db, "OpenCode"},
		{"a file others can read", readable, "chmod 600 " + readable},
	} {
		before, src := pathState(t, c.index), pathState(t, db)
		_, err := s.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
			"initializationOptions": map[string]any{"db": db, "index": c.index}})
		if err == nil {
			t.Fatalf("%s: initialize accepted %s as the index", c.name, c.index)
		}
		msg := err.Error()
		if wireCode(t, err) != jsonrpc2.InvalidParams || !strings.Contains(msg, "initializationOptions.index") ||
			!strings.Contains(msg, c.index) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: want -32602 naming initializationOptions.index, %s and %q; got %v", c.name, c.index, c.want, err)
		}
		if pathState(t, c.index) != before || pathState(t, db) != src {
			t.Errorf("%s: a file changed", c.name)
		}
	}
	good := filepath.Join(dir, "index.db")
	if _, err := s.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"db": db, "index": good, "watch": false}}); err != nil {
		t.Fatalf("initialize with a good index after the refusals: %v", err)
	}
}
