package vectors

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// randomSet is n random unit-ish vectors of dims with varied fields.
func fieldSet(n, dims int, seed uint64) *Set {
	r := rand.New(rand.NewPCG(seed, 1))
	vs := New("m@r/" + strconv.Itoa(dims))
	v := make([]float32, dims)
	for i := range n {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vs.Add(&index.VectorRow{DocRID: int64(10 + 3*i), Hash: []byte(strconv.Itoa(i) + "hash-----"),
			SessionID: "ses_" + strconv.Itoa(i%7), RootID: "ses_" + strconv.Itoa(i%7/2), Kind: []string{"text", "tool", "reasoning"}[i%3],
			Role: []string{"user", "assistant"}[i%2], Tool: []string{"", "bash"}[i%2], Time: int64(i), Directory: "/p/" + strconv.Itoa(i%4),
			Vec: index.EncodeVector(v)})
	}
	return vs
}

func randomQuery(dims int, seed uint64) Query {
	r := rand.New(rand.NewPCG(seed, 2))
	v := make([]float32, dims)
	for j := range v {
		v[j] = float32(r.NormFloat64())
	}
	return NewQuery(v)
}

// A set written and mapped back searches, filters and scores exactly as
// the set in memory; a change to a mapped set copies it to the heap first.
func TestVectorFileRoundTrip(t *testing.T) {
	vs := fieldSet(3000, 384, 1)
	path := filepath.Join(t.TempDir(), "i.db-vectors")
	st := Stamp{Dev: 1, Ino: 2, Model: vs.Model(), Gen: 7, Synced: "123", Embedded: 3000, Total: 4000}
	if err := vs.WriteFile(path, st); err != nil {
		t.Fatal(err)
	}
	mv, got, err := OpenFile(path, Stamp{Dev: 1, Ino: 2, Model: vs.Model(), Gen: 7, Synced: "123"})
	if err != nil {
		t.Fatal(err)
	}
	defer mv.Close()
	if !mv.Mapped() || got.Embedded != 3000 || got.Total != 4000 || mv.Len() != vs.Len() {
		t.Fatalf("mapped %v, stamp %+v, len %d", mv.Mapped(), got, mv.Len())
	}
	ctx := context.Background()
	for _, f := range []query.Filter{{}, {Directory: "/p/1"}, {Kinds: []model.Kind{model.KindTool}}, {Session: "ses_3"}, {ExcludeSession: "ses_2"}, {After: 100, Before: 2000}} {
		q := randomQuery(384, 5)
		want, have := vs.Search(ctx, q, vs.Compile(f), 20), mv.Search(ctx, q, mv.Compile(f), 20)
		if len(want) == 0 || !reflect.DeepEqual(want, have) {
			t.Fatalf("filter %+v: mapped search %v, want %v", f, have, want)
		}
		for _, h := range want {
			a, _ := vs.Similarity(q, h.RID)
			b, ok := mv.Similarity(q, h.RID)
			if !ok || a != b {
				t.Fatalf("similarity of %d: %v (%v), want %v", h.RID, b, ok, a)
			}
		}
	}
	if _, ok := mv.Similarity(randomQuery(384, 5), 11); ok {
		t.Fatal("a rid between two stored rids has a similarity")
	}
	// Add to a mapped set: copied to the heap, the file's mapping released.
	mv.Add(&index.VectorRow{DocRID: 5, Hash: []byte("newhash!"), SessionID: "ses_new", Vec: index.EncodeVector(make([]float32, 384))})
	if mv.Mapped() || mv.Len() != 3001 {
		t.Fatalf("after Add: mapped %v, len %d", mv.Mapped(), mv.Len())
	}
	if _, ok := mv.Similarity(randomQuery(384, 5), 5); !ok {
		t.Fatal("the added vector is not found")
	}
}

// Every field of the stamp must match; a damaged small section fails the
// CRC; a file not in this format, or not the user's alone, is not ours
// and is never replaced.
func TestVectorFileRefusals(t *testing.T) {
	vs := fieldSet(50, 16, 2)
	dir := t.TempDir()
	path := filepath.Join(dir, "i.db-vectors")
	st := Stamp{Dev: 1, Ino: 2, Model: vs.Model(), Gen: 7, Synced: "123"}
	if err := vs.WriteFile(path, st); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Stamp{
		"dev": {Dev: 9, Ino: 2, Model: st.Model, Gen: 7, Synced: "123"}, "ino": {Dev: 1, Ino: 9, Model: st.Model, Gen: 7, Synced: "123"},
		"model": {Dev: 1, Ino: 2, Model: "other", Gen: 7, Synced: "123"}, "gen": {Dev: 1, Ino: 2, Model: st.Model, Gen: 8, Synced: "123"},
		"synced": {Dev: 1, Ino: 2, Model: st.Model, Gen: 7, Synced: "124"},
	} {
		if _, _, err := OpenFile(path, want); !errors.Is(err, ErrStale) {
			t.Errorf("%s differs: %v, want ErrStale", name, err)
		}
	}
	b, _ := os.ReadFile(path)
	b[100] ^= 1
	os.WriteFile(path, b, 0o600)
	if _, _, err := OpenFile(path, st); !errors.Is(err, ErrStale) {
		t.Errorf("damaged: %v, want ErrStale", err)
	}
	if err := vs.WriteFile(path, st); err != nil { // ours: replaced
		t.Fatalf("rewriting our own damaged file: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, _, err := OpenFile(path, st); !errors.Is(err, ErrNotOurs) {
		t.Errorf("mode 0644: %v, want ErrNotOurs", err)
	}
	foreign := []byte("RCLVEC0 but not quite, and someone's data")
	os.Remove(path)
	os.WriteFile(path, foreign, 0o600)
	if _, _, err := OpenFile(path, st); !errors.Is(err, ErrNotOurs) {
		t.Errorf("foreign: %v, want ErrNotOurs", err)
	}
	if err := vs.WriteFile(path, st); !errors.Is(err, ErrNotOurs) {
		t.Errorf("writing over a foreign file: %v, want ErrNotOurs", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(foreign) {
		t.Fatal("a foreign file was replaced")
	}
	if _, _, err := OpenFile(filepath.Join(dir, "missing"), st); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".vectors-*")); len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}
