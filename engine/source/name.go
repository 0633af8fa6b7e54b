package source

import (
	"fmt"
	"path/filepath"
	"strings"
)

// A source's name is how people, cursors and URIs tell histories apart
// ("laptop", "desktop", "local"): lower-case letters, digits and dashes,
// starting with a letter or digit, so it needs no quoting in a cursor, a
// URI query or a shell.

// MaxNameLen bounds a source name: it sits in every cursor, and 32
// characters name any machine or profile.
const MaxNameLen = 32

// CheckName says what is wrong with a source name ("" when nothing is).
func CheckName(name string) string {
	switch {
	case name == "":
		return "a source name cannot be empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("source name %q is longer than %d characters", clip(name, 40), MaxNameLen)
	case name[0] == '-':
		return fmt.Sprintf("source name %q starts with a dash; start it with a letter or digit", name)
	}
	for _, r := range name {
		if !nameRune(r) {
			return fmt.Sprintf("source name %q has %q in it; use lower-case letters, digits and dashes (laptop, old-mac)", clip(name, 40), string(r))
		}
	}
	return ""
}

func nameRune(r rune) bool { return r == '-' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') }

// DeriveName names a history given only by its path: the directory's name
// for a file called opencode.db (…/laptop/opencode.db is "laptop"), else
// the file's stem (archive-2024.db is "archive-2024"), lower-cased, with
// anything else than [a-z0-9-] turned into dashes. "source" when nothing
// is left.
func DeriveName(path string) string {
	p := filepath.Clean(path)
	base := filepath.Base(p)
	if base == "opencode.db" {
		base = filepath.Base(filepath.Dir(p))
	} else if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(base) {
		if nameRune(r) && r != '-' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimRight(b.String(), "-")
	if len(name) > MaxNameLen {
		name = strings.TrimRight(name[:MaxNameLen], "-")
	}
	if name == "" {
		return "source"
	}
	return name
}

// Dedupe makes name distinct from those taken, with -2, -3, … (within
// MaxNameLen).
func Dedupe(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for n := 2; ; n++ {
		suffix := fmt.Sprintf("-%d", n)
		base := name
		if len(base)+len(suffix) > MaxNameLen {
			base = strings.TrimRight(base[:MaxNameLen-len(suffix)], "-")
		}
		if c := base + suffix; !taken[c] {
			return c
		}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
