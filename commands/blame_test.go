package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// `recall blame FILE:LINE` with FILE relative to the working directory: the
// path is resolved against it (tools record absolute paths) and :LINE
// narrows to the range holding that line.
func TestBlameRelativePathAndLine(t *testing.T) {
	file := "/tmp/ocgen/recall-blame/projects/billing/billing/tiers.py"
	place(t, filepath.Join("..", "testdata", "opencode", "blame", "after", "billing", "tiers.py"), file)
	db, err := filepath.Abs(filepath.Join("..", "testdata", "opencode", "blame", "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	ix := filepath.Join(t.TempDir(), "i.db")
	t.Chdir(filepath.Dir(filepath.Dir(file)))
	r := cli(t, "blame", "billing/tiers.py:17", "--db", db, "--index", ix, "--json", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res struct {
		Path   string
		Line   int
		Ranges []struct {
			StartLine, EndLine int
			Tool, Title        string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if res.Path != file || res.Line != 17 || len(res.Ranges) != 1 || res.Ranges[0].Title != "Round tier prices to cents" || res.Ranges[0].Tool != "edit" {
		t.Errorf("got %+v", res)
	}
	// A file really named "x:3" is blamed as that file, not as x line 3.
	odd := filepath.Join(t.TempDir(), "x:3")
	if err := os.WriteFile(odd, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := BlameParams{Path: odd}
	if err := p.Validate(); err != nil || p.Path != odd || p.Line != 0 {
		t.Errorf("file named x:3: %+v %v", p, err)
	}
}
