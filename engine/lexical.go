package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
)

// A lexical search over several shards ranks as one index holding them
// all would: each shard finds its own candidates (its FTS match, its own
// typo alternatives from its vocabulary), but term weights come from the
// document frequencies summed over the shards, the match budget picks the
// terms to leave out from those sums, and the union is scored once
// (rank.Score normalises BM25 over it).

// shardTerm is what one shard knows of one query term.
type shardTerm struct {
	// df is the documents holding it (or its corrections).
	df int
	// matchDF is how many documents its FTS match touches (each is one
	// BM25 score), counted up to MatchBudget+1 (commonCountLimit+1 when
	// recountCommon counts again); prefixDF, the documents of the
	// vocabulary terms it starts, breaks ties among the common ones.
	matchDF  int
	prefixDF int
	// wholeDF is how many documents hold a compound's whole form (without
	// corrections), counted up to wholeFormEnough; see matchQuery.
	wholeDF int
	corr    []string // typo corrections from this shard's vocabulary
	needles []string // stems of single-word corrections
	parts   []string // a multi-word correction's words
}

// shardLex is one shard's part of a lexical search.
type shardLex struct {
	sh    *shard
	docs  int
	terms []shardTerm // per q.Searchable() term
	alts  index.Alternatives
	expr  string
	cands []index.Candidate
	texts map[int64]string
	// windowFrom is the time (Unix ms) of the oldest document ranked when
	// the match held more than MatchWindow documents (0: all were).
	windowFrom int64
}

// lexTerms looks the query's terms up in the shard's vocabulary: document
// frequencies, typo corrections, and the prefix frequencies the match
// budget weighs. Frequencies are point lookups; the whole vocabulary is
// read only for a term that matches nothing (a typo), so a CLI search
// pays nothing in proportion to the index for a query without typos.
func (sh *shard) lexTerms(ctx context.Context, used []query.Term) (*shardLex, error) {
	docs, err := sh.ix.DocCount(ctx)
	if err != nil {
		return nil, err
	}
	lx := &shardLex{sh: sh, docs: docs, alts: index.Alternatives{}, terms: make([]shardTerm, len(used))}
	for j, t := range used {
		st := &lx.terms[j]
		if st.df, err = sh.ix.DF(ctx, t.Key()); err != nil {
			return nil, err
		}
		if st.df == 0 && len(t.Tokens) == 1 {
			// Not a typo when the index matches it through a stem.
			if ok, err := sh.ix.Matches(ctx, t.Key()); err != nil {
				return nil, err
			} else if ok {
				st.df = 1
			}
		}
		if st.df == 0 && len(t.Tokens) == 1 && rank.MayCorrect(t.Key()) {
			vocab, err := sh.vocabulary(ctx)
			if err != nil {
				return nil, err
			}
			if corr := vocab.v.Corrections(t.Key()); len(corr) > 0 {
				lx.alts[t.Key()] = corr
				st.corr = corr
				for _, c := range corr {
					if strings.Contains(c, " ") {
						st.parts = strings.Fields(c)
					} else {
						st.needles = append(st.needles, rank.Stem(c))
						st.df = max(st.df, vocab.v.DF(c))
					}
				}
			}
		}
		if st.df == 0 && len(t.Tokens) > 1 {
			// A typo inside an identifier (`ErrEmialTaken`, `AStar.FindPth`):
			// its segments are corrected one by one, and the result counts
			// only as an identifier the index holds.
			vocab, err := sh.vocabulary(ctx)
			if err != nil {
				return nil, err
			}
			if g := compoundCorrection(vocab.v, t); g != "" {
				// The vocabulary read holds words only (TypoVocabulary).
				if st.df, err = sh.ix.DF(ctx, g); err != nil {
					return nil, err
				}
				if st.df > 0 {
					lx.alts[t.Key()] = []string{g}
					st.corr = []string{g}
					st.needles = append(st.needles, g)
				}
			}
		}
	}
	for j, t := range used {
		if err := lx.countWhole(ctx, t, &lx.terms[j]); err != nil {
			return nil, err
		}
	}
	if len(used) == 1 {
		// A lone term always goes in the match (commonTerms): what it
		// costs decides nothing here, so it is not counted (mayOverflow
		// counts a lone compound for the match window).
		return lx, nil
	}
	// One after another: counted side by side on two connections, the
	// benchmark's p95 was 3 to 10 ms worse (each connection has a page
	// cache of its own to warm).
	for j, t := range used {
		if err := lx.count(ctx, t, &lx.terms[j], matchBudget+1); err != nil {
			return nil, err
		}
	}
	return lx, lx.recountCommon(ctx, used)
}

