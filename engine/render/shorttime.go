package render

import (
	"strconv"
	"strings"
)

// ShortTime is an RFC 3339 UTC time cut to the minute for people to read:
// "2026-11-29T18:54:47Z" is "2026-11-29 18:54". Anything shorter is
// returned as it is.
func ShortTime(t string) string {
	if len(t) >= 16 {
		return strings.Replace(t[:16], "T", " ", 1)
	}
	return t
}

// Count is n with its noun, singular for one: "1 turn", "3 turns". noun
// is the singular; a plural not made by adding s comes after it
// (Count(n, "match", "matches")).
func Count(n int, noun string, plural ...string) string {
	if n != 1 {
		if len(plural) > 0 {
			noun = plural[0]
		} else {
			noun += "s"
		}
	}
	return strconv.Itoa(n) + " " + noun
}
