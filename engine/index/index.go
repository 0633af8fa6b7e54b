// Package index keeps Recall's own SQLite file: normalised sessions,
// messages and parts, the FTS5 search documents, the vocabulary for typo
// tolerance, the per-session sync stamps and the stored vectors. All of
// Recall's SQL is here (the source readers' aside): the rest of the engine
// asks through its methods, and a query.Filter is compiled to SQL here. It
// is a cache of the source: deletable and rebuildable at any time.
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
	"syscall"
	"time"

	"github.com/recallhq/recall/engine/redact"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// SchemaVersion is bumped whenever the layout or the text processing
// changes; an index with another version is migrated or rebuilt.
const SchemaVersion = 9

// additive are the statements that take an index of an earlier version to
// SchemaVersion without rebuilding it. Version 8 added doc_lens, whose
// chunks the next write builds; version 9 writes its rows a byte a rowid
// (lensFormat), and reads the rows of version 8 until the next write
// builds them again, so it adds nothing to version 8. A binary of version 8
// rebuilds an index of version 9, whose rows it would misread.
var additive = map[int][]string{7: {docLensTable, docLensTrigger, docLensTodo}, 8: {}}

// ErrCorrupt marks an index file of ours that is damaged; the caller moves
// it aside (MoveAside) and rebuilds it.
var ErrCorrupt = errors.New("index is corrupt")

