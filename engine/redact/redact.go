// Package redact finds secrets in history text (cloud and API keys, tokens,
// private keys, passwords in assignments, URLs, headers and command lines)
// and replaces them with `[redacted:<kind>]`, so they never reach an output
// or the search index by default.
//
// The rules are gitleaks' default rule set (generated from the module, see
// gitleaks.go) with Recall's own on top (rules.go): the shapes people paste
// into a chat that a scanner of source files does not look for, and looser
// twins of the commonest keys. A false negative leaks a secret; a false
// positive only hides a word, so where the two disagree Recall redacts.
package redact

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Redactor finds and replaces secrets. It is safe for concurrent use.
type Redactor struct {
	// load, when set, returns the built redactor this one stands for: New
	// builds nothing, because building the builtin rules costs ~6 ms of CPU
	// (profiled in CLI searches on the 220k-part benchmark history) and a
	// process that shows no text (status, an idle sync, a daemon waiting
	// for its first request) never needs them. A search shows text, so it
	// still pays them, once, when it renders its first snippet.
	load  func() *Redactor
	rules []*rule
	// words finds, in one pass, the rules' keywords (gitleaks' prefilter:
	// a rule runs only when one of its keywords occurs) and the literals
	// anchored rules start at.
	words     *wordIndex
	wordRules [][]int // word -> rules it is a keyword of
	wordStart [][]int // word -> anchored rules it is an anchor of
	always    []int   // rules without keywords (the config's extra patterns)
}

// rule is one kind of secret.
type rule struct {
	kind string
	// keywords are lowercase literals one of which must occur in the text
	// before the pattern runs.
	keywords []string
	pattern  string
	// group is the submatch that holds the secret (0 = the whole match);
	// the rest of the match (a key name, "Bearer ") is kept. firstGroup
	// takes the first non-empty submatch instead (gitleaks' rule when a
	// rule sets no secretGroup).
	group      int
	firstGroup bool
	// kindFrom names the kind after a key word in this submatch.
	kindFrom int
	// entropy is gitleaks' floor on the secret's Shannon entropy.
	entropy float64
	allow   []*allowlist
	// vet rejects a candidate (placeholders, code): text, the match's
	// submatch indexes and the secret's bounds.
	vet func(text string, m []int, start, end int) bool
	// extend may move the end of a candidate (a multi-word value) before
	// vet sees it.
	extend func(text string, m []int, start, end int) int
	// back, when set, anchors the rule: the pattern is tried only where
	// one of its anchors occurs, from the start of the run of at most
	// backMax back bytes that ends there (the key name around "token",
	// the scheme before "://"); boundary: only at a word boundary. Own
	// rules set back and use their keywords as anchors; for the others
	// anchorOf reads anchors off the pattern. Each candidate is judged
	// alone, so one that is rejected (`"description": "…"`) cannot
	// swallow one inside it, and the cost follows the anchors rather than
	// the text's length.
	back     *byteSet
	backMax  int
	boundary bool
	anchors  []string
	anchored bool
	// next, when set, is a cheap test of what must follow the end of an
	// anchor hit (an operator after a key name); a hit that fails it is
	// not tried. Most occurrences of "key" or "token" are words of prose
	// or code, and running a regexp at each was most of redaction's time.
	next func(s string, end int) bool
	// window, when set, is how much text from the anchor the pattern is
	// first run on (see semiGenericWindow).
	window int

	once sync.Once
	re   *regexp.Regexp
}

// byteSet is a set of ASCII bytes.
type byteSet [256]bool

func bytesOf(chars string) *byteSet {
	var b byteSet
	for i := 0; i < len(chars); i++ {
		if chars[i] == '-' && i > 0 && i+1 < len(chars) {
			for c := chars[i-1]; c <= chars[i+1]; c++ {
				b[c] = true
			}
			continue
		}
		b[chars[i]] = true
	}
	return &b
}

// regexp compiles the pattern on first use: most rules never run in a
// process, and compiling all of them costs 16 ms at start-up.
func (r *rule) regexp() *regexp.Regexp {
	r.once.Do(func() {
		if r.re == nil {
			p := r.pattern
			if r.anchored {
				p = "^(?:" + p + ")"
			}
			r.re = regexp.MustCompile(p)
		}
	})
	return r.re
}

// allowlist is a compiled gitleaksAllowlist.
type allowlist struct {
	and       bool
	target    string
	regexes   []string
	stopWords []string
	once      sync.Once
	re        *regexp.Regexp
	// stops holds the stopwords by length: generic-api-key has 1,446, and
	// looking up each substring of a short secret beats scanning for each
	// stopword (and building an automaton costs 60 ms at first use).
	stops            map[string]bool
	stopMin, stopMax int
}

