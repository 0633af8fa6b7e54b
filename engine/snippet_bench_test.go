package engine

import (
	"fmt"
	"strings"
	"testing"

	"unicode/utf8"

	"github.com/recallhq/recall/engine/rank"
)

// oldSnippetChars and oldSnippet are the snippet of c084b07 (one 220-character
// window on the densest cluster), kept here to measure the new one against.
const oldSnippetChars = 220

func oldSnippet(text string, needles []string) (string, [][2]int) {
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
	if len(hits) == 0 {
		return flatten(cutRunes(text, 0, oldSnippetChars)), nil
	}
	// Pick the window start that covers the most hits.
	bestStart, bestCount := hits[0].start, 0
	for _, h := range hits {
		count := 0
		for _, o := range hits {
			if o.start >= h.start && o.end <= h.start+oldSnippetChars {
				count++
			}
		}
		if count > bestCount || (count == bestCount && h.start < bestStart) {
			bestStart, bestCount = h.start, count
		}
	}
	start := bestStart - oldSnippetChars/4
	if start < 0 {
		start = 0
	}
	// Back up to a word boundary.
	for start > 0 && start > bestStart-oldSnippetChars/2 && isWordByte(text[start-1]) {
		start--
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	end := start + oldSnippetChars
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

// BenchmarkSnippet cuts the snippet of a 16 KiB tool output for a
// five-term query whose terms occur all over it, the cost a search pays per
// hit shown (old: one window; new: up to three).
func BenchmarkSnippet(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 16<<10; i++ {
		fmt.Fprintf(&sb, "2024-03-14T09:41:%02dZ ERROR connection pool exhausted for worker %d: retry with backoff (attempt %d)\n", i%60, i, i%8)
	}
	text := sb.String()
	words := []string{"connection", "pool", "exhausted", "retry", "backoff"}
	var needles []needle
	var old []string
	for j, w := range words {
		needles = append(needles, needle{text: rank.Stem(w), group: j, weight: float64(j + 1)})
		old = append(old, rank.Stem(w))
	}
	b.Run("old", func(b *testing.B) {
		for b.Loop() {
			oldSnippet(text, old)
		}
	})
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			snippet(text, needles, false)
		}
	})
}
