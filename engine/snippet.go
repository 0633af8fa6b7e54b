package engine

import (
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/rank"
)

// snippetChars is the length of a snippet around the best match.
const snippetChars = 220

// snippet cuts a window of text around the densest cluster of needle
// matches and returns it with highlight ranges in characters (Unicode code
// points) relative to the snippet.
func snippet(text string, needles []string) (string, [][2]int) {
	lower := rank.ASCIILower(text)
	type hit struct{ start, end int }
	var hits []hit
	for _, n := range needles {
		for _, i := range rank.FindWord(text, lower, n, 50) {
			end := i + len(n)
			// Extend to the end of the word so "connect" highlights "connection".
			for end < len(text) && isWordByte(text[end]) {
				end++
			}
			hits = append(hits, hit{i, end})
		}
	}
	at := make([][2]int, len(hits))
	for i, h := range hits {
		at[i] = [2]int{h.start, h.end}
	}
	return snippetAt(text, at)
}

// snippetAt cuts the window of text that covers the most of the byte
// ranges hits, with those in it as highlights in characters relative to
// the snippet.
func snippetAt(text string, at [][2]int) (string, [][2]int) {
	type hit struct{ start, end int }
	hits := make([]hit, len(at))
	for i, a := range at {
		hits[i] = hit{a[0], a[1]}
	}
	if len(hits) == 0 {
		return flatten(cutRunes(text, 0, snippetChars)), nil
	}
	// Pick the window start that covers the most hits.
	bestStart, bestCount := hits[0].start, 0
	for _, h := range hits {
		count := 0
		for _, o := range hits {
			if o.start >= h.start && o.end <= h.start+snippetChars {
				count++
			}
		}
		if count > bestCount || (count == bestCount && h.start < bestStart) {
			bestStart, bestCount = h.start, count
		}
	}
	start := bestStart - snippetChars/4
	if start < 0 {
		start = 0
	}
	// Back up to a word boundary.
	for start > 0 && start > bestStart-snippetChars/2 && isWordByte(text[start-1]) {
		start--
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	end := start + snippetChars
	if end > len(text) {
		end = len(text)
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	window := text[start:end]
	prefix := ""
	if start > 0 {
		prefix = "…"
	}
	suffix := ""
	if end < len(text) {
		suffix = "…"
	}
	var ranges [][2]int
	seen := map[[2]int]bool{}
	for _, h := range hits {
		if h.start < start || h.end > end {
			continue
		}
		r := [2]int{runeOffset(window, h.start-start) + utf8.RuneCountInString(prefix), 0}
		r[1] = r[0] + utf8.RuneCountInString(text[h.start:h.end])
		if !seen[r] {
			seen[r] = true
			ranges = append(ranges, r)
		}
	}
	sortRanges(ranges)
	ranges = mergeRanges(ranges)
	// Whitespace is collapsed only where it cannot shift the ranges: the
	// snippet keeps the text's characters one for one, newlines as spaces.
	return prefix + flatten(window) + suffix, ranges
}

func isWordByte(b byte) bool {
	return b == '_' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z') || b >= 0x80
}

func runeOffset(s string, byteOff int) int { return utf8.RuneCountInString(s[:byteOff]) }

func cutRunes(s string, from, n int) string {
	i := 0
	for idx := range s {
		if i == from+n {
			return s[:idx] + "…"
		}
		i++
	}
	return s
}

// flatten turns newlines and tabs into spaces, one for one.
func flatten(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// mergeRanges joins overlapping or touching ranges (sorted by start), so a
// client never paints one character twice.
func mergeRanges(r [][2]int) [][2]int {
	out := r[:0]
	for _, x := range r {
		if n := len(out); n > 0 && x[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}

func sortRanges(r [][2]int) {
	for i := 1; i < len(r); i++ {
		for j := i; j > 0 && r[j][0] < r[j-1][0]; j-- {
			r[j], r[j-1] = r[j-1], r[j]
		}
	}
}