func (a *allowlist) allowed(secret, match, line string) bool {
	a.once.Do(func() {
		if len(a.regexes) > 0 {
			a.re = regexp.MustCompile("(?:" + strings.Join(a.regexes, ")|(?:") + ")")
		}
		if len(a.stopWords) > 0 {
			a.stops, a.stopMin = map[string]bool{}, len(a.stopWords[0])
			for _, w := range a.stopWords {
				a.stops[w] = true
				a.stopMin, a.stopMax = min(a.stopMin, len(w)), max(a.stopMax, len(w))
			}
		}
	})
	// The stopwords first: they are cheap, and under "or" one that holds
	// spares the regexp (generic-api-key's match list costs 60 µs a try).
	if len(a.stopWords) > 0 {
		stop := a.hasStopWord(strings.ToLower(secret))
		if stop && !a.and {
			return true
		}
		if !stop && a.and {
			return false
		}
	}
	if a.re != nil {
		target := secret
		switch a.target {
		case "match":
			target = match
		case "line":
			target = line
		}
		return target != "" && a.re.MatchString(target)
	}
	return a.and && len(a.stopWords) > 0
}

// hasStopWord reports whether a stopword occurs in the lowercase ls.
func (a *allowlist) hasStopWord(ls string) bool {
	for i := range ls {
		for n := a.stopMin; n <= a.stopMax && i+n <= len(ls); n++ {
			if a.stops[ls[i:i+n]] {
				return true
			}
		}
	}
	return false
}

// builtin is the builtin rules, analysed and indexed once per process
// (7 ms) and shared by every redactor.
var builtin = sync.OnceValue(func() *Redactor {
	return build(append(ownRules(), gitleaksRuleSet()...), true)
})

// Default is the builtin redactor.
func Default() *Redactor { return builtin() }

// New makes a redactor from the builtin rules plus extra named patterns
// (from the config file), which run on all text.
// The builtin rules are built on first use; a bad extra pattern is an
// error here, before anything is read.
func New(extra map[string]string) (*Redactor, error) {
	if len(extra) == 0 {
		return &Redactor{load: builtin}, nil
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	var own []*rule
	for _, name := range names {
		re, err := regexp.Compile(extra[name])
		if err != nil {
			return nil, fmt.Errorf("redaction pattern %q: %w (fix it in the config's redact table; the syntax is Go's regexp)", name, err)
		}
		own = append(own, &rule{kind: name, pattern: extra[name], re: re})
	}
	return &Redactor{load: sync.OnceValue(func() *Redactor {
		b := builtin()
		r := *b
		r.rules = b.rules[:len(b.rules):len(b.rules)]
		r.always = append([]int(nil), b.always...)
		for _, ru := range own {
			r.always = append(r.always, len(r.rules))
			r.rules = append(r.rules, ru)
		}
		return &r
	})}, nil
}

// build indexes the rules' words; without anchor every rule runs over the
// whole text (the reference the anchoring is tested against).
func build(rules []*rule, anchor bool) *Redactor {
	r := &Redactor{rules: rules}
	index := make(map[string]int, 2*len(rules))
	words := make([]string, 0, 2*len(rules))
	word := func(w string) int {
		w = strings.ToLower(w)
		j, ok := index[w]
		if !ok {
			j = len(words)
			index[w] = j
			words = append(words, w)
		}
		return j
	}
	// (word, rule) pairs, grouped by word at the end into one array each:
	// a slice of its own per word, grown rule by rule, was 640 of the
	// build's 2,245 allocations.
	var keyOf, startOf []wordRule
	backs := map[string]*byteSet{}
	for i, ru := range rules {
		if len(ru.keywords) == 0 {
			r.always = append(r.always, i)
			continue
		}
		for _, k := range ru.keywords {
			keyOf = append(keyOf, wordRule{word(k), i})
		}
		switch {
		case !anchor:
			ru.back = nil
		case ru.back != nil:
			ru.anchors, ru.anchored = ru.keywords, true
			if ru.backMax == 0 {
				ru.backMax = maxNameLen
			}
		default:
			ru.anchors, ru.back, ru.backMax, ru.boundary, ru.anchored = anchorsOf(ru.pattern, backs)
			if ru.anchored && ru.next == nil && strings.HasPrefix(ru.pattern, semiGeneric) {
				ru.next = operatorFollows
				if strings.HasSuffix(ru.pattern, gitleaksEnd) {
					ru.window = semiGenericWindow
				}
			}
		}
		for _, a := range ru.anchors {
			startOf = append(startOf, wordRule{word(a), i})
		}
	}
	r.wordRules, r.wordStart = byWord(len(words), keyOf), byWord(len(words), startOf)
	r.words = newWordIndex(words)
	return r
}

// wordRule is a rule (by index) that a word (by index) concerns.
type wordRule struct{ word, rule int }

// byWord groups pairs by word, each word's rules in the order given, all
// in one backing array.
func byWord(words int, pairs []wordRule) [][]int {
	count := make([]int, words)
	for _, p := range pairs {
		count[p.word]++
	}
	flat := make([]int, len(pairs))
	out := make([][]int, words)
	at := 0
	for w, c := range count {
		out[w] = flat[at : at : at+c]
		at += c
	}
	for _, p := range pairs {
		out[p.word] = append(out[p.word], p.rule)
	}
	return out
}

// maxNameLen bounds how far back an own rule looks from its keyword for
// the start of a name (`x_secret_api_token`): longer names are not keys.
const maxNameLen = 128

// Mark is what a secret of kind becomes.
func Mark(kind string) string { return "[redacted:" + kind + "]" }

// Span is one secret found in a text: Start and End bound the secret (what
// is replaced); the match around it (a key name, a header) can reach from
// MatchStart to MatchEnd, and text cut inside that range may hide the
// secret from the rule that found it.
type Span struct {
	Start, End           int
	MatchStart, MatchEnd int
	Kind                 string
	rule                 int
}

// Prepare builds the rules now if they are not built yet, so that a
// process can build them on its other core while it reads (the build
// otherwise falls on its first redaction).
func (r *Redactor) Prepare() {
	if r != nil && r.load != nil {
		r.load()
	}
}

// Spans lists the secrets in s, in order, overlapping findings merged
// (the kind of the first-listed rule wins: Recall's own before gitleaks').
func (r *Redactor) Spans(s string) []Span {
	if r == nil || s == "" {
		return nil
	}
	if r.load != nil {
		r = r.load()
	}
	run, starts := r.scan(s)
	var found []Span
	for _, i := range run {
		ru := r.rules[i]
		if !ru.anchored {
			found = ru.find(s, i, found)
		}
	}
	for _, c := range starts {
		if run := r.rules[c.rule]; c.hit {
			found = run.findAt(s, c.at, c.rule, found)
		}
	}
	if len(found) < 2 {
		return found
	}
	sort.Slice(found, func(a, b int) bool {
		if found[a].Start != found[b].Start {
			return found[a].Start < found[b].Start
		}
		return found[a].rule < found[b].rule
	})
	out := found[:1]
	for _, f := range found[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			last.MatchStart, last.MatchEnd = min(last.MatchStart, f.MatchStart), max(last.MatchEnd, f.MatchEnd)
			continue
		}
		out = append(out, f)
	}
	return out
}

