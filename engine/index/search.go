package index

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/recallhq/recall/engine/query"
)

// Candidate is a document that matched, with the fields ranking needs.
type Candidate struct {
	DocRID    int64
	PartRID   int64
	SessionID string
	RootID    string
	MessageID string
	PartID    string
	MsgOrd    int
	Kind      string
	Role      string
	Tool      string
	Synthetic bool
	Time      int64
	Directory string
	BM25      float64 // FTS5 bm25: lower is better
}

// Alternatives is, per query term, the extra tokens that count as that term
// (typo corrections, a split of a glued word as a phrase).
type Alternatives map[string][]string

// Match is a compiled FTS5 MATCH expression. FTS5 numbers an
// expression's phrases left to right; Phrases[i] says where phrase i came
// from: the index of its term in the query's Searchable() terms,
// PhraseQuoted (a quoted phrase of the query) or PhraseExcluded (an
// exclusion, which no matching document holds). The engine turns them
// into the documents each phrase matches, which recall_bm25 takes
// instead of counting them (see bm25.go).
type Match struct {
	Expr    string
	Phrases []int
}

// Where a phrase of a Match came from when not from a term.
const (
	PhraseQuoted   = -1
	PhraseExcluded = -2
)

// matchBuilder collects a Match's phrases as its expression is written.
type matchBuilder struct{ phrases []int }

// MatchExpr compiles a parsed query into an FTS5 MATCH expression (see
// CompileMatch).
func MatchExpr(q query.Query, alts Alternatives, skip map[string]bool) string {
	return CompileMatch(q, alts, skip).Expr
}

// CompileMatch compiles a parsed query into an FTS5 MATCH expression.
// Every token is quoted, so no user text can be FTS syntax. Free terms are
// ORed (ranking rewards documents that match more of them); phrases must
// match in order; exclusions are NOTed. Its Expr is "" when nothing is
// left.
//
// Terms whose key is in skip are left out of the match (they still count in
// re-ranking); see engine.MatchBudget.
func CompileMatch(q query.Query, alts Alternatives, skip map[string]bool) Match {
	var b matchBuilder
	var any []string
	for j, t := range q.Searchable() {
		if skip[t.Key()] {
			continue
		}
		any = append(any, b.term(t, alts, j))
	}
	for _, p := range q.Phrases {
		toks := p.Tokens
		if p.Compound {
			// Its whole form, where the index holds its parts too: walking
			// the phrase compares the parts' positions in every document
			// holding them all (at 4.2M parts `"violates" OR
			// "users_email_key users email key"` was ranked in 27 ms,
			// `"violates" OR "users_email_key"` is in 11), and only a
			// camelCase one's glued form (`erremailtaken`, see package
			// tokens) kept it narrower.
			toks = toks[:1]
		}
		any = append(any, b.phrase(toks, PhraseQuoted))
	}
	if len(any) == 0 {
		return Match{}
	}
	return b.withExclusions(strings.Join(any, " OR "), q)
}

// CompileMatchAll is the match of documents holding every term of q whose
// key is in keys (each as CompileMatch matches it), less q's exclusions;
// its Expr is "" when no term is left.
func CompileMatchAll(q query.Query, alts Alternatives, keys []string) Match {
	var b matchBuilder
	var all []string
	for j, t := range q.Searchable() {
		if slices.Contains(keys, t.Key()) {
			all = append(all, b.term(t, alts, j))
		}
	}
	if len(all) == 0 {
		return Match{}
	}
	return b.withExclusions(strings.Join(all, " AND "), q)
}

// withExclusions NOTs q's excluded terms and phrases out of expr.
func (b *matchBuilder) withExclusions(expr string, q query.Query) Match {
	var not []string
	for _, t := range q.ExcludeTerms {
		not = append(not, b.term(t, nil, PhraseExcluded))
	}
	for _, p := range q.ExcludePhrases {
		not = append(not, b.phrase(p.Tokens, PhraseExcluded))
	}
	if len(not) > 0 {
		expr = "(" + expr + ") NOT (" + strings.Join(not, " OR ") + ")"
	}
	return Match{Expr: expr, Phrases: b.phrases}
}

