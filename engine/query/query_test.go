package query

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	q := Parse(`ErrEmailTaken "too many clients" -lazy_static -"plain backoff" the`)
	if len(q.Terms) != 2 || q.Terms[0].Key() != "err_email_taken" || !q.Terms[1].Stop {
		t.Fatalf("terms: %+v", q.Terms)
	}
	if !reflect.DeepEqual(q.Phrases[0].Tokens, []string{"too", "many", "clients"}) {
		t.Fatalf("phrase: %+v", q.Phrases)
	}
	if q.ExcludeTerms[0].Key() != "lazy_static" || q.ExcludePhrases[0].Raw != "plain backoff" {
		t.Fatalf("exclusions: %+v %+v", q.ExcludeTerms, q.ExcludePhrases)
	}
}

// A quoted compound is marked so the index can match its whole form; a
// phrase of several words, or of a compound and a word, is not.
func TestParsePhraseOfOneCompound(t *testing.T) {
	for in, want := range map[string]bool{
		`"users_email_key"`:        true,
		`"ErrEmailTaken"`:          true,
		`"etl/redact.py"`:          true,
		`"half cent"`:              false,
		`"create users_email_key"`: false,
		`"users_email_key index"`:  false,
		`"refund"`:                 false,
		`"a.b c.d"`:                false,
	} {
		q := Parse(in)
		if len(q.Phrases) != 1 {
			t.Fatalf("%s: phrases %+v", in, q.Phrases)
		}
		if p := q.Phrases[0]; p.Compound != want {
			t.Errorf("%s: Compound %v, want %v (tokens %q)", in, p.Compound, want, p.Tokens)
		}
	}
}

func TestParseOddInput(t *testing.T) {
	for _, in := range []string{`"unclosed`, `-`, `--`, `""`, `NEAR(a b)`, `a AND OR NOT b*`, `"`, `-"`, `(foo,bar)`, "\x00\xff"} {
		q := Parse(in) // must not panic
		for _, term := range q.Terms {
			if len(term.Tokens) == 0 {
				t.Errorf("%q: empty term", in)
			}
		}
	}
	q := Parse(`"users_email_key"`)
	if len(q.Phrases) != 1 || q.Phrases[0].Tokens[0] != "users_email_key" {
		t.Fatalf("%+v", q)
	}
	q = Parse(`(foo,bar)`)
	if len(q.Terms) != 2 {
		t.Fatalf("want 2 terms, got %+v", q.Terms)
	}
}

// A word longer than any index token is reported, not silently dropped.
func TestParseOverlong(t *testing.T) {
	long := strings.Repeat("ab12", 100)
	q := Parse("deploy " + long)
	if len(q.Terms) != 1 || q.Terms[0].Key() != "deploy" || len(q.Overlong) != 1 || q.Overlong[0] != long {
		t.Errorf("terms %+v, overlong %q", q.Terms, q.Overlong)
	}
	if q := Parse(strings.Repeat("9b71d224", 16)); len(q.Terms) != 1 || len(q.Overlong) != 0 {
		t.Errorf("a sha512 hex: terms %+v, overlong %q", q.Terms, q.Overlong)
	}
}

// The stop-word rule: stopwords count only when nothing else is left.
func TestSearchable(t *testing.T) {
	keys := func(ts []Term) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Key())
		}
		return strings.Join(s, " ")
	}
	for in, want := range map[string]string{
		"the invoice of a ledger": "invoice ledger",
		"to be or not to be":      "to be or not to be",
		`"the" the`:               "the",
		"":                        "",
	} {
		if got := keys(Parse(in).Searchable()); got != want {
			t.Errorf("%q: searchable %q, want %q", in, got, want)
		}
	}
}

func TestIsCode(t *testing.T) {
	for in, want := range map[string]bool{
		"why was the deploy so slow":     false,
		"parseConfigFile":                true,
		"ERR_QUOTA_7731":                 true,
		"docs/adr/0042-quasar-retention": true,
		`"exact words"`:                  true,
		"retry 3 times":                  true,
	} {
		if got := Parse(in).IsCode(); got != want {
			t.Errorf("%q: IsCode %v, want %v", in, got, want)
		}
	}
}

// The shell rule: a flag after a command word is text to find; a -word
// opening the query (or a run of them) stays an exclusion.
func TestParseShellFlags(t *testing.T) {
	raws := func(ts []Term) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Raw)
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct{ in, terms, excl string }{
		{"uniq -c", "uniq c", ""},
		{"sort -rn", "sort rn", ""},
		{"go test -run TestFoo", "go test run TestFoo", ""},
		{"git log -p", "git log p", ""},
		{"terraform plan -out plan.tfplan", "terraform plan out plan.tfplan", ""},
		{"logslice -v", "logslice v", ""},
		{"-fork webhook", "webhook", "fork"},
		{"-fork -draft webhook", "webhook", "fork draft"},
		{"webhook retry -lazy_static", "webhook retry", "lazy_static"},
		{"airflow dags backfill --reset-dagruns", "airflow dags backfill reset-dagruns", ""},
	} {
		q := Parse(c.in)
		if got := raws(q.Terms); got != c.terms {
			t.Errorf("%q: terms %q, want %q", c.in, got, c.terms)
		}
		if got := raws(q.ExcludeTerms); got != c.excl {
			t.Errorf("%q: exclusions %q, want %q", c.in, got, c.excl)
		}
	}
}
