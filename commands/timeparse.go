package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// now is the clock, replaceable in tests.
var now = time.Now

// parseTime reads a time bound: an ISO date (2026-11-01), an RFC 3339 time,
// a relative age (30m, 2h, 2d, 1w: that long ago), or today/yesterday.
// It returns Unix milliseconds; "" is 0 (no bound).
func parseTime(field, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	t := now()
	switch strings.ToLower(s) {
	case "today":
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, t.Location()).UnixMilli(), nil
	case "yesterday":
		y, m, d := t.Date()
		return time.Date(y, m, d-1, 0, 0, 0, 0, t.Location()).UnixMilli(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if ts, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return ts.UnixMilli(), nil
		}
	}
	if n := len(s); n >= 2 {
		num, err := strconv.ParseFloat(s[:n-1], 64)
		if err == nil && num >= 0 {
			unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[n-1]]
			if unit != 0 {
				return t.Add(-time.Duration(num * float64(unit))).UnixMilli(), nil
			}
		}
	}
	return 0, &ParamError{Field: field, Msg: fmt.Sprintf("%q is not a date; use 2026-11-01, 2026-11-01T15:04:05Z, or an age such as 30m, 2h, 2d, 1w, today, yesterday", s)}
}

// splitList reads a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func checkRange(field string, val, lo, hi int) error {
	if val != 0 && (val < lo || val > hi) {
		return &ParamError{Field: field, Msg: fmt.Sprintf("%d is out of range; use %d to %d", val, lo, hi)}
	}
	return nil
}