// start is where an anchored rule is to be tried.
type start struct {
	rule, at int
	hit      bool // the rule's keyword occurs in the text
}

// scan runs the word pass: the unanchored rules to run on s (in rule
// order) and where to try the anchored ones.
func (r *Redactor) scan(s string) (run []int, starts []start) {
	var hit []bool
	var last map[int]int // rule -> last start recorded
	r.words.each(s, func(w, wStart, wEnd int) {
		if hit == nil {
			hit = make([]bool, len(r.rules))
		}
		for _, i := range r.wordRules[w] {
			hit[i] = true
		}
		for _, i := range r.wordStart[w] {
			ru := r.rules[i]
			if ru.next != nil && !ru.next(s, wEnd) {
				continue
			}
			at := wStart
			if ru.back != nil {
				for n := 0; at > 0 && n < ru.backMax && ru.back[s[at-1]]; n++ {
					at--
				}
			}
			if ru.boundary && at > 0 && at < len(s) && isWordByte(s[at-1]) == isWordByte(s[at]) {
				continue
			}
			if last == nil {
				last = map[int]int{}
			}
			if prev, ok := last[i]; ok && prev == at {
				continue
			}
			last[i] = at
			starts = append(starts, start{rule: i, at: at})
		}
	})
	for _, i := range r.always {
		if hit == nil {
			return r.always, nil
		}
		hit[i] = true
	}
	for i, h := range hit {
		if h && !r.rules[i].anchored {
			run = append(run, i)
		}
	}
	for j := range starts {
		starts[j].hit = hit[starts[j].rule]
	}
	return run, starts
}

// semiGeneric begins gitleaks' rules for a value after a key name
// (utils.GenerateSemiGenericRegex): up to 50 name bytes, the keyword, up
// to 20 more name bytes or blanks, up to 3 quotes or blanks, an operator.
const semiGeneric = `(?i)[\w.-]{0,50}?(?:`

