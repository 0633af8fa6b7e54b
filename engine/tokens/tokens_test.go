package tokens

import (
	"reflect"
	"strings"
	"testing"
)

func TestTerms(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"ErrEmailTaken", []string{"err_email_taken", "err", "email", "taken", "erremailtaken"}},
		{"InventoryPanel.OnItemPicked", []string{"inventory_panel_on_item_picked", "inventory", "panel", "on", "item", "picked",
			"inventorypanel", "onitempicked", "inventorypanel_onitempicked"}},
		{"os.ReadFile", []string{"os_read_file", "os", "read", "file", "readfile", "os_readfile"}},
		{"DB_MAX_OPEN_CONNS=14", []string{"db_max_open_conns", "db", "max", "open", "conns", "14"}},
		{"see etl/redact.py.", []string{"see", "etl_redact_py", "etl", "redact", "py"}},
		{"HTTPServer v5 E0502", []string{"http_server", "http", "server", "httpserver", "v5", "e0502"}},
		{"a - b", []string{"a", "b"}},
		{"/tmp/ocgen/x", []string{"tmp_ocgen_x", "tmp", "ocgen", "x"}},
		{"isPending && isFetching", []string{"is_pending", "is", "pending", "ispending", "is_fetching", "is", "fetching", "isfetching"}},
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

// Hashes and other long runs up to MaxTokenLen are tokens; longer ones
// are left out, and Overlong says so.
func TestLongTokens(t *testing.T) {
	sha512 := strings.Repeat("9b71d224bd62f378", 8)
	if got := Terms("sum " + sha512 + " ok"); !reflect.DeepEqual(got, []string{"sum", sha512, "ok"}) {
		t.Errorf("a sha512 hex: %q", got)
	}
	atLimit := strings.Repeat("a1", MaxTokenLen/2)
	if got := Terms(atLimit); !reflect.DeepEqual(got, []string{atLimit}) || Overlong(atLimit) {
		t.Errorf("a %d-character token: %q, overlong %v", len(atLimit), got, Overlong(atLimit))
	}
	over := atLimit + "b"
	if got := Terms("x " + over); !reflect.DeepEqual(got, []string{"x"}) || !Overlong("x "+over) {
		t.Errorf("a %d-character token: %q, overlong %v", len(over), got, Overlong(over))
	}
	// A long compound whose parts are short is not overlong: its parts match.
	path := strings.Repeat("segment/", 40) + "file.go"
	if Overlong(path) || len(Terms(path)) == 0 {
		t.Errorf("a long path: overlong %v", Overlong(path))
	}
}

// plainWord's fast path emits exactly what splitting would: a word it
// takes is one piece, the word itself.
func TestPlainWordsAreOnePiece(t *testing.T) {
	words := []string{"", "a", "Z", "error", "Error", "E0502", "v5", "sha256", "2024", "x9Y", "HTTP", "isPending", "ErrEmailTaken",
		"HTTPServer", "Café", "naïve", "日本", "a_b", "a.b", "ID", "Id", "iD", strings.Repeat("w", MaxTokenLen+1)}
	for _, w := range words {
		parts := splitParts(w)
		one := len(parts) == 1 && parts[0].text == w && parts[0].start == 0
		if plainWord(w) && !one {
			t.Errorf("plainWord(%q) = true, but it splits into %v", w, parts)
		}
	}
	for _, w := range []string{"error", "Error", "E0502", "v5", "sha256"} {
		if !plainWord(w) {
			t.Errorf("plainWord(%q) = false; want the fast path for it", w)
		}
	}
}

func FuzzPlainWord(f *testing.F) {
	for _, s := range []string{"error", "Error", "E0502", "HTTPServer", "x9Y", "Café"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		if !plainWord(w) {
			return
		}
		if parts := splitParts(w); len(parts) != 1 || parts[0].text != w {
			t.Fatalf("plainWord(%q) = true, but it splits into %v", w, parts)
		}
	})
}

// BenchmarkEach tokenizes prose and code the way a history holds them.
func BenchmarkEach(b *testing.B) {
	text := strings.Repeat("The handler returned ErrEmailTaken when DB_MAX_OPEN_CONNS was 14; see etl/redact.py and os.ReadFile. "+
		"We retried with exponential backoff and full jitter, then the pool stopped timing out. ", 50)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		n := 0
		Each(text, func(Token) { n++ })
	}
}
