package commands

import (
	"fmt"
	"path/filepath"

	"github.com/recallhq/recall/engine/render"
)

// clock is a time for text output: minutes, in UTC, and saying so. The
// index stores UTC and --json prints RFC 3339 with its Z; text says UTC
// rather than converting, so a time read in a terminal is the time a
// script or an editor on another machine sees (docs/commands.md).
func clock(t string) string {
	if s := render.ShortTime(t); s != t {
		return s + " UTC"
	}
	return t
}

// count is n with its noun, singular for one ("1 turn", "2 turns").
func count(n int, noun string, plural ...string) string { return render.Count(n, noun, plural...) }

// plural is noun for n things, without the number ("3 new, 1 updated
// sessions" counts the sum).
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// contentCounts is a status line's counts.
func contentCounts(sessions, messages, parts, docs int) string {
	return count(sessions, "session") + ", " + count(messages, "message") + ", " + count(parts, "part") + ", " + count(docs, "search document")
}

// absDir resolves a directory param against the working directory, as
// files does its path: `--directory .` is this project (the OpenCode
// plugin documents directory: "." so), and the index holds absolute
// directories only.
func absDir(dir string) (string, error) {
	if dir == "" || filepath.IsAbs(dir) {
		return dir, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &ParamError{Field: "directory", Msg: fmt.Sprintf("%q: %v; give an absolute path", dir, err)}
	}
	return abs, nil
}
