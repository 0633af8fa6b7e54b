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
}

// Result is one query's outcome.
type Result struct {
	Query Query
	Rank  int // 1-based rank of the first relevant session, 0 = not in the top 10
	Top   []string
}

// Report aggregates results.
type Report struct {
	Results []Result
	MRR     float64
	R1, R5  float64
	ByKind  map[string][3]float64 // kind -> MRR, R@1, R@5
	Count   map[string]int
}

// Run evaluates every query; parents maps subagent session ids to their
// top-level session (hits inside a child count for the parent).
func Run(c *Corpus, index string, parents map[string]string, search SearchFunc) (*Report, error) {
	rep := &Report{ByKind: map[string][3]float64{}, Count: map[string]int{}}
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
		for _, h := range res.Hits {
			sid := h.SessionID
			if p, ok := parents[sid]; ok && p != "" {
				sid = p
			}
			key := c.KeyOfID[sid]
			if key == "" {
				key = sid
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
		rep.Results = append(rep.Results, r)
	}
	rep.summarise()
	return rep, nil
}

func (rep *Report) summarise() {
	sums := map[string][3]float64{}
	var all [3]float64
	for _, r := range rep.Results {
		var v [3]float64
		if r.Rank > 0 {
			v[0] = 1 / float64(r.Rank)
		}
		if r.Rank == 1 {
			v[1] = 1
		}
		if r.Rank >= 1 && r.Rank <= 5 {
			v[2] = 1
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
		}
	}
	n := float64(len(rep.Results))
	if n > 0 {
		rep.MRR, rep.R1, rep.R5 = all[0]/n, all[1]/n, all[2]/n
	}
	for k, s := range sums {
		c := float64(rep.Count[k])
		rep.ByKind[k] = [3]float64{s[0] / c, s[1] / c, s[2] / c}
	}
}

// Print writes the report.
func (rep *Report) Print(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "queries %d  MRR@10 %.3f  Recall@1 %.3f  Recall@5 %.3f\n", len(rep.Results), rep.MRR, rep.R1, rep.R5)
	kinds := make([]string, 0, len(rep.ByKind))
	for k := range rep.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		v := rep.ByKind[k]
		fmt.Fprintf(w, "  %-12s n=%-3d MRR %.3f  R@1 %.3f  R@5 %.3f\n", k, rep.Count[k], v[0], v[1], v[2])
	}
	if !verbose {
		return
	}
	for _, r := range rep.Results {
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
