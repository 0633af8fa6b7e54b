package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// so 6,000 keeps the match near 12 ms; the public eval never reaches it.
	MatchBudget = 6000
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
}

// Hit is one search result.
type Hit struct {
	Cursor     string   `json:"cursor"`
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
}

// Freshness says how current the index is.
type Freshness struct {
	SyncedAt string `json:"syncedAt,omitempty"`
	Stale    bool   `json:"stale"`
	// LagMS is how long the history has held changes the index lacks: the
	// time since its files changed after the last sync (0 when fresh).
	LagMS int64 `json:"lagMs"`
	Busy  bool  `json:"busy,omitempty"`
}

// SearchResult is what Search returns.
type SearchResult struct {
	Hits        []Hit      `json:"hits"`
	Mode        query.Mode `json:"mode"` // what ran: lexical, semantic, hybrid or recent
	Notices     []string   `json:"notices,omitempty"`
	Corrections []string   `json:"corrections,omitempty"`
	Partial     bool       `json:"partial,omitempty"`
	Index       Freshness  `json:"index"`
	TookMS      int64      `json:"tookMs"`
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
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	f := p.Filter
	q := query.Parse(p.Query)
	var err error
	if n := len(q.Overlong); n > 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("left out %d word(s) longer than %d characters (%q): words that long are not indexed; search for a part of it",
			n, tokens.MaxTokenLen, clip(q.Overlong[0], 24)))
	}
	switch {
	case q.Empty() && len(q.ExcludeTerms) == 0 && len(q.ExcludePhrases) == 0 && strings.TrimSpace(p.Query) != "":
		// Text with nothing searchable in it: no matches, said so, rather
		// than recent activity passed off as its results.
		if len(q.Overlong) == 0 {
			res.Notices = append(res.Notices, "the query has no letters or digits to search for; nothing matched (an empty query lists recent activity)")
		}
	case q.Empty() || isRecencyQuery(q):
		res.Mode = query.ModeRecent
		err = e.recent(ctx, p, f, &res)
	case p.Mode == query.ModeLexical:
		err = e.lexical(ctx, p, q, f, &res)
	default:
		err = e.searchSemantic(ctx, p, q, f, &res)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		res.Partial = true
		res.Notices = append(res.Notices, fmt.Sprintf("search stopped at its %s budget; results are partial", timeout))
		err = nil
	}
	res.Index = e.freshness(context.WithoutCancel(ctx))
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

func (e *Engine) recent(ctx context.Context, p SearchParams, f query.Filter, res *SearchResult) error {
	cands, err := e.ix.Recent(ctx, f, p.Limit*p.PerSession*4)
	if err != nil {
		return err
	}
	items := make([]rank.Item, len(cands))
	for i, c := range cands {
		items[i] = rank.Item{Root: c.RootID, Kind: c.Kind, Score: float64(len(cands) - i)}
	}
	return e.emit(ctx, p, cands, items, nil, nil, nil, res)
}

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

// emit groups, cuts and renders hits.
func (e *Engine) emit(ctx context.Context, p SearchParams, cands []index.Candidate, items []rank.Item, terms []rank.Term, needles []string, explain func(int) *Explain, res *SearchResult) error {
	var order []int
	if p.Group == query.GroupNone {
		order = make([]int, len(items))
		for i := range order {
			order[i] = i
		}
		rank.ByScore(order, items)
	} else {
		for _, fam := range rank.Families(items, terms) {
			n := min(len(fam), p.PerSession)
			order = append(order, fam[:n]...)
		}
	}
	return e.render(ctx, p, cands, items, order, needles, explain, res)
}

// render cuts order to the limit and renders hits with snippets.
func (e *Engine) render(ctx context.Context, p SearchParams, cands []index.Candidate, items []rank.Item, order []int, needles []string, explain func(int) *Explain, res *SearchResult) error {
	if len(order) > p.Limit {
		order = order[:p.Limit]
	}
	var rids []int64
	for _, i := range order {
		if items[i].Text == "" {
			rids = append(rids, cands[i].DocRID)
		}
	}
	texts, err := e.ix.DocText(ctx, rids)
	if err != nil {
		return err
	}
	titles, err := e.titles(ctx, cands, order)
	if err != nil {
		return err
	}
	for _, i := range order {
		c := cands[i]
		text := items[i].Text
		if text == "" {
			text = texts[c.DocRID]
		}
		snip, hl := snippet(e.show(text), needles)
		h := Hit{
			Cursor:    e.encodeCursor(Cursor{SessionID: c.SessionID, MessageID: c.MessageID, PartID: c.PartID}),
			SessionID: c.SessionID, MessageID: c.MessageID, PartID: c.PartID,
			Title: e.show(titles[c.SessionID]), Directory: c.Directory, Role: c.Role, Kind: c.Kind, Tool: c.Tool,
			Time: render.Time(c.Time), Score: round3(items[i].Score), Snippet: snip, Highlights: hl,
		}
		if h.Highlights == nil {
			h.Highlights = [][2]int{}
		}
		if explain != nil {
			h.Explain = explain(i)
		}
		res.Hits = append(res.Hits, h)
	}
	return nil
}

// titles reads the titles of the sessions the hits in order name, in one
// query.
func (e *Engine) titles(ctx context.Context, cands []index.Candidate, order []int) (map[string]string, error) {
	ids := make([]string, 0, len(order))
	seen := make(map[string]bool, len(order))
	for _, i := range order {
		if id := cands[i].SessionID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return e.ix.Titles(ctx, ids)
}

func (e *Engine) freshness(ctx context.Context) Freshness {
	var f Freshness
	var synced int64
	if v, err := e.ix.Meta(ctx, "synced_at"); err == nil && v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			f.SyncedAt, synced = render.Time(ms), ms
		}
	}
	if fp, err := e.ix.Meta(ctx, "source_fingerprint"); err == nil {
		f.Stale = fp != e.syncFingerprint()
	}
	if f.Stale {
		changed := max(e.source().ModTime().UnixMilli(), synced)
		f.LagMS = max(time.Now().UnixMilli()-changed, 0)
	}
	return f
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

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
