package query

import (
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{`ErrEmailTaken "too many clients" -lazy_static`, `"unclosed`, `-`, `--x`, `a AND OR NOT b*`,
		`NEAR(a b)`, `col:val ^x`, `-"" ""`, "\x00\xff\xfe", `(((`, `etl/redact.py`, `日本語 テスト`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Parse(s)
		for _, term := range append(q.Terms, q.ExcludeTerms...) {
			if len(term.Tokens) == 0 || term.Key() == "" {
				t.Fatalf("%q: empty term %+v", s, term)
			}
			for _, tok := range term.Tokens {
				if strings.ContainsAny(tok, `" `) {
					t.Fatalf("%q: token %q holds a quote or space", s, tok)
				}
			}
		}
		if len(q.Terms) > MaxTerms {
			t.Fatalf("%q: %d terms", s, len(q.Terms))
		}
	})
}