// term: a compound matches its whole form or its parts in sequence; its
// phrases are from term from.
func (b *matchBuilder) term(t query.Term, alts Alternatives, from int) string {
	e := termExpr(t, alts)
	n := 1 + len(alts[t.Key()])
	if len(t.Tokens) > 1 {
		n++
	}
	for range n {
		b.phrases = append(b.phrases, from)
	}
	return e
}

func (b *matchBuilder) phrase(toks []string, from int) string {
	b.phrases = append(b.phrases, from)
	return phraseExpr(toks)
}

// termExpr: a compound matches its whole form or its parts in sequence.
func termExpr(t query.Term, alts Alternatives) string {
	opts := []string{quote(t.Key())}
	if len(t.Tokens) > 1 {
		opts = append(opts, phraseExpr(t.Tokens[1:]))
	}
	for _, a := range alts[t.Key()] {
		opts = append(opts, phraseExpr(strings.Fields(a)))
	}
	if len(opts) == 1 {
		return opts[0]
	}
	return "(" + strings.Join(opts, " OR ") + ")"
}

func phraseExpr(toks []string) string {
	q := make([]string, len(toks))
	for i, t := range toks {
		q[i] = strings.ReplaceAll(t, `"`, "")
	}
	return `"` + strings.Join(q, " ") + `"`
}

func quote(tok string) string { return `"` + strings.ReplaceAll(tok, `"`, "") + `"` }

