package rank

import "testing"

// lowerInto gives what ASCIILower gives, whatever the buffer held before:
// longer text, shorter text, text with nothing to lower (returned as is).
func TestLowerIntoIsASCIILower(t *testing.T) {
	var buf []byte
	for _, s := range []string{
		"ErrEmailTaken in HandleSignup", "x", "", "already lower: no copy", "ÄÖ Ü straße MIXED ascii",
		"A much longer TEXT that grows the buffer past what the earlier ones needed, ALL of it",
		"Short", "pq: duplicate key value violates unique constraint",
	} {
		var got string
		got, buf = lowerInto(buf, s)
		if want := ASCIILower(s); got != want {
			t.Errorf("lowerInto(%q) = %q, want %q", s, got, want)
		}
	}
}
