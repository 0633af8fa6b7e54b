package render

import "testing"

// Counts read as people write them: "1 turn", never "1 turns".
func TestCount(t *testing.T) {
	for _, c := range []struct {
		n      int
		noun   string
		plural []string
		want   string
	}{
		{0, "turn", nil, "0 turns"},
		{1, "turn", nil, "1 turn"},
		{2, "tool call", nil, "2 tool calls"},
		{1, "match", []string{"matches"}, "1 match"},
		{3, "match", []string{"matches"}, "3 matches"},
	} {
		if got := Count(c.n, c.noun, c.plural...); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