// where renders f as SQL conditions over docs alias d.
func where(f query.Filter) (string, []any) {
	var conds []string
	var args []any
	if f.Directory != "" {
		dir := strings.TrimRight(f.Directory, "/")
		conds = append(conds, `(d.directory = ? OR substr(d.directory, 1, ?) = ?)`)
		args = append(args, dir, len(dir)+1, dir+"/")
	}
	if f.After != 0 {
		conds = append(conds, `d.time >= ?`)
		args = append(args, f.After)
	}
	if f.Before != 0 {
		conds = append(conds, `d.time < ?`)
		args = append(args, f.Before)
	}
	in := func(col string, vals []any) {
		if len(vals) == 0 {
			return
		}
		conds = append(conds, col+` IN `+inList(len(vals)))
		args = append(args, vals...)
	}
	in("d.role", anys(f.Roles))
	in("d.kind", anys(f.Kinds))
	in("d.tool", anys(f.Tools))
	if f.Session != "" {
		conds = append(conds, `(d.session_id = ? OR d.session_id IN (SELECT id FROM sessions WHERE parent_id = ?))`)
		args = append(args, f.Session, f.Session)
	}
	if x := f.ExcludeSession; x != "" {
		// The session itself, anything rooted at it, and its family's root
		// (when the index holds the session; the subquery runs once).
		conds = append(conds, `d.session_id <> ? AND d.root_id <> ? AND d.root_id <> coalesce((SELECT root_id FROM sessions WHERE id = ?), ?)`)
		args = append(args, x, x, x, x)
	}
	if len(f.ExcludeRoots) > 0 {
		conds = append(conds, `d.root_id NOT IN `+inList(len(f.ExcludeRoots)))
		args = append(args, anys(f.ExcludeRoots)...)
	}
	switch f.Author {
	case query.AuthorHuman:
		conds = append(conds, humanDoc)
	case query.AuthorAgent:
		conds = append(conds, `NOT `+humanDoc)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// humanDoc is what a person typed (query.AuthorHuman): a user-role part
// that is not synthetic, of a kind people type, in a top-level session
// (root_id is the session's own id only there: a subagent's user messages
// are its parent agent's prompts).
const humanDoc = `(d.role = 'user' AND d.synthetic = 0 AND d.root_id = d.session_id AND d.kind IN ('text','file','subtask'))`

// inList renders "(?,?,…)" for n values.
func inList(n int) string { return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")" }

// anys turns a list of string-like values into query arguments.
func anys[T ~string](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

const candidateCols = `d.rid, d.part_rid, d.session_id, d.root_id, d.message_id, d.part_id, d.msg_ord, d.kind, d.role, d.tool, d.synthetic, d.time, d.directory`

// matchQuery is the SQL of the FTS match under f, best BM25 first (b =
// 0.75 is kept; k1 default), ties oldest first: candidateCols, the score,
// then extra. The score is score, an expression over docs_fts (bm25(),
// which counts each phrase's documents itself).
func matchQuery(expr, score string, f query.Filter, limit int, extra string) (string, []any) {
	where, args := where(f)
	if where == "" {
		// No filter: rank inside FTS5 alone and join only the winners, so
		// the docs table is read for limit rows, not for every match.
		return `SELECT ` + candidateCols + `, m.score AS score` + extra + ` FROM
			(SELECT rowid, ` + score + ` AS score FROM docs_fts WHERE docs_fts MATCH ? ORDER BY score, rowid LIMIT ?) m
			JOIN docs d ON d.rid = m.rowid ORDER BY m.score, m.rowid`, []any{expr, limit}
	}
	return `SELECT ` + candidateCols + `, ` + score + ` AS score` + extra + `
			FROM docs_fts JOIN docs d ON d.rid = docs_fts.rowid
			WHERE docs_fts MATCH ?` + where + ` ORDER BY score, d.rid LIMIT ?`, append(append([]any{expr}, args...), limit)
}

// MatchNewest ranks the newest n documents matching m under f (every
// match, when fewer hold it) by BM25 and returns the best limit of them
// with their texts, as MatchTexts does, in one walk of the match: held is
// how many documents were ranked, and from the time (Unix ms) of the
// oldest of them when there may be more (held == n), else 0. Documents
// are numbered as they are indexed, oldest session first, so the newest
// are the highest rowids, which FTS5 walks first without sorting. hits
// is what each of m's phrases matches (see recall_bm25; -1: counted, as
// bm25() counts it).
//
// It took two walks before: one for the rowid of the n-th newest match,
// then the ranking of the match from that rowid up. A phrase of common
// words costs its walk (FTS5 compares their positions in every document
// holding them all): at 4.2M parts `make plan-prod target` walked "plan
// prod" 4,000 deep for 28 ms, then again for the ranking. The score
// function counts the rows it scores, so the walk says how deep it went
// (a window function over it, count(*) OVER (), made the ranking half as
// slow again).
func (ix *Index) MatchNewest(ctx context.Context, m Match, hits []int64, f query.Filter, n, limit int) (_ []Candidate, _ map[int64]string, held int, from int64, _ error) {
	if len(hits) != len(m.Phrases) {
		return nil, nil, 0, 0, fmt.Errorf("search index: %d phrase counts for %d phrases", len(hits), len(m.Phrases))
	}
	key, done := withHits(hits, limit, &ix.lens)
	defer done()
	walked := bm25Lookup(key)
	where, wargs := where(f)
	walk := `SELECT count(s) FROM (SELECT recall_bm25(docs_fts, ?) AS s FROM docs_fts WHERE docs_fts MATCH ? ORDER BY rowid DESC LIMIT ?)`
	if where != "" {
		walk = `SELECT count(s) FROM (SELECT recall_bm25(docs_fts, ?) AS s FROM docs_fts JOIN docs d ON d.rid = docs_fts.rowid
			WHERE docs_fts MATCH ?` + where + ` ORDER BY docs_fts.rowid DESC LIMIT ?)`
	}
	out, texts, err := ix.pickBest(ctx, walked, walk, append(append([]any{key, m.Expr}, wargs...), n)...)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	held = walked.rows
	if held == n {
		if err := ix.queryRow(ctx, `SELECT time FROM docs WHERE rid = ?`, walked.low).Scan(&from); err != nil {
			return nil, nil, 0, 0, ix.readError(err)
		}
	}
	return out, texts, held, from, nil
}

// MatchTexts returns up to limit documents matching m under f, best BM25
// first (ties oldest first), with each one's text
// (DocText's). hits is what each of m's phrases matches (see recall_bm25;
// nil: FTS5's bm25() counts them over the whole index, and SQLite keeps
// the best rows).
func (ix *Index) MatchTexts(ctx context.Context, m Match, hits []int64, f query.Filter, limit int) ([]Candidate, map[int64]string, error) {
	if hits == nil {
		inner, args := matchQuery(m.Expr, `bm25(docs_fts)`, f, limit, `, d.text AS dtext`)
		q := `SELECT x.*, ` + docTextCols("x") + ` FROM (` + inner + `) x LEFT JOIN parts p ON p.rid = x.part_rid`
		return ix.candidateTexts(ctx, nil, q, args, limit, nil)
	}
	if len(hits) != len(m.Phrases) {
		return nil, nil, fmt.Errorf("search index: %d phrase counts for %d phrases", len(hits), len(m.Phrases))
	}
	key, done := withHits(hits, limit, &ix.lens)
	defer done()
	where, wargs := where(f)
	// An auxiliary function cannot be an aggregate's argument: the walk is
	// a subquery, kept one by its LIMIT (of none).
	walk := `SELECT count(s) FROM (SELECT recall_bm25(docs_fts, ?) AS s FROM docs_fts WHERE docs_fts MATCH ? LIMIT -1)`
	if where != "" {
		walk = `SELECT count(s) FROM (SELECT recall_bm25(docs_fts, ?) AS s FROM docs_fts JOIN docs d ON d.rid = docs_fts.rowid
			WHERE docs_fts MATCH ?` + where + ` LIMIT -1)`
	}
	return ix.pickBest(ctx, bm25Lookup(key), walk, append([]any{key, m.Expr}, wargs...)...)
}

// pickBest runs walk, a statement of one row that scores every document it
// walks with recall_bm25 under h, which keeps the best h.limit of them
// (ties oldest first, as ORDER BY -score, rowid), and reads those rows
// with their texts.
//
// The best rows were kept by SQLite before, ORDER BY score, rowid LIMIT
// over the walk: its sorter inserts every row that ranks among the best
// so far into a B-tree and deletes the worst, and a walk newest first
// meets equal scores newest first, each then ranking above the one kept
// (ties go to the oldest). A history holds many equal documents (the same
// error, the same command's output); the benchmark clones hold five of
// each. At 4.2M parts the sorter's B-tree was a fifth of the CPU of
// "'cacheTime' does not exist in type", whose match ranks 3,650
// documents; kept here, that search went from 16.5 to 12.9 ms
// (docs/benchmarks.md, "The best rows kept by the score function").
//
// The walk and the read of its rows share a transaction, so they read one
// snapshot: a sync committing between two statements could give a kept
// rowid to another document (a session's newest documents, written again,
// take the rowids their old ones left).
func (ix *Index) pickBest(ctx context.Context, h *bm25Hits, walk string, args ...any) ([]Candidate, map[int64]string, error) {
	tx, err := ix.db.BeginTx(ix.readContext(ctx), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("search index: %w", ix.readError(err))
	}
	defer tx.Rollback()
	var n int64
	if err := ix.txQueryRow(ctx, tx, walk, args...).Scan(&n); err != nil {
		return nil, nil, fmt.Errorf("search index: %w", ix.readError(err))
	}
	if afterWalk != nil {
		afterWalk()
	}
	if len(h.top) == 0 {
		return nil, map[int64]string{}, nil
	}
	scores := make(map[int64]float64, len(h.top))
	ids := make([]byte, 0, 12*len(h.top))
	ids = append(ids, '[')
	for i, r := range h.top {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, r.row, 10)
		scores[r.row] = -r.score
	}
	ids = append(ids, ']')
	q := `SELECT x.*, ` + docTextCols("x") + ` FROM (SELECT ` + candidateCols + `, 0.0 AS score, d.text AS dtext
		FROM docs d WHERE d.rid IN (SELECT value FROM json_each(?))) x LEFT JOIN parts p ON p.rid = x.part_rid`
	return ix.candidateTexts(ctx, tx, q, []any{string(ids)}, len(h.top), scores)
}

// afterWalk, when set, runs between pickBest's walk and its read of the
// rows (a test writes there).
var afterWalk func()

// candidateTexts runs q (in tx, when not nil), whose rows are
// candidateCols, the score, the docs row's own text and docTextCols, and
// reads them; scores, when not nil, holds each row's score in place of
// q's.
func (ix *Index) candidateTexts(ctx context.Context, tx *sql.Tx, q string, args []any, limit int, scores map[int64]float64) ([]Candidate, map[int64]string, error) {
	var rows *sql.Rows
	var err error
	if tx != nil {
		rows, err = ix.txQuery(ctx, tx, q, args...)
	} else {
		rows, err = ix.query(ctx, q, args...)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("search index: %w", err)
	}
	defer rows.Close()
	// Each row is scanned into its place in out, grown to the statement's
	// limit at most: a Candidate of its own per row, then copied, was
	// 12% of a CLI search's allocations (with the map's growth).
	limit = max(limit, 0)
	out := make([]Candidate, 0, limit)
	texts := make(map[int64]string, limit)
	var dtext, body, title, input string
	for rows.Next() {
		out = append(out, Candidate{})
		c := &out[len(out)-1]
		if err := rows.Scan(&c.DocRID, &c.PartRID, &c.SessionID, &c.RootID, &c.MessageID, &c.PartID, &c.MsgOrd,
			&c.Kind, &c.Role, &c.Tool, &c.Synthetic, &c.Time, &c.Directory, &c.BM25, &dtext, &body, &title, &input); err != nil {
			return nil, nil, err
		}
		texts[c.DocRID] = docText(c.Kind, dtext, body, title, input)
		if scores != nil {
			c.BM25 = scores[c.DocRID]
		}
	}
	// Best first, ties oldest first, sorted here: an ORDER BY on q would
	// sort its rows with their texts, and SQLite's sorter memory was about
	// 180 of a CLI search's page faults at 845k parts (730 KB of fresh
	// memory for 400 rows).
	slices.SortFunc(out, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.BM25, b.BM25), cmp.Compare(a.DocRID, b.DocRID))
	})
	return out, texts, rows.Err()
}

