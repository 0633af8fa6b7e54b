package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"ErrEmailTaken", "DB_MAX_OPEN_CONNS=14", "/tmp/a-b/c.d", "HTTPServer", "__init__", "a - b", "Café", "\xff\xfe", "x..y", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Split(s) {
			if tok.Text == "" || len(tok.Text) > MaxTokenLen*2 {
				t.Fatalf("%q: bad token %q", s, tok.Text)
			}
			if tok.Start < 0 || tok.End > len(s) || tok.Start >= tok.End {
				t.Fatalf("%q: span %d-%d", s, tok.Start, tok.End)
			}
			if strings.ContainsAny(tok.Text, " \"\t\n") {
				t.Fatalf("%q: token %q holds a separator", s, tok.Text)
			}
			if utf8.ValidString(s) && !utf8.ValidString(tok.Text) {
				t.Fatalf("%q: token %q is not UTF-8", s, tok.Text)
			}
		}
	})
}
