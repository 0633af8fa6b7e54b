package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/recallhq/recall/engine/embed/bertgen"
)

// minHybridNoiseMRR is the floor for hybrid search when the vectors are
// noise: a random model (real weights cannot be fetched in CI) ranks
// documents arbitrarily, so this measures what the fusion costs the
// lexical ranking at worst, not what semantics adds. Measured 0.983 with
// the final fusion (fusionK 10, adaptive weights); RRF with the textbook
// k = 60 and equal weights measured 0.785 (README, "Semantic search").
const minHybridNoiseMRR = 0.95

// TestPublicEvalHybridRandomModel runs the public eval in --mode hybrid over
// vectors from a tiny random model, through the CLI.
func TestPublicEvalHybridRandomModel(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds the public corpus")
	}
	c, err := Load(corpusDir(t), "public")
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	m, err := bertgen.Generate(bertgen.Tiny(11))
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteDir(snap, bertgen.Safetensors); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "index.db")
	if _, err := runCLI([]string{"models", "import", snap, "--name", "test/random"}); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI([]string{"sync", "--db", c.DB, "--index", index, "--embed", "--json"}); err != nil {
		t.Fatal(err)
	}
	hybrid := func(args []string) ([]byte, error) {
		return runCLI(append([]string{args[0], "--mode", "hybrid"}, args[1:]...))
	}
	rep, err := Run(c, index, parentsOf(t, c.DB), hybrid)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rep.Print(&buf, *verbose || testing.Verbose())
	t.Log("\n" + buf.String())
	if rep.MRR < minHybridNoiseMRR {
		t.Errorf("hybrid MRR@10 over random vectors %.3f fell below %.3f: the fusion lets noise override exact matches", rep.MRR, minHybridNoiseMRR)
	}
}
