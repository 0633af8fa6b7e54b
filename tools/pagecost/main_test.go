//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pagecost measures every way of bringing in a page on a real file and
// prints one figure a way; a file too small for the pages asked is an
// error that says how large it must be.
func TestPagecost(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 64*pageSize), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(&out, p, 16, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"file fault", "pread", "file, populated in bulk", "anonymous fault", "anonymous, populated in bulk", "anonymous, huge pages asked", "transparent huge pages: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q figure in:\n%s", want, out.String())
		}
	}
	if err := run(&out, p, 32, 1); err == nil || !strings.Contains(err.Error(), "at least 128") {
		t.Errorf("a file of 64 pages for 32: %v, want a 'needs at least 128' error", err)
	}
}
