package engine

import (
	"bufio"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/embed/bertgen"
	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/vectors"
)

// Semantic benchmarks (make bench runs them). Speed and memory only: the
// models are random, with the shapes of all-MiniLM-L6-v2.

var (
	miniLMOnce  sync.Once
	miniLMStore string
	miniLMErr   error
)

// miniLMModelStore installs a random MiniLM-shaped model once per run, or
// uses RECALL_BENCH_MODELS (a store make bench filled).
func miniLMModelStore(b *testing.B) string {
	if d := os.Getenv("RECALL_BENCH_MODELS"); d != "" {
		return d
	}
	miniLMOnce.Do(func() {
		dir, err := os.MkdirTemp("", "recall-semantic-bench-")
		if err != nil {
			miniLMErr = err
			return
		}
		m, err := bertgen.Generate(bertgen.MiniLM(1))
		if err != nil {
			miniLMErr = err
			return
		}
		snap := filepath.Join(dir, "snap")
		if err = m.WriteDir(snap, bertgen.Safetensors); err != nil {
			miniLMErr = err
			return
		}
		miniLMStore = filepath.Join(dir, "models")
		_, miniLMErr = embed.Store{Dir: miniLMStore}.Import(context.Background(), snap, "bench/minilm-random")
	})
	if miniLMErr != nil {
		b.Fatal(miniLMErr)
	}
	return miniLMStore
}

