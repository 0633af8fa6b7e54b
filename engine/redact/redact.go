// Package redact finds secrets in history text (cloud and API keys, tokens,
// JWTs, private keys, passwords in assignments and URLs) and replaces them
// with `[redacted:<kind>]`, so they never reach an output or the search
// index by default.
package redact

import (
	"fmt"
	"regexp"
	"strings"
)

// Rule is one kind of secret.
type Rule struct {
	Kind string
	// Triggers are lowercase literals one of which must occur in the
	// lowercased text before the pattern runs (regexps are the slow part).
	Triggers []string
	Pattern  *regexp.Regexp
	// Group is the submatch that holds the secret (0 = the whole match);
	// the rest of the match (a key name, "Bearer ") is kept.
	Group int
	// KindFromGroup names the kind after a key word in this submatch
	// (password, secret, token, ...), when set.
	KindFromGroup int
}

// Redactor applies rules.
type Redactor struct {
	rules []Rule
}

// placeholders are values of secret-looking assignments that are not
// secrets: type names, empty markers, references to the environment.
var placeholders = map[string]bool{
	"string": true, "str": true, "int": true, "bool": true, "boolean": true, "number": true, "null": true,
	"none": true, "nil": true, "true": true, "false": true, "undefined": true, "optional": true,
	"required": true, "redacted": true, "xxxx": true, "****": true,
}

// Builtin are the rules always on. Each pattern's comment names the format.
func Builtin() []Rule {
	return []Rule{
		// PEM private keys, whole block (also line-numbered file reads).
		{Kind: "private-key", Triggers: []string{"private key-----"},
			Pattern: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----`)},
		// A BEGIN with no END in reach (a cut output): the rest of the block.
		{Kind: "private-key", Triggers: []string{"private key-----"},
			Pattern: regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:\s*(?:\d+: )?[A-Za-z0-9+/=]{16,})+`)},
		// AWS access key ids.
		{Kind: "aws-key", Triggers: []string{"akia", "asia", "aida", "aroa"},
			Pattern: regexp.MustCompile(`\b(?:AKIA|ASIA|AIDA|AROA)[0-9A-Z]{16}\b`)},
		// GitHub tokens: classic ghp_/gho_/ghu_/ghs_/ghr_ and fine-grained.
		{Kind: "github-token", Triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
			Pattern: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b`)},
		// OpenAI / Anthropic style keys: sk-..., sk-proj-..., sk-ant-...
		{Kind: "api-key", Triggers: []string{"sk-"},
			Pattern: regexp.MustCompile(`\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}`)},
		// Slack tokens.
		{Kind: "slack-token", Triggers: []string{"xox"},
			Pattern: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
		// JWTs: three base64url segments, the first a JSON header.
		{Kind: "jwt", Triggers: []string{"eyj"},
			Pattern: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}`)},
		// Bearer tokens (the scheme word is kept).
		{Kind: "bearer", Triggers: []string{"bearer"}, Group: 1,
			Pattern: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{12,}=*)`)},
		// Passwords in URLs: scheme://user:password@host.
		{Kind: "url-password", Triggers: []string{"://"}, Group: 1,
			Pattern: regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]{3,})@`)},
		// Assignments: password=..., secret: ..., API_TOKEN="...", "apiKey": "...".
		{Kind: "secret", Triggers: []string{"pass", "pwd", "secret", "token", "key", "cred"}, Group: 3, KindFromGroup: 1,
			Pattern: regexp.MustCompile(`(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]*)("?'?\s*[:=]\s*["']?)([^\s"'<>,;)}\]]{4,})`)},
	}
}

// New makes a redactor from the builtin rules plus extra named patterns
// (from the config file).
func New(extra map[string]string) (*Redactor, error) {
	r := &Redactor{rules: Builtin()}
	for name, pat := range extra {
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("redaction pattern %q: %w", name, err)
		}
		r.rules = append(r.rules, Rule{Kind: name, Pattern: re})
	}
	return r, nil
}

// Default is the builtin redactor.
var Default, _ = New(nil)

// Mark is what a secret of kind becomes.
func Mark(kind string) string { return "[redacted:" + kind + "]" }

// String replaces every secret in s and reports how many it replaced.
func (r *Redactor) String(s string) (string, int) {
	if r == nil || s == "" {
		return s, 0
	}
	var lower string
	n := 0
	for _, rule := range r.rules {
		if len(rule.Triggers) > 0 {
			if lower == "" {
				lower = strings.ToLower(s)
			}
			hit := false
			for _, t := range rule.Triggers {
				if strings.Contains(lower, t) {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
		}
		changed := false
		s = replace(rule, s, &n, &changed)
		if changed {
			lower = ""
		}
	}
	return s, n
}

// Redact is String without the count.
func (r *Redactor) Redact(s string) string {
	out, _ := r.String(s)
	return out
}

func replace(rule Rule, s string, n *int, changed *bool) string {
	idx := rule.Pattern.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		g := rule.Group
		start, end := m[2*g], m[2*g+1]
		if start < 0 {
			continue
		}
		val := s[start:end]
		if strings.HasPrefix(val, "[redacted:") || isPlaceholder(val) {
			continue
		}
		kind := rule.Kind
		if rule.KindFromGroup > 0 && m[2*rule.KindFromGroup] >= 0 {
			kind = keyKind(s[m[2*rule.KindFromGroup]:m[2*rule.KindFromGroup+1]])
		}
		b.WriteString(s[last:start])
		b.WriteString(Mark(kind))
		last = end
		*n++
		*changed = true
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isPlaceholder(v string) bool {
	lv := strings.ToLower(strings.Trim(v, `"'`))
	if placeholders[lv] {
		return true
	}
	// References, not values: $VAR, ${VAR}, {{ x }}, process.env.X, <your-key>.
	return strings.HasPrefix(lv, "$") || strings.HasPrefix(lv, "{") || strings.HasPrefix(lv, "<") ||
		strings.HasPrefix(lv, "process.env") || strings.HasPrefix(lv, "os.environ") || strings.HasPrefix(lv, "os.getenv") ||
		strings.HasPrefix(lv, "env.") || strings.HasPrefix(lv, "secrets.") || strings.Trim(lv, "*x.") == ""
}

// keyKind names an assignment's secret after its key.
func keyKind(key string) string {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "pass") || strings.Contains(k, "pwd"):
		return "password"
	case strings.Contains(k, "token"):
		return "token"
	case strings.Contains(k, "secret"):
		return "secret"
	case strings.Contains(k, "key"):
		return "api-key"
	case strings.Contains(k, "cred"):
		return "credentials"
	}
	return "secret"
}
