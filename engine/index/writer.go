package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/tokens"
)

// storedPart is a part as the index keeps it (bounded texts).
type storedPart struct {
	model.Part
	TextLen   int
	OutputLen int
}

// OutputOrError is what a tool call produced: its output, else its error.
func (p *storedPart) OutputOrError() string {
	if p.Output != "" {
		return p.Output
	}
	return p.Error
}

// SessionMeta is what a sync computes about a session beyond its row.
type SessionMeta struct {
	RootID string
	Stamp  string
	Now    int64
}

// Writer writes sessions inside one transaction. Hold the WriterLock first.
type Writer struct {
	ix    *Index
	tx    *sql.Tx
	vocab map[string]int      // df deltas, flushed on Commit
	seen  map[string]struct{} // scratch: distinct terms of one document
	prep  *Preparer           // for what the writer prepares itself
	docs  int                 // documents added less removed, flushed on Commit
	// counts are the rows added less removed that meta keeps counts of
	// (countKey), flushed on Commit (flushCounts).
	counts map[string]int
	// smallAfter: the connection reads with a small cache outside a
	// write (Options.OneCommand), given back before the end.
	smallAfter bool

	// reuse holds the documents of the session being re-read
	// (RereadSession) that are not yet written again.
	reuse map[docKey][]int64

	insMsg, insPart, insDoc, updDoc, insFTS, insTouch, insSession *sql.Stmt
	selSizes, putLens                                             *sql.Stmt // refreshDocLens's, prepared on first use
}

// BeginWrite starts a write transaction.
func (ix *Index) BeginWrite(ctx context.Context) (*Writer, error) {
	return ix.beginWrite(ctx, defaultCheckpointPages)
}

// BeginBulkWrite starts a write transaction of a bulk load (most of the
// history written; MergeFullText ends it): its commit checkpoints the WAL
// only past bulkCheckpointPages.
func (ix *Index) BeginBulkWrite(ctx context.Context) (*Writer, error) {
	return ix.beginWrite(ctx, bulkCheckpointPages)
}

