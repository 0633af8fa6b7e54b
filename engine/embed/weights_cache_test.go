package embed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/embed/bertgen"
)

// The packed-weights cache gives the same vectors as decoding through
// cybertron, and a cache that does not match its checkpoint (edited,
// corrupt, or from another checkpoint) is ignored and rebuilt.
func TestWeightsCache(t *testing.T) {
	_, dir := writeModel(t, bertgen.Tiny(21), bertgen.Safetensors)
	if err := convert(dir); err != nil {
		t.Fatal(err)
	}
	texts := []string{"the quick test ran", "re-ran the café migration"}
	embed := func() [][]float32 {
		t.Helper()
		m, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := embed() // decodes through cybertron and writes the cache
	cache := filepath.Join(dir, fileWeightsCache)
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	if _, err := readWeightsCache(dir); err != nil {
		t.Fatalf("cache unreadable: %v", err)
	}
	same := func(a, b [][]float32) bool {
		for i := range a {
			for j := range a[i] {
				if a[i][j] != b[i][j] {
					return false
				}
			}
		}
		return true
	}
	if !same(first, embed()) {
		t.Fatal("cached weights give other vectors")
	}
	// Corrupt one float: the CRC rejects the cache and the load rebuilds it.
	b, _ := os.ReadFile(cache)
	b[len(b)-3] ^= 0x40
	os.WriteFile(cache, b, 0o644)
	if _, err := readWeightsCache(dir); err == nil {
		t.Fatal("corrupt cache accepted")
	}
	if !same(first, embed()) {
		t.Fatal("rebuilt cache gives other vectors")
	}
	// A newer checkpoint makes the cache stale.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, fileSpago), later, later)
	if _, err := readWeightsCache(dir); err == nil {
		t.Fatal("cache of an older checkpoint accepted")
	}
}

// A cached model is mapped, not copied onto the heap (unix); Close unmaps it
// and a later Embed says the embedder is closed instead of touching the
// unmapped pages. A cache cut short is rejected before it is mapped.
func TestMappedWeights(t *testing.T) {
	_, dir := writeModel(t, bertgen.Tiny(22), bertgen.Safetensors)
	if err := convert(dir); err != nil {
		t.Fatal(err)
	}
	first, err := load(dir) // decodes and writes the cache
	if err != nil {
		t.Fatal(err)
	}
	want, _ := first.Embed(context.Background(), []string{"mapped weights"})
	m, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.weights.release == nil {
		t.Fatal("weights from the cache are on the heap, want them mapped")
	}
	got, err := m.Embed(context.Background(), []string{"mapped weights"})
	if err != nil {
		t.Fatal(err)
	}
	for j := range want[0] {
		if got[0][j] != want[0][j] {
			t.Fatalf("mapped weights give other vectors at %d: %v vs %v", j, got[0][j], want[0][j])
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Embed(context.Background(), []string{"after close"}); err != ErrClosed {
		t.Fatalf("Embed after Close: %v, want ErrClosed", err)
	}
	cache := filepath.Join(dir, fileWeightsCache)
	b, _ := os.ReadFile(cache)
	if err := os.WriteFile(cache, b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readWeightsCache(dir); err == nil {
		t.Fatal("a truncated cache was accepted")
	}
}

// The word-embedding table is checked a row at a time when a text first
// uses a row (not all of it at load): a damaged row a text reads is an
// error that says what to delete, never a silently wrong vector, and loads
// do not read the rows no text uses.
func TestWeightsCacheChecksWordRowsOnUse(t *testing.T) {
	_, dir := writeModel(t, bertgen.Tiny(23), bertgen.Safetensors)
	if err := convert(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := load(dir); err != nil { // writes the cache
		t.Fatal(err)
	}
	m, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := m.tok.IDs("mapped weights")
	if len(ids) == 0 {
		t.Fatal("no token ids")
	}
	m.Close()
	w, err := readWeightsCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Where the row of ids[0] sits in the file: the data ends with the
	// slices after the word table, so count back from the end.
	rest := 0
	for _, s := range weightSlices(w)[1:] {
		rest += len(*s)
	}
	h := w.hidden
	cache := filepath.Join(dir, fileWeightsCache)
	b, _ := os.ReadFile(cache)
	wordStart := len(b) - 4*rest - 4*len(w.word)
	w.close()
	b[wordStart+4*ids[0]*h+1] ^= 0x40
	if err := os.WriteFile(cache, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m2, err := load(dir)
	if err != nil {
		t.Fatalf("load read the whole word table: %v", err)
	}
	defer m2.Close()
	if m2.weights.release == nil {
		t.Fatal("the damaged-row cache was rebuilt at load; want it loaded and the row checked on use")
	}
	if _, err := m2.Embed(context.Background(), []string{"zzz qqq"}); err != nil && !errors.Is(err, ErrDamagedWeights) {
		t.Fatal(err)
	}
	_, err = m2.Embed(context.Background(), []string{"mapped weights"})
	if !errors.Is(err, ErrDamagedWeights) || !strings.Contains(err.Error(), fileWeightsCache) {
		t.Fatalf("embedding through a damaged row: %v, want ErrDamagedWeights naming %s", err, fileWeightsCache)
	}
}