// docTextCols selects what a document's text is made from (body, title,
// input) from row x (its kind and dtext, the docs row's own text) and its
// part p, reading only the columns its kind is made from: a part's output
// is read for an output document alone.
func docTextCols(x string) string {
	return `CASE WHEN ` + x + `.dtext <> '' THEN '' WHEN ` + x + `.kind = 'output' THEN coalesce(nullif(p.output, ''), p.error, '')
			WHEN ` + x + `.kind = 'patch' THEN coalesce(p.paths, '') WHEN ` + x + `.kind = 'tool' THEN coalesce(p.tool, '') ELSE coalesce(p.text, '') END,
		CASE WHEN ` + x + `.dtext = '' AND ` + x + `.kind = 'tool' THEN coalesce(p.title, '') ELSE '' END,
		CASE WHEN ` + x + `.dtext = '' AND ` + x + `.kind = 'tool' THEN coalesce(p.input, '') ELSE '' END`
}

// docText is the text a document was indexed from, out of docTextCols's
// columns: its own stored text, or its part's.
func docText(kind, dtext, body, title, input string) string {
	switch {
	case dtext != "":
		return dtext
	case kind == "tool":
		return ToolDocText(body, title, input)
	}
	return body
}

// scanCandidates reads rows of candidateCols plus a score, and closes them.
func scanCandidates(rows *sql.Rows) ([]Candidate, error) {
	defer rows.Close()
	var out []Candidate
	for rows.Next() {
		var c Candidate
		if err := rows.Scan(&c.DocRID, &c.PartRID, &c.SessionID, &c.RootID, &c.MessageID, &c.PartID, &c.MsgOrd,
			&c.Kind, &c.Role, &c.Tool, &c.Synthetic, &c.Time, &c.Directory, &c.BM25); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Recent returns the newest documents under f (an empty query).
func (ix *Index) Recent(ctx context.Context, f query.Filter, limit int) ([]Candidate, error) {
	where, args := where(f)
	q := `SELECT ` + candidateCols + `, 0 FROM docs d WHERE d.kind IN ('text','title','subtask')` + where +
		` ORDER BY d.time DESC, d.rid DESC LIMIT ?`
	rows, err := ix.db.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list recent activity: %w", err)
	}
	return scanCandidates(rows)
}

// DocText returns the text each document was indexed from (bounded), by
// document rid. Snippets and re-ranking read it.
func (ix *Index) DocText(ctx context.Context, rids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(rids))
	if len(rids) == 0 {
		return out, nil
	}
	q := `SELECT d.rid, d.kind, d.dtext, ` + docTextCols("d") + `
		FROM (SELECT rid, kind, part_rid, text AS dtext FROM docs WHERE rid IN (` +
		strings.TrimSuffix(strings.Repeat("?,", len(rids)), ",") + `)) d LEFT JOIN parts p ON p.rid = d.part_rid`
	args := make([]any, len(rids))
	for i, r := range rids {
		args[i] = r
	}
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var kind, dtext, body, title, input string
		if err := rows.Scan(&rid, &kind, &dtext, &body, &title, &input); err != nil {
			return nil, err
		}
		out[rid] = docText(kind, dtext, body, title, input)
	}
	return out, rows.Err()
}

