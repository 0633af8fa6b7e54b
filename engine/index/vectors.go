package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// Vectors for semantic search live in two tables (see schema):
//
//	embeddings(hash, model, dims, vec)  one vector per distinct embedded text
//	doc_vectors(doc_rid, hash)          which document has which text
//
// vec is dims little-endian float32s. The hash is of the embedded text
// alone, so a session re-synced with unchanged text finds its vectors again
// without running the model (a trigger drops a document's doc_vectors row
// when the document goes; the embeddings row stays until GCVectors).
//
// Every vector in the index comes from one model, recorded in meta
// vector_model ("id@revision/dims"); a different model resets them all.
// meta vector_gen counts changes so a process can tell its in-memory copy is
// stale.

const (
	metaVectorModel = "vector_model"
	metaVectorGen   = "vector_gen"
)

// VectorModel is the model key the stored vectors were made with ("" when
// none are stored yet).
func (ix *Index) VectorModel(ctx context.Context) (string, error) {
	return ix.Meta(ctx, metaVectorModel)
}

// VectorGeneration changes whenever vectors are added or reset.
func (ix *Index) VectorGeneration(ctx context.Context) (int64, error) {
	v, err := ix.Meta(ctx, metaVectorGen)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// ResetVectors drops every stored vector and records model as the one the
// next vectors come from. The caller holds the writer lock.
func (ix *Index) ResetVectors(ctx context.Context, model string) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reset vectors: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM doc_vectors`, `DELETE FROM embeddings`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("reset vectors: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, metaVectorModel, model); err != nil {
		return fmt.Errorf("reset vectors: %w", err)
	}
	if _, _, err := bumpGen(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

func bumpGen(ctx context.Context, tx *sql.Tx) (old, cur int64, err error) {
	var v string
	err = tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaVectorGen).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("read vector generation: %w", err)
	}
	old, _ = strconv.ParseInt(v, 10, 64)
	cur = old + 1
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, metaVectorGen, strconv.FormatInt(cur, 10)); err != nil {
		return 0, 0, fmt.Errorf("write vector generation: %w", err)
	}
	return old, cur, nil
}

// PendingDocs returns up to limit documents of the given kinds that have no
// vector yet, written by people or models (not synthetic), newest first and
// below rid (0: from the top). Walking down from the last rid seen keeps a
// run's scans linear in the table.
func (ix *Index) PendingDocs(ctx context.Context, kinds []model.Kind, below int64, limit int) ([]int64, error) {
	if below <= 0 {
		below = math.MaxInt64
	}
	args := append(anys(kinds), below, limit)
	rows, err := ix.db.QueryContext(ctx, `SELECT d.rid FROM docs d WHERE d.kind IN `+inList(len(kinds))+
		` AND d.synthetic = 0 AND d.rid < ? AND NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.doc_rid = d.rid)
		ORDER BY d.rid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list documents to embed: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var rid int64
		if err := rows.Scan(&rid); err != nil {
			return nil, err
		}
		out = append(out, rid)
	}
	return out, rows.Err()
}

// VectorCounts returns how many documents of the given kinds (not
// synthetic) could have a vector, and how many do.
// With no kinds, total is 0.
func (ix *Index) VectorCounts(ctx context.Context, kinds []model.Kind) (embedded, total int, err error) {
	if total, err = ix.KindDocs(ctx, kinds); err != nil {
		return 0, 0, err
	}
	err = ix.db.QueryRowContext(ctx, `SELECT count(*) FROM doc_vectors`).Scan(&embedded)
	if err != nil {
		return 0, 0, fmt.Errorf("count vectors: %w", err)
	}
	return embedded, total, nil
}

