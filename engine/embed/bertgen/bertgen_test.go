package bertgen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		m, err := Generate(Tiny(42))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.WriteDir(dir, AllFiles); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"config.json", "vocab.txt", "pytorch_model.bin", "model.safetensors"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
	}
	m1, _ := Generate(Tiny(1))
	m2, _ := Generate(Tiny(2))
	if m1.Tensors[0].Data[0] == m2.Tensors[0].Data[0] {
		t.Error("different seeds gave the same weights")
	}
}

func TestVocabulary(t *testing.T) {
	v := Vocabulary(0)
	if v[0] != "[PAD]" || v[1] != "[UNK]" || v[2] != "[CLS]" || v[3] != "[SEP]" || v[4] != "[MASK]" {
		t.Errorf("special tokens first, got %q", v[:5])
	}
	seen := map[string]bool{}
	for _, w := range v {
		if seen[w] {
			t.Errorf("duplicate token %q (cybertron's vocabulary would shift ids)", w)
		}
		seen[w] = true
	}
	if n := len(Vocabulary(30522)); n != 30522 {
		t.Errorf("padded vocabulary has %d tokens", n)
	}
}