// Index is an open index file.
type Index struct {
	db       *sql.DB
	path     string
	readOnly bool // on read-only storage: queries only
	// redactor cleans text before it is tokenized into the FTS index and
	// the vocabulary, so a secret can never be found by searching for it,
	// and keeps the cuts of long texts out of secrets (see bound).
	redactor *redact.Redactor
	stmts    stmtCache // the search path's prepared statements
	lens     lensCache // doc_lens chunks read (recall_bm25)
	// readCache is the cache_size its connections read with:
	// pageCacheSize, or oneCommandCache (Options.OneCommand). A writer
	// reads and writes with pageCacheSize (beginWrite).
	readCache int
	// uncancelled: query and queryRow run their statements without the
	// context's cancellation (Options.OneCommand; see readContext).
	uncancelled bool
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

// Path is the index file.
func (ix *Index) Path() string { return ix.path }

// Options tune OpenWith.
type Options struct {
	// PrivateDir says the index directory is Recall's own (the default
	// one, created 0700): group/others may not even list it.
	PrivateDir bool
	// OneCommand is a process that runs one command and exits (the
	// CLI): it reads through a page cache of oneCommandCache pages,
	// recall_bm25 reads doc_lens in place (lensCache.inPlace), and a read
	// statement, once started, runs to its end (readContext). There is
	// no later command to keep pages or chunks for.
	OneCommand bool
}

// Open opens or creates the index at path with default Options.
func Open(ctx context.Context, path string) (*Index, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith opens or creates the index at path (mode 0600, WAL so readers
// never wait for the writer) and brings its schema up to date.
//
// It writes only to a file it can prove is an index: one it creates (with
// O_EXCL), one with Recall's application_id, an empty one, or a pre-mark
// index (see legacyLayout). Anything else, and an index or directory other
// users could read or write, is refused with a *RefusedError (ErrRefused)
// before a byte is written. An index on read-only storage opens read-only
// (ReadOnly). Damage to an index of ours returns an error wrapping
// ErrCorrupt.
func OpenWith(ctx context.Context, path string, o Options) (*Index, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create index dir %s: %w", dir, explainCreate(err))
		}
	}
	id, readOnly, err := claim(ctx, path, o)
	if err != nil {
		return nil, err
	}
	readCache := pageCacheSize
	if o.OneCommand {
		readCache = oneCommandCache
	}
	db, err := openDB(ctx, path, readOnly, readCache)
	if err != nil {
		return nil, err
	}
	ix := &Index{db: db, path: path, readOnly: readOnly, readCache: readCache, uncancelled: o.OneCommand}
	ix.lens.inPlace = o.OneCommand
	if err := ix.checkLayout(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if !readOnly {
		// WAL is a property of the file (it persists), so it is set once
		// here, after the layout was checked, and not in the DSN, which
		// would switch a refused file to WAL before the check ran.
		if _, err := db.ExecContext(ctx, `PRAGMA journal_mode = wal`); err != nil {
			db.Close()
			return nil, ExplainWrite(path, ix.readError(err))
		}
	}
	if err := ix.migrate(ctx, id); err != nil {
		db.Close()
		return nil, ExplainWrite(path, err)
	}
	return ix, nil
}

// claim decides whether path may be the index and readies it. An existing
// file is identified first (a foreign file gets "not a Recall index", not
// advice to chmod it), then its owner and mode, the files beside it and
// the directory are checked; a missing file is created with O_EXCL and
// stamped with the application_id.
func claim(ctx context.Context, path string, o Options) (identity, bool, error) {
	for attempt := 0; ; attempt++ {
		id := idMissing
		fi, err := os.Lstat(path)
		switch {
		case err == nil:
			if !fi.Mode().IsRegular() {
				return 0, false, checkOwnFile(path, path, fi) // a symlink or not a file: never read through it
			}
			if id, err = identify(ctx, path); err != nil {
				return 0, false, err
			}
			if err := checkExisting(path); err != nil {
				return 0, false, err
			}
		case !errors.Is(err, os.ErrNotExist):
			return 0, false, fmt.Errorf("index %s: %w", path, err)
		default:
			if err := checkSideFiles(path); err != nil {
				return 0, false, err
			}
		}
		if err := checkDir(path, filepath.Dir(path), o.PrivateDir); err != nil {
			return 0, false, err
		}
		switch id {
		case idMissing:
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
			if errors.Is(err, os.ErrExist) && attempt == 0 {
				continue // another process made it first: judge that file
			}
			if err != nil {
				return 0, false, fmt.Errorf("create index %s: %w", path, explainCreate(err))
			}
			f.Close()
			if err := stamp(ctx, path); err != nil {
				// Ours: made by the O_EXCL open above.
				os.Remove(path)
				os.Remove(path + "-journal")
				return 0, false, fmt.Errorf("create index %s: %w", path, ExplainWrite(path, err))
			}
			return idOurs, false, nil
		case idEmpty:
			if err := stamp(ctx, path); err != nil {
				return 0, false, fmt.Errorf("create index %s: %w", path, ExplainWrite(path, err))
			}
			return idOurs, false, nil
		}
		f, err := openNoFollow(path, os.O_RDWR)
		if err != nil {
			if isReadOnlyErr(err) {
				return id, true, nil
			}
			return 0, false, fmt.Errorf("open index %s: %w", path, err)
		}
		f.Close()
		return id, false, nil
	}
}

// explainCreate says what to do when a new index cannot be made: there is
// nothing to answer from yet, so --no-sync would not help.
func explainCreate(err error) error {
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("%w; pass --index with a path on a writable disk", err)
	case IsDiskFull(err):
		return fmt.Errorf("disk full (%w); free some space there or pass --index with a path on another disk", err)
	}
	return err
}

// pageCacheSize is each connection's page cache (cache_size: negative,
// in KiB) in a long-running process, and a writer's in any.
const pageCacheSize = -16000

// oneCommandCache is the page cache, in pages, that a process running
// one command reads with (Options.OneCommand). Such a process reads a
// few hundred pages once each (a search's 400 candidates' rows and
// texts): in a cache that keeps them every page is a new buffer, fresh
// memory whose first touch is a page fault, and a mapped file costs a
// fault a page too, where a read() of a page in the OS's cache costs an
// eighth of one on the benchmark VM (tools/pagecost). 25 pages keep the
// B-trees' upper pages, and the few buffers are used again and again:
// CLI search at 845k parts p50 / p95 67.9 / 83.1 ms mapped -> 50.9 / 63.4,
// peak RSS 61 -> 19 MB; 10 and 50 pages within a millisecond of 25
// (docs/benchmarks.md, "A small page cache, not a mapped index").
const oneCommandCache = 25

// openDB opens the driver's handle: read-write in WAL mode, or read-only;
// its connections read through a page cache of cacheSize (cache_size).
func openDB(ctx context.Context, path string, readOnly bool, cacheSize int) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Path: path}
	q := url.Values{}
	if readOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "synchronous(normal)")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(off)")
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", cacheSize))
	// Never mapped: a page fault a page touched (see oneCommandCache),
	// and a server's RSS would hold every page it touched.
	q.Add("_pragma", "mmap_size(0)")
	q.Add("_pragma", "temp_store(memory)")
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	if !readOnly {
		return db, nil
	}
	// A WAL index on read-only storage has no -shm (the last writer removed
	// it) and none can be made; nothing can write there either, so reading
	// it as immutable is safe (what the source reader does too).
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err == nil || !cannotOpen(err) {
		return db, nil
	}
	db.Close()
	q.Set("immutable", "1")
	u.RawQuery = q.Encode()
	db, err = sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	return db, nil
}

