package commands

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mountOrSkip runs a mount(2) the test needs; without root (or without the
// capability in a container) it skips and says why. CI runs as root.
func mountOrSkip(t *testing.T, source, target, fstype string, flags uintptr, data string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a filesystem")
	}
	if err := syscall.Mount(source, target, fstype, flags, data); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("mount %s: %v (no CAP_SYS_ADMIN here)", target, err)
		}
		t.Fatalf("mount %s: %v", target, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	})
}

// With the index on a read-only filesystem, --no-sync commands answer from
// it; a command that would sync fails with a message saying what to do.
func TestCLIReadOnlyIndex(t *testing.T) {
	db := fixtureDB(t)
	dir := privateDir(t)
	if r := cli(t, "sync", "--db", db, "--index", filepath.Join(dir, "i.db")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	view := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(view, 0o700)
	mountOrSkip(t, dir, view, "", syscall.MS_BIND, "")
	if err := syscall.Mount("", view, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	ix := filepath.Join(view, "i.db")
	var res struct {
		Hits []struct{ Cursor string }
	}
	r := cli(t, "search", "--no-sync", "--db", db, "--index", ix, "--json", "ERR_QUOTA_7731")
	decodeJSON(t, r, &res)
	if len(res.Hits) == 0 {
		t.Fatalf("search --no-sync: no hits: %s", r.stderr)
	}
	for _, args := range [][]string{
		{"read", res.Hits[0].Cursor},
		{"sessions"},
		{"status"},
	} {
		r := cli(t, append(append([]string{}, args...), "--no-sync", "--db", db, "--index", ix, "--json")...)
		if r.code != 0 || r.stdout == "" {
			t.Errorf("%s --no-sync on a read-only index: exit %d: %s", args[0], r.code, r.stderr)
		}
	}
	r = cli(t, "search", "--db", db, "--index", ix, "--json", "ERR_QUOTA_7731")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "read-only") || !strings.Contains(r.stderr, "--no-sync") ||
		!strings.Contains(r.stderr, ix) || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("search (with sync) on a read-only index: exit %d, stderr %q; want exit 1 naming the index, read-only and --no-sync", r.code, r.stderr)
	}
}

// A full disk during `recall sync` says "disk full" and names the index.
func TestCLIDiskFull(t *testing.T) {
	db := fixtureDB(t)
	disk := filepath.Join(t.TempDir(), "disk")
	os.Mkdir(disk, 0o700)
	// 128 KiB cannot hold the fixture's index (about 270 KiB).
	mountOrSkip(t, "tmpfs", disk, "tmpfs", 0, "size=128k,mode=0700")
	ix := filepath.Join(disk, "i.db")
	r := cli(t, "sync", "--db", db, "--index", ix)
	if r.code != ExitFailure || !strings.Contains(r.stderr, "disk full") || !strings.Contains(r.stderr, ix) {
		t.Errorf("sync on a full disk: exit %d, stderr %q; want exit 1 saying disk full and naming %s", r.code, r.stderr, ix)
	}
}
