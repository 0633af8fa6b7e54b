package index

import (
	_ "unsafe" // go:linkname

	sqlite3 "modernc.org/sqlite/lib"
)

// modernc's SQLite is built with SQLITE_MAX_MMAP_SIZE at 0x7fff0000, so a
// mapped index is mapped for its first 2 GB only, and every page past them
// is read() into the page cache as if unmapped. An index reaches 2 GB at
// about 2M parts, and each table's pages are spread through the file: at
// 4.2M parts (4.2 GB) 48% of the parts table's pages and 64% of the
// full-text index's lay past the mapping, each read with a system call in
// every CLI search (docs/benchmarks.md, "Mapped past 2 GB").
//
// The ceiling is a field of SQLite's global configuration, which
// sqlite3_config(SQLITE_CONFIG_MMAP_SIZE) can only lower; it is raised
// here directly, at init, before any connection reads it. A connection
// that asks for no mapping (a sync's, the server's) is not changed by it.
// TestMapOption reads PRAGMA mmap_size back, so a modernc release that
// moves the field fails the test rather than quietly mapping 2 GB again.
//
//go:linkname sqliteConfig modernc.org/sqlite/lib._sqlite3Config
var sqliteConfig sqlite3.TSqlite3Config

// maxMmap is the mapping a one-command process asks for (the whole index
// up to 1 TB: SQLite maps what the file holds, not the limit).
const maxMmap = 1 << 40

func init() {
	if sqliteConfig.FmxMmap < maxMmap {
		sqliteConfig.FmxMmap = maxMmap
	}
}
