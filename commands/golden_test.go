package commands

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata/cli")

var (
	cursorRE = regexp.MustCompile(`c1:[a-z0-9-]+:[A-Za-z0-9_~-]+(\.[a-z])?\.[A-Za-z0-9_-]{8}|r[cp][12]\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?`)
	timeRE   = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?Z?)?`)
)

// TestGolden runs each testdata/cli/*.txtar: a fixture name (or several
// NAME=FIXTURE lines, one source each), optional `place` lines "SRC DST"
// (a repository file copied to DST for the run when nothing is there: the
// paths a fixture's sessions edited live in its generator's scratch root),
// CLI commands
// (one per line; $CURSOR is the first hit of the previous search), and the
// output they must print. Cursors and times are scrubbed. -update rewrites.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "cli", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = string(f.Data)
			}
			// One fixture, or several as NAME=FIXTURE lines (each its own
			// source, indexes under a fresh data dir).
			var dbFlags []string
			fixtures := strings.Fields(sections["fixture"])
			for _, fx := range fixtures {
				name, fx, named := strings.Cut(fx, "=")
				if !named {
					fx = name
				}
				src := filepath.Join("..", "testdata", "opencode", fx)
				db := filepath.Join(src, "opencode.db")
				if fx == "legacy" {
					db = src
				}
				if named {
					db = name + "=" + db
				}
				dbFlags = append(dbFlags, "--db", db)
			}
			if len(fixtures) == 1 {
				dbFlags = append(dbFlags, "--index", filepath.Join(t.TempDir(), "i.db"))
			} else {
				t.Setenv("XDG_DATA_HOME", t.TempDir())
			}
			for _, line := range strings.Split(strings.TrimSpace(sections["place"]), "\n") {
				if src, dst, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
					place(t, filepath.Join("..", src), strings.TrimSpace(dst))
				}
			}
			var got bytes.Buffer
			cursor := ""
			for _, line := range strings.Split(strings.TrimSpace(sections["args"]), "\n") {
				args := strings.Fields(strings.ReplaceAll(line, "$CURSOR", cursor))
				args = append(append(args, dbFlags...), "--quiet")
				r := cli(t, args...)
				got.WriteString("$ recall " + line + "\n")
				if r.code != 0 {
					got.WriteString("exit " + strconv.Itoa(r.code) + ": " + r.stderr)
				}
				got.WriteString(r.stdout)
				if args[0] == "search" {
					if m := cursorRE.FindString(r.stdout); m != "" {
						cursor = m
					}
				}
			}
			out := timeRE.ReplaceAllString(cursorRE.ReplaceAllString(got.String(), "<cursor>"), "<time>")
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = []byte(out)
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := sections["want"]; out != want {
				t.Errorf("output differs from %s (run go test ./commands -run TestGolden -update to accept):\n%s", file, diffLines(want, out))
			}
		})
	}
}

// place copies src to dst unless something is at dst, and removes what it
// made (the file and the directories it created) when the test ends.
func place(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := os.Lstat(dst); err == nil {
		return
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var made []string
	for d := filepath.Dir(dst); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(dst)
		for _, d := range made { // innermost first
			os.Remove(d)
		}
	})
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n want: " + a + "\n got:  " + b
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }
