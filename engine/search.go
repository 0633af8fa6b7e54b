package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
	"github.com/recallhq/recall/engine/render"
	"github.com/recallhq/recall/engine/tokens"
)

// Search budgets. Each is a named default a caller may lower.
const (
	// MaxCandidates bounds the documents BM25 hands to re-ranking; beyond a
	// few hundred the extra ones never reach the first page.
	MaxCandidates = 400
	// MaxSearchLimit bounds the hits of one search.
	MaxSearchLimit = 200
	// DefaultPerSession is how many hits one session family may contribute
	// when results are grouped (the default).
	DefaultPerSession = 3
	// MatchBudget bounds how many documents the FTS match may touch. BM25
	// costs a B-tree lookup per matching document, so common words ("open",
	// "error") dominate a search's time while saying little. Terms are added
	// to the match rarest first until their document frequencies sum past
	// this budget (the two rarest always go in); the rest only re-rank.
	// BM25 costs about 2 µs per matching document on the benchmark machine,
	// so 4,000 keeps the match near 8 ms; the public eval never reaches it.
	// On the 220k-part benchmark history 4,000 (was 6,000) also found one
	// more answer (the clone's eval, .ci/eval-clone.py: MRR@10 0.937 ->
	// 0.952, no query lower).
	MatchBudget = 4000
	// MatchWindow bounds the documents BM25 scores when the match still
	// holds more than that (its terms are all common, or it is a lone
	// term or a phrase): only the newest MatchWindow documents of the
	// match are ranked, and a notice (and the result's Window) says how
	// far back they reach. FTS5 looks up each scored document's length
	// (3.5 µs a document on the benchmark machine, 90% of such a
	// match's cost), so an unbounded match costs in proportion to the
	// history: "dependency" scored 16k documents for 55 ms at 845k
	// parts, and would score 80k at 4M. Documents are numbered as they
	// are indexed, oldest session first, so the newest are a date range.
	MatchWindow = MatchBudget
	// DefaultSearchTimeout bounds a search's wall time; when it runs out the
	// hits found so far are returned, marked partial.
	DefaultSearchTimeout = 3 * time.Second
	// MaxQueryBytes bounds the query text (and a sessions filter). The
	// longest labelled query of the public eval is 87 bytes and a whole
	// pasted error with its stack trace a few KiB; only query.MaxTerms
	// terms reach the index anyway. Parsing is linear in the text, and the
	// search timeout cannot stop it: a 50 MiB query took 5-18 s and 470 MB
	// before this bound. At 16 KiB parsing takes well under a millisecond.
	MaxQueryBytes = 16 << 10
)

// ErrQueryTooLong is a query over MaxQueryBytes; doors report it as bad
// input (exit 2, -32602).
var ErrQueryTooLong = errors.New("query too long")

// QueryTooLong is the error for a query (or filter) of n bytes.
func QueryTooLong(field string, n int) error {
	return fmt.Errorf("%w: %s is %d bytes, over the %d KiB limit; search for a distinctive line of it instead", ErrQueryTooLong, field, n, MaxQueryBytes>>10)
}

// SearchParams is one search: what to look for, where (Filter), and how.
type SearchParams struct {
	Query  string
	Filter query.Filter
	Limit  int        // hits; 0 = 10, at most MaxSearchLimit
	Mode   query.Mode // "" = auto
	Group  query.Group
	// PerSession is how many hits one session family may contribute when
	// grouped (0 = DefaultPerSession).
	PerSession int
	Explain    bool
	Timeout    time.Duration // 0 = DefaultSearchTimeout
	// Match is ranked (the index) or a literal or regex scan of the
	// history's full text; Continue resumes such a scan (a result's
	// Continue), ScanBytes and ScanTime bound it (0 = DefaultScanBytes,
	// DefaultScanTime).
	Match     query.Match
	Continue  string
	ScanBytes int64
	ScanTime  time.Duration
	// EveryNotice: the notices an engine says once (no embedding model)
	// come in this result too, as from an engine of its own (a CLI
	// command run in a daemon's engine).
	EveryNotice bool
}

