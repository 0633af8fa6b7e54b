package render

import "strings"

// ShortTime is an RFC 3339 UTC time cut to the minute for people to read:
// "2026-11-29T18:54:47Z" is "2026-11-29 18:54". Anything shorter is
// returned as it is.
func ShortTime(t string) string {
	if len(t) >= 16 {
		return strings.Replace(t[:16], "T", " ", 1)
	}
	return t
}