// semiGenericWindow is the text a semi-generic rule first runs on. Its
// bounded parts (50 name bytes, the keyword, 20 more, 3 quotes, the
// operator, 5 quotes, a value of up to 150) fit in 250 bytes; a value of
// the unbounded kind reaches the window's end, where the rule's `$` ends
// the match, and the rule runs again on the whole text. So the window
// changes no finding, and in 460 bytes Go's regexp backtracks instead of
// simulating its NFA: the largest such rule (generic-api-key, 555
// instructions) fits the backtracker's 256 Kibit up to 472 bytes.
const semiGenericWindow = 460

// operatorFollows is the cheap half of a semi-generic rule: after the
// keyword's end, within the name bytes, blanks and quotes the pattern
// allows (with slack for a keyword that ends before the pattern's does),
// comes one of the operators it allows (= > : , | ?).
func operatorFollows(s string, end int) bool {
	i := end
	for n := 0; i < len(s) && n < 28 && (isWordByte(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == ' ' || s[i] == '\t'); n++ {
		i++
	}
	for n := 0; i < len(s) && n < 3 && (s[i] == '\'' || s[i] == '"' || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'); n++ {
		i++
	}
	return i < len(s) && strings.IndexByte("=>:,|?", s[i]) >= 0
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// find appends the rule's findings in s.
func (ru *rule) find(s string, idx int, out []Span) []Span {
	for _, m := range ru.regexp().FindAllStringSubmatchIndex(s, -1) {
		out = ru.judge(s, m, idx, out)
	}
	return out
}

// findAt appends the anchored rule's finding at offset at, if any.
func (ru *rule) findAt(s string, at, idx int, out []Span) []Span {
	var m []int
	if ru.window > 0 && len(s)-at > ru.window {
		m = ru.regexp().FindStringSubmatchIndex(s[at : at+ru.window])
		if m == nil {
			return out
		}
		if m[1] == ru.window { // it may go on past the window
			m = nil
		}
	}
	if m == nil {
		m = ru.regexp().FindStringSubmatchIndex(s[at:])
	}
	if m == nil {
		return out
	}
	for j := range m {
		if m[j] >= 0 {
			m[j] += at
		}
	}
	return ru.judge(s, m, idx, out)
}

// judge appends match m of the rule if it holds a secret.
func (ru *rule) judge(s string, m []int, idx int, out []Span) []Span {
	start, end := m[0], m[1]
	switch {
	case ru.firstGroup:
		for g := 1; 2*g < len(m); g++ {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				start, end = m[2*g], m[2*g+1]
				break
			}
		}
	case ru.group > 0:
		start, end = m[2*ru.group], m[2*ru.group+1]
	}
	if start < 0 {
		return out
	}
	// A match may run into the next line (gitleaks trims it too).
	for start < end && (s[start] == '\n' || s[start] == '\r') {
		start++
	}
	for end > start && (s[end-1] == '\n' || s[end-1] == '\r') {
		end--
	}
	if start == end {
		return out
	}
	secret := s[start:end]
	if strings.HasPrefix(secret, "[redacted:") {
		return out
	}
	if ru.entropy > 0 && !keywordInSecret(secret, ru.keywords) && entropy(secret) <= ru.entropy {
		return out
	}
	if len(ru.allow) > 0 && allowed(ru.allow, s, secret, m[0], m[1]) {
		return out
	}
	if ru.extend != nil {
		end = ru.extend(s, m, start, end)
	}
	if ru.vet != nil && !ru.vet(s, m, start, end) {
		return out
	}
	kind := ru.kind
	if ru.kindFrom > 0 && m[2*ru.kindFrom] >= 0 {
		kind = keyKind(s[m[2*ru.kindFrom]:m[2*ru.kindFrom+1]])
	}
	return append(out, Span{Start: start, End: end, MatchStart: m[0], MatchEnd: max(m[1], end), Kind: kind, rule: idx})
}

func allowed(as []*allowlist, s, secret string, ms, me int) bool {
	ls := strings.LastIndexByte(s[:ms], '\n') + 1
	le := strings.IndexByte(s[me:], '\n')
	if le < 0 {
		le = len(s)
	} else {
		le += me
	}
	for _, a := range as {
		if a.allowed(secret, s[ms:me], s[ls:le]) {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per byte, as gitleaks
// computes it.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// String replaces every secret in s and reports how many it replaced.
func (r *Redactor) String(s string) (string, int) {
	spans := r.Spans(s)
	if len(spans) == 0 {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.Start])
		b.WriteString(Mark(sp.Kind))
		last = sp.End
	}
	b.WriteString(s[last:])
	return b.String(), len(spans)
}

// Redact is String without the count.
func (r *Redactor) Redact(s string) string {
	out, _ := r.String(s)
	return out
}
