// Package config reads the user's config file,
// $XDG_CONFIG_HOME/recall/config.toml (or ~/.config/recall/config.toml, or
// $RECALL_CONFIG), parsed by github.com/BurntSushi/toml:
//
//	# sessions that ran under these directories are never indexed
//	exclude_directories = ["/home/me/work/secret-project", "~/clients"]
//
//	# extra secrets to redact, by name (Go regular expressions)
//	[redact]
//	internal-token = "itk_[A-Za-z0-9]{32}"
//
// A setting Recall does not know is an error that names it and lists the
// known ones, so a typo never silently does nothing.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is the configuration in effect.
type Config struct {
	Path               string            `json:"path,omitempty" toml:"-"`
	ExcludeDirectories []string          `json:"excludeDirectories,omitempty" toml:"exclude_directories"`
	Redact             map[string]string `json:"redact,omitempty" toml:"redact"`
	// Settings to come (a [[source]] list of histories) are new fields
	// here and new entries in known.
}

// known names the settings for the unknown-setting error, in the file's
// own spelling.
var known = []string{"exclude_directories", "[redact]"}

// expected says what each setting holds, for a value of the wrong type.
var expected = map[string]string{
	"exclude_directories": `an array of strings, as in exclude_directories = ["~/clients"]`,
	"redact":              `name = "regular expression" lines under [redact]`,
}

// Path is where the config file is looked for ("" when there is no home).
func Path(getenv func(string) string) string {
	if p := getenv("RECALL_CONFIG"); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "recall", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "recall", "config.toml")
	}
	return ""
}

// Load reads the config file at path; a missing file (or path "") is an
// empty config. Errors name the file and line and say what to change.
func Load(path string, getenv func(string) string) (Config, error) {
	c := Config{Path: path, Redact: map[string]string{}}
	if path == "" {
		return c, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	} else if err != nil {
		return c, fmt.Errorf("read config %s: %w", path, err)
	}
	md, err := toml.Decode(string(raw), &c)
	if err != nil {
		return c, describe(path, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		key := un[0].String()
		where := path
		if line := lineOf(string(raw), un[0]); line > 0 {
			where = fmt.Sprintf("%s:%d", path, line)
		}
		return c, fmt.Errorf("%s: unknown setting %q (known: %s)", where, key, strings.Join(known, ", "))
	}
	if c.Redact == nil {
		c.Redact = map[string]string{}
	}
	for i, d := range c.ExcludeDirectories {
		c.ExcludeDirectories[i] = expandHome(d, getenv)
	}
	return c, nil
}

// typeErr is how the toml library words a value of the wrong type (it has
// no error type for it).
var typeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// valueType finds the type the file gave a value in a typeErr message.
var valueType = regexp.MustCompile(`TOML value has type ([^;]+)`)

// tomlTypes names the library's Go types as TOML users know them.
var tomlTypes = map[string]string{
	"string": "a string", "int64": "an integer", "float64": "a number", "bool": "a boolean",
	"map[string]any": "a table", "[]any": "an array", "[]map[string]any": "an array of tables",
}

// describe turns a decode error into file:line: what and what to write.
func describe(path string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %s", path, pe.Position.Line, pe.Message)
	}
	if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		key, what := m[2], m[3]
		if t := valueType.FindStringSubmatch(what); t != nil {
			what = "is " + tomlTypes[t[1]]
			if tomlTypes[t[1]] == "" {
				what = "is a " + t[1]
			}
		}
		msg := fmt.Sprintf("%s:%d: %s %s", path, line, key, what)
		top, _, _ := strings.Cut(key, ".")
		if want, ok := expected[top]; ok {
			msg += "; want " + want
		}
		return errors.New(msg)
	}
	return fmt.Errorf("config %s: %w", path, err)
}

// lineOf finds the line that sets key (its first line that names the key
// or a table by its first part), for the unknown-setting error: the toml
// library keeps key positions to itself. 0 when not found.
func lineOf(text string, key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	first := key[0]
	for i, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimLeft(l, "[")
		l = strings.Trim(strings.TrimSpace(l), `"'`)
		if rest, ok := strings.CutPrefix(l, first); ok {
			rest = strings.TrimLeft(rest, `"' `)
			if rest == "" || rest[0] == '=' || rest[0] == '.' || rest[0] == ']' {
				return i + 1
			}
		}
	}
	return 0
}

// Hash identifies the settings that change what the index holds.
func (c Config) Hash() string {
	keys := make([]string, 0, len(c.Redact))
	for k := range c.Redact {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, d := range c.ExcludeDirectories {
		fmt.Fprintf(h, "x%q", d)
	}
	for _, k := range keys {
		fmt.Fprintf(h, "r%q=%q", k, c.Redact[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Excluded reports whether dir lies under an excluded directory.
func (c Config) Excluded(dir string) bool {
	for _, x := range c.ExcludeDirectories {
		x = strings.TrimRight(x, "/")
		if dir == x || strings.HasPrefix(dir, x+"/") {
			return true
		}
	}
	return false
}

func expandHome(p string, getenv func(string) string) string {
	if strings.HasPrefix(p, "~/") {
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, p[2:])
		}
	}
	return p
}