// KindDocs returns how many documents of the given kinds the index holds,
// synthetic ones left out: from the counts meta keeps (flushCounts), or
// counted in an index written before it kept them.
func (ix *Index) KindDocs(ctx context.Context, kinds []model.Kind) (int, error) {
	if len(kinds) == 0 {
		return 0, nil
	}
	keys := make([]any, 0, len(kinds)+1)
	keys = append(keys, countsKept)
	for _, k := range kinds {
		keys = append(keys, countKey+countDocsOf+string(k))
	}
	// One statement, one snapshot: the mark and the counts of one commit.
	var kept, n int
	err := ix.queryRow(ctx, `SELECT count(*) FILTER (WHERE key = ?1), coalesce(sum(CAST(value AS INTEGER)) FILTER (WHERE key <> ?1), 0)
		FROM meta WHERE key = ?1 OR key IN `+inList(len(kinds)), keys...).Scan(&kept, &n)
	if err != nil {
		return 0, fmt.Errorf("count documents: %w", err)
	}
	if kept > 0 {
		return n, nil
	}
	err = ix.queryRow(ctx, `SELECT count(*) FROM docs WHERE kind IN `+inList(len(kinds))+` AND synthetic = 0`, anys(kinds)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count documents: %w", err)
	}
	return n, nil
}

// HasVectors reports whether any document has a vector.
func (ix *Index) HasVectors(ctx context.Context) (bool, error) {
	var one int
	err := ix.db.QueryRowContext(ctx, `SELECT 1 FROM doc_vectors LIMIT 1`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// KnownHashes returns which of hashes already have a vector from model.
func (ix *Index) KnownHashes(ctx context.Context, model string, hashes [][]byte) (map[string]bool, error) {
	out := map[string]bool{}
	for start := 0; start < len(hashes); start += 500 {
		batch := hashes[start:min(start+500, len(hashes))]
		args := []any{model}
		for _, h := range batch {
			args = append(args, h)
		}
		rows, err := ix.db.QueryContext(ctx, `SELECT hash FROM embeddings WHERE model = ? AND hash IN `+inList(len(batch)), args...)
		if err != nil {
			return nil, fmt.Errorf("look up cached vectors: %w", err)
		}
		for rows.Next() {
			var h []byte
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return nil, err
			}
			out[string(h)] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// VectorPut is one document's vector to store. Vec is nil when the hash is
// already in embeddings (a cache hit).
type VectorPut struct {
	DocRID int64
	Hash   []byte
	Vec    []float32
}

// PutVectors stores vectors from model in one short transaction and returns
// the vector generation before and after. A document deleted meanwhile is
// skipped. It fails if the index's vectors now belong to another model. The
// caller holds the writer lock.
func (ix *Index) PutVectors(ctx context.Context, model string, puts []VectorPut) (old, cur int64, err error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("store vectors: %w", err)
	}
	defer tx.Rollback()
	var stored string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, metaVectorModel).Scan(&stored); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("store vectors: %w", err)
	}
	if stored != model {
		return 0, 0, fmt.Errorf("store vectors: the index's vectors now come from %q, not %q", stored, model)
	}
	insVec, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO embeddings(hash, model, dims, vec) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return 0, 0, fmt.Errorf("store vectors: %w", err)
	}
	insDoc, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO doc_vectors(doc_rid, hash) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM docs WHERE rid = ?1)`)
	if err != nil {
		return 0, 0, fmt.Errorf("store vectors: %w", err)
	}
	for _, p := range puts {
		if p.Vec != nil {
			if _, err := insVec.ExecContext(ctx, p.Hash, model, len(p.Vec), EncodeVector(p.Vec)); err != nil {
				return 0, 0, fmt.Errorf("store vectors: %w", err)
			}
		}
		if _, err := insDoc.ExecContext(ctx, p.DocRID, p.Hash); err != nil {
			return 0, 0, fmt.Errorf("store vectors: %w", err)
		}
	}
	old, cur, err = bumpGen(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("store vectors: %w", err)
	}
	return old, cur, nil
}

// GCVectors deletes vectors no document uses any more. Run it only when
// nothing is pending: a re-synced document briefly has no doc_vectors row,
// and its old vector is what spares the model a second run.
func (ix *Index) GCVectors(ctx context.Context) (int64, error) {
	res, err := ix.db.ExecContext(ctx, `DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.hash = embeddings.hash)`)
	if err != nil {
		return 0, fmt.Errorf("drop unused vectors: %w", err)
	}
	return res.RowsAffected()
}

// VectorRow is a stored vector with the document fields filters need.
type VectorRow struct {
	DocRID    int64
	Hash      []byte
	SessionID string
	RootID    string
	Kind      string
	Role      string
	Tool      string
	Time      int64
	Directory string
	Vec       []byte // little-endian float32s; valid only during the callback
}

// VectorHashes lists every document with a vector and its text hash.
func (ix *Index) VectorHashes(ctx context.Context, fn func(rid int64, hash []byte)) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT doc_rid, hash FROM doc_vectors`)
	if err != nil {
		return fmt.Errorf("read vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var h []byte
		if err := rows.Scan(&rid, &h); err != nil {
			return err
		}
		fn(rid, h)
	}
	return rows.Err()
}

