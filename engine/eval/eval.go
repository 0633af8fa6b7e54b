// Package eval measures ranking quality on a labelled corpus (queries with
// the sessions that truly answer them) through the CLI's machine contract:
// `recall search --db --index --json --limit N [--directory DIR] -- QUERY`.
package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Query is one labelled query.
type Query struct {
	ID       string   `json:"id"`
	Q        string   `json:"q"`
	Kind     []string `json:"kind"`
	Relevant []string `json:"relevant"`
	Needle   string   `json:"needle"`
	Filters  struct {
		DirectoryProject string `json:"directory_project"`
	} `json:"filters"`
}

// Corpus is a labelled corpus on disk.
type Corpus struct {
	DB      string
	Root    string // projects live under Root/projects/<name>
	Queries []Query
	KeyOfID map[string]string // session id -> scenario key
}

// Load reads a corpus laid out like testdata/corpus: DIR/public/opencode.db,
// DIR/public/manifest.json and DIR/public-queries.json.
func Load(dir, name string) (*Corpus, error) {
	c := &Corpus{DB: filepath.Join(dir, name, "opencode.db"), KeyOfID: map[string]string{}}
	var manifest struct {
		Root     string `json:"root"`
		Sessions []struct {
			Key string `json:"key"`
			ID  string `json:"id"`
		} `json:"sessions"`
	}
	if err := readJSON(filepath.Join(dir, name, "manifest.json"), &manifest); err != nil {
		return nil, err
	}
	c.Root = manifest.Root
	for _, s := range manifest.Sessions {
		c.KeyOfID[s.ID] = s.Key
	}
	var qf struct {
		Queries []Query `json:"queries"`
	}
	if err := readJSON(filepath.Join(dir, name+"-queries.json"), &qf); err != nil {
		return nil, err
	}
	c.Queries = qf.Queries
	return c, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// SearchFunc runs the CLI with args and returns its stdout.
type SearchFunc func(args []string) ([]byte, error)

// Hit is what eval reads of a search hit.
type Hit struct {
	SessionID string `json:"sessionId"`
	Snippet   string `json:"snippet"`
	PartID    string `json:"partId"`
	Kind      string `json:"kind"`
	Tool      string `json:"tool"`
	Key       string `json:"-"` // scenario key of the hit's top-level session
}

// NeedleHits is how many of the first hits needle@5 looks at: what an agent
// reads of a result page before deciding whether to open a transcript.
const NeedleHits = 5

// Result is one query's outcome.
type Result struct {
	Query Query
	Rank  int // 1-based rank of the first relevant session, 0 = not in the top 10
	Top   []string
	Hits  []Hit // every hit returned, in order
	// Needle: one of the first NeedleHits snippets holds the labelled
	// needle (false also when the query has none; see HasNeedle).
	Needle bool
	// NeedleRow: the same with one row per session (its hits' snippets
	// joined as fragments), over the first NeedleHits rows.
	NeedleRow bool
}

// rows joins the hits of each session, in rank order, into one row of
// fragments: the "one row per session" presentation issue 12 compares.
func (r Result) rows() []string {
	var keys []string
	row := map[string]string{}
	for _, h := range r.Hits {
		if _, ok := row[h.Key]; !ok {
			keys = append(keys, h.Key)
			row[h.Key] = h.Snippet
			continue
		}
		row[h.Key] += " | " + h.Snippet
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = row[k]
	}
	return out
}

// HasNeedle reports a query labelled with a needle.
func (r Result) HasNeedle() bool { return r.Query.Needle != "" }

// Report aggregates results.
type Report struct {
	Results []Result
	MRR     float64
	R1, R5  float64
	N5      float64               // needle@5 over the queries that have a needle
	ByKind  map[string][4]float64 // kind -> MRR, R@1, R@5, needle@5
	Count   map[string]int
	NCount  map[string]int // kind -> queries with a needle
}

// Run evaluates every query; parents maps subagent session ids to their
// top-level session (hits inside a child count for the parent).
func Run(c *Corpus, index string, parents map[string]string, search SearchFunc) (*Report, error) {
	rep := &Report{ByKind: map[string][4]float64{}, Count: map[string]int{}, NCount: map[string]int{}}
	for _, q := range c.Queries {
		args := []string{"search", "--db", c.DB, "--index", index, "--json", "--limit", "10", "--no-sync"}
		if q.Filters.DirectoryProject != "" {
			args = append(args, "--directory", filepath.Join(c.Root, "projects", q.Filters.DirectoryProject))
		}
		args = append(args, "--", q.Q)
		out, err := search(args)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		var res struct {
			Hits []Hit `json:"hits"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("query %s: stdout is not one JSON object: %w (%q)", q.ID, err, clip(out))
		}
		r := Result{Query: q}
		seen := map[string]bool{}
		for i, h := range res.Hits {
			sid := h.SessionID
			if p, ok := parents[sid]; ok && p != "" {
				sid = p
			}
			key := c.KeyOfID[sid]
			if key == "" {
				key = sid
			}
			h.Key = key
			r.Hits = append(r.Hits, h)
			if i < NeedleHits && q.Needle != "" && strings.Contains(normSpace(h.Snippet), normSpace(q.Needle)) {
				r.Needle = true
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			r.Top = append(r.Top, key)
			if r.Rank == 0 && contains(q.Relevant, key) && len(r.Top) <= 10 {
				r.Rank = len(r.Top)
			}
		}
		for i, row := range r.rows() {
			if i < NeedleHits && q.Needle != "" && strings.Contains(normSpace(row), normSpace(q.Needle)) {
				r.NeedleRow = true
			}
		}
		rep.Results = append(rep.Results, r)
	}
	rep.summarise()
	return rep, nil
}

func (rep *Report) summarise() {
	sums := map[string][4]float64{}
	var all [4]float64
	needles := 0
	for _, r := range rep.Results {
		var v [4]float64
		if r.Rank > 0 {
			v[0] = 1 / float64(r.Rank)
		}
		if r.Rank == 1 {
			v[1] = 1
		}
		if r.Rank >= 1 && r.Rank <= 5 {
			v[2] = 1
		}
		if r.Needle {
			v[3] = 1
		}
		if r.HasNeedle() {
			needles++
		}
		for i := range all {
			all[i] += v[i]
		}
		for _, k := range r.Query.Kind {
			s := sums[k]
			for i := range s {
				s[i] += v[i]
			}
			sums[k] = s
			rep.Count[k]++
			if r.HasNeedle() {
				rep.NCount[k]++
			}
		}
	}
	n := float64(len(rep.Results))
	if n > 0 {
		rep.MRR, rep.R1, rep.R5 = all[0]/n, all[1]/n, all[2]/n
	}
	if needles > 0 {
		rep.N5 = all[3] / float64(needles)
	}
	for k, s := range sums {
		c := float64(rep.Count[k])
		n5 := 0.0
		if nc := rep.NCount[k]; nc > 0 {
			n5 = s[3] / float64(nc)
		}
		rep.ByKind[k] = [4]float64{s[0] / c, s[1] / c, s[2] / c, n5}
	}
}

// normSpace collapses runs of white space, so a needle spanning a line
// break matches the one-line snippet.
func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// Print writes the report.
func (rep *Report) Print(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "queries %d  MRR@10 %.3f  Recall@1 %.3f  Recall@5 %.3f  needle@5 %.3f\n", len(rep.Results), rep.MRR, rep.R1, rep.R5, rep.N5)
	kinds := make([]string, 0, len(rep.ByKind))
	for k := range rep.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		v := rep.ByKind[k]
		n5 := "  -  "
		if rep.NCount[k] > 0 {
			n5 = fmt.Sprintf("%.3f", v[3])
		}
		fmt.Fprintf(w, "  %-12s n=%-3d MRR %.3f  R@1 %.3f  R@5 %.3f  needle@5 %s\n", k, rep.Count[k], v[0], v[1], v[2], n5)
	}
	fmt.Fprintf(w, "  snippet length (characters): median %d  p95 %d\n", rep.SnippetLen(50), rep.SnippetLen(95))
	rowN5, rowLen := rep.rowFigures()
	fmt.Fprintf(w, "  one row per session instead: needle@5 %.3f, row length median %d  p95 %d\n", rowN5, rowLen[0], rowLen[1])
	if !verbose {
		return
	}
	for _, r := range rep.Results {
		if r.HasNeedle() && !r.Needle {
			fmt.Fprintf(w, "  needle   %s %q: %q not in the top %d snippets\n", r.Query.ID, r.Query.Q, r.Query.Needle, NeedleHits)
		}
		if r.Rank == 1 {
			continue
		}
		top := r.Top
		if len(top) > 4 {
			top = top[:4]
		}
		fmt.Fprintf(w, "  rank %-2d %s %q want %s got %s\n", r.Rank, r.Query.ID, r.Query.Q, strings.Join(r.Query.Relevant, ","), strings.Join(top, ","))
	}
}

// SnippetLen is the pct-th percentile of the length in characters of the
// snippets of the first NeedleHits hits of every query.
func (rep *Report) SnippetLen(pct int) int {
	var ls []int
	for _, r := range rep.Results {
		for i, h := range r.Hits {
			if i < NeedleHits {
				ls = append(ls, utf8.RuneCountInString(h.Snippet))
			}
		}
	}
	if len(ls) == 0 {
		return 0
	}
	sort.Ints(ls)
	return ls[min(len(ls)-1, len(ls)*pct/100)]
}

// rowFigures are needle@5 and the median and p95 row length when each
// session is one row of fragments (its hits' snippets).
func (rep *Report) rowFigures() (float64, [2]int) {
	hit, n := 0, 0
	var ls []int
	for _, r := range rep.Results {
		if r.HasNeedle() {
			n++
			if r.NeedleRow {
				hit++
			}
		}
		for i, row := range r.rows() {
			if i < NeedleHits {
				ls = append(ls, utf8.RuneCountInString(row))
			}
		}
	}
	if n == 0 || len(ls) == 0 {
		return 0, [2]int{}
	}
	sort.Ints(ls)
	return float64(hit) / float64(n), [2]int{ls[len(ls)/2], ls[min(len(ls)-1, len(ls)*95/100)]}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func clip(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
