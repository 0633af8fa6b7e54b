// Package opencode reads OpenCode's history, strictly read-only, from every
// storage era a user may have (the message/part tables, the event-sourced
// session_message rows of the v2 engine, and the legacy JSON tree) and yields
// one normalised model.
package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/source"
)

// The OpenCode reader is a source.Source.
var _ source.Source = (*Source)(nil)

// Storage eras, as reported by Eras and stored on each session.
const (
	EraV1   = "v1"   // session/message/part tables
	EraV2   = "v2"   // session_message rows (OpenCode's v2 engine)
	EraJSON = "json" // legacy storage/ JSON tree
)

// busyWait is how long a read waits for a writer's lock before the
// command answers from the index instead. Only a database in rollback-
// journal mode locks readers out (WAL readers never wait), and there a
// lock lasts one commit: measured on the v1 fixture (ext4 on a virtual
// disk, synchronous=FULL, a 50 KB part update plus an insert, 50 commits)
// the exclusive lock was held 2.7 ms median, 5.7 ms p95, 28 ms at most.
// 500 ms is well over a burst of such commits, and Open and the first read
// of a sync each wait it at most, so a locked history costs a command about
// a second, not the 5 s it used to fail after.
const busyWait = 500 * time.Millisecond

// maxWarnings bounds the warnings kept for display; the count is exact.
const maxWarnings = 50

// walHeaderSize is the size of a WAL file with no frames: anything longer
// holds changes not yet copied into the database file.
const walHeaderSize = 32

// Source is an open, read-only view of one OpenCode data location.
type Source struct {
	path       string // what the user named: a database file or a data dir
	dbPath     string // the SQLite database, "" when only the JSON tree exists
	storageDir string // legacy storage/ tree, "" when absent
	db         *sql.DB
	id         source.Identity
	immutable  bool   // opened with immutable=1: sees no WAL and no later writes
	notice     string // why some of the history is not visible, "" when all is

	// probeMu guards opening and the schema probe: a source from
	// OpenLazily is opened by its first read, and a history locked at Open
	// is probed again by it.
	probeMu sync.Mutex
	lazy    bool // from OpenLazily, not opened yet
	probed  bool
	hasV1   bool
	hasV2   bool
	// hasEvents: the history keeps OpenCode's event log, which the change
	// tracking relies on (changes.go).
	hasEvents bool

	mu       sync.Mutex
	skipped  int
	warnings []model.Warning
}

// Open opens the history at path (an opencode.db file or an OpenCode data
// directory) without ever creating or writing a file. A database locked by
// a writer opens; its first read waits for the lock again and reports
// source.ErrLocked if it is still held.
func Open(ctx context.Context, path string) (*Source, error) {
	s, err := OpenLazily(path)
	if err != nil || !s.lazy {
		return s, err
	}
	s.lazy = false // the identity is the one open reads, as it opens
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenLazily is Open without opening the database: it finds the history,
// reads its identity and decides how it will be read (a stat or two and
// the file's first 100 bytes, no query), and the first read or Check opens
// it. An engine opens its history so when its index's last sync read this
// very file and nothing has changed since (the fingerprint): a command
// answered from the index alone then never opens the history. Opening it
// (a connection, its first statement reading the schema, the probe's two
// queries) was 5% of a CLI search's CPU at 845k parts, most of which the
// index's connection pays instead once it is the first; `sessions --limit
// 20` gained 1.5 ms (docs/benchmarks.md, "What a CLI process pays besides
// its search").
func OpenLazily(path string) (*Source, error) {
	s, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if s.dbPath == "" {
		if s.id, err = dirIdentity(s.storageDir); err != nil {
			return nil, err
		}
		return s, nil
	}
	h, id, err := readHeader(s.dbPath)
	if err != nil {
		return nil, err
	}
	s.id, s.lazy = id, true
	s.chooseMode(h)
	return s, nil
}

// Check opens the database now if no read has yet (OpenLazily) and
// reports what Open would have: a file that is not OpenCode's, a damaged
// one, one replaced since OpenLazily read its identity.
func (s *Source) Check(ctx context.Context) error { return s.ready(ctx) }

// open opens the database and probes it. A rename between reading the
// identity and SQLite opening the file would leave the handle on another
// file than the identity names: the identity is read again once the
// handle is open.
func (s *Source) open(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		if err := s.openDB(ctx); err != nil {
			return err
		}
		_, now, err := readHeader(s.dbPath)
		if err == nil && now.Equal(s.id) {
			return nil
		}
		s.db.Close()
		s.db = nil
		if attempt == 3 {
			return fmt.Errorf("open %s: the file was replaced while being opened, three times; retry once whatever is replacing it is done", s.dbPath)
		}
	}
}

