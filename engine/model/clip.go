package model

import "unicode/utf8"

// Clip keeps the first head and last tail bytes of s (cut on rune
// boundaries) with mark between them, and reports whether it cut anything.
// Stored texts and displayed windows are both bounded this way.
func Clip(s string, head, tail int, mark string) (string, bool) {
	if len(s) <= head+tail+len(mark) {
		return s, false
	}
	h := head
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	if tail == 0 {
		return s[:h], true
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h] + mark + s[t:], true
}