// commonCountLimit is how far recountCommon counts a common term.
var commonCountLimit = 8 * MatchBudget

// recountCommon counts further when three or more terms all touch more
// than the budget: the match then takes the two rarest together (see
// match), and counts capped at the budget all tie, so the vocabulary's
// prefix frequencies broke the tie. Those miss the porter stem: on the
// 845k-part history "borow checker eror in filter" matched "checker"'s
// correction "checked" (731 documents by its prefix, 19,725 through the
// stem "check") where "borrow" touches 4,386, and scored 20k documents
// (150 ms). Counting up to commonCountLimit costs those queries alone 10
// to 15 ms of reading the index at 845k parts (the typo query above and
// "what exit code does logslice return when nothing matches?").
//
// Only the two rarest matter (the others are left out of the match), so
// each term is counted only as far as the second rarest counted before
// it, likeliest rarest first by those prefix frequencies: at 4.2M parts
// "production bundle too big because of the charting library" counted
// four terms 32k deep for 7.6 ms. A term stopped there holds more than
// both; with several shards its sum may rank it wrongly against another
// so stopped (their counts were capped before too).
func (lx *shardLex) recountCommon(ctx context.Context, used []query.Term) error {
	var over []int
	for j := range used {
		switch st := &lx.terms[j]; {
		case st.matchDF == 0: // matches nothing
		case st.matchDF <= matchBudget:
			return nil // a term within the budget goes in first
		default:
			over = append(over, j)
		}
	}
	if len(over) < 3 {
		return nil // none, or the two that go in together anyway
	}
	sort.SliceStable(over, func(a, b int) bool { return lx.terms[over[a]].prefixDF < lx.terms[over[b]].prefixDF })
	limit := commonCountLimit + 1
	var rarest [2]int // the two smallest counts so far
	for i, j := range over {
		st := &lx.terms[j]
		st.prefixDF = 0
		if err := lx.count(ctx, used[j], st, limit); err != nil {
			return err
		}
		switch n := st.matchDF; {
		case i == 0 || n < rarest[0]:
			rarest[0], rarest[1] = n, rarest[0]
		case i == 1 || n < rarest[1]:
			rarest[1] = n
		}
		if i >= 1 {
			limit = min(limit, rarest[1]+1)
		}
	}
	return nil
}

// count sets what the match of term t would cost in the shard: st's
// prefixDF and matchDF, counted up to limit.
func (lx *shardLex) count(ctx context.Context, t query.Term, st *shardTerm, limit int) error {
	// A corrected term matches its corrections too.
	for _, tok := range append([]string{t.Key()}, lx.alts[t.Key()]...) {
		for _, word := range strings.Fields(tok) {
			n, err := lx.sh.ix.PrefixDF(ctx, word)
			if err != nil {
				return err
			}
			st.prefixDF += n
		}
	}
	// What the match touches is counted, not estimated from the
	// vocabulary: FTS5 matches through the porter stem, so "ids" also
	// matches every "id" (14k documents against 2.5k for the words
	// starting "ids" on the benchmark history). The count stops past the
	// budget (at most MatchBudget rows of the FTS index, ~1 ms however
	// large the history), and a term whose words alone are over the
	// budget is not counted at all.
	//
	// A compound is counted by its whole form: the phrase of its parts
	// matches every document the whole form does (the parts follow it)
	// plus the longer compounds and prose holding that phrase, but
	// counting the phrase costs as much as matching it (5 of the 40 ms
	// DB_MAX_OPEN_CONNS took on the benchmark history, where the phrase
	// matches 2,470 documents and the whole form 2,090).
	whole := lx.countedWhole(t)
	if whole && st.wholeDF < wholeFormEnough {
		st.matchDF = min(st.wholeDF, limit) // countWhole counted all of it
		return nil
	}
	st.matchDF = limit
	if st.prefixDF >= limit {
		return nil
	}
	ct := t
	if whole {
		ct = wholeForm(t)
	}
	var err error
	st.matchDF, err = lx.sh.ix.TermMatches(ctx, ct, lx.alts, limit)
	return err
}