// openLazily opens a source from OpenLazily: the file it reads must be the
// one whose identity OpenLazily read. The engine compared that identity
// with the file at the path just before (its sync's reopenSource) and
// opens the new file itself when they differ; one replaced in between
// fails this command, and the next opens the new file.
func (s *Source) openLazily(ctx context.Context) error {
	want := s.id
	if err := s.open(ctx); err != nil {
		s.id = want
		return err
	}
	if !s.id.Equal(want) {
		s.db.Close()
		s.db, s.id = nil, want
		return fmt.Errorf("%s was replaced while Recall was opening it; run the command again", s.dbPath)
	}
	s.lazy = false
	return nil
}

// resolve finds what path holds: the database and the legacy JSON tree.
func resolve(path string) (*Source, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{Tried: []string{path}}
		}
		return nil, fmt.Errorf("open history %s: %w", path, err)
	}
	s := &Source{path: path}
	dir := path
	if !st.IsDir() {
		s.dbPath = path
		dir = filepath.Dir(path)
	} else if db := filepath.Join(path, "opencode.db"); fileExists(db) {
		s.dbPath = db
	}
	if hasLegacyTree(dir) {
		s.storageDir = filepath.Join(dir, "storage")
	}
	if s.dbPath == "" && s.storageDir == "" {
		return nil, &NotFoundError{Tried: []string{path}}
	}
	return s, nil
}

// openDB opens the database read-only. SQLite's read-only mode still
// creates -wal and -shm beside a WAL database that lacks them (OpenCode
// removes both when it exits), so unless both exist the file is opened
// immutable: without a WAL the main file holds everything; with a WAL but
// no -shm, the WAL's changes are not visible, and Notice says so.
func (s *Source) openDB(ctx context.Context) error {
	h, id, err := readHeader(s.dbPath)
	if err != nil {
		return err
	}
	s.id = id
	if immutable, walHidden := s.chooseMode(h); immutable {
		return s.openImmutable(ctx, walHidden)
	}
	db, err := s.sqlOpen(false)
	if err != nil {
		return err
	}
	err = s.probe(ctx, db)
	switch {
	case err == nil || errors.Is(err, source.ErrLocked):
		s.db = db
		return nil
	case isUnreadable(err):
		// A -shm that exists but cannot be opened (another user's file on
		// a folder read-only to us).
		db.Close()
		_, walHidden := s.walState()
		return s.openImmutable(ctx, walHidden)
	default:
		db.Close()
		return err
	}
}

// chooseMode decides from the header and the files beside the database
// whether it must be read immutable (see openDB), and sets Immutable and
// Notice to say so; walHidden is a WAL holding changes such a read cannot
// see.
func (s *Source) chooseMode(h *sqliteHeader) (immutable, walHidden bool) {
	hasShm, walHidden := s.walState()
	immutable = h.walMode() && (!fileExists(s.dbPath+"-wal") || !hasShm)
	s.immutable, s.notice = immutable, ""
	if immutable && walHidden {
		s.notice = s.walHiddenNotice()
	}
	return immutable, walHidden
}

// walState reports whether the database's -shm exists and whether its WAL
// holds frames (changes not yet in the main file).
func (s *Source) walState() (hasShm, walFrames bool) {
	wal, hasWAL := fileSize(s.dbPath + "-wal")
	return fileExists(s.dbPath + "-shm"), hasWAL && wal > walHeaderSize
}