// beginWrite starts a write transaction whose commit checkpoints the WAL
// past checkpointPages (set on the connection each time: the pool's
// connection may have been a bulk load's).
func (ix *Index) beginWrite(ctx context.Context, checkpointPages int) (*Writer, error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin index write: %w", err)
	}
	w := &Writer{ix: ix, tx: tx, vocab: map[string]int{}, seen: map[string]struct{}{}, counts: map[string]int{}, prep: ix.NewPreparer()}
	// A one-command process reads through a small cache (oneCommandCache);
	// a write keeps the pages it changes until its commit and reads its
	// B-trees' pages again and again, so it gets the full one (a sync that
	// finds the whole history to index runs in a search's process too).
	if ix.readCache != pageCacheSize {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, pageCacheSize)); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("begin index write: %w", err)
		}
		w.smallAfter = true
	}
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = tx.PrepareContext(ctx, q)
		return st
	}
	w.insMsg = prep(`INSERT INTO messages(id, session_id, ord, role, created, completed, agent, model, finish, error, summary, parent_id)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
	w.insPart = prep(`INSERT INTO parts(id, session_id, message_id, msg_ord, ord, type, kind, synthetic, text, text_len, tool, call_id,
		status, title, input, output, output_len, error, truncated, compacted, exit_code, paths, created)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	w.insDoc = prep(`INSERT INTO docs(part_rid, session_id, root_id, message_id, part_id, msg_ord, kind, role, tool, synthetic, time, directory, text)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	w.updDoc = prep(`UPDATE docs SET part_rid = ?, session_id = ?, root_id = ?, message_id = ?, part_id = ?, msg_ord = ?, kind = ?, role = ?, tool = ?,
		synthetic = ?, time = ?, directory = ?, text = ? WHERE rid = ?`)
	w.insFTS = prep(`INSERT INTO docs_fts(rowid, body) VALUES (?, ?)`)
	w.insTouch = prep(`INSERT INTO file_touches(path, session_id, root_id, time) VALUES (?,?,?,?)
		ON CONFLICT(path, session_id) DO UPDATE SET time = max(time, excluded.time)`)
	w.insSession = prep(`INSERT INTO sessions(id, root_id, parent_id, project_id, directory, title, slug, agent, version, era,
		created, updated, archived, messages, turns, tool_calls, first_prompt, stamp, indexed_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		w.Rollback()
		return nil, fmt.Errorf("prepare index write: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, checkpointPages)); err != nil {
		w.Rollback()
		return nil, fmt.Errorf("begin index write: %w", err)
	}
	return w, nil
}

// How many pages of WAL a commit leaves before it checkpoints them into
// the index: SQLite's default, and a bulk load's. At the default every
// commit of a bulk load (each writes more than 1,000 pages) checkpointed,
// copying again pages the next commit would write anew; at 64 MB a cold
// sync at 226k parts took 4% less, at 845k within the noise
// (docs/benchmarks.md). A bulk load ends with MergeFullText, which
// checkpoints and truncates the WAL.
const (
	defaultCheckpointPages = 1000
	bulkCheckpointPages    = 16384
)

// Rollback abandons the transaction.
func (w *Writer) Rollback() {
	w.readCacheAgain()
	w.tx.Rollback()
}

// readCacheAgain gives the writer's connection back the index's read
// cache (see beginWrite) before the transaction ends: the pages it
// changed stay until then, and are let go as the end makes them clean.
// Its error is not the write's: a connection left with the full cache
// reads as fast, with more memory.
func (w *Writer) readCacheAgain() {
	if w.smallAfter {
		w.smallAfter = false
		w.tx.Exec(fmt.Sprintf(`PRAGMA cache_size = %d`, w.ix.readCache))
	}
}

// Commit flushes vocabulary counts and commits.
func (w *Writer) Commit(ctx context.Context) error {
	if len(w.vocab) > 0 {
		up, err := w.tx.PrepareContext(ctx, `INSERT INTO vocab(term, df) VALUES (?, ?)
			ON CONFLICT(term) DO UPDATE SET df = df + excluded.df`)
		if err != nil {
			w.Rollback()
			return fmt.Errorf("update vocabulary: %w", err)
		}
		// Only a term whose count went down can have reached 0: deleting
		// those by key instead of scanning the whole vocabulary for counts
		// of 0 keeps a sync after a write from paying for every term of
		// the history.
		var gone *sql.Stmt
		rctx := rowContext(ctx) // a statement a term
		for term, d := range w.vocab {
			if d == 0 {
				continue
			}
			if _, err := up.ExecContext(rctx, term, d); err != nil {
				w.Rollback()
				return fmt.Errorf("update vocabulary: %w", err)
			}
			if d > 0 {
				continue
			}
			if gone == nil {
				if gone, err = w.tx.PrepareContext(ctx, `DELETE FROM vocab WHERE term = ? AND df <= 0`); err != nil {
					w.Rollback()
					return fmt.Errorf("update vocabulary: %w", err)
				}
			}
			if _, err := gone.ExecContext(rctx, term); err != nil {
				w.Rollback()
				return fmt.Errorf("update vocabulary: %w", err)
			}
		}
	}
	if err := w.flushDocCount(ctx); err != nil {
		w.Rollback()
		return err
	}
	if err := w.flushCounts(ctx); err != nil {
		w.Rollback()
		return err
	}
	if err := w.refreshDocLens(ctx); err != nil {
		w.Rollback()
		return err
	}
	w.readCacheAgain()
	if err := w.tx.Commit(); err != nil {
		return fmt.Errorf("commit index write: %w", err)
	}
	return nil
}

// flushDocCount keeps meta's doc_count (DocCount) in step with the docs
// written in this transaction. An index written before the count was kept
// counts its docs once, here, inside the transaction that changes them.
func (w *Writer) flushDocCount(ctx context.Context) error {
	if w.docs == 0 {
		return nil
	}
	res, err := w.tx.ExecContext(ctx, `UPDATE meta SET value = CAST(CAST(value AS INTEGER) + ? AS TEXT) WHERE key = 'doc_count'`, w.docs)
	if err != nil {
		return fmt.Errorf("update document count: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO meta(key, value) SELECT 'doc_count', CAST(count(*) AS TEXT) FROM docs`); err != nil {
			return fmt.Errorf("update document count: %w", err)
		}
	}
	w.docs = 0
	return nil
}

// Meta keeps counts of the index's rows (Counts, KindDocs): countsKept
// marks that it does, and countKey+name holds each count (none: 0), name
// one of "sessions", "messages", "parts", or "docs:"+kind for the
// documents of a kind that are not synthetic. `recall status` says how
// many of each the index holds and how many documents an embedding model
// would cover, and counting them walked the tables (the docs table's
// texts and all for the kinds): 0.27 s at 845k parts, 1.25 s at 4.2M, in
// every status.
const (
	countsKept = "counts_kept"
	countKey   = "count:"
	// countKeyEnd bounds the keys that start with countKey.
	countKeyEnd = "count;"
)

// count names, after countKey.
const (
	countSessions = "sessions"
	countMessages = "messages"
	countParts    = "parts"
	countDocsOf   = "docs:" // + the kind
)

// flushCounts keeps meta's counts in step with the rows written in this
// transaction. An index that does not keep them yet is counted once,
// here, inside the transaction that changes it (its own writes included,
// so the deltas are not added again).
func (w *Writer) flushCounts(ctx context.Context) error {
	var kept int
	err := w.tx.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = ?`, countsKept).Scan(&kept)
	if err != nil {
		return fmt.Errorf("update row counts: %w", err)
	}
	if kept == 0 {
		for _, q := range []string{
			`INSERT OR REPLACE INTO meta(key, value) SELECT '` + countKey + countDocsOf + `' || kind, CAST(count(*) AS TEXT) FROM docs WHERE synthetic = 0 GROUP BY kind`,
			`INSERT OR REPLACE INTO meta(key, value) SELECT '` + countKey + countSessions + `', CAST(count(*) AS TEXT) FROM sessions`,
			`INSERT OR REPLACE INTO meta(key, value) SELECT '` + countKey + countMessages + `', CAST(count(*) AS TEXT) FROM messages`,
			`INSERT OR REPLACE INTO meta(key, value) SELECT '` + countKey + countParts + `', CAST(count(*) AS TEXT) FROM parts`,
			`INSERT OR REPLACE INTO meta(key, value) VALUES ('` + countsKept + `', '1')`,
		} {
			if _, err := w.tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("count the index's rows: %w", err)
			}
		}
		clear(w.counts)
		return nil
	}
	for name, n := range w.counts {
		if n == 0 {
			continue
		}
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, CAST(? AS TEXT))
			ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + excluded.value AS TEXT)`, countKey+name, n); err != nil {
			return fmt.Errorf("update row counts: %w", err)
		}
	}
	clear(w.counts)
	return nil
}

