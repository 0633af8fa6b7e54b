package engine

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/recallhq/recall/engine/demo"
	"github.com/recallhq/recall/engine/source/opencode"
)

// Resolved is the history and index Open would use for some Options.
type Resolved struct {
	Source string // absolute path of the history (database, or legacy data dir)
	Index  string // absolute path of the index file
	Demo   bool   // the bundled demo history (no history found)
}

// Resolve says which history and index Open would use for opts, without
// opening either (the demo history is extracted when it would be used), so
// a server can share one open engine among clients that name the same
// ones in different ways.
func Resolve(opts Options) (Resolved, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	var r Resolved
	path, err := opencode.Locate(opts.DBPath, opts.Getenv)
	var nf *opencode.NotFoundError
	if errors.As(err, &nf) && opts.DBPath == "" && !opts.NoDemo {
		path, err = demo.Extract(filepath.Join(DataDir(opts.Getenv), "demo"))
		r.Demo = true
	}
	if err != nil {
		return Resolved{}, err
	}
	if r.Source, err = filepath.Abs(path); err != nil {
		return Resolved{}, err
	}
	r.Index = opts.IndexPath
	if r.Index == "" {
		r.Index = DefaultIndexPath(opts.Getenv, path)
	}
	if r.Index, err = filepath.Abs(r.Index); err != nil {
		return Resolved{}, err
	}
	return r, nil
}
