package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeCursor: no input decodes unless this user's key signed it,
// and a signed cursor survives a round trip.
func FuzzDecodeCursor(f *testing.F) {
	e := openFixture(f, "v1")
	good := e.encodeCursor(Cursor{Source: "v1", SessionID: "ses_a", MessageID: "msg_b", PartID: "prt_c", Hint: "start"})
	odd := e.encodeCursor(Cursor{Source: "v1", SessionID: "a.b:c", Hint: "head"})
	for _, s := range []string{good, odd, "rc1..", "rc1.eA.zz", "rc1." + strings.Repeat("A", 300) + ".x", "", "rp1.MTIz", good + "x", strings.ToUpper(good),
		"c1:", "c1:.", "c1::.", "c1:v1:ses_a.q.AAAAAAAA", "c1:v1:~x.AAAAAAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := e.decodeCursor(s)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("%q: error is not ErrBadCursor: %v", s, err)
			}
			return
		}
		if again := e.encodeRef(c); again != strings.TrimSpace(s) {
			t.Fatalf("%q decoded to %+v, which encodes to %q", s, c, again)
		}
	})
}

// FuzzSearch: no query text can make the index fail (FTS syntax, typo
// correction, snippets), and highlights always lie inside their snippet.
func FuzzSearch(f *testing.F) {
	e := openFixture(f, "v1")
	for _, s := range []string{`ERR_QUOTA_7731`, `"unclosed`, `a AND OR NOT`, `NEAR(x y)`, `col:value`, `*`, `^x`, `-`, `"" -""`,
		`(((`, `a"b"c`, "\x00", `invoise rounding`, `-rounding`, `half-cent "lighthouse keeper"`, `日本語`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		res, err := e.Search(context.Background(), SearchParams{Query: q, Limit: 5})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		for _, h := range res.Hits {
			n := len([]rune(h.Snippet))
			for i, r := range h.Highlights {
				if r[0] < 0 || r[1] > n || r[0] >= r[1] {
					t.Fatalf("%q: highlight %v outside snippet of %d runes", q, r, n)
				}
				if i > 0 && r[0] <= h.Highlights[i-1][1] {
					t.Fatalf("%q: highlights overlap or touch: %v", q, h.Highlights)
				}
			}
		}
	})
}
