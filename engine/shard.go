package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/source"
)

// shard is one history and its own index: everything that reads the
// history or reads or writes the index is the shard's (sync and the
// reopen after a swap, vocabulary, lexical candidates, vectors, recent
// activity, windows, lookups, forget, file touches, stamps). One index per
// history, merged at query time, is the design: adding or removing a
// history never rebuilds another's index, each syncs on its own, and an
// index file made before there were several histories stays valid.
type shard struct {
	e    *Engine // engine-wide config, redactor and log
	name string
	// path is the history's absolute path as located (the database, or a
	// legacy data dir).
	path string
	demo bool

	// srcMu guards src, which a sync replaces when the history file was
	// replaced underneath it (reopenSource).
	srcMu sync.Mutex
	src   source.Source
	open  source.Opener

	ix     *index.Index
	ixOpts index.Options
	vocab  *vocabCache
	forkc  forkCache       // session origins, for fork families (forks.go)
	vec    shardVectors    // the in-memory vectors (semantic.go)
	said   map[string]bool // notices already given, so each is said once
}

// openShard opens a source's history read-only and its index (its own
// path, or the default keyed by the history's absolute path) after the
// placement and ownership checks; a damaged index is moved aside and
// rebuilt, and says so in the engine's notices. A configured history that
// is missing leaves the shard without a source: its index answers as it
// was, and each sync looks for the history again.
func (e *Engine) openShard(ctx context.Context, r resolvedSource) (*shard, error) {
	opener := e.opts.OpenSource
	if opener == nil {
		opener = openOpenCode
	}
	path := r.path
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history path: %w", err)
	}
	sh := &shard{e: e, name: r.name, path: path, demo: r.demo, open: opener, vocab: &vocabCache{}, said: map[string]bool{}}
	ixPath := r.index
	if ixPath == "" {
		ixPath = DefaultIndexPath(e.opts.Getenv, path)
	}
	if ixPath, err = filepath.Abs(ixPath); err != nil {
		return nil, fmt.Errorf("index path: %w", err)
	}
	// Before anything is opened: the index may never be one of OpenCode's
	// files (the history opens read-only, but the index would be written).
	if err := checkIndexPlacement(ixPath, abs, e.opts.Getenv); err != nil {
		return nil, err
	}
	// The default history is opened lazily when its index exists: if the
	// index's last sync read this very file and it is unchanged
	// (checkUnchanged, below), a command answered from the index never
	// opens it. A new index is opened only once the history is known
	// good, so no index is made for a file that is not OpenCode's.
	_, statErr := os.Stat(ixPath)
	lazy := e.opts.OpenSource == nil && statErr == nil
	if r.missing == nil {
		var src source.Source
		if lazy {
			src, err = openOpenCodeLazily(path)
		} else {
			src, err = opener(ctx, path)
		}
		if err != nil {
			return nil, err
		}
		sh.src = src
		if n := src.Notice(); n != "" {
			e.notices = append(e.notices, n)
			sh.said[n] = true
		}
	} else {
		sh.said[missingNotice(r.name, path, e.config.Path)] = true // Open said it
	}
	// Recall's own index directory (where the default index lives, also
	// when a daemon passes that path explicitly) must be private.
	sh.ixOpts = index.Options{PrivateDir: ownIndexDir(ixPath, e.opts.Getenv, path), OneCommand: e.opts.OneCommand}
	ix, err := index.OpenWith(ctx, ixPath, sh.ixOpts)
	if errors.Is(err, index.ErrCorrupt) {
		var moved string
		if moved, err = index.MoveAside(ixPath); err == nil {
			e.log.Warn("index damaged; moved aside and rebuilding", "path", ixPath, "moved", moved)
			e.notices = append(e.notices, damagedNotice(ixPath, moved))
			ix, err = index.OpenWith(ctx, ixPath, sh.ixOpts)
		}
	}
	if err == nil && lazy && sh.src != nil {
		if err = sh.checkUnchanged(ctx, ix); err != nil {
			ix.Close()
		}
	}
	if err != nil {
		if sh.src != nil {
			sh.src.Close()
		}
		return nil, err
	}
	sh.ix = ix
	sh.ix.SetRedactor(e.redactor)
	return sh, nil
}

