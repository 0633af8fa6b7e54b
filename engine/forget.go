package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/vectors"
)

// ForgetResult says what forget dropped.
type ForgetResult struct {
	Forgotten []string `json:"forgotten"`
	Source    string   `json:"source"`
}

// ErrAmbiguousID is an id several sources hold, given without a source to
// an operation that must not guess (forget); doors report it as bad input.
var ErrAmbiguousID = errors.New("id in several sources")

// Forget drops a session and its subagent family's descendants from the
// index of its source and keeps them out of later syncs. OpenCode's
// database is not touched: the session stays in OpenCode. A session no
// index holds is ErrUnknownID; one that several sources hold, without a
// source naming one, is ErrAmbiguousID (forgetting is for good: it does
// not pick one).
func (e *Engine) Forget(ctx context.Context, sessionID string, source ...string) (ForgetResult, error) {
	shs, err := e.shardsFor(source)
	if err != nil {
		return ForgetResult{}, err
	}
	held, err := sessionShards(ctx, shs, sessionID)
	if err != nil {
		return ForgetResult{}, fmt.Errorf("forget %s: %w", sessionID, err)
	}
	switch len(held) {
	case 0:
		return ForgetResult{}, fmt.Errorf("forget %q: %w", clip(sessionID, 80), ErrUnknownID)
	case 1:
		res, err := held[0].sh.forget(ctx, sessionID)
		res.Source = held[0].sh.name
		return res, held[0].sh.wrap(err)
	}
	var in []string
	for _, h := range held {
		in = append(in, h.sh.name)
	}
	return ForgetResult{}, fmt.Errorf("%w: %s is in sources %s; say which with --source (%s)", ErrAmbiguousID, sessionID, strings.Join(in, ", "), in[0])
}

func (sh *shard) forget(ctx context.Context, sessionID string) (ForgetResult, error) {
	if _, err := sh.ix.Session(ctx, sessionID); errors.Is(err, index.ErrNoSession) {
		return ForgetResult{}, fmt.Errorf("forget %q: %w", clip(sessionID, 80), ErrUnknownID)
	} else if err != nil {
		return ForgetResult{}, fmt.Errorf("forget %s: %w", sessionID, err)
	}
	ids := []string{sessionID}
	for i := 0; i < len(ids); i++ {
		kids, err := sh.ix.Children(ctx, []string{ids[i]})
		if err != nil {
			return ForgetResult{}, err
		}
		for _, k := range kids[ids[i]] {
			ids = append(ids, k.ID)
		}
	}
	if sh.ix.ReadOnly() {
		return ForgetResult{}, sh.ix.ReadOnlyError()
	}
	lock, err := index.LockWriter(ctx, sh.ix.Path())
	if err != nil {
		return ForgetResult{}, err
	}
	defer lock.Unlock()
	w, err := sh.ix.BeginWrite(ctx)
	if err != nil {
		return ForgetResult{}, index.ExplainWrite(sh.ix.Path(), err)
	}
	if err := w.Forget(ctx, ids, time.Now().UnixMilli()); err != nil {
		w.Rollback()
		return ForgetResult{}, index.ExplainWrite(sh.ix.Path(), err)
	}
	if err := w.Commit(ctx); err != nil {
		return ForgetResult{}, index.ExplainWrite(sh.ix.Path(), err)
	}
	if sh.vocab != nil {
		sh.vocab.invalidate()
	}
	// The vector file and this engine's copy hold the forgotten documents'
	// vectors and session ids; the next hybrid search loads them anew from
	// the index, without them. (Forget changes neither vector_gen nor
	// synced_at, which is what would otherwise mark them stale.)
	sh.vec.vecMu.Lock()
	sh.dropVectors()
	sh.vec.vecMu.Unlock()
	if err := vectors.RemoveFile(sh.vectorFile()); err != nil {
		sh.e.log.Warn("vector file kept after forget", "err", err)
	}
	return ForgetResult{Forgotten: ids}, nil
}

// keepIndexable leaves out sessions under excluded directories and
// forgotten sessions (with their subagents): to the index they are as good
// as deleted, so a sync drops any it held.
func (sh *shard) keepIndexable(ctx context.Context, sessions []model.Session) ([]model.Session, error) {
	gone, err := sh.ix.Forgotten(ctx)
	if err != nil {
		return nil, err
	}
	if len(gone) == 0 && len(sh.e.config.ExcludeDirectories) == 0 {
		return sessions, nil
	}
	byID := make(map[string]*model.Session, len(sessions))
	for i := range sessions {
		byID[sessions[i].ID] = &sessions[i]
	}
	out := sessions[:0:0]
	for _, s := range sessions {
		if sh.e.config.Excluded(s.Directory) || gone[s.ID] || gone[rootOf(&s, byID)] {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}