// wholeFormEnough is how many documents must hold a compound's whole form
// (`plan_prod`, `test_list_transactions`) for the FTS match to take that
// form alone; fewer, and it also takes the phrase of the compound's parts
// (`"plan prod"`), which finds the identifier written apart or inside a
// longer one. The phrase is what such a match costs: FTS5 walks every
// document holding all its words, common ones, to compare their
// positions. At 4.2M parts the newest 4,000 documents matching
// `"plan_prod" OR "plan prod"` took 9.3 ms to walk, `"plan_prod"` alone
// 0.7 ms (docs/benchmarks.md, "Compounds by their whole form"). With as
// many documents holding the identifier itself as the match hands to
// re-ranking (MaxCandidates), those are what it ranks first anyway. A
// variable so tests can move it.
var wholeFormEnough = MaxCandidates

// countWhole sets st.wholeDF for a compound without corrections; count
// takes it as the compound's count when it is below wholeFormEnough (the
// count then holds all of it).
func (lx *shardLex) countWhole(ctx context.Context, t query.Term, st *shardTerm) error {
	if !lx.countedWhole(t) {
		return nil
	}
	var err error
	st.wholeDF, err = lx.sh.ix.TermMatches(ctx, wholeForm(t), nil, wholeFormEnough)
	return err
}

// countedWhole reports a compound without corrections: its match is
// counted by its whole form (see count).
func (lx *shardLex) countedWhole(t query.Term) bool {
	return len(t.Tokens) > 1 && len(lx.alts[t.Key()]) == 0
}

// wholeForm is compound t as its whole form alone.
func wholeForm(t query.Term) query.Term { return query.Term{Raw: t.Key(), Tokens: t.Tokens[:1]} }

// matchQuery is q as the shard's FTS match takes it: a compound whose
// whole form alone holds wholeFormEnough documents is matched by that
// form alone (its Tokens cut to the whole form). Its place among the
// terms is kept, so the match's phrases still number the same terms
// (phraseHits); ranking and snippets go on taking q itself.
func (lx *shardLex) matchQuery(q query.Query) query.Query {
	used := q.Searchable()
	whole := map[string]bool{}
	for j, t := range used {
		if len(t.Tokens) > 1 && lx.terms[j].wholeDF >= wholeFormEnough {
			whole[t.Key()] = true
		}
	}
	if len(whole) == 0 {
		return q
	}
	out := q
	out.Terms = slices.Clone(q.Terms)
	for i, t := range out.Terms {
		if whole[t.Key()] {
			out.Terms[i].Tokens = t.Tokens[:1]
		}
	}
	return out
}

// commonTerms picks the terms left out of the FTS match under MatchBudget:
// terms are taken rarest first, by the documents their match touches in
// all the shards together, until the budget is spent; the rarest always
// goes in.
func commonTerms(used []query.Term, lxs []*shardLex) (skip map[string]bool, both []string) {
	type tdf struct {
		key        string
		df, prefix int
	}
	ts := make([]tdf, len(used))
	for j, t := range used {
		ts[j].key = t.Key()
		for _, lx := range lxs {
			ts[j].df += lx.terms[j].matchDF
			ts[j].prefix += lx.terms[j].prefixDF
		}
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].df != ts[j].df {
			return ts[i].df < ts[j].df
		}
		return ts[i].prefix < ts[j].prefix
	})
	// A term that matches nothing (a word the history never used, with no
	// correction) costs the match nothing and must not take the place of
	// the rarest term that does match: "qqqzzzvvv connection" found
	// nothing on the 220k-part history once "connection" was over the
	// budget.
	skip = map[string]bool{}
	var kept, left []tdf // matching something: in the match, left out
	sum := 0
	for _, t := range ts {
		sum += t.df
		if len(kept) >= 1 && sum > matchBudget {
			skip[t.key] = true
			if t.df > 0 {
				left = append(left, t)
			}
			continue
		}
		if t.df > 0 {
			kept = append(kept, t)
		}
	}
	if len(kept) == 1 && kept[0].df > matchBudget && len(left) > 0 {
		both = []string{kept[0].key, left[0].key}
	}
	return skip, both
}