// ScanVectors calls fn for every stored vector from model (only those of
// rids, when rids is not nil). It reads through a connection with memory
// mapping off: a scan touches every vector once, and mapped pages would
// count against the process's resident memory for as long as they stay
// mapped.
func (ix *Index) ScanVectors(ctx context.Context, model string, rids []int64, fn func(*VectorRow) error) error {
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("read vectors: %w", err)
	}
	defer conn.Close()
	const q = `SELECT v.doc_rid, v.hash, d.session_id, d.root_id, d.kind, d.role, d.tool, d.time, d.directory, e.vec
		FROM doc_vectors v JOIN docs d ON d.rid = v.doc_rid JOIN embeddings e ON e.hash = v.hash WHERE e.model = ?`
	scan := func(query string, args ...any) error {
		rows, err := conn.QueryContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("read vectors: %w", err)
		}
		defer rows.Close()
		var r VectorRow
		// RawBytes: the vector is read in place, not copied once more per
		// row (a load of 100k vectors made 150 MB of such copies).
		var vec sql.RawBytes
		for rows.Next() {
			if err := rows.Scan(&r.DocRID, &r.Hash, &r.SessionID, &r.RootID, &r.Kind, &r.Role, &r.Tool, &r.Time, &r.Directory, &vec); err != nil {
				return err
			}
			r.Vec = vec
			if err := fn(&r); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	if rids == nil {
		return scan(q+` ORDER BY v.doc_rid`, model)
	}
	for start := 0; start < len(rids); start += 500 {
		batch := rids[start:min(start+500, len(rids))]
		args := []any{model}
		for _, r := range batch {
			args = append(args, r)
		}
		if err := scan(q+` AND v.doc_rid IN `+inList(len(batch)), args...); err != nil {
			return err
		}
	}
	return nil
}

// Candidates returns the documents of rids that pass f, in no order, with
// the fields ranking needs (BM25 is 0: they did not come from the FTS
// match).
func (ix *Index) Candidates(ctx context.Context, rids []int64, f query.Filter) ([]Candidate, error) {
	var out []Candidate
	where, wargs := where(f)
	for start := 0; start < len(rids); start += 500 {
		batch := rids[start:min(start+500, len(rids))]
		args := make([]any, 0, len(batch)+len(wargs))
		for _, r := range batch {
			args = append(args, r)
		}
		args = append(args, wargs...)
		rows, err := ix.db.QueryContext(ctx, `SELECT `+candidateCols+`, 0 FROM docs d WHERE d.rid IN `+inList(len(batch))+where, args...)
		if err != nil {
			return nil, fmt.Errorf("read documents: %w", err)
		}
		for rows.Next() {
			var c Candidate
			if err := rows.Scan(&c.DocRID, &c.PartRID, &c.SessionID, &c.RootID, &c.MessageID, &c.PartID, &c.MsgOrd,
				&c.Kind, &c.Role, &c.Tool, &c.Synthetic, &c.Time, &c.Directory, &c.BM25); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SessionLink is where a subagent session sits in its family.
type SessionLink struct {
	Parent string // the session whose task created it
	Root   string // the family's top-level session
}

// SessionLinks maps every session with a parent to its parent and root:
// what the vector set needs to apply a Session or ExcludeSession filter as
// the SQL one does.
func (ix *Index) SessionLinks(ctx context.Context) (map[string]SessionLink, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT id, parent_id, root_id FROM sessions WHERE parent_id <> ''`)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	defer rows.Close()
	out := map[string]SessionLink{}
	for rows.Next() {
		var id string
		var l SessionLink
		if err := rows.Scan(&id, &l.Parent, &l.Root); err != nil {
			return nil, fmt.Errorf("read sessions: %w", err)
		}
		out[id] = l
	}
	return out, rows.Err()
}

// EncodeVector renders v as little-endian float32s.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