// openImmutable reads the main file only. Such a handle sees no later
// write, so an engine reopens it before each sync (Immutable).
func (s *Source) openImmutable(ctx context.Context, walHidden bool) error {
	db, err := s.sqlOpen(true)
	if err != nil {
		return err
	}
	if err := s.probe(ctx, db); err != nil {
		db.Close()
		return err
	}
	s.db, s.immutable = db, true
	if walHidden {
		s.notice = s.walHiddenNotice()
	}
	return nil
}

func (s *Source) walHiddenNotice() string {
	why := "which is missing, and Recall never creates files beside your history"
	if unix.Access(filepath.Dir(s.dbPath), unix.W_OK) != nil {
		why = "which is missing or unreadable, and the folder is read-only to Recall"
	}
	return fmt.Sprintf("recent changes in %s-wal are not visible: reading them needs %s-shm, %s; they appear once OpenCode opens the history again", s.dbPath, s.dbPath, why)
}

func (s *Source) sqlOpen(immutable bool) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Path: s.dbPath}
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyWait.Milliseconds()))
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.dbPath, err)
	}
	db.SetMaxOpenConns(2)
	return db, nil
}

func isUnreadable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "unable to open") || strings.Contains(msg, "readonly") ||
		strings.Contains(msg, "SQLITE_CANTOPEN") || strings.Contains(msg, "(14)")
}

// ready opens the database if no read has yet (OpenLazily), or probes its
// schema if Open could not (the history was locked).
func (s *Source) ready(ctx context.Context) error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.lazy {
		return s.openLazily(ctx)
	}
	if s.db == nil || s.probed {
		return nil
	}
	return s.probe(ctx, s.db)
}

