// Package tokens splits text into the code-aware search terms shared by the
// indexer and the query parser, so both sides see identical token streams.
//
// A compound such as `ErrEmailTaken`, `DB_MAX_OPEN_CONNS`, `etl/redact.py` or
// `os.ReadFile` is emitted whole (lowercased, its connectors folded to `_`)
// and then as its parts (`err email taken`), so a search for the whole
// identifier, for one of its words, or for a phrase containing it all match.
package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTokenLen is the longest token kept. People paste what they need to
// find again whole: a commit SHA (40), a sha256 (64) or sha512 (128) hex, a
// request id, a short base64 value, a long identifier or path, so those
// must be tokens (below 64 characters a sha512 was silently dropped and
// its query became "recent activity"). Runs longer than 256 characters are
// blobs (inline images, minified bundles) that nobody types, and each would
// add a vocabulary entry of its own.
const MaxTokenLen = 256

// Token is one term and the byte span of the compound it came from.
type Token struct {
	Text       string
	Start, End int  // byte offsets in the source text
	Whole      bool // the whole form of a compound (parts follow it)
	// Glued: a camelCase compound's lower-case form without its case
	// boundaries (`budgetviewmodel` of `BudgetViewModel`,
	// `inventorypanel_onitempicked` of `InventoryPanel.OnItemPicked`),
	// emitted after the parts so people who type identifiers in lower case
	// find them.
	Glued bool
}

// isWordRune reports letters and digits; `_` is a connector.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isConnector(r rune) bool {
	switch r {
	case '_', '.', '/', '-', ':', '\\':
		return true
	}
	return false
}

// Split returns the tokens of text in order. Each compound yields its whole
// form followed by its parts; a simple word yields itself.
func Split(text string) []Token {
	var out []Token
	Each(text, func(t Token) { out = append(out, t) })
	return out
}

// Terms returns just the token texts.
func Terms(text string) []string {
	var out []string
	Each(text, func(t Token) { out = append(out, t.Text) })
	return out
}

// Each calls fn for every token of text, without allocating a slice.
func Each(text string, fn func(Token)) {
	i := 0
	for i < len(text) {
		r, w := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += w
			continue
		}
		start := i
		end := scanCompound(text, i)
		emitCompound(text[start:end], start, fn)
		i = end
	}
}

// scanCompound returns the end of the compound starting at i: word runes,
// joined by single connectors that sit between two word runes.
func scanCompound(text string, i int) int {
	end := i
	for i < len(text) {
		r, w := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			i += w
			end = i
			continue
		}
		if isConnector(r) {
			// A connector continues the compound only when a word rune follows
			// (so "done." or "a - b" end here); runs like "__init__" count.
			j := i + w
			for j < len(text) {
				r2, w2 := utf8.DecodeRuneInString(text[j:])
				if !isConnector(r2) {
					break
				}
				j += w2
			}
			if j < len(text) {
				r2, _ := utf8.DecodeRuneInString(text[j:])
				if isWordRune(r2) {
					i = j
					continue
				}
			}
		}
		break
	}
	return end
}

func emitCompound(c string, offset int, fn func(Token)) {
	// Most compounds are plain words: emitted as themselves, without
	// splitting them into a one-piece slice (an allocation per word;
	// BenchmarkEach 590 -> 430 us).
	if plainWord(c) {
		if t := normalize(c); t != "" {
			fn(Token{Text: t, Start: offset, End: offset + len(c)})
		}
		return
	}
	parts := splitParts(c)
	if len(parts) == 1 {
		if t := normalize(parts[0].text); t != "" {
			fn(Token{Text: t, Start: offset, End: offset + len(c)})
		}
		return
	}
	var whole strings.Builder
	for i, p := range parts {
		if i > 0 {
			whole.WriteByte('_')
		}
		whole.WriteString(strings.ToLower(p.text))
	}
	if w := whole.String(); len(w) <= MaxTokenLen {
		fn(Token{Text: w, Start: offset, End: offset + len(c), Whole: true})
	}
	for _, p := range parts {
		if t := normalize(p.text); t != "" {
			fn(Token{Text: t, Start: offset + p.start, End: offset + p.start + len(p.text)})
		}
	}
	emitGlued(c, offset, parts, fn)
}