// cannotOpen reports SQLITE_CANTOPEN (14) or SQLITE_READONLY (8): a WAL
// file that cannot be made on read-only storage.
func cannotOpen(err error) bool {
	c := sqliteCode(err)
	return c == 14 || c == sqliteReadOnly || strings.Contains(err.Error(), "unable to open")
}

// ReleaseMemory closes the connections no query is using, and with them
// their page caches (up to cache_size each): after a large write a process
// that goes on to sync another history need not hold this one's. The next
// query opens a connection again (about a millisecond).
func (ix *Index) ReleaseMemory() {
	ix.db.SetMaxIdleConns(0)
	ix.db.SetMaxIdleConns(2) // database/sql's default
}

// ReadOnly reports an index opened read-only (it is on read-only storage):
// it answers queries; every write fails.
func (ix *Index) ReadOnly() bool { return ix.readOnly }

// ReadOnlyError is the error for a write to a read-only index.
func (ix *Index) ReadOnlyError() error { return readOnlyError(ix.path, nil) }

// Close closes the index.
func (ix *Index) Close() error {
	ix.closeStmts()
	return ix.db.Close()
}

func corrupt(path string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
}

// IsCorruption reports an error that means the index file is damaged.
func IsCorruption(err error) bool {
	return err != nil && !errors.Is(err, ErrRefused) && !errors.Is(err, ErrReadOnly) && isCorruption(err)
}

func isCorruption(err error) bool {
	if c := sqliteCode(err); c != 0 {
		return c == 11 || c == 26 // SQLITE_CORRUPT, SQLITE_NOTADB
	}
	msg := err.Error()
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") ||
		strings.Contains(msg, "(26)") || strings.Contains(msg, "(11)") || strings.Contains(msg, "corrupt")
}

// schemaLockWait bounds how long a new index's schema creation waits for
// the writer lock: another process creating the same index holds it for
// its first sync, which the engine also waits up to two minutes for.
const schemaLockWait = 2 * time.Minute

func (ix *Index) migrate(ctx context.Context, id identity) error {
	// No PRAGMA quick_check here: it walks the whole file (and every FTS5
	// segment), seconds on a large index, on every command. Damage shows up
	// as an SQLITE_CORRUPT error on first use instead, and the engine
	// rebuilds then (see Engine.Sync).
	version, err := ix.schemaVersion(ctx)
	switch {
	case err == nil && version == SchemaVersion:
		if err := ix.keepDocCount(ctx); err != nil {
			return err
		}
		return ix.adopt(ctx, id)
	case err != nil && !errors.Is(err, errNoSchema):
		return err
	case ix.readOnly && additive[version] != nil:
		// The version before, which cannot be given what it lacks here: it
		// answers as it is (recall_bm25 reads docsize without doc_lens).
		return nil
	case ix.readOnly:
		return fmt.Errorf("the index %s needs its schema built or upgraded (schema %d, want %d), which read-only storage does not allow; run once with the index on a writable disk, or pass --index with a path on one", ix.path, version, SchemaVersion)
	}
	lctx, cancel := context.WithTimeout(ctx, schemaLockWait)
	lock, err := LockWriter(lctx, ix.path)
	cancel()
	if err != nil {
		return err
	}
	defer lock.Unlock()
	// Another process may have built it while we waited.
	version, err = ix.schemaVersion(ctx)
	switch {
	case err == nil && version == SchemaVersion:
		return ix.adopt(ctx, id)
	case err == nil && additive[version] != nil:
		// The version before: add what it lacks, keeping what it holds.
		if err := ix.addToSchema(ctx, additive[version]); err != nil {
			return err
		}
		return ix.adopt(ctx, id)
	case err == nil:
		// Older or newer layout of ours: the index is a cache, so drop and
		// rebuild.
		if err := ix.dropAll(ctx); err != nil {
			return err
		}
	case !errors.Is(err, errNoSchema):
		return err
	default:
		// No meta table yet: a new file, unless something else lives in it.
		var n int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n); err != nil {
			return ix.readError(err)
		}
		if n > 0 {
			return notOurs(ix.path, "it has Recall's mark and tables but no schema_version")
		}
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
		"lens_format":    fmt.Sprint(lensFormat),
	} {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, k, v); err != nil {
			return fmt.Errorf("write index meta: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create index schema: %w", err)
	}
	return ix.adopt(ctx, id)
}