// probe finds the storage eras of db; the caller holds probeMu or owns s.
func (s *Source) probe(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return describeDBError(s.dbPath, err)
	}
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return describeDBError(s.dbPath, err)
		}
		tables[name] = true
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return describeDBError(s.dbPath, err)
	}
	rows.Close()
	if !tables["session"] {
		return fmt.Errorf("%s has an unknown schema (no session table): is it OpenCode's database? pass --db with opencode.db", s.dbPath)
	}
	hasV1 := tables["message"] && tables["part"]
	hasV2 := tables["session_message"]
	if !hasV1 && !hasV2 {
		return fmt.Errorf("%s has an unknown schema (neither message/part nor session_message tables); this OpenCode version is not supported yet", s.dbPath)
	}
	// Read one row so a truncated file or a held lock shows up now.
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM session LIMIT 1)`).Scan(&n); err != nil {
		return describeDBError(s.dbPath, err)
	}
	s.hasV1, s.hasV2, s.probed = hasV1, hasV2, true
	s.hasEvents = tables["event"] && tables["event_sequence"]
	return nil
}

func describeDBError(path string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "locked") || strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "(5)"):
		return &source.Error{Path: path, Msg: fmt.Sprintf("%s is locked by another process (OpenCode writing?) (waited %s); retry in a moment: %v", path, busyWait, err), Err: err, Locked: true}
	case strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "(26)") || strings.Contains(msg, "(11)"):
		return &source.Error{Path: path, Msg: fmt.Sprintf("%s is damaged or truncated (%v); point --db at a good copy", path, err), Err: err}
	}
	return &source.Error{Path: path, Msg: fmt.Sprintf("read %s: %v", path, err), Err: err}
}

// Close releases the database handle.
func (s *Source) Close() error {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.db != nil {
		return s.db.Close()
	}
	return nil
}

// Path is the location the source was opened from.
func (s *Source) Path() string { return s.path }

// Identity names the file this source reads (see source.Identity).
func (s *Source) Identity() source.Identity {
	s.probeMu.Lock() // a lazy open sets it
	defer s.probeMu.Unlock()
	return s.id
}

// CurrentIdentity is the identity of what is at Path now (CurrentIdentity
// of the path).
func (s *Source) CurrentIdentity() (source.Identity, error) { return CurrentIdentity(s.path) }

// Immutable reports a handle that cannot see later writes (see openDB): an
// engine reopens it before each sync.
func (s *Source) Immutable() bool {
	s.probeMu.Lock() // a lazy open sets it
	defer s.probeMu.Unlock()
	return s.immutable
}

// Notice says what part of the history this source cannot see and why
// ("" when it sees all of it); the user should hear it once.
func (s *Source) Notice() string {
	s.probeMu.Lock() // a lazy open sets it
	defer s.probeMu.Unlock()
	return s.notice
}

// Eras lists the storage eras present (none known yet for a database that
// was locked when opened). A source from OpenLazily is opened to know.
func (s *Source) Eras() []string {
	s.ready(context.Background()) // an error leaves the eras unknown, as a lock does
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	var eras []string
	if s.hasV1 {
		eras = append(eras, EraV1)
	}
	if s.hasV2 {
		eras = append(eras, EraV2)
	}
	if s.storageDir != "" {
		eras = append(eras, EraJSON)
	}
	return eras
}

// Fingerprint is a cheap summary of the files behind the source (the
// database's device and inode, sizes and modification times of it and its
// WAL, and of the JSON tree's folders), all from stats. When it is
// unchanged, nothing can have changed, so an idle sync stops here without
// running a query; a file renamed over the database changes it even when
// size and mtime match.
func (s *Source) Fingerprint() string {
	var b strings.Builder
	stat := func(p string, identify bool) {
		st, err := os.Stat(p)
		if err != nil {
			b.WriteString("-;")
			return
		}
		if identify {
			dev, ino := devIno(st)
			fmt.Fprintf(&b, "%d.%d:", dev, ino)
		}
		fmt.Fprintf(&b, "%d:%d;", st.Size(), st.ModTime().UnixNano())
	}
	if s.dbPath != "" {
		stat(s.dbPath, true)
		stat(s.dbPath+"-wal", false)
	} else {
		// A data dir with only the JSON tree: an opencode.db appearing in
		// it (OpenCode migrating) makes a new source.
		stat(filepath.Join(s.path, "opencode.db"), true)
	}
	if s.storageDir != "" {
		stat(s.storageDir, true)
		for _, sub := range []string{"session", "message", "part"} {
			stat(filepath.Join(s.storageDir, sub), false)
			entries, _ := os.ReadDir(filepath.Join(s.storageDir, sub))
			for _, e := range entries {
				if info, err := e.Info(); err == nil {
					fmt.Fprintf(&b, "%s:%d;", e.Name(), info.ModTime().UnixNano())
				}
			}
		}
	}
	return b.String()
}

// ModTime is when the history's files last changed (the newest of the
// database, its WAL and the JSON tree's folders).
func (s *Source) ModTime() time.Time {
	var newest time.Time
	check := func(p string) {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	if s.dbPath != "" {
		check(s.dbPath)
		check(s.dbPath + "-wal")
	}
	if s.storageDir != "" {
		for _, sub := range []string{"session", "message", "part"} {
			check(filepath.Join(s.storageDir, sub))
		}
	}
	return newest
}

// warn records a skipped or partly decoded row; reading always continues.
func (s *Source) warn(where, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skipped++
	if len(s.warnings) < maxWarnings {
		s.warnings = append(s.warnings, model.Warning{Where: where, Reason: reason})
	}
}

// Skipped returns how many rows were skipped or partly decoded, and the first
// few reasons.
func (s *Source) Skipped() (int, []model.Warning) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped, append([]model.Warning(nil), s.warnings...)
}

// ResetWarnings clears the counters before a new pass.
func (s *Source) ResetWarnings() {
	s.mu.Lock()
	s.skipped, s.warnings = 0, nil
	s.mu.Unlock()
}

// Sessions lists every session's row (no messages), all eras merged; a
// database row wins over a JSON file with the same id.
func (s *Source) Sessions(ctx context.Context) ([]model.Session, error) {
	out, _, err := s.list(ctx, false)
	return out, err
}

// ListSessions is Sessions, with the listing's mark for StampsSince: the
// session table's largest rowid, its row's id and the table's count, read
// before the listing and again after it; "" when they differ (a session
// inserted or deleted meanwhile), or when a row could not be read
// (source.ChangeLister).
//
// Not one read transaction around all of it: holding one over the listing
// made the syncs that list at 845k parts take 440-500 ms each, against a
// p50 of 220-250 ms without it (BenchmarkSyncAfterWrite with every sync
// listing); the time went to the index's page reads in Index.Stamps, and
// why is not understood.
func (s *Source) ListSessions(ctx context.Context) ([]model.Session, string, error) {
	return s.list(ctx, true)
}

// list is Sessions, with ListSessions' mark when marked (a listing that
// needs none, a full-text scan's, counts the session table only to size
// its slice).
func (s *Source) list(ctx context.Context, marked bool) ([]model.Session, string, error) {
	if err := s.ready(ctx); err != nil {
		return nil, "", err
	}
	var out []model.Session
	var listing string
	if s.db != nil {
		var m tableMark
		var err error
		if marked {
			m, err = s.sessionTableMark(ctx, nil)
		} else if err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM session`).Scan(&m.N); err != nil {
			err = describeDBError(s.dbPath, err)
		}
		if err != nil {
			return nil, "", err
		}
		// Sized first: a sync lists every session after each write to the
		// history, and growing the slice of 30k sessions was a tenth of it.
		out = make([]model.Session, 0, m.N)
		rows, err := s.db.QueryContext(ctx, `SELECT `+sessionColumns+` FROM session`)
		if err != nil {
			return nil, "", describeDBError(s.dbPath, err)
		}
		defer rows.Close()
		var sc sessionScanner
		for rows.Next() {
			if ss, ok := sc.scan(s, rows); ok {
				out = append(out, ss)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, "", describeDBError(s.dbPath, err)
		}
		if marked {
			after, err := s.sessionTableMark(ctx, nil)
			if err != nil {
				return nil, "", err
			}
			if after == m && len(out) == int(m.N) {
				b, _ := json.Marshal(m)
				listing = string(b)
			}
		}
		if s.hasV2 {
			if err := s.markV2(ctx, out); err != nil {
				return nil, "", err
			}
		}
	}
	if s.storageDir != "" {
		legacy, err := s.legacySessions()
		if err != nil {
			return nil, "", err
		}
		seen := make(map[string]bool, len(out))
		for _, ss := range out {
			seen[ss.ID] = true
		}
		for _, ss := range legacy {
			if !seen[ss.ID] {
				out = append(out, ss)
			}
		}
	}
	return out, listing, nil
}

