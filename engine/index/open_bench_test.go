package index

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkOpenExisting is what every CLI command pays to open its index:
// the identity and ownership checks run on each open.
func BenchmarkOpenExisting(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "i.db")
	ix, err := Open(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	for b.Loop() {
		ix, err := Open(context.Background(), p)
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
