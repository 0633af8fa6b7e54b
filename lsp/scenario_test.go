package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden sections of testdata/lsp/*.txtar")

// TestScenarios runs every testdata/lsp/*.txtar: a fresh server over the
// fixture history, the steps of the `steps` section, and the scrubbed
// responses compared with the `golden` section.
//
// Steps, one per line:
//
//	call METHOD PARAMS-JSON      a request; its response goes to the golden
//	notify METHOD PARAMS-JSON    a notification
//	initialize-result            the initialize response of this session
//
// A string "$N.path.to.field" in PARAMS is replaced by that field of step N's
// result (steps count from 1), so a read can use a search's cursor.
// The optional `options.json` section holds {"initializationOptions": …};
// the optional `fixture` section names another history than v1
// (testdata/opencode/<name>).
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "lsp", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runScenario(t, file)
		})
	}
}

func runScenario(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var steps, want []byte
	db := ""
	var opts struct {
		InitializationOptions map[string]any `json:"initializationOptions"`
	}
	for _, f := range ar.Files {
		switch f.Name {
		case "steps":
			steps = f.Data
		case "golden":
			want = f.Data
		case "options.json":
			if err := json.Unmarshal(f.Data, &opts); err != nil {
				t.Fatalf("options.json: %v", err)
			}
		case "fixture":
			db = filepath.Join("..", "testdata", "opencode", strings.TrimSpace(string(f.Data)), "opencode.db")
		}
	}
	s := startSession(t, sessionOptions{skipInit: true, db: db})
	initResult := s.initialize(sessionOptions{initOptions: opts.InitializationOptions})
	var got bytes.Buffer
	results := map[int]any{}
	for n, line := range strings.Split(strings.TrimSpace(string(steps)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		method, params, _ := strings.Cut(rest, " ")
		var p any
		if strings.TrimSpace(params) != "" {
			if err := json.Unmarshal([]byte(params), &p); err != nil {
				t.Fatalf("step %d: params: %v", n+1, err)
			}
			p = substitute(t, p, results)
		}
		switch verb {
		case "initialize-result":
			fmt.Fprintf(&got, "> initialize\n%s\n", renderReply(initResult, nil))
		case "notify":
			s.notify(method, p)
		case "call":
			pj, _ := json.Marshal(p)
			res, err := s.call(method, p)
			fmt.Fprintf(&got, "> %s %s\n%s\n", method, scrubText(string(pj)), renderReply(res, err))
			var v any
			_ = json.Unmarshal(res, &v)
			results[n+1] = v
		default:
			t.Fatalf("step %d: unknown verb %q", n+1, verb)
		}
	}
	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "golden" {
				ar.Files[i].Data = got.Bytes()
			}
		}
		if want == nil {
			ar.Files = append(ar.Files, txtar.File{Name: "golden", Data: got.Bytes()})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got.String() != string(want) {
		t.Errorf("%s: responses differ from the golden section (run go test ./lsp -run TestScenarios -update and review the diff)\n%s",
			file, lineDiff(string(want), got.String()))
	}
}

var stepRef = regexp.MustCompile(`^\$(\d+)\.(.+)$`)

func substitute(t *testing.T, v any, results map[int]any) any {
	switch v := v.(type) {
	case string:
		m := stepRef.FindStringSubmatch(v)
		if m == nil {
			return v
		}
		n, _ := strconv.Atoi(m[1])
		cur := results[n]
		for _, k := range strings.Split(m[2], ".") {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[k]
			case []any:
				i, _ := strconv.Atoi(k)
				if i >= len(c) {
					t.Fatalf("%s: index %d out of range", v, i)
				}
				cur = c[i]
			default:
				t.Fatalf("%s: cannot follow %q", v, k)
			}
		}
		return cur
	case map[string]any:
		for k, e := range v {
			v[k] = substitute(t, e, results)
		}
	case []any:
		for i, e := range v {
			v[i] = substitute(t, e, results)
		}
	}
	return v
}

// render prints a response deterministically: cursors, times, paths and
// sizes that differ per run are scrubbed.
func renderReply(res json.RawMessage, err error) string {
	if err != nil {
		var we *jsonrpc2.Error
		if errors.As(err, &we) {
			return fmt.Sprintf("error %d: %s\n", we.Code, scrubText(we.Message))
		}
		return "error: " + scrubText(err.Error()) + "\n"
	}
	var v any
	if e := json.Unmarshal(res, &v); e != nil {
		return "unparsable: " + string(res) + "\n"
	}
	v = scrub("", v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return b.String()
}

var (
	// Cursors (c1:source:id.tag) differ run to run with the user's key;
	// the placeholder kept its old spelling so goldens show only real
	// changes.
	cursorRE = regexp.MustCompile(`c1:[a-z0-9-]+:[A-Za-z0-9_~-]+(\.[a-z])?\.[A-Za-z0-9_-]{8}|rc1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
	tmpRE    = regexp.MustCompile(`/tmp/Test[^"\s)]*`)
	// Ages ("3 days ago") grow with the clock; the fixture's times do not.
	ageRE = regexp.MustCompile(`\b(\d+ (second|minute|hour|day|month|year)s? ago|just now)\b`)
)

func scrubText(s string) string {
	s = cursorRE.ReplaceAllString(s, "rc1.CURSOR")
	s = ageRE.ReplaceAllString(s, "AGE")
	return tmpRE.ReplaceAllString(s, "TESTTMP")
}

func scrub(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = scrub(k, e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = scrub(key, e)
		}
		return v
	case string:
		switch key {
		case "syncedAt":
			return "TIME"
		case "index", "source":
			return filepath.Base(v)
		case "path": // a source's history (status), not a file of the history
			if strings.HasSuffix(v, ".db") {
				return filepath.Base(v)
			}
		}
		return scrubText(v)
	case float64:
		switch key {
		case "tookMs", "indexBytes", "schemaVersion", "score", "lagMs":
			return 0
		}
	}
	return v
}

// lineDiff shows the first differing lines.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			lo := max(0, i-3)
			return fmt.Sprintf("first difference at line %d:\nwant: %q\ngot:  %q\ncontext (got):\n%s", i+1, a, b,
				strings.Join(g[lo:min(len(g), i+4)], "\n"))
		}
	}
	return ""
}