// ClearSessions removes every session's rows, documents and vocabulary
// counts at once, for a sync that re-reads most of the history: deleting
// them session by session re-derives each document's terms and deletes its
// postings one by one (on the 845k-part history a forced re-read that way
// had not finished after 22 minutes; a cold index takes 2). What the user
// chose (forgotten sessions) and the embeddings (kept by text) stay.
func (w *Writer) ClearSessions(ctx context.Context) error {
	for _, q := range []string{
		`INSERT INTO docs_fts(docs_fts) VALUES('delete-all')`,
		`DELETE FROM doc_vectors`,
		// Without the trigger for the docs it deletes (a chunk update and
		// a meta update a document), then the one bump they imply.
		`DELETE FROM doc_lens`,
		`DROP TRIGGER IF EXISTS docs_drop_lens`,
		`DELETE FROM docs`,
		docLensTrigger,
		bumpLensGen,
		`DELETE FROM parts`,
		`DELETE FROM messages`,
		`DELETE FROM file_touches`,
		`DELETE FROM sessions`,
		`DELETE FROM vocab`,
		`UPDATE meta SET value = '0' WHERE key = 'doc_count'`,
		`DELETE FROM meta WHERE key >= '` + countKey + `' AND key < '` + countKeyEnd + `'`, // every count 0, kept or not
	} {
		if _, err := w.tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("clear the index's sessions: %w", err)
		}
	}
	clear(w.vocab)
	clear(w.counts)
	w.docs, w.reuse = 0, nil
	return nil
}

// DeferMerges stops FTS5 from merging segments as it flushes them
// (automerge 0), for a bulk load that MergeFullText ends: it sets merging
// back, then merges everything once. Merging as the load went was 7% of
// the writer's CPU at 226k parts. What still bounds each level is
// crisismerge, raised from FTS5's 16 to bulkCrisisMerge meanwhile.
func (w *Writer) DeferMerges(ctx context.Context) error {
	for _, q := range []string{
		`INSERT INTO docs_fts(docs_fts, rank) VALUES('automerge', 0)`,
		`INSERT INTO docs_fts(docs_fts, rank) VALUES('crisismerge', ` + strconv.Itoa(bulkCrisisMerge) + `)`,
	} {
		if _, err := w.tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("defer the full-text merges: %w", err)
		}
	}
	return nil
}

// DeferIndexes drops the secondary indexes a bulk load into an empty
// index need not keep up row by row (deferredIndexes), for
// AddMissingIndexes to make again once the load is written: sorting each
// table's keys once is cheaper than inserting them one by one into
// B-trees that outgrow the page cache. The writer never reads through
// them; meanwhile a read of the half-loaded index scans the parts
// written so far (slower, not wrong).
// A load cut short leaves them missing until the next sync, which makes
// them before it writes, unless it resumes the load (then at its end).
func (w *Writer) DeferIndexes(ctx context.Context) error {
	for _, name := range deferredIndexes {
		if _, err := w.tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+name); err != nil {
			return fmt.Errorf("defer index %s: %w", name, err)
		}
	}
	return nil
}

// SetMeta sets a meta value in the write's transaction.
func (w *Writer) SetMeta(ctx context.Context, key, value string) error {
	if _, err := w.tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, key, value); err != nil {
		return fmt.Errorf("write index meta: %w", err)
	}
	return nil
}

// DeleteMeta removes a meta value in the write's transaction.
func (w *Writer) DeleteMeta(ctx context.Context, key string) error {
	if _, err := w.tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ?`, key); err != nil {
		return fmt.Errorf("write index meta: %w", err)
	}
	return nil
}

// DeleteSession removes a session's rows, documents and vocabulary counts.
func (w *Writer) DeleteSession(ctx context.Context, id string) error {
	ctx = rowContext(ctx)
	old, err := w.sessionDocs(ctx, id, false)
	if err != nil {
		return err
	}
	for _, d := range old {
		if _, err := w.tx.ExecContext(ctx, `DELETE FROM docs_fts WHERE rowid = ?`, d.rid); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	if _, err := w.tx.ExecContext(ctx, `DELETE FROM docs WHERE session_id = ?`, id); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return w.deleteSessionRows(ctx, id)
}

// RereadSession starts writing a session again, as DeleteSession would
// clear it, except that its documents stay until PutSession ends the
// session: one written again with the same text keeps its row, its place
// in the full-text index and its vector, and only those not written again
// are deleted then. A sync after a write re-reads a whole session for a
// streamed turn's last parts or a new title; deleting and re-adding every
// document left a tombstone in the full-text segment that held each one,
// dropped the session's vectors, and gave an old session's documents the
// newest row numbers, which the match window reads as dates
// (docs/benchmarks.md: search p95 about 5% slower after 64 such syncs on
// the 845k-part history).
//
// Only for documents written under the same configuration (excluded
// directories, redaction): the text compared is re-derived from the
// stored part under the current one, which is what the full-text index
// holds only if nothing changed how it was redacted.
func (w *Writer) RereadSession(ctx context.Context, id string) error {
	ctx = rowContext(ctx)
	old, err := w.sessionDocs(ctx, id, true)
	if err != nil {
		return err
	}
	w.reuse = make(map[docKey][]int64, len(old))
	for _, d := range old {
		w.reuse[d.key] = append(w.reuse[d.key], d.rid)
	}
	return w.deleteSessionRows(ctx, id)
}

// oldDoc is a document of the index as a re-read or delete finds it.
type oldDoc struct {
	rid int64
	key docKey // keyOf what it was indexed from (when asked for)
}

// sessionDocs lists a session's documents, keyed by what each was indexed
// from if keyed, and takes their terms out of the vocabulary and their
// count out of the document count. It holds no document's text beyond its
// row: a session may have thousands.
func (w *Writer) sessionDocs(ctx context.Context, id string, keyed bool) ([]oldDoc, error) {
	rows, err := w.tx.QueryContext(ctx, `SELECT d.rid, d.kind, d.synthetic, d.part_id, d.message_id, coalesce(p.kind,''), d.text, coalesce(p.text,''), coalesce(p.tool,''), coalesce(p.title,''),
		coalesce(p.input,''), coalesce(p.output,''), coalesce(p.error,''), coalesce(p.paths,'')
		FROM docs d LEFT JOIN parts p ON p.rid = d.part_rid WHERE d.session_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("read session %s's documents: %w", id, err)
	}
	defer rows.Close()
	var out []oldDoc
	for rows.Next() {
		var d oldDoc
		var kind, partID, msgID, partKind, dtext, text, tool, title, input, output, errText, paths string
		var synthetic bool
		if err := rows.Scan(&d.rid, &kind, &synthetic, &partID, &msgID, &partKind, &dtext, &text, &tool, &title, &input, &output, &errText, &paths); err != nil {
			return nil, err
		}
		if !synthetic {
			w.counts[countDocsOf+kind]--
		}
		// Re-derive the document's text exactly as PutMessage did.
		body := dtext
		if body == "" {
			p := storedPart{Part: model.Part{Kind: model.Kind(partKind), Text: text, Tool: tool, Title: title, Input: input, Output: output, Error: errText}}
			if paths != "" {
				p.Paths = strings.Split(paths, "\n")
			}
			for _, s := range partDocs(&p) {
				if s.kind == model.Kind(kind) {
					body = s.text
				}
			}
		}
		w.countTerms(w.ix.IndexedText(body), -1)
		if keyed {
			d.key = keyOf(kind, partID, msgID, body)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	w.docs -= len(out)
	return out, nil
}

// deleteSessionRows removes a session's rows other than its documents.
func (w *Writer) deleteSessionRows(ctx context.Context, id string) error {
	for _, d := range []struct{ q, counted string }{
		{`DELETE FROM parts WHERE session_id = ?`, countParts},
		{`DELETE FROM messages WHERE session_id = ?`, countMessages},
		{`DELETE FROM file_touches WHERE session_id = ?`, ""},
		{`DELETE FROM sessions WHERE id = ?`, countSessions},
	} {
		res, err := w.tx.ExecContext(ctx, d.q, id)
		if err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
		if d.counted != "" {
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("delete session %s: %w", id, err)
			}
			w.counts[d.counted] -= int(n)
		}
	}
	return nil
}

// endReread deletes the documents of a re-read session (RereadSession)
// that were not written again.
func (w *Writer) endReread(ctx context.Context, id string) error {
	ctx = rowContext(ctx)
	for _, rids := range w.reuse {
		for _, rid := range rids {
			if _, err := w.tx.ExecContext(ctx, `DELETE FROM docs_fts WHERE rowid = ?`, rid); err != nil {
				return fmt.Errorf("index session %s: %w", id, err)
			}
			if _, err := w.tx.ExecContext(ctx, `DELETE FROM docs WHERE rid = ?`, rid); err != nil {
				return fmt.Errorf("index session %s: %w", id, err)
			}
		}
	}
	w.reuse = nil
	return nil
}