// checkUnchanged opens a lazily opened history now, and so says at open
// what is wrong with it (not OpenCode's, damaged), unless ix's last sync
// read this very file and nothing has changed since: then the sync will
// be idle and the file is known good.
func (sh *shard) checkUnchanged(ctx context.Context, ix *index.Index) error {
	if sh.unchanged(ctx, ix, sh.syncFingerprint()) {
		return nil
	}
	if c, ok := sh.src.(source.Checker); ok {
		return c.Check(ctx)
	}
	return nil
}

// unchanged reports that fp, the history's syncFingerprint now, is the one
// ix's last sync recorded: nothing in the history has changed since.
func (sh *shard) unchanged(ctx context.Context, ix *index.Index, fp string) bool {
	last, err := ix.Meta(ctx, "source_fingerprint")
	return err == nil && last == fp && fp != ""
}

// source is the open history (a sync may have replaced it); nil while a
// configured history is missing.
func (sh *shard) source() source.Source {
	sh.srcMu.Lock()
	defer sh.srcMu.Unlock()
	return sh.src
}

// index is the shard's index (RebuildIndex replaces it).
func (sh *shard) index() *index.Index { return sh.ix }

// fingerprint is the source's cheap summary of its files; a missing
// history's says whether something is at its path now, so a watcher
// syncs when it appears.
func (sh *shard) fingerprint() string {
	if src := sh.source(); src != nil {
		return src.Fingerprint()
	}
	_, err := os.Stat(sh.path)
	return fmt.Sprintf("missing:%s:%v", sh.path, err == nil)
}

func (sh *shard) close() error {
	var errs []error
	if src := sh.source(); src != nil {
		errs = append(errs, src.Close())
	}
	if sh.ix != nil {
		errs = append(errs, sh.ix.Close())
	}
	return errors.Join(errs...)
}

// ErrUnknownSource is a source name no open source has; doors report it
// as bad input (exit 2, -32602).
var ErrUnknownSource = errors.New("unknown source")

// SourceNames lists the open sources' names, in source order.
func (e *Engine) SourceNames() []string {
	out := make([]string, len(e.shards))
	for i, sh := range e.shards {
		out[i] = sh.name
	}
	return out
}

// shard is the open source called name (nil: none).
func (e *Engine) shard(name string) *shard {
	for _, sh := range e.shards {
		if sh.name == name {
			return sh
		}
	}
	return nil
}

// shardsFor is the shards a request names, in source order (all of them
// for none); a name no source has is ErrUnknownSource.
func (e *Engine) shardsFor(names []string) ([]*shard, error) {
	if len(names) == 0 {
		return e.shards, nil
	}
	for _, n := range names {
		if e.shard(n) == nil {
			return nil, fmt.Errorf("%w %q (open sources: %s); name one of those, or open it too (--db %s=PATH, or a [[source]] in the config)",
				ErrUnknownSource, clip(n, 40), strings.Join(e.SourceNames(), ", "), clip(n, 40))
		}
	}
	var out []*shard
	for _, sh := range e.shards {
		if slices.Contains(names, sh.name) {
			out = append(out, sh)
		}
	}
	return out, nil
}

// sessionShards are the shards among shs whose index holds session id,
// with its row in each.
func sessionShards(ctx context.Context, shs []*shard, id string) ([]shardRow, error) {
	var out []shardRow
	for _, sh := range shs {
		s, err := sh.ix.Session(ctx, id)
		if errors.Is(err, index.ErrNoSession) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, shardRow{sh: sh, SessionRow: s})
	}
	return out, nil
}

// findSession is the session id in the named source, or in the first
// source (in source order) that holds it; index.ErrNoSession when none
// does.
func (e *Engine) findSession(ctx context.Context, source, id string) (*shard, index.SessionRow, error) {
	var names []string
	if source != "" {
		names = []string{source}
	}
	shs, err := e.shardsFor(names)
	if err != nil {
		return nil, index.SessionRow{}, err
	}
	for _, sh := range shs {
		s, err := sh.ix.Session(ctx, id)
		if errors.Is(err, index.ErrNoSession) {
			continue
		}
		return sh, s, err
	}
	return nil, index.SessionRow{}, index.ErrNoSession
}
