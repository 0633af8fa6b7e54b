package engine

import (
	"os"
	"path/filepath"

	"github.com/recallhq/recall/engine/config"
)

// Resolved is the histories and indexes Open would use for some Options.
// Source, Index and Demo are the first source's (what readers made for
// one history read).
type Resolved struct {
	Source  string           `json:"source"` // absolute path of the history (database, or legacy data dir)
	Index   string           `json:"index"`  // absolute path of the index file
	Demo    bool             `json:"demo"`   // the bundled demo history (no history found)
	Sources []ResolvedSource `json:"sources"`
}

// ResolvedSource is one source as Open would open it.
type ResolvedSource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`  // absolute
	Index string `json:"index"` // absolute
	Demo  bool   `json:"demo,omitempty"`
	// Optional: listed in the config, where a missing history is a notice.
	Optional bool `json:"optional,omitempty"`
}

// Resolve says which histories and indexes Open would use for opts,
// without opening any (the demo history is extracted when it would be
// used), so a server can share one open engine among clients that name
// the same ones in different ways.
func Resolve(opts Options) (Resolved, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	cfg := config.Config{}
	if opts.Config != nil {
		cfg = *opts.Config
	} else {
		var err error
		if cfg, err = config.Load(config.Path(opts.Getenv), opts.Getenv); err != nil {
			return Resolved{}, err
		}
	}
	rs, _, err := resolveSources(opts, cfg)
	if err != nil {
		return Resolved{}, err
	}
	var out Resolved
	for i, r := range rs {
		s := ResolvedSource{Name: r.name, Demo: r.demo, Optional: r.configured}
		if s.Path, err = filepath.Abs(r.path); err != nil {
			return Resolved{}, err
		}
		s.Index = r.index
		if s.Index == "" {
			s.Index = DefaultIndexPath(opts.Getenv, r.path)
		}
		if s.Index, err = filepath.Abs(s.Index); err != nil {
			return Resolved{}, err
		}
		if i == 0 {
			out.Source, out.Index, out.Demo = s.Path, s.Index, s.Demo
		}
		out.Sources = append(out.Sources, s)
	}
	return out, nil
}

// Specs are the sources r names, as Options.Sources (with their indexes),
// for opening exactly what was resolved.
func (r Resolved) Specs() []SourceSpec {
	out := make([]SourceSpec, len(r.Sources))
	for i, s := range r.Sources {
		out[i] = SourceSpec{Name: s.Name, Path: s.Path, Index: s.Index, Optional: s.Optional}
	}
	return out
}