// docKey identifies a document by what it was indexed from: its kind, its
// part and message, and a SHA-256 of its text.
type docKey [sha256.Size]byte

func keyOf(kind, partID, msgID, text string) docKey {
	h := sha256.New()
	for _, s := range []string{kind, partID, msgID, text} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	var k docKey
	h.Sum(k[:0])
	return k
}

// countTerms adjusts document frequencies for the distinct terms of text.
func (w *Writer) countTerms(text string, delta int) {
	clear(w.seen)
	tokens.Each(text, func(t tokens.Token) {
		if _, ok := w.seen[t.Text]; !ok {
			w.seen[t.Text] = struct{}{}
			w.vocab[t.Text] += delta
		}
	})
}

func (w *Writer) addDoc(ctx context.Context, partRID int64, s *model.Session, root, msgID, partID string, msgOrd int, kind model.Kind, role, tool string, synthetic bool, t int64, storeText string, d preparedDoc) error {
	w.docs++
	if !synthetic {
		w.counts[countDocsOf+string(kind)]++
	}
	for _, term := range d.terms {
		w.vocab[term]++
	}
	if w.reuse != nil {
		k := keyOf(string(kind), partID, msgID, d.src)
		if rids := w.reuse[k]; len(rids) > 0 {
			// Written again unchanged: the full-text index holds it already.
			if len(rids) == 1 {
				delete(w.reuse, k)
			} else {
				w.reuse[k] = rids[1:]
			}
			if _, err := w.updDoc.ExecContext(ctx, partRID, s.ID, root, msgID, partID, msgOrd, string(kind), role, tool, b2i(synthetic), t, s.Directory, storeText, rids[0]); err != nil {
				return fmt.Errorf("index document: %w", err)
			}
			return nil
		}
	}
	res, err := w.insDoc.ExecContext(ctx, partRID, s.ID, root, msgID, partID, msgOrd, string(kind), role, tool, b2i(synthetic), t, s.Directory, storeText)
	if err != nil {
		return fmt.Errorf("index document: %w", err)
	}
	rid, _ := res.LastInsertId()
	if _, err := w.insFTS.ExecContext(ctx, rid, d.body); err != nil {
		return fmt.Errorf("index document: %w", err)
	}
	return nil
}

// AddTerms adds document frequencies a batching Preparer counted (TakeTerms)
// for the documents this transaction writes.
func (w *Writer) AddTerms(df map[string]int) {
	for term, n := range df {
		w.vocab[term] += n
	}
}

// PreparedMessage is a message made ready for Writer.PutPrepared: its
// parts bounded (secrets kept whole), their documents redacted and
// tokenized, each document's distinct terms listed. Preparing touches no
// transaction, so a sync prepares on its reader goroutine while the
// writer inserts: redaction and tokenizing were a third of the writer's
// CPU in a cold sync.
type PreparedMessage struct {
	M     *model.Message // its Parts are the prepared ones' sources; not read again
	parts []preparedPart
	// errText and errDoc are the message's own error (message.error),
	// bounded; errDoc is nil when it has none.
	errText string
	errDoc  *preparedDoc
}

// Parts is how many parts the message has.
func (pm *PreparedMessage) Parts() int { return len(pm.parts) }

type preparedPart struct {
	sp   storedPart
	docs []preparedDoc
}

type preparedDoc struct {
	kind  model.Kind
	src   string   // the text it is indexed from (before redaction)
	body  string   // the FTS token stream
	terms []string // its distinct terms, for the vocabulary (nil: a batching Preparer counted them)
}

// Preparer prepares messages for the index; each goroutine needs its own
// (it keeps scratch space).
type Preparer struct {
	ix   *Index
	seen map[string]struct{}
	// df, when batching, counts the documents of every message prepared
	// since the last TakeTerms per distinct term, so the writer adds one
	// map per transaction instead of every term of every document (the
	// per-term map updates were 6% of the writer goroutine's CPU in a
	// cold sync of 32k parts, and the writer is the slower of the two).
	df map[string]int
}

// NewPreparer is a Preparer for this index's bounds and redactor.
func (ix *Index) NewPreparer() *Preparer {
	return &Preparer{ix: ix, seen: map[string]struct{}{}}
}

// NewBatchingPreparer is a Preparer that counts the vocabulary itself: the
// writer of what it prepares must add TakeTerms to each transaction
// (Writer.AddTerms), taken exactly after that transaction's last message.
func (ix *Index) NewBatchingPreparer() *Preparer {
	pr := ix.NewPreparer()
	pr.df = map[string]int{}
	return pr
}

// TakeTerms returns the document frequencies counted since the last call
// and starts a new count.
func (pr *Preparer) TakeTerms() map[string]int {
	df := pr.df
	pr.df = map[string]int{}
	return df
}