// addToSchema runs stmts and records SchemaVersion, in one transaction.
func (ix *Index) addToSchema(ctx context.Context, stmts []string) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate index: %w", err)
	}
	defer tx.Rollback()
	for _, stmt := range append(stmts, fmt.Sprintf(`UPDATE meta SET value = '%d' WHERE key = 'schema_version'`, SchemaVersion)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			if isCorruption(err) {
				return corrupt(ix.path, err)
			}
			return fmt.Errorf("migrate index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate index: %w", err)
	}
	return nil
}

// checkLayout refuses a file with Recall's mark that holds a table Recall
// never makes: the mark alone could have been copied, and a Recall index
// never holds anyone else's data. It only reads (no WAL switch yet), so a
// refused file is left as it was. Damage that stops the read is ErrCorrupt:
// the file is ours by its mark.
func (ix *Index) checkLayout(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return ix.readError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return ix.readError(err)
		}
		if !schemaTables[name] && !legacyTables[name] {
			return notOurs(ix.path, fmt.Sprintf("it has Recall's mark but a table %q that Recall never makes", name))
		}
	}
	if err := rows.Err(); err != nil {
		return ix.readError(err)
	}
	return nil
}

// errNoSchema means the file has no schema_version yet.
var errNoSchema = errors.New("no index schema")

func (ix *Index) schemaVersion(ctx context.Context) (int, error) {
	var version int
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
	switch {
	case err == nil:
		return version, nil
	case errors.Is(err, sql.ErrNoRows) || strings.Contains(err.Error(), "no such table"):
		return 0, errNoSchema
	}
	return 0, ix.readError(err)
}

func (ix *Index) readError(err error) error {
	if isCorruption(err) {
		return corrupt(ix.path, err)
	}
	return fmt.Errorf("read index %s: %w", ix.path, err)
}

// keepDocCount starts meta's doc_count (DocCount) in an index written
// before writes kept it, once: without it every search counts the docs
// table. One INSERT ... SELECT is atomic, so a sync writing at the same
// time cannot make it wrong; when the index is busy the next open tries
// again, and DocCount counts meanwhile.
func (ix *Index) keepDocCount(ctx context.Context) error {
	if ix.readOnly {
		return nil
	}
	var v string
	err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'doc_count'`).Scan(&v)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return nil // kept, or DocCount will say what is wrong
	}
	if _, err := ix.db.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) SELECT 'doc_count', CAST(count(*) AS TEXT) FROM docs`); err != nil && isCorruption(err) {
		return corrupt(ix.path, err)
	}
	return nil
}

// MergeFullText merges the full-text index into one segment (FTS5's
// optimize) and truncates the WAL it wrote. A bulk load leaves a handful of
// segments that every match walks; merged, search p95 on the 4.2M-part
// history was 11-18% lower (docs/benchmarks.md). Hold the WriterLock: it
// writes the whole full-text index once (30 s there, 7.5 s at 845k parts).
func (ix *Index) MergeFullText(ctx context.Context) error {
	// Merging as segments are flushed comes back first (FTS5's default,
	// 4), whatever a bulk load set (Writer.DeferMerges).
	for _, q := range []string{
		`INSERT INTO docs_fts(docs_fts, rank) VALUES('automerge', 4)`,
		`INSERT INTO docs_fts(docs_fts, rank) VALUES('crisismerge', 16)`,
	} {
		if _, err := ix.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("merge the full-text index: %w", err)
		}
	}
	if _, err := ix.db.ExecContext(ctx, `INSERT INTO docs_fts(docs_fts) VALUES('optimize')`); err != nil {
		return fmt.Errorf("merge the full-text index: %w", err)
	}
	// The merge's pages went through the WAL: give the disk back.
	if _, err := ix.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint the index: %w", err)
	}
	return nil
}