// minBothCandidates is how many documents the match of the two rarest
// terms together must find to stand for the whole match (see match);
// fewer, and the rarest term's own match runs instead. 50 fills a page of
// hits (10 by default, up to 3 per family) several times over, so the
// documents holding only one of the words would rarely have reached it;
// a variable so tests can move it.
var minBothCandidates = 50

// matchWindow is MatchWindow (a variable: tests lower it).
var matchWindow = MatchWindow

// matchBudget is MatchBudget (a variable: tests lower it).
var matchBudget = MatchBudget

// match runs the shard's FTS match and reads its candidates' texts.
//
// When even the rarest term touches more than MatchBudget documents (a
// query of common words only), the match asks first for the documents
// holding the two rarest terms together: on a large history a common
// word's match grows with it, and BM25 scores every document a match
// touches; the documents holding both are the ones BM25 ranks first
// anyway. Only when too few hold both does the rarest term's own match
// run.
func (lx *shardLex) match(ctx context.Context, q query.Query, f query.Filter, skip map[string]bool, both []string) error {
	mq := lx.matchQuery(q)
	if both != nil && len(q.Phrases) == 0 {
		if m := index.CompileMatchAll(mq, lx.alts, both); m.Expr != "" {
			// Both words are over the budget: walked for a window unless
			// the history is no larger than one.
			cands, texts, from, err := lx.rankWindow(ctx, m, f, lx.docs > matchWindow, minBothCandidates)
			if err != nil {
				return err
			}
			if len(cands) >= minBothCandidates {
				lx.expr, lx.cands, lx.texts, lx.windowFrom = m.Expr, cands, texts, from
				return nil
			}
		}
	}
	m := index.CompileMatch(mq, lx.alts, skip)
	if lx.expr = m.Expr; lx.expr == "" {
		return nil
	}
	over, err := lx.mayOverflow(ctx, q, skip)
	if err != nil {
		return err
	}
	lx.cands, lx.texts, lx.windowFrom, err = lx.rankWindow(ctx, m, f, over, 0)
	return err
}

// phraseHits is how many documents each phrase of m matches, as
// recall_bm25 takes them in place of counting each phrase over the whole
// index: a term's phrases (its whole form, its parts, its corrections)
// all take the term's count, the larger of its vocabulary df and what
// its match was counted to touch (exact up to the count's limit, see
// count); an exclusion's does not matter (no matching document holds it);
// a quoted phrase's is counted.
func (lx *shardLex) phraseHits(m index.Match) []int64 {
	hits := make([]int64, len(m.Phrases))
	for i, j := range m.Phrases {
		switch {
		case j >= 0:
			st := lx.terms[j]
			hits[i] = int64(max(st.df, st.matchDF, 1))
		case j == index.PhraseExcluded:
			hits[i] = 0
		default:
			hits[i] = -1
		}
	}
	return hits
}