// sessionColumns are the session row's columns a Session is made of, in
// the order sessionScanner.scan reads them.
const sessionColumns = `id, coalesce(parent_id,''), coalesce(project_id,''),
	coalesce(directory,''), coalesce(title,''), coalesce(slug,''), coalesce(agent,''), coalesce(version,''),
	coalesce(time_created,0), coalesce(time_updated,0), coalesce(time_archived,0), coalesce(revert,'')`

// sessionScanner reads session rows (sessionColumns) into Sessions. A
// history's sessions share a few projects, directories, agents and
// versions: each is held once, not once a session, for the whole sync.
type sessionScanner struct {
	shared                       map[string]string
	project, dir, agent, version sql.RawBytes
}

func (sc *sessionScanner) intern(b sql.RawBytes) string {
	if v, ok := sc.shared[string(b)]; ok {
		return v
	}
	if sc.shared == nil {
		sc.shared = map[string]string{}
	}
	v := string(b)
	sc.shared[v] = v
	return v
}

// scan reads the row rows is at; a row it cannot read is a warning of s's
// (ok false).
func (sc *sessionScanner) scan(s *Source, rows *sql.Rows) (model.Session, bool) {
	var ss model.Session
	var revert string
	if err := rows.Scan(&ss.ID, &ss.ParentID, &sc.project, &sc.dir, &ss.Title, &ss.Slug,
		&sc.agent, &sc.version, &ss.Created, &ss.Updated, &ss.Archived, &revert); err != nil {
		s.warn("session row", err.Error())
		return ss, false
	}
	ss.ProjectID, ss.Directory, ss.Agent, ss.Version = sc.intern(sc.project), sc.intern(sc.dir), sc.intern(sc.agent), sc.intern(sc.version)
	ss.RevertMsgID = revertMessageID(revert)
	ss.Era = EraV1
	return ss, true
}

