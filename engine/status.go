package engine

import (
	"context"
	"os"
	"strconv"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/render"
)

// Status describes the source and the index.
type Status struct {
	Source     string    `json:"source"`
	Demo       bool      `json:"demo,omitempty"`
	Eras       []string  `json:"eras"`
	Index      string    `json:"index"`
	IndexBytes int64     `json:"indexBytes"`
	Sessions   int       `json:"sessions"`
	Messages   int       `json:"messages"`
	Parts      int       `json:"parts"`
	Documents  int       `json:"documents"`
	Freshness  Freshness `json:"freshness"`
	Schema     int       `json:"schemaVersion"`
	// Semantic is the embedding model and how many documents have vectors.
	Semantic SemanticStatus `json:"semantic"`
}

// Status reports counts and freshness.
func (e *Engine) Status(ctx context.Context) (Status, error) {
	sh := e.shards[0]
	src := sh.source()
	st := Status{Source: src.Path(), Demo: e.demo, Eras: src.Eras(), Index: sh.ix.Path(), Schema: index.SchemaVersion}
	if fi, err := os.Stat(sh.ix.Path()); err == nil {
		st.IndexBytes = fi.Size()
	}
	c, err := sh.ix.Counts(ctx)
	if err != nil {
		return st, err
	}
	st.Sessions, st.Messages, st.Parts, st.Documents = c.Sessions, c.Messages, c.Parts, c.Documents
	st.Freshness = e.freshness(ctx, e.shards)
	sem, err := e.semanticStatus(ctx)
	if err != nil {
		return st, err
	}
	st.Semantic = sem
	return st, nil
}

// Freshness says how current the index is.
type Freshness struct {
	SyncedAt string `json:"syncedAt,omitempty"`
	Stale    bool   `json:"stale"`
	// LagMS is how long the history has held changes the index lacks: the
	// time since its files changed after the last sync (0 when fresh).
	LagMS int64 `json:"lagMs"`
	Busy  bool  `json:"busy,omitempty"`
}

// freshness is the least fresh of the shards': synced at the earliest,
// stale when any is, lagging by the longest lag.
func (e *Engine) freshness(ctx context.Context, shs []*shard) Freshness {
	var out Freshness
	for i, sh := range shs {
		f := sh.freshness(ctx)
		if i == 0 {
			out = f
			continue
		}
		if f.SyncedAt == "" || (out.SyncedAt != "" && f.SyncedAt < out.SyncedAt) {
			out.SyncedAt = f.SyncedAt
		}
		out.Stale = out.Stale || f.Stale
		out.LagMS = max(out.LagMS, f.LagMS)
		out.Busy = out.Busy || f.Busy
	}
	return out
}

// freshness compares what the last sync recorded with the source now.
func (sh *shard) freshness(ctx context.Context) Freshness {
	var f Freshness
	var synced int64
	if v, err := sh.ix.Meta(ctx, "synced_at"); err == nil && v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			f.SyncedAt, synced = render.Time(ms), ms
		}
	}
	if fp, err := sh.ix.Meta(ctx, "source_fingerprint"); err == nil {
		f.Stale = fp != sh.syncFingerprint()
	}
	if f.Stale {
		changed := max(sh.source().ModTime().UnixMilli(), synced)
		f.LagMS = max(time.Now().UnixMilli()-changed, 0)
	}
	return f
}
