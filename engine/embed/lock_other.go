//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package embed

// lockFile is a no-op where flock is unavailable; concurrent installs of the
// same model are then the user's responsibility.
func lockFile(string) (func(), error) { return func() {}, nil }
