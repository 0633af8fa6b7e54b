package embed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/nlpodyssey/cybertron/pkg/models/bert"
	cytext "github.com/nlpodyssey/cybertron/pkg/tasks/textencoding/bert"
	"github.com/recallhq/recall/engine/embed/bertgen"
)

var (
	miniLMOnce sync.Once
	miniLMDir  string
	miniLMErr  error
)

// miniLMModel writes and converts a random model of all-MiniLM-L6-v2's shape
// once per test binary run.
func miniLMModel(b testing.TB) string {
	miniLMOnce.Do(func() {
		dir, err := os.MkdirTemp("", "recall-embed-bench-")
		if err != nil {
			miniLMErr = err
			return
		}
		miniLMDir = dir
		m, err := bertgen.Generate(bertgen.MiniLM(1))
		if err == nil {
			err = m.WriteDir(dir, bertgen.Safetensors)
		}
		if err == nil {
			err = convert(dir)
		}
		miniLMErr = err
	})
	if miniLMErr != nil {
		b.Fatal(miniLMErr)
	}
	return miniLMDir
}

// benchTexts returns n texts of exactly tokens model tokens ([CLS]/[SEP] included).
func benchTexts(n, tokens int) []string {
	var words []string
	for _, w := range bertgen.Vocabulary(0) {
		if len(w) > 2 && !strings.HasPrefix(w, "[") && !strings.HasPrefix(w, "#") {
			words = append(words, w)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, n)
	for i := range texts {
		ws := make([]string, tokens-2)
		for j := range ws {
			ws[j] = words[rng.IntN(len(words))]
		}
		texts[i] = strings.Join(ws, " ")
	}
	return texts
}

// BenchmarkChunks compares throughput on batches of equal-length chunks:
// our batched forward pass against stock cybertron TextEncoding.Encode run on
// GOMAXPROCS goroutines, on the same MiniLM-sized random model.
func BenchmarkChunks(b *testing.B) {
	dir := miniLMModel(b)
	for _, tokens := range []int{64, 128} {
		texts := benchTexts(32, tokens)
		b.Run(fmt.Sprintf("ours/tokens=%d", tokens), func(b *testing.B) {
			e, err := load(dir)
			if err != nil {
				b.Fatal(err)
			}
			if n := len(e.tok.IDs(texts[0])) + 2; n != tokens {
				b.Fatalf("bench text has %d tokens, want %d", n, tokens)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
		})
		b.Run(fmt.Sprintf("cybertron/tokens=%d", tokens), func(b *testing.B) {
			te, err := cytext.LoadTextEncoding(dir)
			if err != nil {
				b.Fatal(err)
			}
			workers := max(1, runtimeProcs())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := w; j < len(texts); j += workers {
							if _, err := te.Encode(context.Background(), texts[j], int(bert.MeanPooling)); err != nil {
								b.Error(err)
							}
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkQuery is the latency of embedding one short search query.
func BenchmarkQuery(b *testing.B) {
	dir := miniLMModel(b)
	query := []string{"how did we fix the sqlite database lock error"}
	b.Run("ours", func(b *testing.B) {
		e, err := load(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := e.Embed(context.Background(), query); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cybertron", func(b *testing.B) {
		te, err := cytext.LoadTextEncoding(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := te.Encode(context.Background(), query[0], int(bert.MeanPooling)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLoad is the time to open a converted MiniLM-sized model.
func BenchmarkLoad(b *testing.B) {
	dir := miniLMModel(b)
	for i := 0; i < b.N; i++ {
		e, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// historyBatch is the embedding queue's batch (engine.EmbedBatch): how many
// texts one Embed call gets.
const historyBatch = 32

// BenchmarkHistoryTexts embeds the public corpus's history texts (see
// historyTexts) in the queue's batches of 32 on the MiniLM-shaped model with
// the real vocabulary (historyModel), GOMAXPROCS workers; one op is the whole
// set. cpu-texts/s divides by the process's CPU time instead of the wall
// clock: on a machine shared with other work it moves far less than texts/s.
func BenchmarkHistoryTexts(b *testing.B) {
	texts := historyTexts(b)
	e, err := load(historyModel(b))
	if err != nil {
		b.Fatal(err)
	}
	tokens := 0
	for _, t := range texts {
		tokens += len(e.tok.IDs(t)) + 2
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		for b0 := 0; b0 < len(texts); b0 += historyBatch {
			if _, err := e.Embed(context.Background(), texts[b0:min(b0+historyBatch, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu := processCPU() - cpu0
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*len(texts))/secs, "texts/s")
	b.ReportMetric(float64(b.N*tokens)/secs, "tokens/s")
	if cpu > 0 {
		b.ReportMetric(float64(b.N*len(texts))/cpu.Seconds()*float64(runtime.GOMAXPROCS(0)), "cpu-texts/s")
	}
}
