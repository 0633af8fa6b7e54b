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
//	# histories to search together (without any, the one OpenCode uses)
//	[[source]]
//	name = "laptop"
//	path = "~/sync/laptop/opencode.db"
//	[[source]]
//	name = "desktop"
//	path = "~/sync/desktop/opencode.db"
//	index = "~/indexes/desktop.db"   # optional; default under the data dir
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
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/recallhq/recall/engine/source"
)

// Config is the configuration in effect.
type Config struct {
	Path               string            `json:"path,omitempty" toml:"-"`
	ExcludeDirectories []string          `json:"excludeDirectories,omitempty" toml:"exclude_directories"`
	Redact             map[string]string `json:"redact,omitempty" toml:"redact"`
	// Sources are the histories to search together, in this order (the
	// order breaks ties and picks the shard an id without a source
	// names). Empty: the history OpenCode itself uses. They do not change
	// what a document holds, so they are not in Hash.
	Sources []Source `json:"sources,omitempty" toml:"source"`
}

// Source is one [[source]] entry: a named history, and optionally where
// its index lives.
type Source struct {
	// Name is how results, cursors and --source name it; "" derives one
	// from the path (source.DeriveName).
	Name string `json:"name,omitempty" toml:"name"`
	// Path is the history: an opencode.db, or an OpenCode data dir; ~/
	// is the home directory.
	Path string `json:"path" toml:"path"`
	// Index is its index file; "" is the default (keyed by the path).
	Index string `json:"index,omitempty" toml:"index"`
}

// known names the settings for the unknown-setting error, in the file's
// own spelling.
var known = []string{"exclude_directories", "[redact]", "[[source]] (name, path, index)"}

// expected says what each setting holds, for a value of the wrong type.
var expected = map[string]string{
	"exclude_directories": `an array of strings, as in exclude_directories = ["~/clients"]`,
	"redact":              `name = "regular expression" lines under [redact]`,
	"source":              `[[source]] tables with name = "laptop" and path = "~/sync/laptop/opencode.db" (index = "…" optional)`,
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
	if err := c.checkSources(string(raw), getenv); err != nil {
		return c, err
	}
	return c, nil
}

// checkSources expands ~ in the [[source]] paths and refuses an entry
// without a path, a bad name or a name given twice, naming its line.
func (c *Config) checkSources(text string, getenv func(string) string) error {
	seen := map[string]int{}
	for i := range c.Sources {
		s := &c.Sources[i]
		where := c.Path
		if line := nthTableLine(text, "source", i); line > 0 {
			where = fmt.Sprintf("%s:%d", c.Path, line)
		}
		if strings.TrimSpace(s.Path) == "" {
			return fmt.Errorf(`%s: [[source]] %s has no path; want path = "~/sync/laptop/opencode.db"`, where, describeEntry(s.Name, i))
		}
		if s.Name != "" {
			if msg := source.CheckName(s.Name); msg != "" {
				return fmt.Errorf("%s: %s", where, msg)
			}
			if j, dup := seen[s.Name]; dup {
				return fmt.Errorf("%s: source name %q is also the name of [[source]] #%d; give each source its own name", where, s.Name, j+1)
			}
			seen[s.Name] = i
		}
		s.Path = expandHome(s.Path, getenv)
		s.Index = expandHome(s.Index, getenv)
	}
	return nil
}

func describeEntry(name string, i int) string {
	if name != "" {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("#%d", i+1)
}

// nthTableLine is the line of the n-th (0-based) [[name]] header, 0 when
// not found (toml keeps positions to itself; see lineOf).
func nthTableLine(text, name string, n int) int {
	for i, line := range strings.Split(text, "\n") {
		l := strings.ReplaceAll(strings.TrimSpace(line), " ", "")
		if strings.HasPrefix(l, "[["+name+"]]") {
			if n == 0 {
				return i + 1
			}
			n--
		}
	}
	return 0
}

// typeErr is how the toml library words a value of the wrong type (it has
// no error type for it).
var typeErr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)
})

// valueType finds the type the file gave a value in a typeErr message.
var valueType = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`TOML value has type ([^;]+)`) })

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
	if m := typeErr().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		key, what := m[2], m[3]
		if t := valueType().FindStringSubmatch(what); t != nil {
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
