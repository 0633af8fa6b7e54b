package vectors

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

func TestQuantizedSimilarity(t *testing.T) {
	a := []float32{0.6, -0.8, 0, 0}
	b := []float32{0.6, 0.8, 0, 0}
	vs := New("k")
	for i, v := range [][]float32{a, b} {
		vs.Add(&index.VectorRow{DocRID: int64(i + 1), Hash: []byte{byte(i)}, Vec: index.EncodeVector(v)})
	}
	q := NewQuery(a)
	for rid, want := range map[int64]float32{1: 1, 2: 0.36 - 0.64} {
		got, ok := vs.Similarity(q, rid)
		if !ok || got < want-0.02 || got > want+0.02 {
			t.Errorf("similarity to %d = %v, want %v", rid, got, want)
		}
	}
	if _, ok := vs.Similarity(q, 3); ok {
		t.Error("a document without a vector has a similarity")
	}
}

func TestDotInt8MatchesScalar(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 33, 384, 385} {
		a, b := make([]int8, n), make([]int8, n)
		for i := range a {
			a[i], b[i] = int8(i*37%255-127), int8(i*91%253-126)
		}
		var want int32
		for i := range a {
			want += int32(a[i]) * int32(b[i])
		}
		if got := dotInt8(a, b); got != want {
			t.Errorf("n=%d: dotInt8 = %d, want %d", n, got, want)
		}
	}
}

// filterSet: six documents in two families. ses_a (root) has subagent
// ses_a1; ses_b stands alone.
func filterSet(t *testing.T) *Set {
	t.Helper()
	vs := New("k")
	rows := []index.VectorRow{
		{DocRID: 1, SessionID: "ses_a", RootID: "ses_a", Kind: "text", Role: "user", Tool: "", Time: 100, Directory: "/p/app"},
		{DocRID: 2, SessionID: "ses_a", RootID: "ses_a", Kind: "tool", Role: "assistant", Tool: "bash", Time: 200, Directory: "/p/app"},
		{DocRID: 3, SessionID: "ses_a1", RootID: "ses_a", Kind: "text", Role: "assistant", Time: 300, Directory: "/p/app/sub"},
		{DocRID: 4, SessionID: "ses_b", RootID: "ses_b", Kind: "reasoning", Role: "assistant", Time: 400, Directory: "/p/apple"},
		{DocRID: 5, SessionID: "ses_b", RootID: "ses_b", Kind: "tool", Role: "assistant", Tool: "read", Time: 500, Directory: "/p/apple"},
		{DocRID: 6, SessionID: "ses_b", RootID: "ses_b", Kind: "text", Role: "user", Time: 600, Directory: "/p/apple"},
	}
	for i := range rows {
		rows[i].Hash = []byte{byte(i)}
		rows[i].Vec = index.EncodeVector([]float32{1, float32(i) / 10})
		vs.Add(&rows[i])
	}
	vs.parent[vs.ids.id("ses_a1")] = vs.ids.id("ses_a")
	vs.family[vs.ids.id("ses_a1")] = vs.ids.id("ses_a")
	return vs
}

// Every field of query.Filter, compiled: the same documents the SQL filter
// of engine/index keeps.
func TestCompileEachFilterField(t *testing.T) {
	vs := filterSet(t)
	for name, tc := range map[string]struct {
		f    query.Filter
		want string
	}{
		"none":              {query.Filter{}, "1 2 3 4 5 6"},
		"directory":         {query.Filter{Directory: "/p/app/"}, "1 2 3"},
		"after":             {query.Filter{After: 300}, "3 4 5 6"},
		"before":            {query.Filter{Before: 300}, "1 2"},
		"role":              {query.Filter{Roles: []query.Role{query.RoleUser}}, "1 6"},
		"kind":              {query.Filter{Kinds: []model.Kind{model.KindTool, model.KindReasoning}}, "2 4 5"},
		"tool":              {query.Filter{Tools: []string{"bash"}}, "2"},
		"session+subagents": {query.Filter{Session: "ses_a"}, "1 2 3"},
		"session unknown":   {query.Filter{Session: "ses_zzz"}, ""},
		"exclude root":      {query.Filter{ExcludeSession: "ses_a"}, "4 5 6"},
		"exclude subagent":  {query.Filter{ExcludeSession: "ses_a1"}, "4 5 6"},
		"exclude unknown":   {query.Filter{ExcludeSession: "ses_zzz"}, "1 2 3 4 5 6"},
		"kind unknown":      {query.Filter{Kinds: []model.Kind{model.KindPatch}}, ""},
	} {
		hits := vs.Search(context.Background(), NewQuery([]float32{1, 0}), vs.Compile(tc.f), 10)
		var rids []int
		for _, h := range hits {
			rids = append(rids, int(h.RID))
		}
		sort.Ints(rids)
		got := ""
		for i, r := range rids {
			if i > 0 {
				got += " "
			}
			got += strconv.Itoa(r)
		}
		if got != tc.want {
			t.Errorf("%s: kept %q, want %q", name, got, tc.want)
		}
	}
}

func TestSearchTopKBestFirst(t *testing.T) {
	vs := New("k")
	for i := 0; i < 50; i++ {
		angle := float64(i) / 50
		vs.Add(&index.VectorRow{DocRID: int64(i + 1), Hash: []byte{byte(i)},
			Vec: index.EncodeVector([]float32{float32(math.Cos(angle)), float32(math.Sin(angle))})})
	}
	hits := vs.Search(context.Background(), NewQuery([]float32{1, 0}), vs.Compile(query.Filter{}), 5)
	if len(hits) != 5 {
		t.Fatalf("%d hits, want 5", len(hits))
	}
	for i, h := range hits {
		if h.RID != int64(i+1) {
			t.Errorf("hit %d is document %d, want %d (closest first)", i, h.RID, i+1)
		}
	}
}

// BenchmarkVectorSearch200k: brute-force top-200 over 200k int8 vectors of
// 384 dims, without and with a filter.
func BenchmarkVectorSearch200k(b *testing.B) {
	const n, dims = 200_000, 384
	vs := randomSet(n, dims)
	q := NewQuery(randomUnit(rand.New(rand.NewPCG(9, 9)), dims))
	for _, tc := range []struct {
		name string
		f    query.Filter
	}{{"all", query.Filter{}}, {"kind=text", query.Filter{Kinds: []model.Kind{model.KindText}}}} {
		b.Run(tc.name, func(b *testing.B) {
			vf := vs.Compile(tc.f)
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if hits := vs.Search(context.Background(), q, vf, 200); len(hits) == 0 {
					b.Fatal("no hits")
				}
				lat = append(lat, time.Since(start))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*95/100)]), "p95-ms")
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(vs.Bytes())/1e6, "set-MB")
		})
	}
}

func randomSet(n, dims int) *Set {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := New("bench")
	vs.reserve(n)
	kinds := []string{"text", "reasoning", "tool", "title"}
	for i := 0; i < n; i++ {
		v := randomUnit(rng, dims)
		vs.Add(&index.VectorRow{DocRID: int64(i + 1), Hash: []byte(strconv.Itoa(i) + "-------"), SessionID: "ses_" + strconv.Itoa(i/30),
			RootID: "ses_" + strconv.Itoa(i/60), Kind: kinds[i%len(kinds)], Role: "user", Time: int64(i), Directory: "/p/" + strconv.Itoa(i%40),
			Vec: index.EncodeVector(v)})
	}
	return vs
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
