package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/source"
)

// IsIndexDamaged reports an error caused by a damaged index file.
func IsIndexDamaged(err error) bool {
	var se *source.Error
	if errors.As(err, &se) {
		return false
	}
	return index.IsCorruption(err)
}

// shardError is an error of one shard: its message is the error's own,
// and it says which shard failed (DamagedSources).
type shardError struct {
	sh  *shard
	err error
}

func (e *shardError) Error() string { return e.err.Error() }
func (e *shardError) Unwrap() error { return e.err }

// wrap marks err as the shard's (nil stays nil).
func (sh *shard) wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *shardError
	if errors.As(err, &se) {
		return err
	}
	return &shardError{sh: sh, err: err}
}

// DamagedSources names the source whose index err came from, for
// RebuildIndex (nil when err does not say: rebuild them all).
func DamagedSources(err error) []string {
	var se *shardError
	if errors.As(err, &se) {
		return []string{se.sh.name}
	}
	return nil
}

// RebuildIndex moves the damaged index of each named source (every
// source's, for none) aside (<path>.damaged-<time>, so nothing is deleted)
// and builds a new one from its history. An index is a cache, so nothing
// is lost but time, and the other sources' indexes are not touched;
// cursors name OpenCode's own ids, so they still resolve after it.
func (e *Engine) RebuildIndex(ctx context.Context, sources ...string) (SyncResult, error) {
	shs, err := e.shardsFor(sources)
	if err != nil {
		return SyncResult{}, err
	}
	for _, sh := range shs {
		if err := sh.rebuild(ctx); err != nil {
			return SyncResult{}, err
		}
	}
	return e.Sync(ctx, SyncOptions{Force: true, sources: sources})
}

func (sh *shard) rebuild(ctx context.Context) error {
	e := sh.e
	path := sh.ix.Path()
	if sh.ix.ReadOnly() {
		return fmt.Errorf("the index %s is damaged: %w", path, sh.ix.ReadOnlyError())
	}
	e.log.Warn("index damaged; rebuilding", "path", path)
	sh.ix.Close()
	moved, err := index.MoveAside(path)
	if err != nil {
		// Keep the shard usable for whatever still reads.
		if ix, rerr := index.OpenWith(ctx, path, sh.ixOpts); rerr == nil {
			sh.ix = ix
			sh.ix.SetRedactor(e.redactor)
		}
		return err
	}
	ix, err := index.OpenWith(ctx, path, sh.ixOpts)
	if err != nil {
		return err
	}
	sh.ix = ix
	sh.ix.SetRedactor(e.redactor)
	sh.vocab.invalidate()
	e.notices = append(e.notices, damagedNotice(path, moved))
	return nil
}
