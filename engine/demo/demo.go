// Package demo ships a small real OpenCode history inside the binary, so a
// new user without history of their own sees Recall work at once.
package demo

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// history is the public corpus's opencode.db (38 scripted sessions played
// through the real OpenCode 1.18.33), with the event log emptied to keep the
// binary small; the session/message/part tables are as OpenCode wrote them.
//
//go:embed history.db.gz
var history []byte

// Extract writes the demo database under dir (once per content version) and
// returns its path.
func Extract(dir string) (string, error) {
	sum := sha256.Sum256(history)
	path := filepath.Join(dir, "demo-"+hex.EncodeToString(sum[:6]), "opencode.db")
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("extract demo history: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(history))
	if err != nil {
		return "", fmt.Errorf("extract demo history: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "opencode.db.*")
	if err != nil {
		return "", fmt.Errorf("extract demo history: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, zr); err != nil {
		tmp.Close()
		return "", fmt.Errorf("extract demo history: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("extract demo history: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("extract demo history: %w", err)
	}
	return path, nil
}