// TypoVocabulary returns the terms typo corrections read (rank.Typable:
// no digits or connectors) with their document frequencies: on the
// 845k-part benchmark history 5,867 of the vocabulary's 53,666 terms. A CLI
// search with a typo reads them in every process.
func (ix *Index) TypoVocabulary(ctx context.Context) (terms []string, df []int, err error) {
	return ix.vocabulary(ctx, `WHERE `+typoWords)
}

// typoWords picks the vocabulary's words, the terms typo correction draws
// on: the WHERE of the partial index vocab_words, which SQLite reads for a
// query only when its WHERE is the same.
const typoWords = `term NOT GLOB '*[_0-9]*'`

// vocabQuery is the one-value read of the vocab rows where picks.
func vocabQuery(where string) string {
	return `SELECT group_concat(term || ' ' || df, char(10)) FROM vocab ` + where
}

// vocabulary reads terms and their document frequencies (the vocab rows
// that where picks, in the order SQLite scans them: by term) as one value
// SQLite concatenates, "term df" a line (a term is one token: no space or
// newline in it). Read a row at a time through database/sql, each row's locks and column calls
// cost more than the read: the typo vocabulary of the 845k-part history in
// a freshly opened index, median of 30 opens in turn, 16.1 ms scanning
// every term, 5.4 ms from vocab_words a row at a time, 2.6 ms as one value.
func (ix *Index) vocabulary(ctx context.Context, where string) (terms []string, df []int, err error) {
	var all sql.NullString
	err = ix.db.QueryRowContext(ctx, vocabQuery(where)).Scan(&all)
	if err != nil {
		return nil, nil, fmt.Errorf("read vocabulary: %w", err)
	}
	for line := range strings.SplitSeq(all.String, "\n") {
		if line == "" {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		n, err := strconv.Atoi(line[sp+1:])
		if sp < 0 || err != nil {
			return nil, nil, fmt.Errorf("read vocabulary: bad row %q", line)
		}
		terms = append(terms, line[:sp])
		df = append(df, n)
	}
	return terms, df, nil
}

// DF is how many documents hold term (0 when none does): one lookup of
// the vocabulary's key, where reading the whole vocabulary to answer it
// cost a CLI search time in proportion to the index.
func (ix *Index) DF(ctx context.Context, term string) (int, error) {
	var n int
	err := ix.queryRow(ctx, `SELECT df FROM vocab WHERE term = ?`, term).Scan(&n)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, ix.readError(err)
	}
	return n, nil
}

