package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// ApplicationID marks an SQLite file as a Recall index (PRAGMA
// application_id, bytes 68-71 of the header): ASCII "RCLL". It is not in
// SQLite's list of registered ids (magic.txt), and a file without it is
// never written to unless it is a pre-mark index (see legacyLayout).
const ApplicationID = 0x52434c4c

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// ErrRefused marks an index path Recall will not use. Nothing was created,
// written or chmod'ed when it is returned.
var ErrRefused = errors.New("index path refused")

// RefusedError says why a path cannot be the index and what fixes it.
type RefusedError struct {
	Path   string // the index path asked for
	Reason string // what is wrong, naming the offending file
	Fix    string // the command or choice that fixes it
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refusing to use %s as the index: %s; %s", e.Path, e.Reason, e.Fix)
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// notOurs is the refusal for a file that is not provably a Recall index.
func notOurs(path, what string) error {
	return &RefusedError{Path: path, Reason: fmt.Sprintf("it is not a Recall index (%s); Recall writes only files it made, so it left this one untouched", what),
		Fix: "pass another index path (or none, for the default), or remove the file yourself if it is an old Recall index"}
}

// identity is what an existing file at the index path turned out to be.
type identity int

const (
	idMissing identity = iota // no file: create one
	idEmpty                   // zero bytes: nothing to lose (an interrupted create)
	idOurs                    // SQLite with our application_id
	idLegacy                  // application_id 0 with exactly a pre-mark index's layout
)

// identify reads just enough of path to tell whether it is a Recall index,
// without the SQLite driver writing anything (no -wal, -shm or journal).
func identify(ctx context.Context, path string) (identity, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return idMissing, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open index %s: %w", path, err)
	}
	defer f.Close()
	hdr := make([]byte, 100)
	n, err := io.ReadFull(f, hdr)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		if fi, err := os.Lstat(path + "-wal"); err == nil && fi.Size() > 0 {
			return 0, notOurs(path, "an empty file beside a non-empty -wal")
		}
		return idEmpty, nil
	case n < len(hdr) || string(hdr[:16]) != sqliteMagic:
		return 0, notOurs(path, "not an SQLite database")
	}
	switch id := binary.BigEndian.Uint32(hdr[68:72]); id {
	case ApplicationID:
		return idOurs, nil
	case 0:
		if err := legacyLayout(ctx, path); err != nil {
			return 0, err
		}
		return idLegacy, nil
	default:
		return 0, notOurs(path, fmt.Sprintf("the SQLite database of another application, application_id %#x", id))
	}
}

// legacyTables are the tables an index of schema 1 to 4 held: those made
// before the application_id existed. A later schema always has the mark,
// so this list never grows.
var legacyTables = map[string]bool{
	"meta": true, "sessions": true, "messages": true, "parts": true, "docs": true, "docs_fts": true,
	"vocab": true, "file_touches": true, "embeddings": true, "doc_vectors": true, "forgotten": true,
	// FTS5's own tables behind docs_fts.
	"docs_fts_data": true, "docs_fts_idx": true, "docs_fts_docsize": true, "docs_fts_config": true,
}

// legacyRequired are the tables every pre-mark schema had.
var legacyRequired = []string{"meta", "sessions", "messages", "parts", "docs", "docs_fts", "vocab", "file_touches"}

