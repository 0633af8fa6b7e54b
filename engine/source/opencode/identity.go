package opencode

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/recallhq/recall/engine/source"
)

// sqliteHeaderSize is the fixed size of an SQLite database header.
const sqliteHeaderSize = 100

// sqliteHeader is the first 100 bytes of a database file.
type sqliteHeader [sqliteHeaderSize]byte

// walMode reports a database in WAL mode (file format read/write versions 2).
func (h *sqliteHeader) walMode() bool { return h[18] == 2 || h[19] == 2 }

// headerIdentity picks the header fields that stay put while OpenCode
// writes but differ for another database or another life of it: page
// size, schema cookie, schema format, text encoding, user version and
// application id. The file change counter (offset 24), page count (28) and
// version-valid-for (92) change with every write and so cannot identify
// anything. No field is unique to one database (the three fixtures, from
// one OpenCode version, agree on all of these), so the inode stays the main
// signal; the schema cookie adds what the inode misses: a backup copied
// over the file in place (same inode) that was made with VACUUM INTO (the
// cookie is one higher in the copy), and a schema migration by a new
// OpenCode, after which the tables are probed again.
func (h *sqliteHeader) headerIdentity() string {
	pageSize := uint32(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536 // how the format stores the largest page size
	}
	u32 := func(off int) uint32 { return binary.BigEndian.Uint32(h[off : off+4]) }
	return fmt.Sprintf("sqlite:%d/%d/%d/%d/%d/%d", pageSize, u32(40), u32(44), u32(56), u32(60), u32(68))
}

// readHeader reads the header of the database at path and the identity of
// the file it read it from (one open, one fstat, one 100-byte read). A file
// that is empty or not SQLite gets an error that says what to pass instead.
func readHeader(path string) (*sqliteHeader, source.Identity, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, source.Identity{}, fmt.Errorf("open OpenCode database %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, source.Identity{}, fmt.Errorf("stat OpenCode database %s: %w", path, err)
	}
	var h sqliteHeader
	n, err := io.ReadFull(f, h[:])
	if n == 0 {
		return nil, source.Identity{}, fmt.Errorf("%s is empty, not an OpenCode database; pass --db with the right path", path)
	}
	if err != nil || string(h[:16]) != "SQLite format 3\x00" {
		return nil, source.Identity{}, fmt.Errorf("%s is not an SQLite database (truncated or another kind of file); pass --db with OpenCode's opencode.db", path)
	}
	dev, ino := devIno(st)
	return &h, source.Identity{Dev: dev, Ino: ino, Header: h.headerIdentity()}, nil
}

// dirIdentity is the identity of a JSON-only history's storage folder.
func dirIdentity(dir string) (source.Identity, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return source.Identity{}, fmt.Errorf("open history %s: %w", dir, err)
	}
	dev, ino := devIno(st)
	return source.Identity{Dev: dev, Ino: ino, Header: EraJSON}, nil
}

// CurrentIdentity is the identity of what Open(path) would read now: an
// engine compares it with its open Source's Identity to know that the
// history was replaced underneath it.
func CurrentIdentity(path string) (source.Identity, error) {
	s, err := resolve(path)
	if err != nil {
		return source.Identity{}, err
	}
	if s.dbPath == "" {
		return dirIdentity(s.storageDir)
	}
	_, id, err := readHeader(s.dbPath)
	return id, err
}
