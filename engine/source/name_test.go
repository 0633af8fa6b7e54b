package source

import (
	"strings"
	"testing"
)

func TestDeriveName(t *testing.T) {
	for path, want := range map[string]string{
		"/home/me/sync/laptop/opencode.db":           "laptop",
		"/home/me/.local/share/opencode/opencode.db": "opencode",
		"/mnt/old/Archive 2024.db":                   "archive-2024",
		"/mnt/old/archive_2024.sqlite":               "archive-2024",
		"/mnt/old/.db":                               "db",
		"/data/My Profile (work)/opencode.db":        "my-profile-work",
		"/data/日本/opencode.db":                       "source",
		"/legacy/opencode":                           "opencode",
		"/x/" + strings.Repeat("a", 50) + ".db":      strings.Repeat("a", MaxNameLen),
	} {
		got := DeriveName(path)
		if got != want {
			t.Errorf("DeriveName(%q) = %q, want %q", path, got, want)
		}
		if msg := CheckName(got); msg != "" {
			t.Errorf("DeriveName(%q) = %q, which CheckName refuses: %s", path, got, msg)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"laptop", "old-mac", "a", "x2", "2024"} {
		if msg := CheckName(ok); msg != "" {
			t.Errorf("%q refused: %s", ok, msg)
		}
	}
	for bad, want := range map[string]string{
		"":                      "empty",
		"Laptop":                `"L"`,
		"my laptop":             `" "`,
		"-x":                    "dash",
		"a:b":                   `":"`,
		strings.Repeat("a", 33): "longer than 32",
	} {
		if msg := CheckName(bad); !strings.Contains(msg, want) {
			t.Errorf("CheckName(%q) = %q, want it to mention %s", bad, msg, want)
		}
	}
}

func TestDedupe(t *testing.T) {
	taken := map[string]bool{"v1": true, "v1-2": true}
	if got := Dedupe("v1", taken); got != "v1-3" {
		t.Errorf("got %q", got)
	}
	if got := Dedupe("fresh", taken); got != "fresh" {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("b", MaxNameLen)
	if got := Dedupe(long, map[string]bool{long: true}); len(got) > MaxNameLen || !strings.HasSuffix(got, "-2") {
		t.Errorf("got %q", got)
	}
}
