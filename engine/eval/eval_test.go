package eval

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/commands"
	_ "modernc.org/sqlite"
)

// minMRR is the floor CI enforces on the public corpus: the level reached
// when the ranking was last tuned (1.000), minus 0.02 (see README, "Ranking").
const minMRR = 0.98

// minNeedle5 is the floor on needle@5 (the share of labelled queries whose
// top 5 snippets show the answer): issue 12's target.
const minNeedle5 = 0.9

var verbose = flag.Bool("eval.v", false, "print every query that did not rank first")

var update = flag.Bool("update", false, "rewrite the ranking goldens under testdata/ranking")

func corpusDir(t *testing.T) string {
	dir := os.Getenv("RECALL_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "testdata", "corpus")
	}
	if _, err := os.Stat(filepath.Join(dir, "public", "opencode.db")); err != nil {
		t.Fatalf("public corpus not found at %s (set RECALL_CORPUS): %v", dir, err)
	}
	return dir
}

// runCLI runs the CLI in process and returns its stdout (the machine
// contract), or its stderr as an error.
func runCLI(args []string) ([]byte, error) {
	var out, errb bytes.Buffer
	if code := commands.Main(args, nil, &out, &errb); code != 0 {
		return nil, fmt.Errorf("exit %d: %s", code, errb.String())
	}
	return out.Bytes(), nil
}

func TestPublicEval(t *testing.T) {
	c, err := Load(corpusDir(t), "public")
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "index.db")
	if _, err := runCLI([]string{"sync", "--db", c.DB, "--index", index, "--json"}); err != nil {
		t.Fatal(err)
	}
	parents := parentsOf(t, c.DB)
	rep, err := Run(c, index, parents, runCLI)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rep.Print(&buf, *verbose || testing.Verbose())
	t.Log("\n" + buf.String())
	if rep.MRR < minMRR {
		t.Errorf("MRR@10 %.3f fell below the floor %.3f", rep.MRR, minMRR)
	}
	if rep.N5 < minNeedle5 {
		t.Errorf("needle@5 %.3f fell below the floor %.3f", rep.N5, minNeedle5)
	}
	t.Run("goldens", func(t *testing.T) { checkGoldens(t, rep) })
}

// goldenDir holds one file per public query: the rank of its first
// relevant session and the rendered top 3 hits (zoekt's ranking goldens).
var goldenDir = filepath.Join("..", "..", "testdata", "ranking", "public")

// checkGoldens fails when a query's target ranks lower than its golden says
// or the rendered top 3 changed; -update rewrites them (review the diff: a
// better rank or a better snippet is progress, anything else is not).
func checkGoldens(t *testing.T, rep *Report) {
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rep.Results {
		got := renderGolden(r)
		path := filepath.Join(goldenDir, r.Query.ID+".txt")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden (%v); run go test ./engine/eval -run TestPublicEval -update", r.Query.ID, err)
			continue
		}
		want := string(b)
		var wantRank int
		if _, err := fmt.Sscanf(want, "rank %d", &wantRank); err != nil {
			t.Errorf("%s: golden %s does not start with \"rank N\": %v", r.Query.ID, path, err)
			continue
		}
		if r.Rank == 0 || (wantRank > 0 && r.Rank > wantRank) {
			t.Errorf("%s %q: target ranks %d, golden says %d\n got top: %v", r.Query.ID, r.Query.Q, r.Rank, wantRank, r.Top)
		}
		if got != want {
			t.Errorf("%s: rendered top 3 changed (run with -update if this is progress):\n--- golden\n%s--- got\n%s", r.Query.ID, want, got)
		}
	}
}

// renderGolden is a query's golden: the target's rank, then the top 3 hits
// as key, kind (and tool) and snippet.
func renderGolden(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rank %d\n", r.Rank)
	fmt.Fprintf(&b, "query %s\n", r.Query.Q)
	for i, h := range r.Hits {
		if i == 3 {
			break
		}
		kind := h.Kind
		if h.Tool != "" {
			kind += "/" + h.Tool
		}
		fmt.Fprintf(&b, "%d. %s [%s] %s\n", i+1, h.Key, kind, h.Snippet)
	}
	return b.String()
}

func parentsOf(t *testing.T, dbPath string) map[string]string {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `SELECT id, coalesce(parent_id,'') FROM session`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, p string
		if err := rows.Scan(&id, &p); err != nil {
			t.Fatal(err)
		}
		if p != "" {
			out[id] = p
		}
	}
	return out
}

// minMismatchMRR is the floor on the vocabulary-mismatch paraphrases
// (testdata/corpus/public-mismatch-queries.json): lexical search measured
// MRR@10 0.671 on them when they were written, and each of the 20 queries
// is worth 0.05 of it, so the floor allows one query to slip a rank or two
// but not one to drop out. The zero-download bridges tried against them
// (docs/ranking.md, "Paraphrase without a model") never cleared it by more
// than one query; a change that raises it is the evidence a bridge needs.
const minMismatchMRR = 0.62

func TestMismatchEval(t *testing.T) {
	dir := corpusDir(t)
	c, err := Load(dir, "public")
	if err != nil {
		t.Fatal(err)
	}
	var qf struct {
		Queries []Query `json:"queries"`
	}
	if err := readJSON(filepath.Join(dir, "public-mismatch-queries.json"), &qf); err != nil {
		t.Fatal(err)
	}
	if len(qf.Queries) == 0 {
		t.Fatal("public-mismatch-queries.json holds no queries")
	}
	keys := map[string]bool{}
	for _, k := range c.KeyOfID {
		keys[k] = true
	}
	for _, q := range qf.Queries {
		for _, key := range q.Relevant {
			if !keys[key] {
				t.Errorf("%s: relevant key %q names no session of the public corpus", q.ID, key)
			}
		}
	}
	c.Queries = qf.Queries
	index := filepath.Join(t.TempDir(), "index.db")
	if _, err := runCLI([]string{"sync", "--db", c.DB, "--index", index, "--json"}); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(c, index, parentsOf(t, c.DB), runCLI)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rep.Print(&buf, *verbose || testing.Verbose())
	t.Log("\n" + buf.String())
	if rep.MRR < minMismatchMRR {
		t.Errorf("mismatch MRR@10 %.3f fell below the floor %.3f", rep.MRR, minMismatchMRR)
	}
}
