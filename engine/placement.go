package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/recallhq/recall/engine/index"
)

// checkIndexPlacement refuses an index path that belongs to OpenCode: the
// history database itself or its -wal/-shm/-journal (by name, and by
// device and inode, which catches symlinks and hard links), any file
// beside the history, or any path inside an OpenCode data directory:
// $XDG_DATA_HOME/opencode, ~/.local/share/opencode, the data dir a legacy
// history was read from, or the history's directory when it is named
// "opencode" (OpenCode's own layout, copied or another XDG root). Below
// the directory of any other history only its direct files are refused:
// a history at ~/opencode.db must not forbid the default index under
// ~/.local/share/recall.
func checkIndexPlacement(ixPath, source string, getenv func(string) string) error {
	src, err := filepath.Abs(source)
	if err != nil {
		return fmt.Errorf("history path: %w", err)
	}
	refuse := func(reason string) error {
		return &index.RefusedError{Path: ixPath, Reason: reason,
			Fix: "pass an index path outside OpenCode's data directory, or none for the default (under $XDG_DATA_HOME/recall/index)"}
	}
	var dbFile string
	var trees []string
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		dbFile = filepath.Join(src, "opencode.db")
		trees = append(trees, src)
	} else {
		dbFile = src
		if filepath.Base(filepath.Dir(src)) == "opencode" {
			trees = append(trees, filepath.Dir(src))
		}
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if samePath(ixPath, dbFile+suffix) {
			if suffix == "" {
				return refuse(fmt.Sprintf("it is OpenCode's history database %s, which Recall only ever reads", dbFile))
			}
			return refuse(fmt.Sprintf("it is OpenCode's %s file of %s", suffix[1:], dbFile))
		}
	}
	if samePath(filepath.Dir(ixPath), filepath.Dir(dbFile)) {
		return refuse(fmt.Sprintf("it is beside OpenCode's history %s, in the directory OpenCode keeps its own files in", dbFile))
	}
	if d := getenv("XDG_DATA_HOME"); d != "" {
		trees = append(trees, filepath.Join(d, "opencode"))
	}
	if h := getenv("HOME"); h != "" {
		trees = append(trees, filepath.Join(h, ".local", "share", "opencode"))
	}
	for _, tree := range trees {
		if within(ixPath, tree) {
			return refuse(fmt.Sprintf("it is inside OpenCode's data directory %s", tree))
		}
	}
	return nil
}

// samePath reports whether a and b name the same file: equal cleaned
// paths, equal after resolving symlinks, or (both existing) the same
// device and inode.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) || resolved(a) == resolved(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// resolved is p with symlinks resolved as far as it exists.
func resolved(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether p lies inside dir (by name, by resolved name, or
// because one of p's existing ancestors is dir's inode, as through a bind
// mount).
func within(p, dir string) bool {
	inside := func(p, dir string) bool {
		rel, err := filepath.Rel(dir, p)
		return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if inside(filepath.Clean(p), filepath.Clean(dir)) || inside(resolved(p), resolved(dir)) {
		return true
	}
	ds, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for a := filepath.Dir(p); ; a = filepath.Dir(a) {
		if as, err := os.Stat(a); err == nil && os.SameFile(as, ds) {
			return true
		}
		if filepath.Dir(a) == a {
			return false
		}
	}
}
