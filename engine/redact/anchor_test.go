package redact

import (
	"strings"
	"testing"
)

// Anchoring is only a way to run less: on real history, everything a
// scan of the whole text with every rule finds, the anchored redactor
// finds too.
func TestAnchoringFindsWhatAFullScanFinds(t *testing.T) {
	texts, _ := historyTexts(t)
	texts = append(texts, shapes()...)
	full := build(append(ownRules(), gitleaksRuleSet()...), false)
	anchored := 0
	for _, ru := range Default().rules {
		if ru.anchored {
			anchored++
		}
	}
	if anchored < len(Default().rules)*9/10 {
		t.Errorf("only %d of %d rules are anchored", anchored, len(Default().rules))
	}
	for _, s := range texts {
		got := Default().Spans(s)
		for _, w := range full.Spans(s) {
			covered := false
			for _, g := range got {
				if g.Start <= w.Start && w.End <= g.End {
					covered = true
				}
			}
			if !covered {
				t.Errorf("anchored redaction misses %s %q in %q", w.Kind, s[w.Start:w.End], s[max(0, w.Start-40):min(len(s), w.End+20)])
			}
		}
	}
}

// shapes are the secret shapes of the table tests, as one-line texts.
func shapes() []string {
	var out []string
	for _, c := range secretCases {
		out = append(out, c.in, "x "+c.in+" y", strings.ReplaceAll(c.in, "\n", `\n`))
	}
	return out
}
