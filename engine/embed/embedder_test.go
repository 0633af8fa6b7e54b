package embed

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/recallhq/recall/engine/embed/bertgen"
)

// tinyEmbedder converts and loads a generated tiny model.
func tinyEmbedder(t *testing.T, seed uint64) (*model, *bertgen.Model) {
	t.Helper()
	gen, dir := writeModel(t, bertgen.Tiny(seed), bertgen.Safetensors)
	if err := convert(dir); err != nil {
		t.Fatal(err)
	}
	e, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return e, gen
}

// TestLongTextIsChunkedNotTruncated: a text longer than MaxTokens embeds as the
// normalised mean of its windows' vectors, so its end still counts.
func TestLongTextIsChunkedNotTruncated(t *testing.T) {
	e, gen := tinyEmbedder(t, 9)
	if e.Info().MaxTokens != 32 {
		t.Fatalf("MaxTokens = %d, want sentence_bert_config's 32", e.Info().MaxTokens)
	}
	long := strings.Repeat("the quick test ran over the file and ", 12) // 96 tokens
	ids := e.tok.IDs(long)
	vecs, err := e.Embed(context.Background(), []string{long, long + " panic"})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, e.Info().Dims)
	for start := 0; start < len(ids); start += 30 {
		w := append(append([]int{e.tok.clsID}, ids[start:min(start+30, len(ids))]...), e.tok.sepID)
		for j, z := range gen.Reference(w) {
			want[j] += z
		}
	}
	var n float64
	for _, z := range want {
		n += z * z
	}
	for j := range want {
		want[j] /= math.Sqrt(n)
	}
	if d := maxAbsDiff(vecs[0], want); d > 1e-4 {
		t.Errorf("long text vector differs from the mean of its windows by %.2g", d)
	}
	if slices.Equal(vecs[0], vecs[1]) {
		t.Error("a word past the first window did not change the vector: the text was truncated")
	}
}

func TestEmbedIsSafeForConcurrentUse(t *testing.T) {
	e, _ := tinyEmbedder(t, 13)
	want, err := e.Embed(context.Background(), sampleTexts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				got, err := e.Embed(context.Background(), sampleTexts[g%len(sampleTexts):])
				if err != nil {
					t.Error(err)
					return
				}
				for j, v := range got {
					if !slices.Equal(v, want[g%len(sampleTexts)+j]) {
						t.Errorf("goroutine %d: vector %d differs from the sequential result", g, j)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), sampleTexts); !errors.Is(err, ErrClosed) {
		t.Errorf("Embed after Close = %v, want ErrClosed", err)
	}
}

func TestEmbedHonoursCancellation(t *testing.T) {
	e, _ := tinyEmbedder(t, 17)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestEmbedBatchesGiveSameVectorsAsSingles(t *testing.T) {
	e, _ := tinyEmbedder(t, 19)
	all, err := e.Embed(context.Background(), sampleTexts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range sampleTexts {
		one, err := e.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(one[0], float64s(all[i])); d > 1e-6 {
			t.Errorf("text %q alone differs from in a batch by %.2g", text, d)
		}
	}
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, z := range v {
		out[i] = float64(z)
	}
	return out
}

func TestHalfToFloat(t *testing.T) {
	for _, c := range []struct {
		h    uint16
		want float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x0001, 5.960464477539063e-08}, {0x7bff, 65504}, {0x0000, 0}} {
		if got := halfToFloat(c.h); got != c.want {
			t.Errorf("halfToFloat(%#x) = %v, want %v", c.h, got, c.want)
		}
	}
}
