package engine

import (
	"context"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
)

// commonTerms picks the terms left out of the FTS match under MatchBudget:
// terms are taken rarest first, by the documents their stem family may
// match, until the budget is spent; the rarest always goes in.
func (e *Engine) commonTerms(ctx context.Context, q query.Query, alts index.Alternatives) (map[string]bool, error) {
	type tdf struct {
		key string
		df  int
	}
	var ts []tdf
	for _, t := range q.Searchable() {
		df := 0
		// A corrected term matches its corrections too.
		for _, tok := range append([]string{t.Key()}, alts[t.Key()]...) {
			for _, word := range strings.Fields(tok) {
				n, err := e.ix.PrefixDF(ctx, word)
				if err != nil {
					return nil, err
				}
				df += n
			}
		}
		ts = append(ts, tdf{t.Key(), df})
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].df < ts[j].df })
	skip := map[string]bool{}
	sum := 0
	for i, t := range ts {
		sum += t.df
		if i >= 1 && sum > MatchBudget {
			skip[t.key] = true
		}
	}
	return skip, nil
}

func (e *Engine) lexical(ctx context.Context, p SearchParams, q query.Query, f query.Filter, res *SearchResult) error {
	res.Mode = query.ModeLexical
	lr, err := e.lexicalRank(ctx, p, q, f, res)
	if err != nil {
		return err
	}
	if lr.expr == "" {
		return e.recent(ctx, p, f, res)
	}
	if len(lr.cands) == 0 {
		return nil
	}
	return e.emit(ctx, p, lr.cands, lr.items, lr.terms, lr.needles, lr.explain, res)
}

// lexRanked is the lexical ranking of a query, before grouping.
type lexRanked struct {
	cands   []index.Candidate
	items   []rank.Item // scored
	terms   []rank.Term
	needles []string // for snippets
	expr    string   // the FTS match; "" when nothing was left to match
	explain func(int) *Explain
}

func (e *Engine) lexicalRank(ctx context.Context, p SearchParams, q query.Query, f query.Filter, res *SearchResult) (lexRanked, error) {
	var lr lexRanked
	vocab, err := e.vocabulary(ctx)
	if err != nil {
		return lr, err
	}
	alts := index.Alternatives{}
	var terms []rank.Term
	var needles []string
	nDocs := float64(vocab.docs)
	used := q.Searchable()
	for _, t := range used {
		df := vocab.v.DF(t.Key())
		rt := rank.Term{}
		if df == 0 && len(t.Tokens) == 1 {
			// Not a typo when the index matches it through a stem.
			if ok, err := e.ix.Matches(ctx, t.Key()); err != nil {
				return lr, err
			} else if ok {
				df = 1
			}
		}
		if df == 0 && len(t.Tokens) == 1 {
			if corr := vocab.v.Corrections(t.Key()); len(corr) > 0 {
				alts[t.Key()] = corr
				res.Corrections = append(res.Corrections, t.Raw+" → "+strings.Join(corr, ", "))
				for _, c := range corr {
					if strings.Contains(c, " ") {
						rt.Parts = strings.Fields(c)
					} else {
						rt.Needles = append(rt.Needles, rank.Stem(c))
						df = max(df, vocab.v.DF(c))
					}
				}
			}
		}
		if len(t.Tokens) > 1 {
			rt.Parts = t.Tokens[1:]
		} else {
			rt.Needles = append(rt.Needles, rank.Stem(t.Key()))
		}
		if df == 0 {
			df = 1
		}
		rt.Weight = math.Log(1 + nDocs/float64(df))
		terms = append(terms, rt)
		needles = append(needles, rt.Needles...)
		needles = append(needles, rt.Parts...)
	}
	for _, ph := range q.Phrases {
		rt := rank.Term{Parts: ph.Tokens, Weight: 2}
		if len(ph.Tokens) == 1 {
			rt = rank.Term{Needles: ph.Tokens, Weight: 2}
		}
		terms = append(terms, rt)
		needles = append(needles, ph.Tokens...)
	}
	lr.terms, lr.needles = terms, needles
	skip, err := e.commonTerms(ctx, q, alts)
	if err != nil {
		return lr, err
	}
	expr := index.MatchExpr(q, alts, skip)
	lr.expr = expr
	if expr == "" {
		return lr, nil
	}
	cands, err := e.ix.Match(ctx, expr, f, MaxCandidates)
	if err != nil {
		return lr, err
	}
	if len(cands) == 0 {
		return lr, nil
	}
	rids := make([]int64, len(cands))
	for i, c := range cands {
		rids[i] = c.DocRID
	}
	texts, err := e.ix.DocText(ctx, rids)
	if err != nil {
		return lr, err
	}
	items := make([]rank.Item, len(cands))
	for i, c := range cands {
		items[i] = rank.Item{Root: c.RootID, Kind: c.Kind, Tool: c.Tool, Role: c.Role, Synthetic: c.Synthetic, Time: c.Time, BM25: c.BM25, Text: texts[c.DocRID]}
	}
	phrase := ""
	if len(q.Terms)+len(q.Phrases) > 1 {
		phrase = strings.Join(strings.Fields(rank.ASCIILower(q.Raw)), " ")
		phrase = strings.Trim(phrase, `"`)
	}
	rank.Score(items, terms, phrase)
	explain := func(i int) *Explain {
		if !p.Explain {
			return nil
		}
		var matched []string
		for j, m := range items[i].Matched {
			if m && j < len(used) { // the rest are phrases
				matched = append(matched, used[j].Raw)
			}
		}
		return &Explain{BM25: cands[i].BM25, Matched: matched, Match: expr}
	}
	lr.cands, lr.items, lr.explain = cands, items, explain
	return lr, nil
}

// vocabCache holds the vocabulary between searches of one process; a sync
// (here or, seen through synced_at, in another process) invalidates it.
type vocabCache struct {
	mu       sync.Mutex
	v        *rank.Vocab
	docs     int
	syncedAt string
}

func (c *vocabCache) invalidate() {
	c.mu.Lock()
	c.v = nil
	c.mu.Unlock()
}

// vocabulary returns a snapshot of the cached vocabulary (concurrent
// searches each get their own; a refresh never changes one in use).
func (e *Engine) vocabulary(ctx context.Context) (*vocabCache, error) {
	c := e.vocab // set by Open
	c.mu.Lock()
	defer c.mu.Unlock()
	synced, _ := e.ix.Meta(ctx, "synced_at")
	if c.v != nil && c.syncedAt == synced {
		return &vocabCache{v: c.v, docs: c.docs, syncedAt: c.syncedAt}, nil
	}
	terms, df, err := e.ix.Vocabulary(ctx)
	if err != nil {
		return nil, err
	}
	n, err := e.ix.DocCount(ctx)
	if err != nil {
		return nil, err
	}
	c.v, c.docs, c.syncedAt = rank.NewVocab(terms, df), n, synced
	return &vocabCache{v: c.v, docs: c.docs, syncedAt: c.syncedAt}, nil
}
