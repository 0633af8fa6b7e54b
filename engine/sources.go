package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/recallhq/recall/engine/config"
	"github.com/recallhq/recall/engine/demo"
	"github.com/recallhq/recall/engine/source"
	"github.com/recallhq/recall/engine/source/opencode"
)

// SourceSpec names one history to open.
type SourceSpec struct {
	// Name is how results, cursors and --source name it; "" derives one
	// from the path (source.DeriveName), made distinct with -2, -3, ….
	Name string `json:"name,omitempty"`
	// Path is the history: an opencode.db, or an OpenCode data dir.
	Path string `json:"path"`
	// Index is its index file; "" is the default under the data dir,
	// keyed by the history's absolute path (so adding or removing another
	// source never changes which file a source's index is).
	Index string `json:"index,omitempty"`
	// Optional: a missing history is a notice and its index answers as it
	// was (a [[source]] of the config), not an error.
	Optional bool `json:"optional,omitempty"`
}

// ErrOptions marks options that cannot work together or a name that
// cannot be a source's: doors report it as a usage error (exit 2,
// -32602), with the message saying what to change.
var ErrOptions = errors.New("bad options")

// DefaultSourceName names the history OpenCode itself uses (found where
// OpenCode keeps it, or given by that path); the bundled demo history is
// "demo".
const (
	DefaultSourceName = "local"
	DemoSourceName    = "demo"
)

// ParseSourceFlag reads one --db value: NAME=PATH or PATH (a name is then
// derived from the path). A value whose part before "=" holds a "/" or is
// not a name is all path (write ./a=b.db for a file called a=b.db).
func ParseSourceFlag(v string) (SourceSpec, error) {
	if name, path, ok := strings.Cut(v, "="); ok && !strings.Contains(name, "/") && name != "" {
		if msg := source.CheckName(name); msg != "" {
			return SourceSpec{}, fmt.Errorf("%w: --db %s: %s (--db NAME=PATH, or --db PATH for a name made from the path)", ErrOptions, v, msg)
		}
		if path == "" {
			return SourceSpec{}, fmt.Errorf("%w: --db %s: no path after the name (--db %s=PATH)", ErrOptions, v, name)
		}
		return SourceSpec{Name: name, Path: path}, nil
	}
	return SourceSpec{Path: v}, nil
}

// resolvedSource is a source Open will open: its name, the history's path
// as located, its index path, and how it came to be listed.
type resolvedSource struct {
	name, path, index string
	demo              bool
	// configured: listed in the config file, where a missing history is a
	// notice (the others still answer), not an error.
	configured bool
	// missing says why a configured history could not be located (nil:
	// located).
	missing error
}

// resolveSources lists the sources opts and the config name, in this
// order of precedence: explicit sources (--db, repeatable, or DBPath),
// else the config's [[source]] list, else the history OpenCode uses
// (named local), else the bundled demo (named demo). notices are for the
// user (the demo in use, a configured history missing).
func resolveSources(opts Options, cfg config.Config) (out []resolvedSource, notices []string, err error) {
	specs := opts.Sources
	if opts.DBPath != "" {
		specs = append([]SourceSpec{{Path: opts.DBPath}}, specs...)
	}
	configured := false
	if len(specs) == 0 && len(cfg.Sources) > 0 {
		configured = true
		for _, s := range cfg.Sources {
			specs = append(specs, SourceSpec{Name: s.Name, Path: s.Path, Index: s.Index})
		}
	}
	if len(specs) == 0 {
		path, err := opencode.Locate("", opts.Getenv)
		var nf *opencode.NotFoundError
		switch {
		case errors.As(err, &nf) && !opts.NoDemo:
			if path, err = demo.Extract(filepath.Join(DataDir(opts.Getenv), "demo")); err != nil {
				return nil, nil, err
			}
			notices = append(notices, fmt.Sprintf("%v; showing the bundled demo history (%s)", nf, path))
			return []resolvedSource{{name: DemoSourceName, path: path, index: opts.IndexPath, demo: true}}, notices, nil
		case err != nil:
			return nil, nil, err
		}
		return []resolvedSource{{name: DefaultSourceName, path: path, index: opts.IndexPath}}, nil, nil
	}
	if opts.IndexPath != "" {
		if len(specs) > 1 {
			return nil, nil, fmt.Errorf("%w: --index names the index of one source, and there are %d; with several, set index = \"PATH\" per source in a [[source]] list of the config file (%s)",
				ErrOptions, len(specs), config.Path(opts.Getenv))
		}
		if specs[0].Index == "" {
			specs[0].Index = opts.IndexPath
		}
	}
	taken := map[string]bool{}
	for _, s := range specs {
		if s.Name == "" {
			continue
		}
		if msg := source.CheckName(s.Name); msg != "" {
			return nil, nil, fmt.Errorf("%w: %s", ErrOptions, msg)
		}
		if taken[s.Name] {
			return nil, nil, fmt.Errorf("%w: two sources are named %q; give each its own name (--db NAME=PATH)", ErrOptions, s.Name)
		}
		taken[s.Name] = true
	}
	byPath := map[string]string{}
	for _, s := range specs {
		r := resolvedSource{name: s.Name, path: s.Path, index: s.Index, configured: configured || s.Optional}
		located, err := opencode.Locate(s.Path, opts.Getenv)
		switch {
		case err == nil:
			r.path = located
		case r.configured:
			// A configured history that is not there (an archive on a
			// drive not mounted, a laptop's copy not synced yet): its
			// index answers as it was, and a sync tries again.
			r.missing = err
		default:
			return nil, nil, err
		}
		if r.name == "" {
			r.name = source.DeriveName(r.path)
			if isDefaultHistory(r.path, opts.Getenv) {
				r.name = DefaultSourceName // the same name however it was given
			}
			r.name = source.Dedupe(r.name, taken)
			taken[r.name] = true
		}
		abs, err := filepath.Abs(r.path)
		if err != nil {
			return nil, nil, fmt.Errorf("history path: %w", err)
		}
		if other, dup := byPath[abs]; dup {
			// Two shards on one history would share one index file and its
			// writer lock.
			return nil, nil, fmt.Errorf("%w: the history %s is given twice (as %s and %s); give it once", ErrOptions, abs, other, r.name)
		}
		byPath[abs] = r.name
		if r.missing != nil {
			notices = append(notices, missingNotice(r.name, s.Path, cfg.Path))
		}
		out = append(out, r)
	}
	return out, notices, nil
}

func missingNotice(name, path, cfgPath string) string {
	return fmt.Sprintf("source %q: no OpenCode history at %s (fix its path in %s, or remove that [[source]]); searching the other sources and what %s's index held",
		name, path, cfgPath, name)
}

// isDefaultHistory reports whether path is the history OpenCode uses
// (where Open would look without --db): named like it, whether given or
// found, its cursors read in both ways.
func isDefaultHistory(path string, getenv func(string) string) bool {
	def, err := opencode.Locate("", getenv)
	if err != nil {
		return false
	}
	a, errA := filepath.Abs(path)
	b, errB := filepath.Abs(def)
	return errA == nil && errB == nil && a == b
}
