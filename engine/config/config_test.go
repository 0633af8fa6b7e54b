package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	p := write(t, `# mine
exclude_directories = [
  "~/clients/acme",  # a client
  "/srv/x",
]
[redact]
internal-token = "itk_[a-z]{4}"
'literal' = 'a\d+'
`)
	c, err := Load(p, func(k string) string { return map[string]string{"HOME": "/home/u"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ExcludeDirectories) != 2 || c.ExcludeDirectories[0] != "/home/u/clients/acme" || c.ExcludeDirectories[1] != "/srv/x" {
		t.Fatalf("exclude_directories: %q", c.ExcludeDirectories)
	}
	if c.Redact["internal-token"] != "itk_[a-z]{4}" || c.Redact["literal"] != `a\d+` {
		t.Fatalf("redact: %q", c.Redact)
	}
	if c.Path != p {
		t.Errorf("path %q", c.Path)
	}
}

func TestMissingFileIsEmpty(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "none.toml"), noEnv)
	if err != nil || len(c.ExcludeDirectories) != 0 || c.Redact == nil {
		t.Fatalf("%+v %v", c, err)
	}
}

// Bad files say where and what: file:line, the setting, what it takes.
func TestLoadErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		text string
		want []string
	}{
		"unknown key":         {"exclude = 3\n", []string{"config.toml:1:", `unknown setting "exclude"`, "known: exclude_directories, [redact]"}},
		"unknown key, line 3": {"# one\nexclude_directories = []\nexclude_dirs = [\"/x\"]\n", []string{"config.toml:3:", `"exclude_dirs"`}},
		"unknown table":       {"[redact]\na = \"b\"\n\n[sources]\nx = 1\n", []string{"config.toml:4:", `unknown setting "sources"`}},
		"syntax":              {"exclude_directories = [\n  \"/a\"\n  \"/b\"\n]\n", []string{"config.toml:3:"}},
		"unclosed string":     {"[redact]\ntoken = \"abc\n", []string{"config.toml:2:"}},
		"wrong type":          {"\nexclude_directories = \"/one\"\n", []string{"config.toml:2:", "exclude_directories is a string", "want an array of strings"}},
		"wrong type in table": {"[redact]\ntoken = 3\n", []string{"config.toml:2:", "redact.token is an integer", `name = "regular expression"`}},
	} {
		_, err := Load(write(t, tc.text), noEnv)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", name, err, w)
			}
		}
	}
}

func TestHashStable(t *testing.T) {
	// The hash is stored in every session's sync stamp: a change re-reads
	// every session, so it must not change across versions for the same
	// settings. This value is the one the hand-written parser's Config gave.
	c := Config{ExcludeDirectories: []string{"/a"}, Redact: map[string]string{"k": "v"}}
	if got := c.Hash(); got != "a1f06d72781c98e7" {
		t.Errorf("hash %s, want a1f06d72781c98e7", got)
	}
	if got := (Config{}).Hash(); got != "e3b0c44298fc1c14" {
		t.Errorf("empty config hash %s, want e3b0c44298fc1c14", got)
	}
}

func TestExcluded(t *testing.T) {
	c := Config{ExcludeDirectories: []string{"/w/secret/"}}
	for dir, want := range map[string]bool{"/w/secret": true, "/w/secret/x": true, "/w/secretive": false, "/w": false} {
		if c.Excluded(dir) != want {
			t.Errorf("%s: excluded %v", dir, !want)
		}
	}
}

// Valid TOML the hand-written parser misread: a comma inside a string split
// the array (an error), and a single-quoted key kept its quotes (the
// pattern was registered under another name).
func TestLoadWhatTheHandParserMisread(t *testing.T) {
	p := write(t, "exclude_directories = [\"/w/clients/acme,inc\"]\n[redact]\n'lit-key' = 'x\\d'\n")
	c, err := Load(p, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ExcludeDirectories) != 1 || c.ExcludeDirectories[0] != "/w/clients/acme,inc" {
		t.Errorf("exclude_directories %q", c.ExcludeDirectories)
	}
	if c.Redact["lit-key"] != `x\d` {
		t.Errorf("redact %q, want lit-key", c.Redact)
	}
}

// [[source]] lists named histories; ~/ expands in path and index.
func TestLoadSources(t *testing.T) {
	p := write(t, `[[source]]
name = "laptop"
path = "~/sync/laptop/opencode.db"

[[source]]
path = "/archive/old.db"
index = "~/idx/old.db"
`)
	c, err := Load(p, func(k string) string { return map[string]string{"HOME": "/home/u"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{{Name: "laptop", Path: "/home/u/sync/laptop/opencode.db"}, {Path: "/archive/old.db", Index: "/home/u/idx/old.db"}}
	if len(c.Sources) != 2 || c.Sources[0] != want[0] || c.Sources[1] != want[1] {
		t.Fatalf("sources %+v, want %+v", c.Sources, want)
	}
	// Sources do not change what documents hold: the hash stays.
	if c.Hash() != (Config{}).Hash() {
		t.Errorf("sources changed the config hash")
	}
}

func TestLoadSourceErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		text string
		want []string
	}{
		"no path":       {"[[source]]\nname = \"a\"\npath = \"/a.db\"\n\n[[source]]\nname = \"b\"\n", []string{"config.toml:5:", `[[source]] "b" has no path`, `path = "~/`}},
		"bad name":      {"[[source]]\nname = \"My Laptop\"\npath = \"/a.db\"\n", []string{"config.toml:1:", `"My Laptop"`, "lower-case letters"}},
		"duplicate":     {"[[source]]\nname = \"a\"\npath = \"/a.db\"\n[[source]]\nname = \"a\"\npath = \"/b.db\"\n", []string{"config.toml:4:", `"a" is also the name of [[source]] #1`}},
		"unknown field": {"[[source]]\nname = \"a\"\npath = \"/a.db\"\ndb = \"/x\"\n", []string{`unknown setting "source.db"`, "[[source]] (name, path, index)"}},
		"not a table":   {"source = \"/a.db\"\n", []string{"config.toml:1:", "source is a string", "[[source]] tables"}},
	} {
		_, err := Load(write(t, tc.text), noEnv)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", name, err, w)
			}
		}
	}
}
