package tokens

import (
	"reflect"
	"testing"
)

func TestTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"ErrEmailTaken", []string{"err_email_taken", "err", "email", "taken"}},
		{"DB_MAX_OPEN_CONNS=14", []string{"db_max_open_conns", "db", "max", "open", "conns", "14"}},
		{"see etl/redact.py.", []string{"see", "etl_redact_py", "etl", "redact", "py"}},
		{"HTTPServer v5 E0502", []string{"http_server", "http", "server", "v5", "e0502"}},
		{"a - b", []string{"a", "b"}},
		{"/tmp/ocgen/x", []string{"tmp_ocgen_x", "tmp", "ocgen", "x"}},
		{"isPending && isFetching", []string{"is_pending", "is", "pending", "is_fetching", "is", "fetching"}},
		{"__init__", []string{"init"}},
		{"Café naïve", []string{"café", "naïve"}},
	}
	for _, c := range cases {
		if got := Terms(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSpans(t *testing.T) {
	text := "call os.ReadFile now"
	for _, tok := range Split(text) {
		if tok.Whole && text[tok.Start:tok.End] != "os.ReadFile" {
			t.Errorf("whole span %q", text[tok.Start:tok.End])
		}
		if tok.Text == "read" && text[tok.Start:tok.End] != "Read" {
			t.Errorf("part span %q", text[tok.Start:tok.End])
		}
	}
}
