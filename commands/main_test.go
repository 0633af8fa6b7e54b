package commands

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the notice stamps (notices.go) of these tests out of the
// user's state dir.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "recall-commands-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