// emitGlued emits the glued forms of a compound that has camelCase
// boundaries: each connector-separated segment that splits, lower-cased
// whole, then the whole compound from those segments when it has several.
func emitGlued(c string, offset int, parts []piece, fn func(Token)) {
	var segs []string
	segStart, camel := 0, false
	flush := func(end int) {
		segs = append(segs, strings.ToLower(c[segStart:end]))
		if camel && end-segStart <= MaxTokenLen {
			fn(Token{Text: segs[len(segs)-1], Start: offset + segStart, End: offset + end, Glued: true})
		}
	}
	anyCamel := false
	for i := 1; i < len(parts); i++ {
		prevEnd := parts[i-1].start + len(parts[i-1].text)
		if parts[i].start == prevEnd { // no connector between: a case boundary
			camel, anyCamel = true, true
			continue
		}
		flush(prevEnd)
		segStart, camel = parts[i].start, false
	}
	if !anyCamel {
		return
	}
	last := parts[len(parts)-1]
	flush(last.start + len(last.text))
	if len(segs) > 1 {
		if w := strings.Join(segs, "_"); len(w) <= MaxTokenLen {
			fn(Token{Text: w, Start: offset, End: offset + len(c), Glued: true})
		}
	}
}

// Overlong reports whether text holds a part too long to be a token
// (longer than MaxTokenLen), which Each leaves out.
func Overlong(text string) bool {
	if len(text) <= MaxTokenLen {
		return false
	}
	long := false
	i := 0
	for i < len(text) && !long {
		r, w := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += w
			continue
		}
		end := scanCompound(text, i)
		for _, p := range splitParts(text[i:end]) {
			long = long || len(p.text) > MaxTokenLen
		}
		i = end
	}
	return long
}

// plainWord reports a compound splitParts leaves in one piece that is
// the whole compound: ASCII letters and digits, a capital only first.
func plainWord(c string) bool {
	if c == "" {
		return false
	}
	for i := 0; i < len(c); i++ {
		switch b := c[i]; {
		case 'a' <= b && b <= 'z', '0' <= b && b <= '9':
		case 'A' <= b && b <= 'Z' && i == 0:
		default:
			return false
		}
	}
	return true
}

type piece struct {
	text  string
	start int
}

// splitParts splits a compound at connectors and camelCase boundaries
// (`HTTPServer` -> HTTP, Server; `isPending` -> is, Pending). Letters and
// digits stay together (`E0502`, `v5`, `sha256`).
func splitParts(c string) []piece {
	var out []piece
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, piece{c[start:end], start})
		}
		start = -1
	}
	for i, r := range c {
		if !isWordRune(r) {
			flush(i)
			prev = r
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) {
			if unicode.IsLower(prev) {
				flush(i)
				start = i
			} else if unicode.IsUpper(prev) {
				// "HTTPServer": split before the last capital of a run when a
				// lowercase letter follows it.
				if next, _ := utf8.DecodeRuneInString(c[i+utf8.RuneLen(r):]); unicode.IsLower(next) {
					flush(i)
					start = i
				}
			}
		}
		prev = r
	}
	flush(len(c))
	return out
}

func normalize(s string) string {
	if len(s) > MaxTokenLen {
		return ""
	}
	return strings.ToLower(s)
}

// Stopwords are dropped from free-text queries (never from phrases). The
// list is short on purpose: code words like "for", "if", "in" are kept when
// they are the only terms.
var Stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "because": true,
	"but": true, "by": true, "can": true, "did": true, "do": true, "does": true, "for": true, "from": true,
	"had": true, "has": true, "have": true, "how": true, "i": true, "if": true, "in": true, "into": true,
	"is": true, "it": true, "its": true, "just": true, "me": true, "my": true, "of": true, "on": true,
	"or": true, "our": true, "should": true, "so": true, "that": true, "the": true, "their": true, "them": true,
	"then": true, "there": true, "these": true, "this": true, "to": true, "was": true, "we": true, "were": true,
	"what": true, "when": true, "where": true, "which": true, "while": true, "who": true, "why": true,
	"will": true, "with": true, "would": true, "you": true, "your": true, "each": true, "any": true,
	"all": true, "about": true, "after": true, "before": true, "not": true, "no": true, "only": true,
	"instead": true, "than": true, "us": true, "out": true, "up": true, "get": true,
	"got": true, "let": true, "way": true, "also": true, "too": true, "very": true,
}
