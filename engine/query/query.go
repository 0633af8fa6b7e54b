// Package query describes one search: what the user typed, parsed into a
// small AST (free terms, "quoted phrases" and -exclusions, each already split
// into the code-aware tokens the index holds), and its scope (Filter, with
// the typed Mode, Group and Role enums). Nothing here builds SQL: the index
// compiles the AST and the Filter, the vector set compiles the Filter too.
package query

import (
	"strings"
	"unicode"

	"github.com/recallhq/recall/engine/tokens"
)

// MaxTerms bounds how many terms a query may carry into the index; the rest
// are ignored (a pasted stack trace should not become a 500-way OR).
const MaxTerms = 24

// Term is one unit the user typed: a word, an identifier, a path.
type Term struct {
	Raw    string   // as typed
	Tokens []string // its index tokens: the whole form first for compounds
	Stop   bool     // a stopword: only used when nothing else is left
}

// Key is the token that stands for the term: the whole form of a compound.
func (t Term) Key() string {
	if len(t.Tokens) == 0 {
		return ""
	}
	return t.Tokens[0]
}

// Phrase is a quoted run of text, matched token by token in order.
type Phrase struct {
	Raw    string
	Tokens []string
	// Compound: the phrase is one compound (`"users_email_key"`), its
	// Tokens its whole form and then its parts, a sequence the index
	// holds wherever it holds that whole form (see package tokens).
	Compound bool
}

// newPhrase is the phrase of body.
func newPhrase(body string) Phrase {
	p := Phrase{Raw: body}
	one := true
	var first tokens.Token
	tokens.Each(body, func(t tokens.Token) {
		if len(p.Tokens) == 0 {
			first = t
		} else if t.Start < first.Start || t.End > first.End {
			one = false // a token of another compound or word
		}
		p.Tokens = append(p.Tokens, t.Text)
	})
	p.Compound = one && len(p.Tokens) > 1 && first.Whole
	return p
}

// Query is a parsed search query.
type Query struct {
	Raw            string
	Terms          []Term
	Phrases        []Phrase
	ExcludeTerms   []Term
	ExcludePhrases []Phrase
	// Overlong are the words that held a run longer than any index token
	// (tokens.MaxTokenLen): left out, so the engine can say so.
	Overlong []string
}

// Empty reports a query with nothing to match (it lists recent activity).
func (q Query) Empty() bool { return len(q.Terms) == 0 && len(q.Phrases) == 0 }

// IsCode reports a query that names identifiers, paths, numbers or quoted
// strings, which the user means literally (ranking then trusts the
// lexical match over vector similarity).
func (q Query) IsCode() bool {
	if len(q.Phrases) > 0 {
		return true
	}
	for _, t := range q.Terms {
		if len(t.Tokens) > 1 || strings.ContainsAny(t.Raw, "/_.:()[]{}<>=#$@") || strings.ContainsAny(t.Key(), "0123456789") {
			return true
		}
	}
	return false
}