// Prepare bounds, redacts and tokenizes a message's parts. An assistant
// summary's text parts become summary parts (in m too).
func (pr *Preparer) Prepare(m *model.Message) *PreparedMessage {
	pm := &PreparedMessage{M: m, parts: make([]preparedPart, len(m.Parts))}
	for i := range m.Parts {
		p := &m.Parts[i]
		if m.Summary && p.Kind == model.KindText {
			p.Kind = model.KindSummary
		}
		pp := &pm.parts[i]
		pp.sp = storedPart{Part: *p, TextLen: len(p.Text), OutputLen: len(p.OutputOrErrorRaw())}
		pp.sp.Text = pr.ix.bound(p.Text, TextHead, TextTail)
		pp.sp.Output = pr.ix.bound(p.Output, OutputHead, OutputTail)
		pp.sp.Error = pr.ix.bound(p.Error, OutputHead, OutputTail)
		pp.sp.Input = pr.ix.bound(p.Input, TextHead, TextTail)
		for _, d := range partDocs(&pp.sp) {
			pp.docs = append(pp.docs, pr.doc(d.kind, d.text))
		}
	}
	if strings.TrimSpace(m.Error) != "" {
		pm.errText = pr.ix.bound(m.Error, OutputHead, OutputTail)
		d := pr.doc(model.KindOutput, pm.errText)
		pm.errDoc = &d
	}
	return pm
}

// doc renders a document's FTS token stream from its redacted text and
// lists its distinct terms, in one pass over the text.
func (pr *Preparer) doc(kind model.Kind, src string) preparedDoc {
	text := pr.ix.IndexedText(src)
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	clear(pr.seen)
	var terms []string
	tokens.Each(text, func(t tokens.Token) {
		b.WriteString(t.Text)
		b.WriteByte(' ')
		if _, ok := pr.seen[t.Text]; !ok {
			pr.seen[t.Text] = struct{}{}
			if pr.df != nil {
				pr.df[t.Text]++
			} else {
				terms = append(terms, t.Text)
			}
		}
	})
	return preparedDoc{kind: kind, src: src, body: b.String(), terms: terms}
}

// SessionCounts accumulates a session's listing counts while its messages
// are written.
type SessionCounts struct {
	Messages, Turns, ToolCalls int
	FirstPrompt                string
	LastTime                   int64
}

// PutMessage writes one message, its parts and their documents.
func (w *Writer) PutMessage(ctx context.Context, s *model.Session, root string, ord int, m *model.Message, c *SessionCounts) error {
	return w.PutPrepared(ctx, s, root, ord, w.prep.Prepare(m), c)
}

// rowContext is ctx for the writer's statements of a row or a few (a
// part, a document, a vocabulary term): without its cancellation. The
// SQLite driver watches a cancellable context with a goroutine of its
// own for every statement run under it (to interrupt it): a cold index
// of 226k parts started about 1.6 million, and their scheduling and
// context switches made it 30% slower under a CLI sync's context (which
// Ctrl-C cancels) than under context.Background. Cancellation still ends
// a write at its next statement: the transaction was begun under ctx,
// and database/sql rolls it back when ctx ends, so every statement after
// fails, and the sync returns ctx's error. Statements that can run long
// (merges, the commit's checkpoint) keep ctx.
func rowContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// PutPrepared writes one prepared message, its parts and their documents.
func (w *Writer) PutPrepared(ctx context.Context, s *model.Session, root string, ord int, pm *PreparedMessage, c *SessionCounts) error {
	ctx = rowContext(ctx)
	m := pm.M
	if _, err := w.insMsg.ExecContext(ctx, m.ID, s.ID, ord, m.Role, m.Created, m.Completed, m.Agent, m.Model,
		m.Finish, m.Error, b2i(m.Summary), m.ParentID); err != nil {
		return fmt.Errorf("index message %s: %w", m.ID, err)
	}
	w.counts[countMessages]++
	c.Messages++
	if m.Created > c.LastTime {
		c.LastTime = m.Created
	}
	userTurn := false
	for i := range pm.parts {
		pp := &pm.parts[i]
		sp, p := &pp.sp, &pp.sp.Part
		var exit any
		if p.ExitCode != nil {
			exit = *p.ExitCode
		}
		res, err := w.insPart.ExecContext(ctx, p.ID, s.ID, m.ID, ord, i, p.Type, string(sp.Kind), b2i(p.Synthetic),
			sp.Text, sp.TextLen, p.Tool, p.CallID, p.Status, p.Title, sp.Input, sp.Output, sp.OutputLen, sp.Error,
			b2i(p.Truncated), b2i(p.Compacted), exit, strings.Join(p.Paths, "\n"), p.Created)
		if err != nil {
			return fmt.Errorf("index part %s: %w", p.ID, err)
		}
		w.counts[countParts]++
		rid, _ := res.LastInsertId()
		t := p.Created
		if t == 0 {
			t = m.Created
		}
		for _, d := range pp.docs {
			// Part-backed documents store no text of their own: snippets
			// are cut from the part row.
			if err := w.addDoc(ctx, rid, s, root, m.ID, p.ID, ord, d.kind, m.Role, p.Tool, p.Synthetic, t, "", d); err != nil {
				return err
			}
		}
		for _, path := range p.Paths {
			if _, err := w.insTouch.ExecContext(ctx, path, s.ID, root, t); err != nil {
				return fmt.Errorf("index file path: %w", err)
			}
		}
		if p.Kind == model.KindTool {
			c.ToolCalls++
		}
		if m.Role == "user" && p.Kind == model.KindText && !p.Synthetic {
			userTurn = true
			if c.FirstPrompt == "" {
				// Bounded from the part's text as the history has it (the
				// prepared copy may be cut already).
				c.FirstPrompt = w.ix.bound(m.Parts[i].Text, FirstPromptBytes, 0)
			}
		}
	}
	if userTurn {
		c.Turns++
	}
	// A failed model call keeps its error on the message, often with no
	// parts at all: the only record of an `APIError` or an HTTP 400 is here.
	if pm.errDoc != nil {
		if err := w.addDoc(ctx, 0, s, root, m.ID, "", ord, model.KindOutput, m.Role, "", false, m.Created, pm.errText, *pm.errDoc); err != nil {
			return err
		}
	}
	return nil
}

