package engine

import (
	"slices"

	"github.com/recallhq/recall/engine/model"
)

// sessionTable is the list of sessions a sync writes, with each one's top-level
// session and stamp, packed for its length: every string of every session
// in one byte arena and the rest in fixed records, two allocations that
// hold no pointers, so the collector never scans them.
//
// A cold sync holds the whole listing until its last session is written.
// Held as model.Session values, pointers to them and maps of their stamps
// and roots, it was ~500 bytes a session of scanned heap (80 MB at 4.2M
// parts), which every collection of the load marked again (15.5 s of
// collector CPU in a 4.2M-part load, 1.4 s packed) and which the
// collector's room (gcroom.go) doubled (peak RSS 278 MB, 243 packed).
// docs/benchmarks.md ("A cold index's plan off the scanned heap") has the
// measurements.
type sessionTable struct {
	recs  []sessionRec
	arena []byte
}

// The strings of a record, in the order they lie in the arena.
const (
	strID = iota
	strParentID
	strProjectID
	strDirectory
	strTitle
	strSlug
	strAgent
	strVersion
	strRevertMsgID
	strEra
	strRoot  // the session's top-level session
	strStamp // the source's stamp of the session (without the config's)
	nStrings
)

// sessionRec is one session: its strings lie one after another in the
// arena from start, the i-th ending at start+ends[i].
type sessionRec struct {
	start                                  int
	ends                                   [nStrings]uint32
	created, updated, archived, compacting int64
}

// grow makes room for n more sessions and size more bytes of their
// strings (appending past it grows the arena as append does).
func (t *sessionTable) grow(n, size int) {
	t.recs = slices.Grow(t.recs, n)
	t.arena = slices.Grow(t.arena, size)
}

// sessionSize is the bytes s, root and stamp take in the arena.
func sessionSize(s *model.Session, root, stamp string) int {
	return len(s.ID) + len(s.ParentID) + len(s.ProjectID) + len(s.Directory) + len(s.Title) + len(s.Slug) +
		len(s.Agent) + len(s.Version) + len(s.RevertMsgID) + len(s.Era) + len(root) + len(stamp)
}

// add appends s with its root and stamp.
func (t *sessionTable) add(s *model.Session, root, stamp string) {
	r := sessionRec{start: len(t.arena), created: s.Created, updated: s.Updated, archived: s.Archived, compacting: s.Compacting}
	for i, v := range [nStrings]string{s.ID, s.ParentID, s.ProjectID, s.Directory, s.Title, s.Slug, s.Agent, s.Version, s.RevertMsgID, s.Era, root, stamp} {
		t.arena = append(t.arena, v...)
		r.ends[i] = uint32(len(t.arena) - r.start)
	}
	t.recs = append(t.recs, r)
}

// len is how many sessions the table holds.
func (t *sessionTable) len() int { return len(t.recs) }

// str is the k-th string of session i, copied out of the arena.
func (t *sessionTable) str(i, k int) string { return string(t.bytes(i, k)) }

// bytes is the k-th string of session i in the arena (not to be kept or
// changed: for a map lookup, m[string(b)], which copies nothing).
func (t *sessionTable) bytes(i, k int) []byte {
	r := &t.recs[i]
	from := uint32(0)
	if k > 0 {
		from = r.ends[k-1]
	}
	return t.arena[r.start+int(from) : r.start+int(r.ends[k])]
}

// session is session i, a fresh copy.
func (t *sessionTable) session(i int) *model.Session {
	r := &t.recs[i]
	return &model.Session{
		ID: t.str(i, strID), ParentID: t.str(i, strParentID), ProjectID: t.str(i, strProjectID),
		Directory: t.str(i, strDirectory), Title: t.str(i, strTitle), Slug: t.str(i, strSlug),
		Agent: t.str(i, strAgent), Version: t.str(i, strVersion), RevertMsgID: t.str(i, strRevertMsgID),
		Era: t.str(i, strEra), Created: r.created, Updated: r.updated, Archived: r.archived, Compacting: r.compacting,
	}
}