// DocCount is the number of search documents: the count each write keeps
// in meta (doc_count), else (an index written before it was kept) a count
// of the docs table, which walks it.
func (ix *Index) DocCount(ctx context.Context) (int, error) {
	var n int
	err := ix.queryRow(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_count'`).Scan(&n)
	if err == nil {
		return n, nil
	}
	if err != sql.ErrNoRows {
		return 0, ix.readError(err)
	}
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&n); err != nil {
		return 0, ix.readError(err)
	}
	return n, nil
}

// Matches reports whether any document matches the token as FTS5 sees it
// (after stemming), even when the raw vocabulary lacks it ("slow" is indexed
// through "slower").
func (ix *Index) Matches(ctx context.Context, token string) (bool, error) {
	var rid int64
	err := ix.queryRow(ctx, `SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? LIMIT 1`, quote(token)).Scan(&rid)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// PrefixDF estimates how many documents FTS5 will match for a token: the
// summed frequencies of every vocabulary term that starts with it (stemming
// folds those together). It overestimates, which is the safe side for a
// cost budget.
func (ix *Index) PrefixDF(ctx context.Context, token string) (int, error) {
	var n sql.NullInt64
	err := ix.queryRow(ctx, `SELECT sum(df) FROM vocab WHERE term >= ? AND term < ?`, token, token+"\uffff").Scan(&n)
	return int(n.Int64), err
}

// TermMatches counts the documents the FTS match of term t (with its
// alternatives) touches, up to limit.
func (ix *Index) TermMatches(ctx context.Context, t query.Term, alts Alternatives, limit int) (int, error) {
	var n int
	err := ix.queryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)`, termExpr(t, alts), limit).Scan(&n)
	if err != nil {
		return 0, ix.readError(err)
	}
	return n, nil
}

// MatchCount counts the documents matching expr under f, up to limit (a
// bounded count: a suggestion says "12 hits" or "1000+", never scans the
// whole index to say more).
func (ix *Index) MatchCount(ctx context.Context, expr string, f query.Filter, limit int) (int, error) {
	where, args := where(f)
	q := `SELECT count(*) FROM (SELECT 1 FROM docs_fts JOIN docs d ON d.rid = docs_fts.rowid WHERE docs_fts MATCH ?` + where + ` LIMIT ?)`
	var n int
	if err := ix.db.QueryRowContext(ctx, q, append(append([]any{expr}, args...), limit)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count matches: %w", err)
	}
	return n, nil
}

// FinalAnswers returns, per session id, the session's last assistant text
// under f (what the assistant concluded), newest message first. Search
// shows it for a session whose matched parts hold no answer of the
// assistant's: the conclusion often shares few words with the question.
func (ix *Index) FinalAnswers(ctx context.Context, sessions []string, f query.Filter) (map[string]Candidate, error) {
	out := map[string]Candidate{}
	if len(sessions) == 0 {
		return out, nil
	}
	where, args := where(f)
	// docs_session narrows to the sessions' documents (a few hundred each);
	// the window keeps each session's last one.
	q := `SELECT ` + candidateCols + `, 0 FROM (SELECT d.*, row_number() OVER (PARTITION BY d.session_id ORDER BY d.msg_ord DESC, d.rid DESC) AS n
		FROM docs d WHERE d.session_id IN ` + inList(len(sessions)) + ` AND d.kind = 'text' AND d.role = 'assistant' AND d.synthetic = 0` + where + `) d WHERE d.n = 1`
	rows, err := ix.db.QueryContext(ctx, q, append(anys(sessions), args...)...)
	if err != nil {
		return nil, fmt.Errorf("read final answers: %w", err)
	}
	cs, err := scanCandidates(rows)
	if err != nil {
		return nil, fmt.Errorf("read final answers: %w", err)
	}
	for _, c := range cs {
		out[c.SessionID] = c
	}
	return out, nil
}