// Searchable is the stop-word rule, the one place it is written: the terms
// a search matches and ranks by are the ones that are not stopwords, unless
// every term is one ("to be or not to be"), when they all count.
func (q Query) Searchable() []Term {
	out := make([]Term, 0, len(q.Terms))
	for _, t := range q.Terms {
		if !t.Stop {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return q.Terms
	}
	return out
}

// Parse parses raw. It never fails: unbalanced quotes close at the end,
// operators and punctuation that mean nothing to us are ordinary text.
//
// A `-word` is an exclusion, except where it is a command's flag (the shell
// rule): after a command word (`uniq -c`, `sort -rn`, `go test -run`, `git
// log -p`: a known command and every word after it) or, when it is one or
// two letters, after any word (`logslice -v`: nobody excludes a letter).
// A `-word` that opens the query, or follows another exclusion, stays an
// exclusion (`-fork webhook`). `--flag` is always literal.
func Parse(raw string) Query {
	q := Query{Raw: raw}
	s := strings.TrimSpace(raw)
	inCommand := false // a command word came before: its flags are text
	prevWord := false  // the previous item was a word that is not an exclusion
	for len(s) > 0 {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			break
		}
		neg := false
		if s[0] == '-' && len(s) > 1 && !unicode.IsSpace(rune(s[1])) && s[1] != '-' {
			if !isFlag(s, inCommand, prevWord) {
				neg = true
				s = s[1:]
			}
		}
		prevWord = !neg
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			var body string
			if end < 0 {
				body, s = s[1:], ""
			} else {
				body, s = s[1:1+end], s[2+end:]
			}
			if tokens.Overlong(body) {
				q.Overlong = append(q.Overlong, body)
			}
			p := newPhrase(body)
			if len(p.Tokens) == 0 {
				continue
			}
			if neg {
				q.ExcludePhrases = append(q.ExcludePhrases, p)
			} else {
				q.Phrases = append(q.Phrases, p)
			}
			continue
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		var word string
		if end < 0 {
			word, s = s, ""
		} else {
			word, s = s[:end], s[end:]
		}
		if tokens.Overlong(word) {
			q.Overlong = append(q.Overlong, word)
		}
		word = dropPossessive(word)
		if !neg && commandWords[strings.ToLower(word)] {
			inCommand = true
		}
		for _, t := range splitWord(word) {
			if neg {
				q.ExcludeTerms = append(q.ExcludeTerms, t)
			} else if len(q.Terms) < MaxTerms {
				q.Terms = append(q.Terms, t)
			}
		}
	}
	return q
}

// dropPossessive drops a trailing 's (or ’s): "Lena's" means Lena, and the
// lone "s" it would leave matches every plural in the index.
func dropPossessive(word string) string {
	for _, suf := range []string{"'s", "’s", "'S", "’S"} {
		if w, ok := strings.CutSuffix(word, suf); ok && w != "" {
			return w
		}
	}
	return word
}

// isFlag reports whether the `-x...` at the start of s is a command-line
// flag rather than an exclusion (see Parse).
func isFlag(s string, inCommand, prevWord bool) bool {
	if !prevWord {
		return false
	}
	if inCommand {
		return true
	}
	end := strings.IndexFunc(s, unicode.IsSpace)
	if end < 0 {
		end = len(s)
	}
	letters := s[1:end]
	if len(letters) > 2 {
		return false
	}
	for _, r := range letters {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// commandWords are programs whose flags people search for with them. A
// `-word` after one of these (and its subcommands) is its flag, not an
// exclusion. The list holds what a developer's sessions run most (the
// public corpus's tools among them); a flag of a program not listed still
// counts when it is one or two letters.
var commandWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`git go cargo rustc npm npx pnpm yarn node deno bun python python3 pip uv pytest
		make cmake docker kubectl helm terraform ansible ansible-playbook aws gcloud az psql mysql sqlite3 redis-cli
		curl wget ssh scp rsync tar gzip unzip ls cat head tail less grep rg egrep find fd sed awk sort uniq wc cut tr
		xargs tee diff patch chmod chown mkdir rm cp mv ln ps kill top du df jq yq env export sudo systemctl journalctl
		airflow govulncheck golangci-lint eslint prettier tsc vite vitest jest hyperfine perf strace gdb dlv trivy glab gh`) {
		m[w] = true
	}
	return m
}()

// splitWord turns one whitespace-separated word into terms: usually one
// (a compound keeps its parts together), several when the word held
// unrelated pieces glued by punctuation the tokenizer does not join on
// (`"users_email_key"`, `(foo,bar)`).
func splitWord(word string) []Term {
	var out []Term
	groupEnd := -1 // end of the compound whose parts are being collected
	for _, tok := range tokens.Split(word) {
		if tok.Glued {
			// The index holds it beside the parts; a free term matches its
			// whole form or its parts, and the glued form is what a typo in
			// it is corrected against (the engine derives it: Term.Glued).
			continue
		}
		if tok.Whole || tok.Start >= groupEnd {
			out = append(out, Term{Raw: word[tok.Start:tok.End]})
			groupEnd = -1
			if tok.Whole {
				groupEnd = tok.End
			}
		}
		t := &out[len(out)-1]
		t.Tokens = append(t.Tokens, tok.Text)
	}
	for i := range out {
		out[i].Stop = len(out[i].Tokens) == 1 && tokens.Stopwords[out[i].Tokens[0]]
	}
	return out
}