// Hit is one search result.
type Hit struct {
	Cursor string `json:"cursor"`
	// Source is the history the hit came from; URI is its transcript
	// (recall:, around its message) for an editor to open.
	Source     string   `json:"source"`
	URI        string   `json:"uri"`
	SessionID  string   `json:"sessionId"`
	MessageID  string   `json:"messageId"`
	PartID     string   `json:"partId"`
	Title      string   `json:"title"`
	Directory  string   `json:"directory"`
	Role       string   `json:"role"`
	Kind       string   `json:"kind"`
	Tool       string   `json:"tool"`
	Time       string   `json:"time"`
	Score      float64  `json:"score"`
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights"`
	Explain    *Explain `json:"explain,omitempty"`
}

// Explain tells why a hit ranked where it did.
type Explain struct {
	BM25    float64  `json:"bm25"`
	Matched []string `json:"matched"`
	Match   string   `json:"match"`
	// Semantic and hybrid modes: cosine similarity to the query, and the
	// document's rank in each list that was fused (0: not in that list).
	Vector       float64 `json:"vector,omitempty"`
	LexicalRank  int     `json:"lexicalRank,omitempty"`
	SemanticRank int     `json:"semanticRank,omitempty"`
	// Answer marks the session's final answer shown in its family's second
	// slot though the search did not match it (docs/ranking.md,
	// "Snippets").
	Answer bool `json:"answer,omitempty"`
}

// SearchResult is what Search returns.
type SearchResult struct {
	Hits        []Hit      `json:"hits"`
	Mode        query.Mode `json:"mode"` // what ran: lexical, semantic, hybrid or recent
	Notices     []string   `json:"notices,omitempty"`
	Corrections []string   `json:"corrections,omitempty"`
	Partial     bool       `json:"partial,omitempty"`
	// Coverage (literal and regex matches) says how much was read;
	// Continue resumes the scan where it stopped (absent when complete).
	Coverage *Coverage `json:"coverage,omitempty"`
	Continue string    `json:"continue,omitempty"`
	// Window, when the ranked match held more than MatchWindow documents,
	// says only the newest were ranked, and back to when.
	Window *Window `json:"window,omitempty"`
	// Suggestions, when nothing matched, say what would.
	Suggestions []Suggestion `json:"suggestions,omitempty"`
	Index       Freshness    `json:"index"`
	TookMS      int64        `json:"tookMs"`
}

// Window is the part of a common-word match that was ranked: the newest
// Ranked documents (per history), back to From (RFC 3339, UTC).
type Window struct {
	Ranked int    `json:"ranked"`
	From   string `json:"from"`
}

// Search runs a ranked query over the index.
func (e *Engine) Search(ctx context.Context, p SearchParams) (SearchResult, error) {
	start := time.Now()
	res := SearchResult{Mode: query.ModeLexical, Hits: []Hit{}}
	if len(p.Query) > MaxQueryBytes {
		return res, QueryTooLong("query", len(p.Query)) // before any parsing: it is the slow part
	}
	if p.Limit <= 0 {
		p.Limit = 10
	}
	if p.Limit > MaxSearchLimit {
		p.Limit = MaxSearchLimit
	}
	if p.PerSession <= 0 {
		p.PerSession = DefaultPerSession
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultSearchTimeout
		if scan := min(cmp.Or(p.ScanTime, DefaultScanTime), MaxScanTime); p.Match != "" && p.Match != query.MatchRanked {
			// A scan's own budget stops it; the search's leaves time to
			// render what it found.
			timeout = max(timeout, scan+DefaultScanTime)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	f := p.Filter
	shs, err := e.shardsFor(f.Sources)
	if err != nil {
		return res, err
	}
	if f.ExcludeSession != "" {
		// Its forks are its family too (index.Origins says how they are
		// recognised); each shard knows its own.
		f.ExcludeRoots = slices.Clone(f.ExcludeRoots)
		for _, sh := range shs {
			forks, err := sh.forks(ctx, f.ExcludeSession)
			if err != nil {
				return res, sh.wrap(err)
			}
			for _, id := range forks {
				if !slices.Contains(f.ExcludeRoots, id) {
					f.ExcludeRoots = append(f.ExcludeRoots, id)
				}
			}
		}
		p.Filter = f
	}
	q := query.Parse(p.Query)
	if n := len(q.Overlong); n > 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("left out %s longer than %d characters (%q): words that long are not indexed; search for a part of it",
			render.Count(n, "word"), tokens.MaxTokenLen, clip(q.Overlong[0], 24)))
	}
	switch {
	case p.Match == query.MatchLiteral || p.Match == query.MatchRegex:
		err = e.matchSearch(ctx, shs, p, &res)
	case q.Empty() && len(q.ExcludeTerms) == 0 && len(q.ExcludePhrases) == 0 && strings.TrimSpace(p.Query) != "":
		// Text with nothing searchable in it: no matches, said so, rather
		// than recent activity passed off as its results.
		if len(q.Overlong) == 0 {
			res.Notices = append(res.Notices, "the query has no letters or digits to search for; nothing matched (an empty query lists recent activity)")
		}
	case q.Empty() || isRecencyQuery(q):
		res.Mode = query.ModeRecent
		err = e.recent(ctx, shs, p, f, &res)
	case p.Mode == query.ModeLexical:
		err = e.lexical(ctx, shs, p, q, f, &res)
	default:
		err = e.searchSemantic(ctx, shs, p, q, f, &res)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		res.Partial = true
		res.Notices = append(res.Notices, fmt.Sprintf("search stopped at its %s budget; results are partial", timeout))
		err = nil
	}
	if err == nil {
		e.suggest(ctx, shs, p, q, &res)
	}
	res.Index = e.freshness(context.WithoutCancel(ctx), shs)
	res.TookMS = time.Since(start).Milliseconds()
	return res, err
}

