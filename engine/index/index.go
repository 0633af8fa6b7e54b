// Package index keeps Recall's own SQLite file: normalised sessions,
// messages and parts, the FTS5 search documents, the vocabulary for typo
// tolerance and the per-session sync stamps. It is a cache of the source:
// deletable and rebuildable at any time.
package index

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/recallhq/recall/engine/redact"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// SchemaVersion is bumped whenever the layout or the text processing
// changes; an index with another version is migrated or rebuilt.
const SchemaVersion = 5

// ErrCorrupt marks an index file that cannot be used; the caller deletes and
// rebuilds it.
var ErrCorrupt = errors.New("index is corrupt")

// Index is an open index file.
type Index struct {
	db   *sql.DB
	path string
	// redactor cleans text before it is tokenized into the FTS index and
	// the vocabulary, so a secret can never be found by searching for it,
	// and keeps the cuts of long texts out of secrets (see bound).
	redactor *redact.Redactor
}

// SetRedactor sets the redactor that cleans text before it is indexed.
func (ix *Index) SetRedactor(r *redact.Redactor) { ix.redactor = r }

// IndexedText is text as the FTS index sees it (redacted).
func (ix *Index) IndexedText(s string) string {
	if ix.redactor == nil {
		return s
	}
	return ix.redactor.Redact(s)
}

// DB exposes the handle to the engine's query code in this module.
func (ix *Index) DB() *sql.DB { return ix.db }

// Path is the index file.
func (ix *Index) Path() string { return ix.path }

// Open opens or creates the index at path (mode 0600, WAL so readers never
// wait for the writer) and brings its schema up to date. A file that is not
// a usable index returns an error wrapping ErrCorrupt.
func Open(ctx context.Context, path string) (*Index, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create index dir: %w", err)
	}
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	} else {
		f.Close()
	}
	_ = os.Chmod(path, 0o600)
	u := url.URL{Scheme: "file", Path: path}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(normal)")
	q.Add("_pragma", "foreign_keys(off)")
	q.Add("_pragma", "cache_size(-16000)")
	// No memory map: mapped index pages count against RSS (a 200k-part
	// index mapped 250 MB into a CLI search); read() costs ~2 ms at p50.
	q.Add("_pragma", "mmap_size(0)")
	q.Add("_pragma", "temp_store(memory)")
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	ix := &Index{db: db, path: path}
	if err := ix.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Chmod(path+suffix, 0o600)
	}
	return ix, nil
}

// Close closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

func corrupt(path string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
}

// IsCorruption reports an error that means the index file is damaged.
func IsCorruption(err error) bool { return err != nil && isCorruption(err) }

func isCorruption(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") ||
		strings.Contains(msg, "(26)") || strings.Contains(msg, "(11)") || strings.Contains(msg, "corrupt")
}

func (ix *Index) migrate(ctx context.Context) error {
	// No PRAGMA quick_check here: it walks the whole file (and every FTS5
	// segment), seconds on a large index, on every command. Damage shows up
	// as an SQLITE_CORRUPT error on first use instead, and the engine
	// rebuilds then (see Engine.Sync).
	var version int
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
	switch {
	case err == nil && version == SchemaVersion:
		return nil
	case err == nil:
		// Older or newer layout: the index is a cache, so drop and rebuild.
		if err := ix.dropAll(ctx); err != nil {
			return err
		}
	case errors.Is(err, sql.ErrNoRows) || strings.Contains(err.Error(), "no such table"):
		// New file.
	default:
		if isCorruption(err) {
			return corrupt(ix.path, err)
		}
		return fmt.Errorf("read index schema: %w", err)
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate index: %w", err)
	}
	defer tx.Rollback()
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			if isCorruption(err) {
				return corrupt(ix.path, err)
			}
			return fmt.Errorf("create index schema: %w", err)
		}
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"schema_version": fmt.Sprint(SchemaVersion),
		"cursor_key":     hex.EncodeToString(secret),
	} {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, k, v); err != nil {
			return fmt.Errorf("write index meta: %w", err)
		}
	}
	return tx.Commit()
}

