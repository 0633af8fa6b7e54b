// Package engine answers Recall's questions over a user's OpenCode history:
// it syncs the index from the source and serves search, read, sessions,
// status and export. It is a facade over its packages: it reads history
// through source.Source, stores and queries through engine/index (it holds
// no SQL), ranks with engine/rank and engine/vectors, and renders with
// engine/render. It knows nothing of the CLI or the LSP; those doors reach
// it through package commands.
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
	"strings"

	"github.com/recallhq/recall/engine/config"
	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/redact"
	"github.com/recallhq/recall/engine/source"
	"github.com/recallhq/recall/engine/source/opencode"
)

// Options says where the histories and their indexes are.
type Options struct {
	// Sources are the histories to open, in this order (--db, repeatable);
	// none: the config's [[source]] list, else the history OpenCode uses.
	Sources []SourceSpec
	// DBPath is one more source first (the one-history shorthand).
	DBPath string
	// IndexPath is the index of the only source (--index); with several,
	// each SourceSpec (or [[source]]) has its own Index.
	IndexPath string
	Getenv    func(string) string // os.Getenv in production
	Logger    *slog.Logger
	// NoDemo disables the bundled demo history fallback.
	NoDemo bool
	// NoRedact shows secrets in outputs (they stay out of the index).
	NoRedact bool
	// Config overrides the config file (nil = read config.Path).
	Config *config.Config
	// ModelDir holds installed embedding models ("" = ModelDir(Getenv)).
	ModelDir string
	// Model names the embedding model for semantic search ("" = the
	// default model if installed, else the first installed one).
	Model string
	// OneCommand is a process that runs one command and exits (the CLI):
	// its indexes are read through a small page cache, keeping nothing
	// for a later command (index.Options.OneCommand), and it allocates
	// its first 16 MB without a collection (giveStartRoom); a
	// long-running server leaves it off and keeps what it read.
	OneCommand bool
	// OpenSource opens the history (nil = opencode.Open); tests pass a
	// fake to reach cases a real history cannot express.
	OpenSource source.Opener
}

// Engine is one or more shards (a history and its own index, shard.go)
// searched as one: config, redaction, the cursor key and the embedding
// model are engine-wide; everything that reads or writes one history or
// one index is the shard's.
type Engine struct {
	opts     Options
	shards   []*shard // in source order
	log      *slog.Logger
	demo     bool
	notices  []string
	key      []byte // cursor signing key (cursorkey.go)
	config   config.Config
	redactor *redact.Redactor
	sem      semanticState // embedding model and runs (semantic.go)
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

// ownIndexDir reports whether ixPath is in Recall's own index directory.
func ownIndexDir(ixPath string, getenv func(string) string, source string) bool {
	def, err := filepath.Abs(DefaultIndexPath(getenv, source))
	return err == nil && filepath.Dir(def) == filepath.Dir(ixPath)
}

// Open locates each history, opens it read-only and opens (or creates) its
// index; an index path that is OpenCode's, not provably Recall's, or open
// to other users is refused (ErrIndexRefused) with nothing touched. An
// explicit history that is missing is an error; a configured one is a
// notice, and its index answers as it was. With no history anywhere and
// none named, it opens the bundled demo history and says so in Notices.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{opts: opts, log: opts.Logger}
	if opts.OneCommand {
		giveStartRoom()
	}
	if opts.Config != nil {
		e.config = *opts.Config
	} else {
		cfg, err := config.Load(config.Path(opts.Getenv), opts.Getenv)
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
	if opts.OneCommand {
		// Built beside the opening and the reading that come first, on
		// the machine's other core, instead of at the first snippet.
		go r.Prepare()
	}
	specs, notices, err := resolveSources(opts, e.config)
	if err != nil {
		return nil, err
	}
	e.notices = append(e.notices, notices...)
	for _, r := range specs {
		sh, err := e.openShard(ctx, r)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.demo = e.demo || r.demo
		e.shards = append(e.shards, sh)
	}
	key, notice, err := loadCursorKey(opts.Getenv)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.key = key
	if notice != "" {
		e.notices = append(e.notices, notice)
	}
	return e, nil
}

// ErrIndexRefused marks an index path Recall will not use (index.ErrRefused):
// the error says why and how to fix it; nothing was written.
var ErrIndexRefused = index.ErrRefused

func damagedNotice(path, moved string) string {
	return fmt.Sprintf("the index %s was damaged; moved it to %s and rebuilt the index from the history", path, moved)
}

// Config is the configuration in effect.
func (e *Engine) Config() config.Config { return e.config }

// Close releases the sources and the indexes.
func (e *Engine) Close() error {
	var errs []error
	errs = append(errs, e.closeSemantic())
	for _, sh := range e.shards {
		errs = append(errs, sh.close())
	}
	return errors.Join(errs...)
}

// Notices are one-time messages for the user (demo history in use, index
// rebuilt); the CLI prints them on stderr.
func (e *Engine) Notices() []string { return append([]string(nil), e.notices...) }

// IsDemo reports whether the bundled demo history is in use.
func (e *Engine) IsDemo() bool { return e.demo }

// SourcePath is the (first) history being read.
func (e *Engine) SourcePath() string { return e.shards[0].path }

// openOpenCode is the default source.Opener: OpenCode's history.
func openOpenCode(ctx context.Context, path string) (source.Source, error) {
	s, err := opencode.Open(ctx, path)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return s, nil
}

// openOpenCodeLazily is opencode.OpenLazily as a source.Source.
func openOpenCodeLazily(path string) (source.Source, error) {
	s, err := opencode.OpenLazily(path)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return s, nil
}

// SourceFingerprint is a cheap summary of the histories' files (inode,
// sizes and modification times, no query): a watcher polls it and syncs
// when it changes.
func (e *Engine) SourceFingerprint() string {
	fps := make([]string, len(e.shards))
	for i, sh := range e.shards {
		fps[i] = sh.fingerprint()
	}
	return strings.Join(fps, "\n")
}

// IndexPath is the (first) index file.
func (e *Engine) IndexPath() string { return e.shards[0].index().Path() }
