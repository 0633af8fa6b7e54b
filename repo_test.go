package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRepositoryStandsAlone: a clone with nothing beside it must run its
// tests, so no file of the repository may reach for a sibling ../shared
// directory (which only our own machines had) or an absolute path of one.
func TestRepositoryStandsAlone(t *testing.T) {
	// ../shared/x, /work/shared, and filepath.Join("..", "shared", …).
	banned := regexp.MustCompile(`\.\./shared\b|/work/shared\b|"\.\."\s*,\s*"shared"`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if path == "repo_test.go" || strings.HasSuffix(path, ".db") || strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".png") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, loc := range banned.FindAllIndex(b, -1) {
			line := bytes.Count(b[:loc[0]], []byte("\n")) + 1
			t.Errorf("%s:%d reaches outside the repository (%s)", path, line, b[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
