package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/recallhq/recall"

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// goList lists the module's packages (non-test files; test files may open
// a second handle on an index or a history to check what is stored).
func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,GoFiles,Imports,Deps", "-test=false"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// sqlOwner reports the packages that may speak SQL: the index (Recall's
// own file) and the source readers (OpenCode's database).
func sqlOwner(path string) bool {
	return path == module+"/engine/index" || path == module+"/engine/source" || strings.HasPrefix(path, module+"/engine/source/")
}

// product reports the packages Recall is built from: the engine, the
// command table and the LSP adapter, and main. (tools/ocgen writes
// OpenCode databases for fixtures and is no part of Recall.)
func product(path string) bool {
	return path == module || strings.HasPrefix(path, module+"/engine") || strings.HasPrefix(path, module+"/commands") ||
		strings.HasPrefix(path, module+"/lsp")
}

// The engine is transport-free: nothing under engine/ depends, even
// indirectly, on the LSP, its protocol packages or the command table.
func TestLayeringEngineImportsNoDoor(t *testing.T) {
	for _, p := range goList(t, "./engine/...") {
		for _, dep := range append(p.Imports, p.Deps...) {
			if strings.HasPrefix(dep, "go.lsp.dev/") || dep == module+"/lsp" || strings.HasPrefix(dep, module+"/lsp/") ||
				dep == module+"/commands" || strings.HasPrefix(dep, module+"/commands/") {
				t.Errorf("%s depends on %s; the engine must stay transport-free", p.ImportPath, dep)
			}
		}
	}
}

// Only engine/index and engine/source/... open databases.
func TestLayeringSQLDriversOnlyInIndexAndSources(t *testing.T) {
	for _, p := range goList(t, "./...") {
		if !product(p.ImportPath) || sqlOwner(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if imp == "database/sql" || strings.HasPrefix(imp, "modernc.org/sqlite") {
				t.Errorf("%s imports %s; SQL lives in engine/index (and the source readers)", p.ImportPath, imp)
			}
		}
	}
}

// sqlStatement finds an SQL statement in a string literal.
var sqlStatement = regexp.MustCompile(`(^|[^A-Za-z_])(SELECT\s+\S|INSERT\s+(OR\s+[A-Z]+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER)\s|DROP\s+(TABLE|INDEX)\s|PRAGMA\s+\w)`)

// No Go file outside engine/index and engine/source/... holds an SQL
// statement: the rest of the engine asks through index methods.
func TestLayeringNoSQLOutsideIndexAndSources(t *testing.T) {
	checked := 0
	for _, p := range goList(t, "./...") {
		if !product(p.ImportPath) || sqlOwner(p.ImportPath) {
			continue
		}
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				if sqlStatement.MatchString(s) {
					t.Errorf("%s: SQL %q outside engine/index; add an index method instead", fset.Position(lit.Pos()), firstRunes(s, 60))
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files; the package list is wrong", checked)
	}
}

// The regular expression finds what it is for and leaves prose alone.
func TestSQLStatementPattern(t *testing.T) {
	for s, want := range map[string]bool{
		"SELECT title FROM sessions WHERE id = ?":     true,
		"INSERT OR REPLACE INTO meta(key) VALUES (?)": true,
		"UPDATE part SET data = ?":                    true,
		"DELETE FROM docs WHERE session_id = ?":       true,
		"PRAGMA wal_checkpoint(TRUNCATE)":             true,
		"please select a session":                     false,
		"UPDATE: the index was rebuilt":               false,
		"run `recall sync` to update the index":       false,
	} {
		if got := sqlStatement.MatchString(s); got != want {
			t.Errorf("%q: matched %v, want %v", s, got, want)
		}
	}
}

// firstRunes is s cut to n runes, for a message.
func firstRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
