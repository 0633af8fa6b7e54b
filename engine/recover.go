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

// RebuildIndex moves the damaged index aside (<path>.damaged-<time>, so
// nothing is deleted) and builds a new one from the history. The index is
// a cache, so nothing is lost but time; cursors made by the old index stop
// resolving (they say so).
func (e *Engine) RebuildIndex(ctx context.Context) (SyncResult, error) {
	path := e.ix.Path()
	if e.ix.ReadOnly() {
		return SyncResult{}, fmt.Errorf("the index %s is damaged: %w", path, e.ix.ReadOnlyError())
	}
	e.log.Warn("index damaged; rebuilding", "path", path)
	e.ix.Close()
	moved, err := index.MoveAside(path)
	if err != nil {
		// Keep the engine usable for whatever still reads.
		if ix, rerr := index.OpenWith(ctx, path, e.ixOpts); rerr == nil {
			e.ix = ix
			e.ix.SetRedactor(e.redactor)
		}
		return SyncResult{}, err
	}
	ix, err := index.OpenWith(ctx, path, e.ixOpts)
	if err != nil {
		return SyncResult{}, err
	}
	e.ix = ix
	e.ix.SetRedactor(e.redactor)
	if e.vocab != nil {
		e.vocab.invalidate()
	}
	if err := e.loadKey(ctx); err != nil {
		return SyncResult{}, err
	}
	e.notices = append(e.notices, damagedNotice(path, moved))
	return e.Sync(ctx, SyncOptions{Force: true})
}