// mayOverflow reports whether the match without the terms in skip may
// hold more than MatchWindow documents, so that only its newest ones are
// ranked (MatchNewest): unless the history is smaller, or every term in it
// was counted (matchDF) and they sum within it. A lone word and a quoted
// phrase are not counted.
//
// A compound is counted by its whole form, though its match also takes
// the phrase of its parts, which can hold more: at 4.2M parts `go test
// -run TestListTransactions` matched 2,923 documents whole, and the
// phrase of its parts more than the window. Counted, every document
// holding the identifier itself is ranked, however old; walked for a
// window, the newest documents holding the words apart would push older
// ones holding it out (four of the 63 benchmark queries ranked other
// documents so at 845k or 4.2M parts). A lone compound is counted the same
// way (its count costs under a millisecond there).
func (lx *shardLex) mayOverflow(ctx context.Context, q query.Query, skip map[string]bool) (bool, error) {
	if lx.docs <= matchWindow {
		return false, nil
	}
	used := q.Searchable()
	if len(q.Phrases) > 0 {
		return true, nil
	}
	if len(used) == 1 {
		// A lone word is walked at once (its walk costs what counting it
		// would); a lone compound is counted by its whole form, as above.
		if t := used[0]; lx.countedWhole(t) {
			st := shardTerm{wholeDF: lx.terms[0].wholeDF}
			err := lx.count(ctx, t, &st, matchWindow+1)
			return st.matchDF > matchWindow, err
		}
		return true, nil
	}
	sum := 0
	for j, t := range used {
		if !skip[t.Key()] {
			sum += lx.terms[j].matchDF
		}
	}
	return sum > matchWindow, nil
}

// rankWindow reads the best candidates of m under f, BM25 ranking only
// the newest MatchWindow documents of the match when it may hold more
// (windowed; see MatchWindow): from is then the time of the oldest one
// ranked, 0 when the match held no more. A window holding fewer than
// least documents in all is of no use (none are returned): the match of
// the two rarest words together, with fewer than minBothCandidates.
func (lx *shardLex) rankWindow(ctx context.Context, m index.Match, f query.Filter, windowed bool, least int) (_ []index.Candidate, _ map[int64]string, from int64, _ error) {
	if !windowed {
		cands, texts, err := lx.sh.ix.MatchTexts(ctx, m, lx.phraseHits(m), f, MaxCandidates)
		return cands, texts, 0, err
	}
	cands, texts, held, from, err := lx.sh.ix.MatchNewest(ctx, m, lx.phraseHits(m), f, matchWindow, MaxCandidates)
	if err != nil || held < least {
		return nil, nil, 0, err
	}
	return cands, texts, from, nil
}

func (e *Engine) lexical(ctx context.Context, shs []*shard, p SearchParams, q query.Query, f query.Filter, res *SearchResult) error {
	lr, err := e.lexicalRank(ctx, shs, p, q, f, res)
	if err != nil {
		return err
	}
	return e.emitLexical(ctx, shs, p, f, lr, res)
}

// emitLexical renders a lexical ranking as the search's result.
func (e *Engine) emitLexical(ctx context.Context, shs []*shard, p SearchParams, f query.Filter, lr lexRanked, res *SearchResult) error {
	res.Mode = query.ModeLexical
	if !lr.matched {
		return e.recent(ctx, shs, p, f, res)
	}
	if len(lr.cands) == 0 {
		return nil
	}
	return e.emit(ctx, p, lr.cands, lr.items, lr.terms, lr.needles, lr.explain, res)
}

// lexRanked is the lexical ranking of a query, before grouping.
type lexRanked struct {
	cands   []cand
	items   []rank.Item // scored
	terms   []rank.Term
	needles []needle // for snippets
	matched bool     // an FTS match ran (false: nothing was left to match)
	exprs   map[*shard]string
	explain func(int) *Explain
}