// readTables lists the tables of the SQLite file at path, read with
// immutable=1: no -shm is made and no lock taken, so a file that is then
// refused was never touched.
func readTables(ctx context.Context, path string) ([]string, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

// legacyLayout adopts an index made before the mark only when it is
// certainly one: every table is one of ours, all of schema 1's are there,
// and meta holds a schema_version we made and a 16-byte cursor_key. A
// foreign database matching all of that is not a plausible accident. It is
// read with immutable=1, which creates no -shm and takes no lock, so a
// refused file is never touched; the price is that a pre-mark index whose
// tables are still only in its -wal (killed before its first checkpoint)
// is refused too, with a message saying to remove it.
func legacyLayout(ctx context.Context, path string) error {
	names, err := readTables(ctx, path)
	if err != nil {
		return notOurs(path, "an SQLite database Recall cannot read")
	}
	have := map[string]bool{}
	for _, name := range names {
		if !legacyTables[name] {
			return notOurs(path, fmt.Sprintf("an SQLite database with a table %q that Recall never makes", name))
		}
		have[name] = true
	}
	for _, name := range legacyRequired {
		if !have[name] {
			return notOurs(path, fmt.Sprintf("an SQLite database without Recall's %q table", name))
		}
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return notOurs(path, "an SQLite database Recall cannot read")
	}
	defer db.Close()
	var version, key string
	db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
	db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'cursor_key'`).Scan(&key)
	v, err := strconv.Atoi(version)
	raw, kerr := hex.DecodeString(key)
	if err != nil || v < 1 || v > SchemaVersion || kerr != nil || len(raw) != 16 {
		return notOurs(path, "an SQLite database with Recall's tables but not its meta keys")
	}
	return nil
}

// stamp writes the application_id into a new (or empty) file before
// anything else, in rollback-journal mode, so the mark sits in the main
// file from the first write on and never only in a -wal.
func stamp(ctx context.Context, path string) error {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(10000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, ApplicationID))
	return err
}

// MoveAside renames a damaged index, with its -wal and -shm, to
// <path>.damaged-<UTC time> so nothing is deleted, and returns the new
// name. It refuses a file that does not carry Recall's mark.
func MoveAside(path string) (string, error) {
	if id, err := identify(context.Background(), path); err != nil {
		return "", err
	} else if id != idOurs && id != idEmpty {
		return "", notOurs(path, "no Recall mark")
	}
	base := path + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
	dst := base
	for i := 2; exists(dst) || exists(dst+"-wal") || exists(dst+"-shm"); i++ {
		dst = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("move the damaged index %s aside: %w; move or delete it by hand", path, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+suffix, dst+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return dst, fmt.Errorf("move %s%s aside: %w; delete it by hand", path, suffix, err)
		}
	}
	return dst, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// SQLite result codes Recall explains (https://sqlite.org/rescode.html).
const (
	sqliteReadOnly = 8
	sqliteFull     = 13
)

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// IsDiskFull reports a write that failed for want of space.
func IsDiskFull(err error) bool {
	return err != nil && (sqliteCode(err) == sqliteFull || errors.Is(err, syscall.ENOSPC))
}

// ExplainWrite turns a failed write to the index at path into what the
// user can do about it: a full disk or read-only storage say so and name
// the path; any other error is returned as it is.
func ExplainWrite(path string, err error) error {
	switch {
	case err == nil:
		return nil
	case IsDiskFull(err):
		return fmt.Errorf("disk full: the index %s cannot grow; free some space on its disk (or pass --index with a path on another disk) and run the command again; what was indexed before is intact (%w)", path, err)
	case sqliteCode(err) == sqliteReadOnly || errors.Is(err, syscall.EROFS):
		return readOnlyError(path, err)
	}
	return err
}

// ErrReadOnly marks a write to an index opened read-only.
var ErrReadOnly = errors.New("index is read-only")

func readOnlyError(path string, err error) error { return &readOnlyErr{path: path, err: err} }

type readOnlyErr struct {
	path string
	err  error // the failed write, if any
}

func (e *readOnlyErr) Error() string {
	msg := fmt.Sprintf("the index %s is read-only (read-only storage, or a mode that forbids writing), so it cannot be updated; answer from it as it is with --no-sync, or pass --index with a writable path", e.path)
	if e.err != nil {
		msg += " (" + e.err.Error() + ")"
	}
	return msg
}

func (e *readOnlyErr) Unwrap() []error {
	if e.err == nil {
		return []error{ErrReadOnly}
	}
	return []error{ErrReadOnly, e.err}
}