// PackDocLens rewrites doc_lens in chunk order onto consecutive pages.
// Its rows are written one chunk per commit as the history is read, so
// after a bulk load each lies on a page of its own among every other
// table's (the 3,484 of the 4.2M-part index were spread over its whole
// 4.2 GB), and a fresh process that reads them (a CLI search whose match
// spans the history) took a page fault for each. Packed, the kernel maps
// their neighbours on the same fault (docs/benchmarks.md, "doc_lens in a
// fresh process"). SQLite takes new pages from the free list first, which
// would scatter the rows again, so the free list is first taken up by a
// table of filler, dropped again after (when it holds over packFillMax
// pages the rows are packed without it). The chunks are the same, so
// lens_gen stays. Hold the WriterLock; it runs after a bulk load.
func (ix *Index) PackDocLens(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("pack document lengths: %w", err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("pack document lengths: %w", err)
		}
		return nil
	}
	if err := exec(`CREATE TABLE doc_lens_fill(b BLOB)`); err != nil {
		return err
	}
	for range 4 { // a row a page, and interior pages besides: rarely a second round
		var free int
		if err := tx.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
			return fmt.Errorf("pack document lengths: %w", err)
		}
		if free == 0 || free > packFillMax {
			break
		}
		if err := exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO doc_lens_fill SELECT zeroblob(3000) FROM n`, free); err != nil {
			return err
		}
	}
	for _, q := range []string{
		// The trigger names doc_lens: without it while the table is
		// replaced, no rename has to rewrite it.
		`DROP TRIGGER IF EXISTS docs_drop_lens`,
		`CREATE TABLE doc_lens_packed(chunk INTEGER PRIMARY KEY, lens BLOB NOT NULL)`,
		`INSERT INTO doc_lens_packed SELECT chunk, lens FROM doc_lens ORDER BY chunk`,
		`DROP TABLE doc_lens`,
		`DROP TABLE doc_lens_fill`,
		`ALTER TABLE doc_lens_packed RENAME TO doc_lens`,
		docLensTodo,
		docLensTrigger,
	} {
		if err := exec(q); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("pack document lengths: %w", err)
	}
	return nil
}

// packFillMax is the largest free list PackDocLens takes up with filler
// (256 MB of pages written once more).
const packFillMax = 1 << 16

// AddMissingIndexes makes the schema's secondary indexes an index made
// before them lacks (an index added to the schema needs no change of
// SchemaVersion, which would rebuild every user's index), and those a
// bulk load deferred (Writer.DeferIndexes). Hold the WriterLock: making
// one writes (file_touches_session: 0.25 s of CPU at 845k parts); once
// made, this is one read of the schema.
func (ix *Index) AddMissingIndexes(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index'`)
	if err != nil {
		return ix.readError(err)
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return ix.readError(err)
		}
		have[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ix.readError(err)
	}
	var missing []string
	for _, stmt := range schema {
		var name string
		if _, err := fmt.Sscanf(stmt, "CREATE INDEX IF NOT EXISTS %s", &name); err == nil && !have[name] {
			missing = append(missing, stmt)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// Each index is made by sorting its table's keys: in memory up to
	// cache_size, then in temporary files. Those were the process's
	// memory too (temp_store as opened), 35-42 MB more peak RSS at 845k
	// parts and growing with the history; on disk they are the page
	// cache's, and a smaller cache bounds the sort's own memory. The
	// connection is closed after, with the pages its reading filled.
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return ix.readError(err)
	}
	defer ix.ReleaseMemory()
	defer conn.Close()
	for _, stmt := range append(append([]string{`PRAGMA temp_store = FILE`, `PRAGMA cache_size = -4000`}, missing...),
		`PRAGMA temp_store = MEMORY`, fmt.Sprintf(`PRAGMA cache_size = %d`, ix.readCache)) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("add indexes to %s (%s): %w", ix.path, stmt, err)
		}
	}
	return nil
}

// deferredIndexes are the secondary indexes a bulk load into an empty
// index makes once it is written (Writer.DeferIndexes): those of the
// tables that grow with every part, whose keys arrive out of their order
// (a session's parts by id, the vocabulary's words), and which nothing
// the writer does reads through. A unique index stays: it is a check,
// not only a way in. CLI cold index at 4.2M parts, the two binaries in
// turn, three pairs: 14%, 14% and 7% less time, 5-12% less CPU; at 845k
// parts within the noise (docs/benchmarks.md, "Indexes made after a bulk
// load").
var deferredIndexes = []string{"messages_id", "parts_window", "parts_id", "docs_session", "docs_time", "vocab_words"}