func randomUnit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// BenchmarkQueryEmbed: embedding one short query with a MiniLM-sized model.
func BenchmarkQueryEmbed(b *testing.B) {
	emb, err := embed.Store{Dir: miniLMModelStore(b)}.Open("bench/minilm-random")
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	qs := []string{"why did the deploy fail after the database migration", "parseConfigFile", "retry storm in the webhook handler"}
	var lat latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := emb.Embed(context.Background(), []string{qs[i%len(qs)]}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkEmbedQueue: Engine.Embed over the v1 fixture's documents into a
// fresh index (read, hash, embed, store in batches) with a MiniLM-sized
// model; reports documents and model texts per second.
func BenchmarkEmbedQueue(b *testing.B) {
	store := miniLMModelStore(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e, err := Open(context.Background(), Options{DBPath: fixture(b, "v1"), IndexPath: filepath.Join(b.TempDir(), "i.db"), ModelDir: store, Getenv: noEnv})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Sync(context.Background(), SyncOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := e.embedder(); err != nil { // model load is not embedding
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := e.Embed(context.Background(), EmbedOptions{})
		if err != nil {
			b.Fatal(err)
		}
		secs := time.Since(start).Seconds()
		b.ReportMetric(float64(res.Done)/secs, "docs/s")
		b.ReportMetric(float64(res.Embedded)/secs, "texts/s")
		b.ReportMetric(0, "ns/op")
		e.Close()
	}
}

// BenchmarkHybridSearch: the public queries in hybrid mode over the bench
// history with every embeddable document given a vector. Embedding 100k+
// documents with a random model would take half an hour and measure
// nothing new, so the vectors are random unit vectors stored under the
// installed model's key; the query is embedded by the model for real.
func BenchmarkHybridSearch(b *testing.B) {
	store := miniLMModelStore(b)
	db, ix := os.Getenv("RECALL_BENCH_DB"), os.Getenv("RECALL_BENCH_INDEX")
	if db == "" || ix == "" {
		b.Skip("set RECALL_BENCH_DB and RECALL_BENCH_INDEX (make bench does)")
	}
	ctx := context.Background()
	e, err := Open(ctx, Options{DBPath: db, IndexPath: ix, Getenv: noEnv, ModelDir: store})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Sync(ctx, SyncOptions{LockWait: time.Minute}); err != nil {
		b.Fatal(err)
	}
	if err := seedRandomVectors(ctx, e); err != nil {
		b.Fatal(err)
	}
	qs := benchQueries(b)
	if res, err := e.Search(ctx, SearchParams{Query: qs[0], Mode: "hybrid"}); err != nil || res.Mode != "hybrid" {
		b.Fatalf("warm-up: mode %q, %v", res.Mode, err)
	}
	var lat latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := e.Search(ctx, SearchParams{Query: qs[i%len(qs)], Limit: 10, Mode: "hybrid"}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
	n := 0
	for _, sh := range e.shards {
		sh.vec.mu.Lock()
		if sh.vec.vecs != nil {
			n += sh.vec.vecs.set.Len()
		}
		sh.vec.mu.Unlock()
	}
	b.ReportMetric(float64(n), "vectors")
	b.ReportMetric(procStatusMB("VmRSS"), "rss-MB")
}

// seedRandomVectors gives every pending document a random vector under the
// installed model's key (see BenchmarkHybridSearch).
func seedRandomVectors(ctx context.Context, e *Engine) error {
	man, err := e.installedModel()
	if err != nil {
		return err
	}
	key := manifestKey(man)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range e.shards {
		if err := seedShard(ctx, sh, key, man.Dims, rng); err != nil {
			return err
		}
	}
	return nil
}

func seedShard(ctx context.Context, e *shard, key string, dims int, rng *rand.Rand) error {
	err := e.withWriter(ctx, time.Minute, func() error {
		if stored, err := e.ix.VectorModel(ctx); err != nil || stored == key {
			return err
		}
		return e.ix.ResetVectors(ctx, key)
	})
	if err != nil {
		return err
	}
	for {
		rids, err := e.ix.PendingDocs(ctx, embeddedKinds, 0, 2000)
		if err != nil || len(rids) == 0 {
			return err
		}
		texts, err := e.embedTexts(ctx, rids)
		if err != nil {
			return err
		}
		puts := make([]index.VectorPut, 0, len(rids))
		for _, rid := range rids {
			puts = append(puts, index.VectorPut{DocRID: rid, Hash: textHash(texts[rid]), Vec: randomUnit(rng, dims)})
		}
		err = e.withWriter(ctx, time.Minute, func() error {
			_, _, err := e.ix.PutVectors(ctx, key, puts)
			return err
		})
		if err != nil {
			return err
		}
	}
}

func procStatusMB(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkSyntheticVectorFile writes a vector file of RECALL_BENCH_VECTORS
// (default 1,000,000) synthetic 384-dim vectors for the index
// RECALL_BENCH_INDEX (a copy: its own vector file is replaced), stamped so
// a CLI search on that index maps it. Embedding a million parts is out of
// reach on 2 cores (~36 texts/s), so the memory of a hybrid search at that
// scale is measured on this file: the vectors are random and their rids
// name no documents (they cost the scan, never a hit), which is all a
// measure of the vector side's memory needs.
func BenchmarkSyntheticVectorFile(b *testing.B) {
	ixPath := os.Getenv("RECALL_BENCH_INDEX")
	if ixPath == "" {
		b.Skip("RECALL_BENCH_INDEX (a copy of an embedded index) is not set")
	}
	n := 1_000_000
	if v := os.Getenv("RECALL_BENCH_VECTORS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	ctx := context.Background()
	ix, err := index.Open(ctx, ixPath)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	key, err := ix.VectorModel(ctx)
	if err != nil || key == "" {
		b.Fatalf("index has no vectors (%v)", err)
	}
	gen, _ := ix.VectorGeneration(ctx)
	synced, _ := ix.Meta(ctx, "synced_at")
	sh := &shard{ix: ix}
	st, err := sh.vectorStamp(key, gen, synced)
	if err != nil {
		b.Fatal(err)
	}
	st.Embedded, st.Total = n, n
	r := rand.New(rand.NewPCG(1, 2))
	vs := vectors.New(key)
	v := make([]float32, 384)
	for i := range n {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vs.Add(&index.VectorRow{DocRID: int64(1_000_000_000 + i), Hash: []byte(strconv.Itoa(i) + "-synthetic"),
			SessionID: "ses_synthetic" + strconv.Itoa(i/40), RootID: "ses_synthetic" + strconv.Itoa(i/40), Kind: "text", Role: "assistant",
			Time: int64(i), Directory: "/synthetic/" + strconv.Itoa(i%50), Vec: index.EncodeVector(v)})
	}
	b.ResetTimer()
	for range b.N {
		if err := vs.WriteFile(sh.vectorFile(), st); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(vs.Len()), "vectors")
}