func (ix *Index) dropAll(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT type, name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'docs_fts_%'`)
	if err != nil {
		return fmt.Errorf("drop old index schema: %w", err)
	}
	var names []string
	for rows.Next() {
		var typ, name string
		if rows.Scan(&typ, &name) == nil {
			names = append(names, typ+" "+name)
		}
	}
	rows.Close()
	for _, n := range names {
		parts := strings.SplitN(n, " ", 2)
		if _, err := ix.db.ExecContext(ctx, fmt.Sprintf(`DROP %s IF EXISTS "%s"`, strings.ToUpper(parts[0]), parts[1])); err != nil {
			return fmt.Errorf("drop %s: %w", parts[1], err)
		}
	}
	return nil
}

// schema is the current layout. Docs are the search units (a part's text, a
// tool's input, its output, a session title); docs_fts indexes their token
// streams without storing them again (contentless).
var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS sessions(
		id TEXT PRIMARY KEY,
		root_id TEXT NOT NULL,
		parent_id TEXT NOT NULL DEFAULT '',
		project_id TEXT NOT NULL DEFAULT '',
		directory TEXT NOT NULL DEFAULT '',
		title TEXT NOT NULL DEFAULT '',
		slug TEXT NOT NULL DEFAULT '',
		agent TEXT NOT NULL DEFAULT '',
		version TEXT NOT NULL DEFAULT '',
		era TEXT NOT NULL DEFAULT '',
		created INTEGER NOT NULL DEFAULT 0,
		updated INTEGER NOT NULL DEFAULT 0,
		archived INTEGER NOT NULL DEFAULT 0,
		messages INTEGER NOT NULL DEFAULT 0,
		turns INTEGER NOT NULL DEFAULT 0,
		tool_calls INTEGER NOT NULL DEFAULT 0,
		first_prompt TEXT NOT NULL DEFAULT '',
		stamp TEXT NOT NULL DEFAULT '',
		indexed_at INTEGER NOT NULL DEFAULT 0)`,
	`CREATE INDEX IF NOT EXISTS sessions_updated ON sessions(updated DESC, id)`,
	`CREATE INDEX IF NOT EXISTS sessions_parent ON sessions(parent_id, updated DESC, id)`,
	`CREATE INDEX IF NOT EXISTS sessions_root ON sessions(root_id)`,
	`CREATE TABLE IF NOT EXISTS messages(
		rid INTEGER PRIMARY KEY,
		id TEXT NOT NULL,
		session_id TEXT NOT NULL,
		ord INTEGER NOT NULL,
		role TEXT NOT NULL,
		created INTEGER NOT NULL DEFAULT 0,
		completed INTEGER NOT NULL DEFAULT 0,
		agent TEXT NOT NULL DEFAULT '',
		model TEXT NOT NULL DEFAULT '',
		finish TEXT NOT NULL DEFAULT '',
		error TEXT NOT NULL DEFAULT '',
		summary INTEGER NOT NULL DEFAULT 0,
		parent_id TEXT NOT NULL DEFAULT '')`,
	`CREATE UNIQUE INDEX IF NOT EXISTS messages_ord ON messages(session_id, ord)`,
	`CREATE INDEX IF NOT EXISTS messages_id ON messages(id)`,
	`CREATE TABLE IF NOT EXISTS parts(
		rid INTEGER PRIMARY KEY,
		id TEXT NOT NULL,
		session_id TEXT NOT NULL,
		message_id TEXT NOT NULL,
		msg_ord INTEGER NOT NULL,
		ord INTEGER NOT NULL,
		type TEXT NOT NULL,
		kind TEXT NOT NULL,
		synthetic INTEGER NOT NULL DEFAULT 0,
		text TEXT NOT NULL DEFAULT '',
		text_len INTEGER NOT NULL DEFAULT 0,
		tool TEXT NOT NULL DEFAULT '',
		call_id TEXT NOT NULL DEFAULT '',
		status TEXT NOT NULL DEFAULT '',
		title TEXT NOT NULL DEFAULT '',
		input TEXT NOT NULL DEFAULT '',
		output TEXT NOT NULL DEFAULT '',
		output_len INTEGER NOT NULL DEFAULT 0,
		error TEXT NOT NULL DEFAULT '',
		truncated INTEGER NOT NULL DEFAULT 0,
		compacted INTEGER NOT NULL DEFAULT 0,
		exit_code INTEGER,
		paths TEXT NOT NULL DEFAULT '',
		created INTEGER NOT NULL DEFAULT 0)`,
	`CREATE INDEX IF NOT EXISTS parts_window ON parts(session_id, msg_ord, ord)`,
	`CREATE INDEX IF NOT EXISTS parts_id ON parts(id)`,
	`CREATE TABLE IF NOT EXISTS docs(
		rid INTEGER PRIMARY KEY,
		part_rid INTEGER NOT NULL,
		session_id TEXT NOT NULL,
		root_id TEXT NOT NULL,
		message_id TEXT NOT NULL DEFAULT '',
		part_id TEXT NOT NULL DEFAULT '',
		msg_ord INTEGER NOT NULL DEFAULT -1,
		kind TEXT NOT NULL,
		role TEXT NOT NULL DEFAULT '',
		tool TEXT NOT NULL DEFAULT '',
		synthetic INTEGER NOT NULL DEFAULT 0,
		time INTEGER NOT NULL DEFAULT 0,
		directory TEXT NOT NULL DEFAULT '',
		text TEXT NOT NULL,
		hash TEXT NOT NULL DEFAULT '')`,
	`CREATE INDEX IF NOT EXISTS docs_session ON docs(session_id)`,
	`CREATE INDEX IF NOT EXISTS docs_time ON docs(time DESC)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(body, content='', contentless_delete=1,
		tokenize="porter unicode61 remove_diacritics 2 tokenchars '_'")`,
	`CREATE TABLE IF NOT EXISTS vocab(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS file_touches(path TEXT NOT NULL, session_id TEXT NOT NULL, root_id TEXT NOT NULL, time INTEGER NOT NULL, PRIMARY KEY(path, session_id)) WITHOUT ROWID`,
	// Semantic search (see vectors.go): one vector per distinct embedded
	// text, keyed by a hash of that text so unchanged text is never embedded
	// twice, and which document has which text. The trigger keeps
	// doc_vectors in step with docs without the writer knowing about it.
	`CREATE TABLE IF NOT EXISTS embeddings(hash BLOB PRIMARY KEY, model TEXT NOT NULL, dims INTEGER NOT NULL, vec BLOB NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS doc_vectors(doc_rid INTEGER PRIMARY KEY, hash BLOB NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS doc_vectors_hash ON doc_vectors(hash)`,
	`CREATE TRIGGER IF NOT EXISTS docs_drop_vector AFTER DELETE ON docs BEGIN DELETE FROM doc_vectors WHERE doc_rid = old.rid; END`,
	// Sessions the user asked Recall to forget: never indexed again (the
	// history itself is never touched).
	`CREATE TABLE IF NOT EXISTS forgotten(session_id TEXT PRIMARY KEY, time INTEGER NOT NULL) WITHOUT ROWID`,
}

// Meta reads a meta value ("" when absent).
func (ix *Index) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta writes a meta value.
func (ix *Index) SetMeta(ctx context.Context, key, value string) error {
	_, err := ix.db.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, key, value)
	return err
}
