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

// A word spelt right is never corrected, even when the history lacks it
// and holds a near one (issue 12: progress -> process lost the query).
func TestCorrectionsLeaveEnglishWords(t *testing.T) {
	v := NewVocab([]string{"process", "wired", "carries"}, []int{40, 3, 2})
	for _, w := range []string{"progress", "wiped", "carrier"} {
		if got := v.Corrections(w); got != nil {
			t.Errorf("Corrections(%q) = %q, want none: it is a word", w, got)
		}
	}
	if got := v.Corrections("proccess"); !slices.Contains(got, "process") {
		t.Errorf("Corrections(proccess) = %q, want process", got)
	}
}