// recencyWords make a query mean "what was I doing lately".
var recencyWords = map[string]bool{"recent": true, "recently": true, "latest": true, "last": true, "lately": true}

// isRecencyQuery: the query only asks for recent work ("what did I work on
// most recently"), so the answer is recent activity, not word matches.
func isRecencyQuery(q query.Query) bool {
	if len(q.Phrases) > 0 {
		return false
	}
	generic := map[string]bool{"work": true, "worked": true, "working": true, "most": true, "session": true, "sessions": true, "doing": true, "done": true}
	sawRecency := false
	for _, t := range q.Terms {
		k := t.Key()
		switch {
		case recencyWords[k]:
			sawRecency = true
		case t.Stop || generic[k]:
		default:
			return false
		}
	}
	return sawRecency
}

// recent lists the newest documents: each shard's newest, merged by time
// (newest first; a tie keeps shard order).
func (e *Engine) recent(ctx context.Context, shs []*shard, p SearchParams, f query.Filter, res *SearchResult) error {
	limit := p.Limit * p.PerSession * 4
	per := make([][]index.Candidate, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		var err error
		per[i], err = sh.ix.Recent(ctx, f, limit)
		return err
	}); err != nil {
		return err
	}
	var cands []cand
	for i, cs := range per {
		for _, c := range cs {
			cands = append(cands, cand{sh: shs[i], Candidate: c})
		}
	}
	if len(shs) > 1 {
		sort.SliceStable(cands, func(a, b int) bool { return cands[a].Time > cands[b].Time })
		cands = cands[:min(len(cands), limit)]
	}
	items := make([]rank.Item, len(cands))
	for i, c := range cands {
		items[i] = rank.Item{Root: famKey(c.sh, c.RootID), Kind: c.Kind, Score: float64(len(cands) - i)}
	}
	return e.emit(ctx, p, cands, items, nil, nil, nil, res)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// Suggestion is one thing to try when a search found nothing.
type Suggestion struct {
	// Kind is term (a near word of the index's vocabulary), filter (a
	// filter that removed every hit), match (try a literal match) or
	// coverage (what was searched).
	Kind string `json:"kind"`
	// Text says it for people and models.
	Text string `json:"text"`
	// Term: the word as typed and the indexed word near it.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Filter: its param name and how many hits the search has without it.
	Filter string `json:"filter,omitempty"`
	Hits   int    `json:"hits,omitempty"`
	// Match: the match mode to try.
	Match query.Match `json:"match,omitempty"`
	// Coverage: how many sessions and parts (documents) were searched.
	Sessions int `json:"sessions,omitempty"`
	Parts    int `json:"parts,omitempty"`
}
