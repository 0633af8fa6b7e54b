//go:build linux

package prefault

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		line        string
		lo, hi      uintptr
		perms, path string
		ok          bool
	}{
		{"00400000-00c6a000 r-xp 00000000 fe:00 1234                               /usr/local/bin/recall", 0x400000, 0xc6a000, "r-xp", "/usr/local/bin/recall", true},
		{"7ffd1000-7ffd3000 r--p 00000000 00:00 0                                  [vvar]", 0x7ffd1000, 0x7ffd3000, "r--p", "[vvar]", true},
		{"c000000000-c000400000 rw-p 00000000 00:00 0 ", 0xc000000000, 0xc000400000, "rw-p", "", true},
		{"00400000-00c6a000 r-xp 00000000 fe:00 99 /tmp/a dir/recall (deleted)", 0x400000, 0xc6a000, "r-xp", "/tmp/a dir/recall (deleted)", true},
		{"zz-00c6a000 r-xp 0 0 0 /x", 0, 0, "", "", false},
		{"00c6a000-00400000 r-xp 0 0 0 /x", 0, 0, "", "", false},
		{"", 0, 0, "", "", false},
	} {
		lo, hi, perms, path, ok := parseLine([]byte(c.line))
		if ok != c.ok || ok && (lo != c.lo || hi != c.hi || string(perms) != c.perms || path != c.path) {
			t.Errorf("parseLine(%q) = %x %x %q %q %v; want %x %x %q %q %v", c.line, lo, hi, perms, path, ok, c.lo, c.hi, c.perms, c.path, c.ok)
		}
	}
}

// The init mapped in the test binary's read-only mappings: as many bytes
// as /proc/self/maps lists for them, where the kernel has
// MADV_POPULATE_READ (Linux 5.14).
func TestPopulatedTheExecutable(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || strings.Join(f[5:], " ") != exe || f[1][0] != 'r' || f[1][1] == 'w' {
			continue
		}
		span := strings.SplitN(f[0], "-", 2)
		lo, _ := strconv.ParseUint(span[0], 16, 64)
		hi, _ := strconv.ParseUint(span[1], 16, 64)
		want += int(hi - lo)
	}
	if want == 0 {
		t.Fatalf("no read-only mapping of %s in /proc/self/maps", exe)
	}
	got := Populated()
	if got == 0 && kernelBefore(t, 5, 14) {
		t.Skip("MADV_POPULATE_READ needs Linux 5.14; the binary faults in page by page, as without this package")
	}
	if got != want {
		t.Errorf("mapped in %d bytes at start; the executable's read-only mappings hold %d", got, want)
	}
}

func kernelBefore(t *testing.T, major, minor int) bool {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	var ma, mi int
	for i, part := range strings.SplitN(strings.TrimSpace(string(b)), ".", 3)[:2] {
		n, _ := strconv.Atoi(strings.TrimFunc(part, func(r rune) bool { return r < '0' || r > '9' }))
		if i == 0 {
			ma = n
		} else {
			mi = n
		}
	}
	return ma < major || ma == major && mi < minor
}
