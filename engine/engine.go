// Package engine answers Recall's questions over a user's OpenCode history:
// it syncs the index from the source and serves search, read, sessions,
// status and export. It knows nothing of the CLI or the LSP; those doors
// reach it through package commands.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/recallhq/recall/engine/demo"
	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/redact"
	"github.com/recallhq/recall/engine/source/opencode"
)

// Options says where the history and the index are.
type Options struct {
	DBPath    string              // explicit source (--db); "" = locate like OpenCode
	IndexPath string              // explicit index (--index); "" = under the data dir
	Getenv    func(string) string // os.Getenv in production
	Logger    *slog.Logger
	// NoDemo disables the bundled demo history fallback.
	NoDemo bool
	// NoRedact shows secrets in outputs (they stay out of the index).
	NoRedact bool
	// Config overrides the config file (nil = read ConfigPath).
	Config *Config
	// ModelDir holds installed embedding models ("" = ModelDir(Getenv)).
	ModelDir string
	// Model names the embedding model for semantic search ("" = the
	// default model if installed, else the first installed one).
	Model string
}

// Engine is an open source plus its index.
type Engine struct {
	opts     Options
	src      *opencode.Source
	ix       *index.Index
	log      *slog.Logger
	demo     bool
	notices  []string
	cursorMu sync.Mutex
	key      []byte // cursor signing key, from the index
	vocab    *vocabCache
	config   Config
	redactor *redact.Redactor
	sem      semanticState // embedding model, vectors, embedding runs (semantic.go)
}

// DataDir is Recall's data directory: $XDG_DATA_HOME/recall or
// ~/.local/share/recall.
func DataDir(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "recall")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "recall")
	}
	return filepath.Join(os.TempDir(), "recall")
}

// DefaultIndexPath is the index for a source path: one file per source,
// keyed by a hash of its absolute path, so two histories never mix.
func DefaultIndexPath(getenv func(string) string, sourcePath string) string {
	abs, err := filepath.Abs(sourcePath)
	if err != nil {
		abs = sourcePath
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(DataDir(getenv), "index", hex.EncodeToString(sum[:8])+".db")
}

// Open locates the history, opens it read-only and opens (or creates) the
// index. With no history anywhere and no explicit --db, it opens the bundled
// demo history and says so in Notices.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{opts: opts, log: opts.Logger, vocab: &vocabCache{}}
	if opts.Config != nil {
		e.config = *opts.Config
	} else {
		cfg, err := LoadConfig(ConfigPath(opts.Getenv), opts.Getenv)
		if err != nil {
			return nil, err
		}
		e.config = cfg
	}
	r, err := redact.New(e.config.Redact)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", e.config.Path, err)
	}
	e.redactor = r
	path, err := opencode.Locate(opts.DBPath, opts.Getenv)
	var nf *opencode.NotFoundError
	if errors.As(err, &nf) && opts.DBPath == "" && !opts.NoDemo {
		path, err = demo.Extract(filepath.Join(DataDir(opts.Getenv), "demo"))
		if err != nil {
			return nil, err
		}
		e.demo = true
		e.notices = append(e.notices, fmt.Sprintf("%v; showing the bundled demo history (%s)", nf, path))
	} else if err != nil {
		return nil, err
	}
	src, err := opencode.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	e.src = src
	ixPath := opts.IndexPath
	if ixPath == "" {
		ixPath = DefaultIndexPath(opts.Getenv, path)
	}
	ix, err := index.Open(ctx, ixPath)
	if errors.Is(err, index.ErrCorrupt) {
		e.log.Warn("index corrupt; rebuilding", "path", ixPath, "err", err)
		e.notices = append(e.notices, fmt.Sprintf("the index %s was damaged; rebuilt it from the history", ixPath))
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(ixPath + suffix)
		}
		ix, err = index.Open(ctx, ixPath)
	}
	if err != nil {
		src.Close()
		return nil, err
	}
	e.ix = ix
	e.ix.SetRedactor(e.redactor)
	if err := e.loadKey(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Config is the configuration in effect.
func (e *Engine) Config() Config { return e.config }

// Close releases the source and the index.
func (e *Engine) Close() error {
	var errs []error
	errs = append(errs, e.closeSemantic())
	if e.src != nil {
		errs = append(errs, e.src.Close())
	}
	if e.ix != nil {
		errs = append(errs, e.ix.Close())
	}
	return errors.Join(errs...)
}

// Notices are one-time messages for the user (demo history in use, index
// rebuilt); the CLI prints them on stderr.
func (e *Engine) Notices() []string { return append([]string(nil), e.notices...) }

// IsDemo reports whether the bundled demo history is in use.
func (e *Engine) IsDemo() bool { return e.demo }

// SourcePath is the history being read.
func (e *Engine) SourcePath() string { return e.src.Path() }

// IndexPath is the index file.
func (e *Engine) IndexPath() string { return e.ix.Path() }

// Index exposes the index to sibling packages in this module (the embedder
// queue stores vectors in it).
func (e *Engine) Index() *index.Index { return e.ix }

func (e *Engine) loadKey(ctx context.Context) error {
	k, err := e.ix.Meta(ctx, "cursor_key")
	if err != nil {
		return fmt.Errorf("read index: %w", err)
	}
	key, err := hex.DecodeString(k)
	if err != nil || len(key) == 0 {
		return fmt.Errorf("index %s has no cursor key; delete it to rebuild", e.ix.Path())
	}
	e.key = key
	return nil
}
