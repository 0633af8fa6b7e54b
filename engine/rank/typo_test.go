package rank

import (
	"slices"
	"testing"
)

func TestCorrections(t *testing.T) {
	v := NewVocab([]string{"postgres", "connection", "exhausted", "shutdown", "state", "lock", "borrow", "error", "validation"},
		[]int{5, 9, 2, 4, 7, 6, 3, 20, 2})
	for typo, want := range map[string]string{
		"postgress": "postgres", "conection": "connection", "exausted": "exhausted",
		"shutdwon": "shutdown", "borow": "borrow", "eror": "error", "validaton": "validation",
		"statelock": "state lock",
	} {
		if got := v.Corrections(typo); !slices.Contains(got, want) {
			t.Errorf("Corrections(%q) = %q, want it to contain %q", typo, got, want)
		}
	}
	if got := v.Corrections("sql"); got != nil {
		t.Errorf("short words get no corrections, got %q", got)
	}
}

func TestDamerau(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"", "ab", 2}} {
		if got := damerau(c.a, c.b, 5); got != c.d {
			t.Errorf("damerau(%q,%q)=%d want %d", c.a, c.b, got, c.d)
		}
	}
}
