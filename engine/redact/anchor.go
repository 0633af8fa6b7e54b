package redact

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// Most rules can only match where one of a few literals begins (AKIA, sk_,
// the key word of `github_token = …` after up to 50 name characters).
// Running such a rule's regexp over a whole 12 KB tool output because its
// keyword occurs once costs more than everything else redaction does
// (gitleaks' generic-api-key alone took 75% of the time over the public
// corpus), so anchorOf reads the literals from the pattern, the keyword
// pass finds them, and the rule is tried, anchored, only there.

// maxAnchors bounds the literal prefixes one rule may have: the most a
// rule has today is 34 (gitleaks' jwt-base64); past a few dozen, literals
// stop being a cheaper test than the regexp.
const maxAnchors = 64

// anchored is anchorOf's answer for one pattern, as anchors_gen.go keeps
// it (back as the bytes of the set).
type anchored struct {
	lits     []string
	back     string
	backMax  int
	boundary bool
	ok       bool
}

// anchorEntry is one pattern's row of anchorTable.
type anchorEntry struct {
	pattern string
	anchored
}

// anchorTableLookup finds pattern's row of anchorTable. The table is a
// sorted slice, not a map: the linker lays a slice literal out as data,
// where a map literal of its 300 patterns was built by an init in every
// process, `recall version` included (0.3 ms and a dozen page faults on
// the VM docs/benchmarks.md measures on).
func anchorTableLookup(pattern string) (anchored, bool) {
	i, found := slices.BinarySearchFunc(anchorTable, pattern, func(e anchorEntry, p string) int {
		return strings.Compare(e.pattern, p)
	})
	if !found {
		return anchored{}, false
	}
	return anchorTable[i].anchored, true
}

// anchorsOf is anchorOf, read from the table generated for the builtin
// patterns when it holds pattern: parsing every builtin pattern was ~80%
// of building the redactor (~5 ms of a CLI search's CPU, which renders
// redacted snippets and so builds it in every process).
// Rules with the same back bytes share one set from sets (most of
// gitleaks' rules take the name characters before their key word).
func anchorsOf(pattern string, sets map[string]*byteSet) (lits []string, back *byteSet, backMax int, boundary, ok bool) {
	a, found := anchorTableLookup(pattern)
	if !found {
		return anchorOf(pattern)
	}
	if a.back != "" {
		if back = sets[a.back]; back == nil {
			back = new(byteSet)
			for i := 0; i < len(a.back); i++ {
				back[a.back[i]] = true
			}
			sets[a.back] = back
		}
	}
	return a.lits, back, a.backMax, a.boundary, a.ok
}

// anchorOf finds where a match of pattern can start: right at one of
// lits, or up to backMax bytes of back before one; boundary: at a word
// boundary. ok is false when matches can start anywhere.
func anchorOf(pattern string) (lits []string, back *byteSet, backMax int, boundary, ok bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, nil, 0, false, false
	}
	els := flatten(re)
	i := 0
	for ; i < len(els); i++ {
		switch els[i].Op {
		case syntax.OpWordBoundary:
			boundary = true
			continue
		case syntax.OpBeginText, syntax.OpBeginLine, syntax.OpEmptyMatch:
			continue
		}
		break
	}
	if i < len(els) {
		if b, n, isBack := backClass(els[i]); isBack {
			if boundary {
				return nil, nil, 0, false, false
			}
			back, backMax = b, n
			i++
		}
	}
	set, _ := prefixes(els[i:])
	if len(set) == 0 || len(set) > maxAnchors {
		return nil, nil, 0, false, false
	}
	for _, p := range set {
		if len(p) < 2 {
			return nil, nil, 0, false, false
		}
	}
	return set, back, backMax, boundary, true
}

// flatten lists the elements a pattern is a sequence of, opening
// concatenations and groups.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			out = append(out, flatten(s)...)
		}
		return out
	case syntax.OpCapture:
		return flatten(re.Sub[0])
	}
	return []*syntax.Regexp{re}
}

// backClass recognises a bounded run of an ASCII class that may come
// before the literal (`[\w.-]{0,50}?`).
func backClass(re *syntax.Regexp) (*byteSet, int, bool) {
	if (re.Op != syntax.OpRepeat || re.Min != 0 || re.Max < 0 || re.Max > 64) || re.Sub[0].Op != syntax.OpCharClass {
		return nil, 0, false
	}
	var b byteSet
	rs := re.Sub[0].Rune
	for i := 0; i+1 < len(rs); i += 2 {
		for c := rs[i]; c <= rs[i+1] && c < 256; c++ {
			b[c] = true
		}
	}
	return &b, re.Max, true
}

// prefixes is the set of lowercase literal prefixes of the sequence els;
// complete says whether the literals are all of it.
func prefixes(els []*syntax.Regexp) (set []string, complete bool) {
	set = []string{""}
	for _, el := range els {
		if el.Op == syntax.OpWordBoundary && len(set) == 1 && set[0] == "" {
			// A boundary inside a branch: the regexp checks it (at the
			// start of the text it is tried on it always holds, which
			// errs toward redacting).
			continue
		}
		ext, whole := literals(el)
		if len(ext) == 0 || len(set)*len(ext) > maxAnchors {
			return trimEmpty(set), false
		}
		next := make([]string, 0, len(set)*len(ext))
		for _, a := range set {
			for _, b := range ext {
				next = append(next, a+b)
			}
		}
		set = next
		if !whole {
			return trimEmpty(set), false
		}
	}
	return trimEmpty(set), true
}

func trimEmpty(set []string) []string {
	if len(set) == 1 && set[0] == "" {
		return nil
	}
	return set
}

// literals lists what el can begin with, lowercased (the keyword pass is
// case-blind; the regexp then decides), and whether that is all of el.
func literals(el *syntax.Regexp) ([]string, bool) {
	switch el.Op {
	case syntax.OpLiteral:
		s := strings.ToLower(string(el.Rune))
		if !ascii(s) {
			return nil, false
		}
		return []string{s}, true
	case syntax.OpCharClass:
		var out []string
		seen := map[rune]bool{}
		rs := el.Rune
		for i := 0; i+1 < len(rs); i += 2 {
			if rs[i+1]-rs[i] > 4 {
				return nil, false
			}
			for c := rs[i]; c <= rs[i+1]; c++ {
				lc := unicode.ToLower(c)
				if c > unicode.MaxASCII {
					return nil, false
				}
				if !seen[lc] {
					seen[lc] = true
					out = append(out, string(lc))
				}
			}
		}
		if len(out) > 4 {
			return nil, false
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		whole := true
		for _, s := range el.Sub {
			set, c := prefixes(flatten(s))
			if len(set) == 0 {
				return nil, false // a branch that can start anywhere
			}
			out = append(out, set...)
			whole = whole && c
		}
		return out, whole
	case syntax.OpQuest:
		set, c := prefixes(flatten(el.Sub[0]))
		if len(set) == 0 {
			return nil, false
		}
		return append(set, ""), c
	case syntax.OpCapture, syntax.OpConcat:
		return prefixes(flatten(el))
	}
	return nil, false
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