// adopt stamps a pre-mark index with the application_id, and checkpoints
// so the mark reaches the main file (the only place identify reads it).
// On read-only storage it stays unmarked and is adopted again next time.
func (ix *Index) adopt(ctx context.Context, id identity) error {
	if id != idLegacy || ix.readOnly {
		return nil
	}
	if _, err := ix.db.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, ApplicationID)); err != nil {
		return fmt.Errorf("mark index %s: %w", ix.path, err)
	}
	if _, err := ix.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("mark index %s: %w", ix.path, err)
	}
	return nil
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
	// The words of the vocabulary (TypoVocabulary), which a search with a
	// typo reads whole: without it each such CLI search scanned every term
	// (54k at 845k parts, 9 in 10 of them identifiers and numbers) for the
	// 6k words. Indexes made before it get it from AddMissingIndexes.
	`CREATE INDEX IF NOT EXISTS vocab_words ON vocab(term, df) WHERE ` + typoWords,
	`CREATE TABLE IF NOT EXISTS file_touches(path TEXT NOT NULL, session_id TEXT NOT NULL, root_id TEXT NOT NULL, time INTEGER NOT NULL, PRIMARY KEY(path, session_id)) WITHOUT ROWID`,
	// A re-read or deleted session's touches are found by session: without
	// it each such sync scanned the whole table (142k rows, ~40 ms, at
	// 845k parts). Indexes made before it get it from AddMissingIndexes.
	`CREATE INDEX IF NOT EXISTS file_touches_session ON file_touches(session_id)`,
	// Semantic search (see vectors.go): one vector per distinct embedded
	// text, keyed by a hash of that text so unchanged text is never embedded
	// twice, and which document has which text. The trigger keeps
	// doc_vectors in step with docs without the writer knowing about it.
	`CREATE TABLE IF NOT EXISTS embeddings(hash BLOB PRIMARY KEY, model TEXT NOT NULL, dims INTEGER NOT NULL, vec BLOB NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS doc_vectors(doc_rid INTEGER PRIMARY KEY, hash BLOB NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS doc_vectors_hash ON doc_vectors(hash)`,
	`CREATE TRIGGER IF NOT EXISTS docs_drop_vector AFTER DELETE ON docs BEGIN DELETE FROM doc_vectors WHERE doc_rid = old.rid; END`,
	// Each document's length in tokens, 1,024 rowids a row (see
	// index.docLens), for BM25: denser than docsize, which it copies.
	docLensTable,
	docLensTrigger,
	docLensTodo,
	// Sessions the user asked Recall to forget: never indexed again (the
	// history itself is never touched).
	`CREATE TABLE IF NOT EXISTS forgotten(session_id TEXT PRIMARY KEY, time INTEGER NOT NULL) WITHOUT ROWID`,
}

// doc_lens and the trigger that empties a chunk when one of its
// documents goes (the next write builds it again: Writer.refreshDocLens),
// so a length doc_lens holds is always the document's at that rowid, and
// bumps lens_gen.
const (
	docLensTable   = `CREATE TABLE IF NOT EXISTS doc_lens(chunk INTEGER PRIMARY KEY, lens BLOB NOT NULL)`
	docLensTrigger = `CREATE TRIGGER IF NOT EXISTS docs_drop_lens AFTER DELETE ON docs BEGIN
		UPDATE doc_lens SET lens = x'' WHERE chunk = old.rid >> 10 AND lens <> x'';
		` + bumpLensGen + `;
	END`
	// docLensTodo finds the chunks the trigger emptied without reading the
	// others (about 1 KB each).
	docLensTodo = `CREATE INDEX IF NOT EXISTS doc_lens_todo ON doc_lens(chunk) WHERE lens = x''`
	// bumpLensGen tells the engines that keep doc_lens chunks in memory
	// (lensCache) that a rowid may now name another document.
	bumpLensGen = `INSERT INTO meta(key, value) VALUES ('lens_gen', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`
)

// schemaTables are the tables the current schema makes, with the shadow
// tables SQLite keeps behind each FTS5 table.
var schemaTables = func() map[string]bool {
	m := map[string]bool{}
	for _, stmt := range schema {
		stmt = strings.TrimSpace(stmt)
		if rest, ok := strings.CutPrefix(stmt, "CREATE TABLE IF NOT EXISTS "); ok {
			if i := strings.IndexAny(rest, "( \n\t"); i >= 0 {
				rest = rest[:i]
			}
			m[rest] = true
		} else if rest, ok := strings.CutPrefix(stmt, "CREATE VIRTUAL TABLE IF NOT EXISTS "); ok {
			name := strings.Fields(rest)[0]
			for _, shadow := range []string{"", "_data", "_idx", "_docsize", "_config", "_content"} {
				m[name+shadow] = true
			}
		}
	}
	return m
}()

// Meta reads a meta value ("" when absent).
func (ix *Index) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := ix.queryRow(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
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