// PutSession writes the session row and its title document (after its
// messages, so the counts are known).
func (w *Writer) PutSession(ctx context.Context, s *model.Session, meta SessionMeta, c SessionCounts) error {
	ctx = rowContext(ctx)
	updated := s.Updated
	if c.LastTime > updated {
		updated = c.LastTime
	}
	if _, err := w.insSession.ExecContext(ctx, s.ID, meta.RootID, s.ParentID, s.ProjectID, s.Directory, s.Title, s.Slug, s.Agent, s.Version, s.Era,
		s.Created, updated, s.Archived, c.Messages, c.Turns, c.ToolCalls, c.FirstPrompt, meta.Stamp, meta.Now); err != nil {
		return fmt.Errorf("index session %s: %w", s.ID, err)
	}
	w.counts[countSessions]++
	if strings.TrimSpace(s.Title) != "" {
		if err := w.addDoc(ctx, 0, s, meta.RootID, "", "", -1, model.KindTitle, "", "", false, s.Created, s.Title, w.prep.doc(model.KindTitle, s.Title)); err != nil {
			return err
		}
	}
	if w.reuse != nil {
		return w.endReread(ctx, s.ID)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Forget drops a session and its subagent sessions from the index and
// records them so later syncs leave them out.
func (w *Writer) Forget(ctx context.Context, ids []string, now int64) error {
	for _, id := range ids {
		if err := w.DeleteSession(ctx, id); err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(ctx, `INSERT OR REPLACE INTO forgotten(session_id, time) VALUES (?, ?)`, id, now); err != nil {
			return fmt.Errorf("forget %s: %w", id, err)
		}
	}
	return nil
}

// lensShift: doc_lens holds the lengths of 1<<lensShift consecutive rowids
// a row; lensTooLong marks a document of that many tokens or more, whose
// length FTS5's docsize holds.
//
// A row is in lensFormat (encodeLens): a byte a rowid, and the lengths
// that do not fit a byte after them. An index whose meta has no
// lens_format holds rows of two bytes a rowid (little-endian), the format
// before it; readers take either, and the next write builds every row
// again in this one (refreshDocLens). A byte a rowid puts three rows on a
// page where one row of two bytes a rowid filled it: a CLI search whose
// match spans the history reads every row, and a page read is most of
// what a row costs it (docs/benchmarks.md, "doc_lens a byte a document").
const (
	lensShift   = 10
	lensTooLong = 0xffff
	lensFormat  = 2
)

// encodeLens renders the lengths of a chunk's rowids (vals[i]: rowid
// base+i's, 0 for none) in lensFormat: their number (two bytes,
// little-endian), a byte each (the length, 255 for one of 255 or more),
// then for each of 255 or more its index and its length, two bytes each,
// in index order.
func encodeLens(vals []uint16) []byte {
	out := binary.LittleEndian.AppendUint16(make([]byte, 0, 2+len(vals)+16), uint16(len(vals)))
	for _, v := range vals {
		out = append(out, byte(min(v, 255)))
	}
	for i, v := range vals {
		if v >= 255 {
			out = binary.LittleEndian.AppendUint16(out, uint16(i))
			out = binary.LittleEndian.AppendUint16(out, v)
		}
	}
	return out
}

// lensAt is the length of the i-th rowid of a doc_lens row b in format
// compact (lensFormat) or not (two bytes a rowid); covered is false when
// the row holds no length for it (the chunk was built before that rowid
// was).
func lensAt(b []byte, i int, compact bool) (v uint16, covered bool) {
	if !compact {
		if 2*i+2 > len(b) {
			return 0, false
		}
		return binary.LittleEndian.Uint16(b[2*i:]), true
	}
	if len(b) < 2 {
		return 0, false
	}
	n := int(binary.LittleEndian.Uint16(b))
	if i >= n || 2+n > len(b) {
		return 0, false
	}
	if x := b[2+i]; x < 255 {
		return uint16(x), true
	}
	long := b[2+n:]
	k := sort.Search(len(long)/4, func(m int) bool { return int(binary.LittleEndian.Uint16(long[4*m:])) >= i })
	if k < len(long)/4 && int(binary.LittleEndian.Uint16(long[4*k:])) == i {
		return binary.LittleEndian.Uint16(long[4*k+2:]), true
	}
	return 0, true
}

// refreshDocLens brings doc_lens (see docLens) up to date with the
// full-text index in the write's transaction: it builds from docsize the
// chunks a delete emptied (docLensTrigger), the last one (it may have
// grown) and any past it; every chunk of an index that has none yet (one
// upgraded from schema 7: 6-7 s at 4.2M parts, once) or whose chunks are
// of the format before lensFormat (which bumps lens_gen: an engine's
// cached chunks are of the old one).
func (w *Writer) refreshDocLens(ctx context.Context) error {
	var top, last, format sql.NullInt64
	if err := w.tx.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM docs_fts_docsize), (SELECT max(chunk) FROM doc_lens),
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'lens_format')`).Scan(&top, &last, &format); err != nil {
		return fmt.Errorf("document lengths: %w", err)
	}
	if format.Int64 != lensFormat {
		for _, q := range []string{`DELETE FROM doc_lens`, bumpLensGen,
			fmt.Sprintf(`INSERT OR REPLACE INTO meta(key, value) VALUES ('lens_format', '%d')`, lensFormat)} {
			if _, err := w.tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("document lengths: %w", err)
			}
		}
		last.Valid = false
	}
	if !top.Valid {
		return nil
	}
	rows, err := w.tx.QueryContext(ctx, `SELECT chunk FROM doc_lens WHERE lens = x''`)
	if err != nil {
		return fmt.Errorf("document lengths: %w", err)
	}
	var todo []int64
	for rows.Next() {
		var c int64
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return fmt.Errorf("document lengths: %w", err)
		}
		if !last.Valid || c < last.Int64 {
			todo = append(todo, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("document lengths: %w", err)
	}
	from := int64(0)
	if last.Valid {
		from = last.Int64
	}
	for c := from; c <= top.Int64>>lensShift; c++ {
		todo = append(todo, c)
	}
	for _, c := range todo {
		if err := w.buildDocLens(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// buildDocLens writes chunk c of doc_lens from docsize: each rowid's
// length, 0 for a rowid with no document.
func (w *Writer) buildDocLens(ctx context.Context, c int64) error {
	ctx = rowContext(ctx)
	if w.selSizes == nil {
		var err error
		if w.selSizes, err = w.tx.PrepareContext(ctx, `SELECT id, sz FROM docs_fts_docsize WHERE id >= ? AND id < ?`); err != nil {
			return fmt.Errorf("document lengths: %w", err)
		}
		if w.putLens, err = w.tx.PrepareContext(ctx, `INSERT OR REPLACE INTO doc_lens(chunk, lens) VALUES (?, ?)`); err != nil {
			return fmt.Errorf("document lengths: %w", err)
		}
	}
	base := c << lensShift
	rows, err := w.selSizes.QueryContext(ctx, base, base+1<<lensShift)
	if err != nil {
		return fmt.Errorf("document lengths: %w", err)
	}
	vals := make([]uint16, 0, 1<<lensShift)
	for rows.Next() {
		var id int64
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			rows.Close()
			return fmt.Errorf("document lengths: %w", err)
		}
		for int64(len(vals)) < id-base {
			vals = append(vals, 0) // a rowid with no document
		}
		vals = append(vals, uint16(min(docsizeTokens(sz), lensTooLong)))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("document lengths: %w", err)
	}
	// A chunk with no document left is one zero length, not empty: empty
	// is the trigger's mark of a chunk to build.
	if len(vals) == 0 {
		vals = append(vals, 0)
	}
	if _, err := w.putLens.ExecContext(ctx, c, encodeLens(vals)); err != nil {
		return fmt.Errorf("document lengths: %w", err)
	}
	return nil
}

// docsizeTokens is the token count a docsize row holds: one varint per
// column (docs_fts has one), in SQLite's varint format (big-endian groups
// of 7 bits, the high bit set on every byte but the last; a ninth byte
// holds 8 bits).
func docsizeTokens(b []byte) uint64 {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		if i == 8 {
			return v<<8 | uint64(b[i])
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v
		}
	}
	return v
}

// bulkCrisisMerge is how many segments a level of the full-text index
// holds during a bulk load before FTS5 merges them into one segment of the
// next level. A load flushes a segment at least every commit (commitEvery
// parts), and each level a segment climbs rewrites it once more before
// the final merge rewrites everything again: at FTS5's 16 the levels grow
// as the log base 16 of the segments, so a larger history paid more
// rewrites per part. At 64 a load of fewer than 64 x 64 segments climbs
// one level: a cold index of 4.2M parts took 5% less CPU, 226k parts 6% less
// time, 845k parts the same (docs/benchmarks.md, "Merges during a bulk
// load"). A search during the load walks up to 64 segments a level; FTS5
// allows 2,000 in all.
const bulkCrisisMerge = 64