func (e *Engine) lexicalRank(ctx context.Context, shs []*shard, p SearchParams, q query.Query, f query.Filter, res *SearchResult) (lexRanked, error) {
	var lr lexRanked
	used := q.Searchable()
	lxs := make([]*shardLex, len(shs))
	if err := eachShard(shs, func(i int, sh *shard) error {
		lx, err := sh.lexTerms(ctx, used)
		lxs[i] = lx
		return err
	}); err != nil {
		return lr, err
	}
	nDocs := 0
	for _, lx := range lxs {
		nDocs += lx.docs
	}
	var terms []rank.Term
	var needles []needle
	for j, t := range used {
		rt := rank.Term{}
		df := 0
		var corr []string
		for _, lx := range lxs {
			st := lx.terms[j]
			df += st.df
			corr = appendNew(corr, st.corr...)
			rt.Needles = appendNew(rt.Needles, st.needles...)
			if rt.Parts == nil {
				rt.Parts = st.parts
			}
		}
		if len(corr) > 0 {
			res.Corrections = append(res.Corrections, t.Raw+" → "+strings.Join(corr, ", "))
		}
		if len(t.Tokens) > 1 {
			rt.Parts = t.Tokens[1:]
			rt.Exact = t.Raw
		} else {
			rt.Needles = append(rt.Needles, rank.Stem(t.Key()))
		}
		if df == 0 {
			df = 1
		}
		rt.Weight = math.Log(1 + float64(nDocs)/float64(df))
		terms = append(terms, rt)
		needles = append(needles, termNeedles(t, rt, j)...)
	}
	total := 0.0
	for _, rt := range terms {
		total += rt.Weight
	}
	for _, ph := range q.Phrases {
		rt := rank.Term{Parts: ph.Tokens, Weight: 2}
		if len(ph.Tokens) == 1 {
			rt = rank.Term{Needles: ph.Tokens, Weight: 2}
		}
		terms = append(terms, rt)
		// The quoted text as typed outweighs any one term; its words alone
		// count as much as a term.
		g := len(needles) + 1000
		needles = append(needles, needle{text: rank.ASCIILower(strings.TrimSpace(ph.Raw)), group: g, weight: total + 2})
		for _, tok := range ph.Tokens {
			needles = append(needles, needle{text: tok, group: g + 1, weight: 1})
		}
	}
	if ph := verbatim(q); ph != "" {
		needles = append(needles, needle{text: ph, group: -1, weight: total + 2})
	}
	lr.terms, lr.needles = terms, needles
	skip, both := commonTerms(used, lxs)
	if err := eachShard(shs, func(i int, _ *shard) error { return lxs[i].match(ctx, q, f, skip, both) }); err != nil {
		return lr, err
	}
	windowNotice(lxs, res)
	lr.exprs = map[*shard]string{}
	n := 0
	for _, lx := range lxs {
		n += len(lx.cands)
	}
	cands := make([]cand, 0, n)
	items := make([]rank.Item, 0, n)
	for _, lx := range lxs {
		if lx.expr == "" {
			continue
		}
		lr.matched = true
		lr.exprs[lx.sh] = lx.expr
		for _, c := range lx.cands {
			cands = append(cands, cand{sh: lx.sh, Candidate: c})
			items = append(items, rank.Item{Root: famKey(lx.sh, c.RootID), Kind: c.Kind, Tool: c.Tool, Role: c.Role, Synthetic: c.Synthetic,
				Time: c.Time, BM25: c.BM25, Text: lx.texts[c.DocRID], Part: partKey(lx.sh, c.PartID),
				Session: lx.sh.name + "\x00" + c.SessionID, Ord: c.MsgOrd})
		}
	}
	if len(cands) == 0 {
		return lr, nil
	}
	rank.Score(items, terms, verbatim(q))
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
		return &Explain{BM25: cands[i].BM25, Matched: matched, Match: lr.exprs[cands[i].sh]}
	}
	lr.cands, lr.items, lr.explain = cands, items, explain
	return lr, nil
}

// windowNotice tells a search whose match was cut to its newest
// MatchWindow documents how to reach the older ones.
func windowNotice(lxs []*shardLex, res *SearchResult) {
	var from int64
	for _, lx := range lxs {
		from = max(from, lx.windowFrom)
	}
	if from == 0 {
		return
	}
	day := time.UnixMilli(from).UTC().Format("2006-01-02")
	res.Window = &Window{Ranked: matchWindow, From: time.UnixMilli(from).UTC().Format(time.RFC3339)}
	res.Notices = append(res.Notices, fmt.Sprintf("the words searched for are common: only the newest %d documents holding them were ranked by their words (back to %s UTC); "+
		"add a rarer word, or search before %s (--before %s), to reach older ones", matchWindow, day, day, day))
}

