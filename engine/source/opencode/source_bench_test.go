package opencode

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// benchSource opens a copy of the v1 fixture.
func benchSource(b *testing.B) *Source {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "opencode", "v1", "opencode.db"))
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "opencode.db")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := Open(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkFingerprint is the whole cost of an idle check on the source
// side (the watcher polls it every second).
func BenchmarkFingerprint(b *testing.B) {
	s := benchSource(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s.Fingerprint() == "" {
			b.Fatal("empty fingerprint")
		}
	}
}

// BenchmarkCurrentIdentity is what a sync that is not idle adds: one
// open, fstat and 100-byte read of the database.
func BenchmarkCurrentIdentity(b *testing.B) {
	s := benchSource(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := CurrentIdentity(s.Path()); err != nil {
			b.Fatal(err)
		}
	}
}