// markV2 sets Era for sessions whose messages live in session_message.
func (s *Source) markV2(ctx context.Context, sessions []model.Session) error {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT session_id FROM session_message`)
	if err != nil {
		return describeDBError(s.dbPath, err)
	}
	defer rows.Close()
	v2 := map[string]bool{}
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			v2[id] = true
		}
	}
	for i := range sessions {
		if v2[sessions[i].ID] {
			sessions[i].Era = EraV2
		}
	}
	return rows.Err()
}

// Stamps returns, per session id, a string that changes whenever the session
// or any of its messages or parts is added, changed or removed. Comparing it
// with the stamp stored at the last sync is how a sync finds the sessions it
// must re-read. It walks every table; StampsSince reads only what changed.
func (s *Source) Stamps(ctx context.Context) (map[string]string, error) {
	sessions, err := s.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	st, err := s.StampsSince(ctx, "", nil, sessions, "")
	return st.Stamps, err
}

// Messages streams a session's messages in display order, with their parts,
// to fn. Messages at or after the session's revert point are left out, as
// OpenCode hides them. Malformed rows are skipped and counted.
func (s *Source) Messages(ctx context.Context, ss model.Session, fn func(*model.Message) error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	keep := func(m *model.Message) error {
		if ss.RevertMsgID != "" && m.ID >= ss.RevertMsgID {
			return nil
		}
		return fn(m)
	}
	switch ss.Era {
	case EraJSON:
		return s.legacyMessages(ctx, ss, keep)
	case EraV2:
		if err := s.v2Messages(ctx, ss, keep); err != nil {
			return err
		}
		// A session may have been started by one engine and continued by
		// the other; read v1 rows too.
		if s.hasV1 {
			return s.v1Messages(ctx, ss, keep)
		}
		return nil
	default:
		return s.v1Messages(ctx, ss, keep)
	}
}

// ScanRaw implements source.RawScanner for the database eras: the part
// rows of a v1 session, the session_message rows of a v2 one, read as
// stored. The legacy JSON tree is not pre-filtered (ok false).
func (s *Source) ScanRaw(ctx context.Context, ss model.Session, test func([]byte) bool) (hit bool, rows int, n int64, ok bool, err error) {
	if err := s.ready(ctx); err != nil {
		return false, 0, 0, false, err
	}
	var qs []string
	switch ss.Era {
	case EraV1:
		qs = []string{`SELECT data FROM part WHERE session_id = ?`}
	case EraV2:
		qs = []string{`SELECT data FROM session_message WHERE session_id = ?`}
		if s.hasV1 {
			qs = append(qs, `SELECT data FROM part WHERE session_id = ?`)
		}
	default:
		return false, 0, 0, false, nil
	}
	for _, q := range qs {
		r, err := s.db.QueryContext(ctx, q, ss.ID)
		if err != nil {
			return false, rows, n, true, describeDBError(s.dbPath, err)
		}
		for r.Next() {
			var data sql.RawBytes
			if err := r.Scan(&data); err != nil {
				r.Close()
				return false, rows, n, true, describeDBError(s.dbPath, err)
			}
			rows++
			n += int64(len(data))
			if test(data) {
				r.Close()
				return true, rows, n, true, nil // the session is decoded next: no need to read on
			}
		}
		if err := r.Err(); err != nil {
			r.Close()
			return false, rows, n, true, describeDBError(s.dbPath, err)
		}
		r.Close()
	}
	return hit, rows, n, true, nil
}
