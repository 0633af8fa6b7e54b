package rank

import (
	"math/rand"
	"strings"
	"testing"
)

// containsCollapsed must agree with the copy it replaced.
func TestContainsCollapsedAgreesWithCollapseSpace(t *testing.T) {
	cases := []struct{ s, phrase string }{
		{"connection  pool\texhausted", "connection pool"},
		{"connection\n\n pool", "connection pool"},
		{"connectionpool", "connection pool"},
		{"the pool connection", "connection pool"},
		{"x connection\u00a0pool", "connection pool"},
		{"  leading connection pool", "connection pool"},
		{"reconnection pool", "connection pool"},
		{"connection", "connection pool"},
		{"", "a"},
		{"a", ""},
		{"ab ab ab c", "ab c"},
		{"ab abab c", "ab c"},
	}
	for _, c := range cases {
		want := strings.Contains(collapseSpace(c.s), c.phrase)
		if got := containsCollapsed(c.s, c.phrase); got != want {
			t.Errorf("containsCollapsed(%q, %q) = %v, want %v", c.s, c.phrase, got, want)
		}
	}
	// And on random texts over a small alphabet, where near misses abound.
	rng := rand.New(rand.NewSource(1))
	alpha := []string{"a", "b", " ", "  ", "\t", "\n", "é", "\u00a0", "ab"}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alpha[rng.Intn(len(alpha))])
		}
		return b.String()
	}
	for range 20000 {
		s := gen(rng.Intn(12))
		phrase := collapseSpace(gen(1 + rng.Intn(5)))
		want := strings.Contains(collapseSpace(s), phrase)
		if got := containsCollapsed(s, phrase); got != want {
			t.Fatalf("containsCollapsed(%q, %q) = %v, want %v", s, phrase, got, want)
		}
	}
}

// collapseSpace is what containsCollapsed must agree with.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
