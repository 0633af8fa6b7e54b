package engine

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/source/opencode"
)

// IsIndexDamaged reports an error caused by a damaged index file.
func IsIndexDamaged(err error) bool {
	var se *opencode.SourceError
	if errors.As(err, &se) {
		return false
	}
	return index.IsCorruption(err)
}

// RebuildIndex deletes the index file and builds it again from the history.
// The index is a cache, so nothing is lost but time; cursors made by the old
// index stop resolving (they say so).
func (e *Engine) RebuildIndex(ctx context.Context) (SyncResult, error) {
	path := e.ix.Path()
	e.log.Warn("index damaged; rebuilding", "path", path)
	e.ix.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			return SyncResult{}, fmt.Errorf("remove damaged index %s: %w; delete it by hand", path, err)
		}
	}
	ix, err := index.Open(ctx, path)
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
	e.notices = append(e.notices, fmt.Sprintf("the index %s was damaged; rebuilt it from the history", path))
	return e.Sync(ctx, SyncOptions{Force: true})
}
