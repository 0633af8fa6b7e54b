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
	src := e.source()
	st := Status{Source: src.Path(), Demo: e.demo, Eras: src.Eras(), Index: e.ix.Path(), Schema: index.SchemaVersion}
	if fi, err := os.Stat(e.ix.Path()); err == nil {
		st.IndexBytes = fi.Size()
	}
	c, err := e.ix.Counts(ctx)
	if err != nil {
		return st, err
	}
	st.Sessions, st.Messages, st.Parts, st.Documents = c.Sessions, c.Messages, c.Parts, c.Documents
	st.Freshness = e.freshness(ctx)
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

// freshness compares what the last sync recorded with the source now.
func (e *Engine) freshness(ctx context.Context) Freshness {
	var f Freshness
	var synced int64
	if v, err := e.ix.Meta(ctx, "synced_at"); err == nil && v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			f.SyncedAt, synced = render.Time(ms), ms
		}
	}
	if fp, err := e.ix.Meta(ctx, "source_fingerprint"); err == nil {
		f.Stale = fp != e.syncFingerprint()
	}
	if f.Stale {
		changed := max(e.source().ModTime().UnixMilli(), synced)
		f.LagMS = max(time.Now().UnixMilli()-changed, 0)
	}
	return f
}
