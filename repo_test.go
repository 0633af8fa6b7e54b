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

// siblingDir is the directory beside the checkout that only our own
// machines had (it held the corpus, the history generator and host notes).
// Its name is assembled so that this file does not itself hold the paths
// it bans.
var siblingDir = strings.Join([]string{"sha", "red"}, "")

// TestRepositoryStandsAlone: a clone with nothing beside it must run its
// tests, so no file of the repository may reach for the sibling directory:
// by a relative path, by filepath.Join of ".." and its name, or by an
// absolute path into its corpus, generator or host notes.
func TestRepositoryStandsAlone(t *testing.T) {
	banned := regexp.MustCompile(`\.\./` + siblingDir + `\b|"\.\."\s*,\s*"` + siblingDir + `"|/` + siblingDir + `/(corpus|ocgen|hosts)\b`)
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
