package engine

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Config is the user's config file, $XDG_CONFIG_HOME/recall/config.toml
// (or ~/.config/recall/config.toml, or $RECALL_CONFIG):
//
//	# sessions that ran under these directories are never indexed
//	exclude_directories = ["/home/me/work/secret-project", "~/clients"]
//
//	# extra secrets to redact, by name (Go regular expressions)
//	[redact]
//	internal-token = "itk_[A-Za-z0-9]{32}"
type Config struct {
	Path               string            `json:"path,omitempty"`
	ExcludeDirectories []string          `json:"excludeDirectories,omitempty"`
	Redact             map[string]string `json:"redact,omitempty"`
}

// ConfigPath is where the config file is looked for.
func ConfigPath(getenv func(string) string) string {
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

// LoadConfig reads the config file; a missing file is an empty config.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	c := Config{Path: path, Redact: map[string]string{}}
	if path == "" {
		return c, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	} else if err != nil {
		return c, fmt.Errorf("read config %s: %w", path, err)
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	lineNo := 0
	var pendingKey, pending string // a multi-line array being read
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(stripComment(sc.Text()))
		if pendingKey != "" {
			pending += " " + line
			if !strings.Contains(line, "]") {
				continue
			}
			line, pendingKey = pendingKey+" = "+pending, ""
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.Trim(line, "[] ")
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return c, fmt.Errorf("%s:%d: expected key = value", path, lineNo)
		}
		key, val = strings.Trim(strings.TrimSpace(key), `"`), strings.TrimSpace(val)
		if strings.HasPrefix(val, "[") && !strings.Contains(val, "]") {
			pendingKey, pending = key, val
			continue
		}
		switch {
		case section == "" && key == "exclude_directories":
			list, err := parseStringArray(val)
			if err != nil {
				return c, fmt.Errorf("%s:%d: %v", path, lineNo, err)
			}
			for _, d := range list {
				c.ExcludeDirectories = append(c.ExcludeDirectories, expandHome(d, getenv))
			}
		case section == "redact":
			s, err := parseString(val)
			if err != nil {
				return c, fmt.Errorf("%s:%d: %v", path, lineNo, err)
			}
			c.Redact[key] = s
		default:
			return c, fmt.Errorf("%s:%d: unknown setting %q (known: exclude_directories, [redact])", path, lineNo, key)
		}
	}
	return c, sc.Err()
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

// excluded reports whether dir lies under an excluded directory.
func (c Config) excluded(dir string) bool {
	for _, x := range c.ExcludeDirectories {
		x = strings.TrimRight(x, "/")
		if dir == x || strings.HasPrefix(dir, x+"/") {
			return true
		}
	}
	return false
}

func stripComment(s string) string {
	inStr := false
	for i, r := range s {
		switch r {
		case '"':
			inStr = !inStr
		case '#':
			if !inStr {
				return s[:i]
			}
		}
	}
	return s
}

func parseString(v string) (string, error) {
	if strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'") && len(v) >= 2 {
		return v[1 : len(v)-1], nil // literal string: no escapes
	}
	s, err := strconv.Unquote(v)
	if err != nil {
		return "", fmt.Errorf("expected a quoted string, got %s", v)
	}
	return s, nil
}

func parseStringArray(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("expected an array of strings, got %s", v)
	}
	var out []string
	for _, item := range strings.Split(v[1:len(v)-1], ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		s, err := parseString(item)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func expandHome(p string, getenv func(string) string) string {
	if strings.HasPrefix(p, "~/") {
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, p[2:])
		}
	}
	return p
}
