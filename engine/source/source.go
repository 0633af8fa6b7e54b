// Package source is how the engine reads a history: the Source interface a
// reader implements (engine/source/opencode reads OpenCode's, in every
// storage era), the Identity of the file behind a source, and the errors a
// reader reports. The engine reads history through this interface only.
package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/recallhq/recall/engine/model"
)

// Source is an open, read-only view of one history.
type Source interface {
	// Path is the location the source was opened from.
	Path() string
	// Eras lists the storage eras present.
	Eras() []string

	// Identity names the file this handle reads, as it was when opened.
	Identity() Identity
	// CurrentIdentity is the identity of what is at Path now: when it
	// differs from Identity the history was replaced underneath the
	// handle (renamed over, restored), and the engine opens it again.
	CurrentIdentity() (Identity, error)
	// Immutable reports a handle that cannot see later writes; the engine
	// opens it again before each sync.
	Immutable() bool
	// Fingerprint is a cheap summary of the files behind the source, from
	// stats only: unchanged, nothing can have changed, and a sync stops
	// without a query.
	Fingerprint() string
	// ModTime is when the history's files last changed.
	ModTime() time.Time
	// Notice says what part of the history the source cannot see and why
	// ("" when it sees all of it); people should hear it once.
	Notice() string

	// Sessions lists every session (no messages).
	Sessions(ctx context.Context) ([]model.Session, error)
	// Stamps returns, per session id, a string that changes whenever the
	// session or any of its messages or parts changes.
	Stamps(ctx context.Context) (map[string]string, error)
	// Messages streams a session's messages in display order, with their
	// parts, leaving out what the history itself hides (reverted messages).
	Messages(ctx context.Context, s model.Session, fn func(*model.Message) error) error
	// Skipped is how many rows were skipped or partly decoded since the
	// last ResetWarnings, with the first few reasons.
	Skipped() (int, []model.Warning)
	ResetWarnings()

	Close() error
}

// Checker is a Source that opens its files lazily, by its first read
// (opencode.OpenLazily): Check opens them now, and reports what opening
// them eagerly would have.
type Checker interface {
	Check(ctx context.Context) error
}

// Opener opens the history at path (opencode.Open, for OpenCode's).
type Opener func(ctx context.Context, path string) (Source, error)

// Identity names the file a source reads (the folder, for a history kept in
// files), so a history replaced at the same path (renamed over, restored
// from a backup, reinstalled) is told apart from one that was only written
// to. It is a value: compare with Equal, store with String.
type Identity struct {
	// Dev and Ino are the device and inode of the database file (of the
	// folder for a history kept in files). A rename over the path or a
	// restore gives a new inode; the history's own writes keep it.
	Dev, Ino uint64
	// Header is what the file's header says about the database itself
	// rather than its latest write (see opencode's headerIdentity).
	Header string
}

// Equal reports whether a and b name the same database.
func (a Identity) Equal(b Identity) bool { return a == b }

// String is the form stored in the index (meta source_identity, and in each
// session's stamp).
func (a Identity) String() string { return fmt.Sprintf("%d:%d:%s", a.Dev, a.Ino, a.Header) }

// ErrLocked is the error (through errors.Is) of a read that found the
// history locked by a writer for longer than the reader waits.
var ErrLocked = errors.New("history locked by another process")

// Error is a failure reading a history (as opposed to Recall's own index):
// the engine tells the two apart to know what it may rebuild.
type Error struct {
	Path string
	Msg  string // the whole message: what failed and what to do
	Err  error
	// Locked: a writer held the history locked past the wait;
	// errors.Is(err, ErrLocked) is true.
	Locked bool
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLocked) true for a lock held past the wait.
func (e *Error) Is(target error) bool { return target == ErrLocked && e.Locked }

// ChangeTracker is what a reader may add to make a sync after a write cheap:
// the stamps of Stamps, read from what changed since the last sync rather
// than from the whole history.
type ChangeTracker interface {
	// StampsSince returns Stamps' values for sessions (as Sessions listed
	// them). mark is what the last call returned
	// as next ("" for none), and old the stamps it gave then, as given;
	// next is the mark to store once the sync that reads these stamps has
	// written everything they call for. A mark it cannot use makes it read
	// the whole history, as Stamps does.
	// listing is ChangeLister.ListSessions' mark of the listing sessions
	// came from ("" when the source is none).
	StampsSince(ctx context.Context, mark string, old map[string]string, sessions []model.Session, listing string) (Stamped, error)
}

// Stamped is what ChangeTracker.StampsSince read.
type Stamped struct {
	Stamps map[string]string
	// Next is the mark to store once the sync is done ("" for none).
	Next string
	// Walked: every table was read (the mark was of no use, or too much
	// had changed); else Lookups sessions were read one by one.
	Walked  bool
	Lookups int
}

// ChangeLister is what a reader may add so that a sync after a write reads
// only the sessions written to, without listing every session and reading
// every stamp (what a ChangeTracker still needs).
type ChangeLister interface {
	// ListSessions is Sessions, with a mark of the listing for
	// ChangeTracker.StampsSince.
	ListSessions(ctx context.Context) (sessions []model.Session, listing string, err error)
	// SessionsSince returns the sessions whose rows may have changed since
	// mark (a Next of StampsSince or of SessionsSince), as Sessions lists
	// them, with their stamps as Stamps gives them; sessions it does not
	// return are as they were at mark. ok false: it cannot tell (no usable
	// mark, a deletion, too much changed, a listing of every session due),
	// and the caller lists every session instead.
	SessionsSince(ctx context.Context, mark string) (c Changed, ok bool, err error)
}

// Changed is what ChangeLister.SessionsSince read.
type Changed struct {
	Sessions []model.Session
	Stamps   map[string]string
	// Next is the mark to store once the sync is done.
	Next string
	// Total is how many sessions the history holds.
	Total int
}

// RawScanner is what a reader may add to make full-text scans fast: the
// rows a history stores for one session, as stored (OpenCode's JSON), for
// a cheap pre-filter before the session is decoded. A text that occurs in
// a decoded part occurs in its row too when it holds nothing JSON escapes
// (quotes, backslashes, control characters), so a session whose rows all
// fail such a test cannot match.
type RawScanner interface {
	// ScanRaw calls test on each stored row of session s's parts (or
	// messages, where a storage era keeps parts inline) and reports
	// whether one passed, with how many rows and bytes it read. ok false:
	// this session's storage cannot be pre-filtered; decode it.
	ScanRaw(ctx context.Context, s model.Session, test func([]byte) bool) (hit bool, rows int, bytes int64, ok bool, err error)
}
