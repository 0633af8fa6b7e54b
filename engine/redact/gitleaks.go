package redact

import (
	"regexp"
	"strings"
	"unicode"
)

//go:generate go test -run TestGitleaksRulesMatchTheModule -update .

// gitleaksRule is one rule of gitleaks' default config as gitleaks' own
// loader reads it (gitleaks_rules.go is generated from the module; see
// TestGitleaksRulesMatchTheModule). The binary carries this table instead
// of importing gitleaks: its config loader (viper) costs 43 ms at every CLI
// start and 2.4 MB of binary, and its detector runs at a quarter of the old
// redactor's speed (measured when the rules were adopted).
type gitleaksRule struct {
	ID          string
	Regex       string
	SecretGroup int
	Entropy     float64
	Keywords    []string
	// Path limits a rule to files of that name. History text has no file
	// name, so such a rule runs on all text (a false positive only hides).
	Path       string
	Allowlists []gitleaksAllowlist
}

// gitleaksAllowlist says when a finding is not a secret.
type gitleaksAllowlist struct {
	// And: every condition must hold (gitleaks' condition = "AND").
	And bool
	// Target is what the regexes test: "" the secret, "match", "line".
	Target    string
	Regexes   []string
	StopWords []string
	// Paths and Commits say whether the allowlist also names files or
	// commits, which history text never matches.
	Paths, Commits bool
}

// gitleaksIgnoredAllowlists are rules whose allowlists Recall drops: they
// exempt the vendors' published example keys (AKIAIOSFODNN7EXAMPLE, the
// Firebase sample keys). Tests and demos paste exactly those, and hiding a
// public example costs nothing.
var gitleaksIgnoredAllowlists = map[string]bool{"aws-access-token": true, "gcp-api-key": true}

// gitleaksRuleSet turns the generated table into rules, after Recall's own.
func gitleaksRuleSet() []*rule {
	global := compileAllowlists(gitleaksGlobalAllowlists)
	global = global[:len(global):len(global)] // shared: an append copies
	out := make([]*rule, 0, 2*len(gitleaksRules))
	// One array holds every rule: a process builds them all at its first
	// redaction, and one allocation each was a tenth of the build's.
	rules := make([]rule, 0, len(gitleaksRules))
	for _, g := range gitleaksRules {
		if g.Regex == "" { // a file-name-only rule: nothing to find in text
			continue
		}
		rules = append(rules, rule{
			kind:       g.ID,
			keywords:   g.Keywords,
			pattern:    loosenEnd(g.Regex),
			group:      g.SecretGroup,
			firstGroup: g.SecretGroup == 0,
			entropy:    g.Entropy,
			allow:      global,
		})
		r := &rules[len(rules)-1]
		if own := compileAllowlists(g.Allowlists); len(own) > 0 && !gitleaksIgnoredAllowlists[g.ID] {
			r.allow = append(own, global...)
		}
		out = append(out, r)
	}
	// Twins go after every exact rule, so an exact finding names the kind.
	twins := make([]rule, len(gitleaksRules))
	n := 0
	for _, g := range gitleaksRules {
		if t := &twins[n]; looseTwin(g, t) {
			out = append(out, t)
			n++
		}
	}
	return out
}

// looseTwin sets t to a rule for a token of g's literal prefix (npm_,
// AIza, SG., glpat-) with a body of any length from 16 characters, and
// reports whether g has such a prefix: gitleaks wants
// the exact length of each format, and a key that is a character short
// or long (a typo, a truncated paste, a hand-made test key) is still a
// key. The body must mix letters and digits, as generated keys do and
// identifiers such as npm_package_version do not.
func looseTwin(g gitleaksRule, t *rule) bool {
	fold := strings.HasPrefix(g.Regex, "(?i)")
	body := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(g.Regex, "(?i)"), `\b`), "(")
	var lit strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) && strings.IndexByte(`.-_~`, body[i+1]) >= 0 {
			lit.WriteByte(body[i+1])
			i++
			continue
		}
		if c == '_' || c == '-' || c == '~' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			if i+1 < len(body) && strings.IndexByte(`{*+?`, body[i+1]) >= 0 {
				break // a quantified atom is not part of the prefix
			}
			lit.WriteByte(c)
			continue
		}
		break
	}
	prefix := lit.String()
	for i, k := range g.Keywords {
		if len(k) >= 3 && len(prefix) >= len(k) && strings.EqualFold(prefix[:len(k)], k) {
			p := `\b` + regexp.QuoteMeta(prefix) + `[A-Za-z0-9_.\-]{16,}`
			if fold {
				p = "(?i)" + p
			}
			n := len(prefix)
			*t = rule{kind: g.ID, keywords: g.Keywords[i : i+1 : i+1], pattern: p,
				extend: func(s string, m []int, start, end int) int {
					for end > start+n && strings.IndexByte("._-", s[end-1]) >= 0 {
						end--
					}
					return end
				},
				vet: func(s string, m []int, start, end int) bool {
					b := s[start+n : end]
					return strings.ContainsAny(b, "0123456789") && strings.IndexFunc(b, unicode.IsLetter) >= 0
				}}
			return true
		}
	}
	return false
}

// gitleaks ends a token with one of `'"; or a space, a \n escape or the
// end. In prose and URLs a key is as often followed by . , ) or &
// ("use AIza….", "?key=AIza…&cb=x"), so for rules of a token with its own
// prefix (`\b(` + the token) Recall ends it at any byte that cannot
// continue the token. Rules that find a value after a key name keep
// gitleaks' ending: there it keeps code (`fn(apiKey, other)`) out.
const (
	gitleaksEnd = `(?:[\x60'"\s;]|\\[nr]|$)`
	tokenEnd    = `(?:[^\w\-]|\\[nr]|$)`
)

// loosenEnd gives a rule of a token with its own prefix (its regex starts
// `\b(`, after an optional `(?i)`) tokenEnd for gitleaks' ending.
func loosenEnd(re string) string {
	if strings.HasPrefix(strings.TrimPrefix(re, "(?i)"), `\b(`) && strings.HasSuffix(re, gitleaksEnd) {
		return strings.TrimSuffix(re, gitleaksEnd) + tokenEnd
	}
	return re
}

func compileAllowlists(as []gitleaksAllowlist) []*allowlist {
	var out []*allowlist
	for _, a := range as {
		if a.And && (a.Paths || a.Commits) {
			continue // needs a file or commit match, which text never has
		}
		if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
			continue
		}
		out = append(out, &allowlist{and: a.And, target: a.Target, regexes: a.Regexes, stopWords: a.StopWords})
	}
	return out
}

// keywordInSecret reports whether the secret carries one of its rule's
// keywords itself (sk_live_…, AIza…, npm_…): then the shape alone is the
// evidence and the entropy floor is skipped, so that low-entropy test and
// placeholder-looking keys of a real format are hidden too.
func keywordInSecret(secret string, keywords []string) bool {
	ls := strings.ToLower(secret)
	for _, k := range keywords {
		if strings.Contains(ls, k) {
			return true
		}
	}
	return false
}
