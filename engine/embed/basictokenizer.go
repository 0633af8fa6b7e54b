package embed

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// preTokenize is HF's BasicTokenizer.tokenize: it splits text into words and
// punctuation marks, keeping special tokens such as [SEP] whole.
func preTokenize(text string, lowercase bool) []string {
	var words []string
	for _, seg := range splitSpecial(text) {
		if isSpecial(seg) {
			words = append(words, seg)
			continue
		}
		cleaned := norm.NFC.String(cleanText(seg))
		for _, w := range strings.Fields(cleaned) {
			if lowercase {
				w = stripAccents(strings.ToLower(w))
			}
			words = splitPunctuation(words, w)
		}
	}
	return words
}

// splitSpecial cuts text around literal special tokens, like HF's added-token trie.
func splitSpecial(text string) []string {
	var out []string
	for len(text) > 0 {
		at, which := -1, ""
		for _, sp := range specialTokens {
			if i := strings.Index(text, sp); i >= 0 && (at < 0 || i < at) {
				at, which = i, sp
			}
		}
		if at < 0 {
			return append(out, text)
		}
		if at > 0 {
			out = append(out, text[:at])
		}
		out = append(out, which)
		text = text[at+len(which):]
	}
	return out
}

// cleanText drops NUL, U+FFFD and control characters, maps every whitespace
// character to a space, and puts spaces around CJK ideographs.
func cleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == 0 || r == unicode.ReplacementChar || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

// isControl follows HF: any "C*" category except tab, newline and carriage return.
// Unassigned code points (Cn) count as control too.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isPunctuation follows HF: all non-alphanumeric printable ASCII, plus any "P*" category.
func isPunctuation(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK reports the CJK Unified Ideographs blocks that HF splits per character.
// Japanese kana and Korean hangul are deliberately not included, as in HF.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

func stripAccents(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitPunctuation appends the pieces of w to words: every punctuation rune
// becomes its own word.
func splitPunctuation(words []string, w string) []string {
	start := 0
	for i, r := range w {
		if !isPunctuation(r) {
			continue
		}
		if i > start {
			words = append(words, w[start:i])
		}
		n := len(string(r))
		words = append(words, w[i:i+n])
		start = i + n
	}
	if start < len(w) {
		words = append(words, w[start:])
	}
	return words
}
