package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/embed/bertgen"
)

// tinySnapshot writes a random BERT model laid out like a Hugging Face
// snapshot folder.
func tinySnapshot(t *testing.T) string {
	t.Helper()
	m, err := bertgen.Generate(bertgen.Tiny(7))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "snapshot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteDir(dir, bertgen.Safetensors); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The models commands and the semantic modes through the CLI, with models
// under $XDG_DATA_HOME/recall/models.
func TestModelsAndSemanticCLI(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the no-model notice not said yet today
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")

	r := cli(t, "models", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "no models installed") || !strings.Contains(r.stdout, "recall models pull") {
		t.Fatalf("list with none: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without a model: auto is lexical with one notice, exit 0; an explicit
	// semantic search fails with what to run, exit 1.
	r = cli(t, "search", "--db", db, "--index", ix, "--json", "cache")
	if r.code != 0 || !strings.Contains(r.stdout, `"mode":"lexical"`) || strings.Count(r.stderr, "recall models pull") != 1 {
		t.Fatalf("auto without a model: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "search", "--db", db, "--index", ix, "--mode", "semantic", "cache")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "recall models pull") || !strings.Contains(r.stderr, "recall models import DIR") || r.stdout != "" {
		t.Fatalf("semantic without a model: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range [][]string{{"models", "import"}, {"models", "frobnicate"}, {"models", "list", "--bogus"}} {
		if r := cli(t, bad...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", bad, r.code, ExitUsage)
		}
	}
	if r := cli(t, "models", "import", filepath.Join(t.TempDir(), "missing")); r.code != ExitFailure {
		t.Errorf("import of a missing folder: exit %d\n%s", r.code, r.stderr)
	}

	r = cli(t, "models", "import", tinySnapshot(t), "--name", "test/tiny")
	if r.code != 0 || !strings.Contains(r.stdout, "installed test/tiny@local") {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "models", "list", "--json")
	var list ModelList
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
		t.Fatalf("list --json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if len(list.Models) != 1 || list.Models[0].Name != "test/tiny" || !list.Models[0].Default || list.Models[0].Dims != 32 ||
		list.Dir != filepath.Join(data, "recall", "models") {
		t.Fatalf("list --json: %+v", list)
	}

	r = cli(t, "sync", "--db", db, "--index", ix, "--embed", "--json")
	var sr struct {
		Embed struct{ Done, Total, Embedded int }
	}
	if err := json.Unmarshal([]byte(r.stdout), &sr); err != nil || r.code != 0 || sr.Embed.Total == 0 || sr.Embed.Done != sr.Embed.Total {
		t.Fatalf("sync --embed: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	for mode, want := range map[string]string{"auto": "hybrid", "hybrid": "hybrid", "semantic": "semantic", "lexical": "lexical"} {
		r = cli(t, "search", "--db", db, "--index", ix, "--json", "--mode", mode, "cache")
		if r.code != 0 || !strings.Contains(r.stdout, `"mode":"`+want+`"`) || r.stderr != "" {
			t.Errorf("--mode %s: exit %d, want mode %s\nstdout %s\nstderr %s", mode, r.code, want, r.stdout, r.stderr)
		}
	}
	r = cli(t, "status", "--db", db, "--index", ix)
	if r.code != 0 || !strings.Contains(r.stdout, "documents embedded (test/tiny@local") {
		t.Errorf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