// compoundCorrection corrects the segments of a compound (between its
// connectors, lower-cased and glued: the form tokens.Token.Glued indexes)
// that the vocabulary lacks, and returns the corrected compound ("" when
// no segment was corrected); it counts only if the index holds it.
func compoundCorrection(v *rank.Vocab, t query.Term) string {
	segs := strings.FieldsFunc(strings.ToLower(t.Raw), func(r rune) bool {
		return strings.ContainsRune("_./-:\\", r)
	})
	fixed := false
	for i, seg := range segs {
		if v.DF(seg) > 0 {
			continue
		}
		for _, c := range v.Corrections(seg) {
			if !strings.Contains(c, " ") {
				segs[i], fixed = c, true
				break
			}
		}
	}
	if !fixed {
		return ""
	}
	return strings.Join(segs, "_")
}

// termNeedles are what a snippet looks for of term t (the j-th searchable
// term): a compound as typed first (`1.001s` is one thing to show, not `1`
// and `001s`), then its parts, worth less; a word's stems and corrections.
func termNeedles(t query.Term, rt rank.Term, j int) []needle {
	var out []needle
	if len(t.Tokens) > 1 {
		out = append(out, needle{text: rank.ASCIILower(t.Raw), group: j, weight: rt.Weight})
		for _, p := range rt.Parts {
			out = append(out, needle{text: p, group: j, weight: rt.Weight / 3})
		}
		return out
	}
	for _, n := range rt.Needles {
		out = append(out, needle{text: n, group: j, weight: rt.Weight})
	}
	for _, p := range rt.Parts { // a correction into two words
		out = append(out, needle{text: p, group: j, weight: rt.Weight / 2})
	}
	return out
}

// verbatim is the query as typed, lower-cased with its white space
// collapsed, when it has more than one term: the text the phrase bonus and
// the snippet look for.
func verbatim(q query.Query) string {
	if len(q.Terms)+len(q.Phrases) <= 1 {
		return ""
	}
	return strings.Trim(strings.Join(strings.Fields(rank.ASCIILower(q.Raw)), " "), `"`)
}

// appendNew appends the values not in dst yet.
func appendNew(dst []string, vals ...string) []string {
	for _, v := range vals {
		found := false
		for _, d := range dst {
			if d == v {
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, v)
		}
	}
	return dst
}

// partKey keys a part across shards ("" for a document of no part).
func partKey(sh *shard, id string) string {
	if id == "" {
		return ""
	}
	return sh.name + "\x00" + id
}

// famKey keys a session family across shards: the same root id in two
// histories is two families.
func famKey(sh *shard, root string) string { return sh.name + "\x00" + root }

// eachShard runs fn for each shard, in parallel goroutines when there are
// several (each shard's SQLite handle is its own), and returns the first
// error in shard order.
func eachShard(shs []*shard, fn func(i int, sh *shard) error) error {
	if len(shs) == 1 {
		return fn(0, shs[0])
	}
	errs := make([]error, len(shs))
	var wg sync.WaitGroup
	for i, sh := range shs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i, sh)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// vocabCache holds the vocabulary typo corrections scan (its words:
// TypoVocabulary) between searches of one process; a sync (here or, seen
// through synced_at, in another process) invalidates it.
type vocabCache struct {
	mu       sync.Mutex
	v        *rank.Vocab
	syncedAt string
}

func (c *vocabCache) invalidate() {
	c.mu.Lock()
	c.v = nil
	c.mu.Unlock()
}

// vocabulary returns a snapshot of the shard's cached vocabulary
// (concurrent searches each get their own; a refresh never changes one in
// use).
func (sh *shard) vocabulary(ctx context.Context) (*vocabCache, error) {
	c := sh.vocab // set by openShard
	c.mu.Lock()
	defer c.mu.Unlock()
	synced, _ := sh.ix.Meta(ctx, "synced_at")
	if c.v != nil && c.syncedAt == synced {
		return &vocabCache{v: c.v, syncedAt: c.syncedAt}, nil
	}
	terms, df, err := sh.ix.TypoVocabulary(ctx)
	if err != nil {
		return nil, err
	}
	c.v, c.syncedAt = rank.NewVocab(terms, df), synced
	return &vocabCache{v: c.v, syncedAt: c.syncedAt}, nil
}
