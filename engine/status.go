package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/render"
)

// Status describes the sources and their indexes. The top-level fields are
// the first source's history and index and every source's totals, as
// readers made for one history expect; Sources has each one.
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
	Sources  []SourceStatus `json:"sources"`
}

// SourceStatus describes one source: its history, eras, index, counts
// and freshness.
type SourceStatus struct {
	Name       string    `json:"name"`
	Path       string    `json:"path"`
	Demo       bool      `json:"demo,omitempty"`
	Eras       []string  `json:"eras"`
	Index      string    `json:"index"`
	IndexBytes int64     `json:"indexBytes"`
	Sessions   int       `json:"sessions"`
	Messages   int       `json:"messages"`
	Parts      int       `json:"parts"`
	Documents  int       `json:"documents"`
	Freshness  Freshness `json:"freshness"`
	// Error says why the history cannot be read now (a configured
	// history that is missing); its index answers as it was.
	Error string `json:"error,omitempty"`
}

// Status reports counts and freshness, per source and in total.
func (e *Engine) Status(ctx context.Context, sources ...string) (Status, error) {
	shs, err := e.shardsFor(sources)
	if err != nil {
		return Status{}, err
	}
	st := Status{Eras: []string{}, Schema: index.SchemaVersion, Sources: []SourceStatus{}}
	for i, sh := range shs {
		ss, err := sh.status(ctx)
		if err != nil {
			return st, sh.wrap(err)
		}
		if i == 0 {
			st.Source, st.Index = ss.Path, ss.Index
		}
		st.Demo = st.Demo || ss.Demo
		for _, era := range ss.Eras {
			if !slices.Contains(st.Eras, era) {
				st.Eras = append(st.Eras, era)
			}
		}
		st.IndexBytes += ss.IndexBytes
		st.Sessions += ss.Sessions
		st.Messages += ss.Messages
		st.Parts += ss.Parts
		st.Documents += ss.Documents
		st.Sources = append(st.Sources, ss)
	}
	st.Freshness = e.freshness(ctx, shs)
	sem, err := e.semanticStatus(ctx, shs)
	if err != nil {
		return st, err
	}
	st.Semantic = sem
	return st, nil
}

func (sh *shard) status(ctx context.Context) (SourceStatus, error) {
	ss := SourceStatus{Name: sh.name, Path: sh.path, Demo: sh.demo, Eras: []string{}, Index: sh.ix.Path()}
	if src := sh.source(); src != nil {
		ss.Path, ss.Eras = src.Path(), src.Eras()
	} else {
		ss.Error = fmt.Sprintf("no OpenCode history at %s; its index answers as it was", sh.path)
	}
	if fi, err := os.Stat(sh.ix.Path()); err == nil {
		ss.IndexBytes = fi.Size()
	}
	c, err := sh.ix.Counts(ctx)
	if err != nil {
		return ss, err
	}
	ss.Sessions, ss.Messages, ss.Parts, ss.Documents = c.Sessions, c.Messages, c.Parts, c.Documents
	ss.Freshness = sh.freshness(ctx)
	return ss, nil
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
	if fp, err := sh.ix.Meta(ctx, "source_fingerprint"); err == nil && sh.source() != nil {
		f.Stale = fp != sh.syncFingerprint()
	}
	if src := sh.source(); f.Stale && src != nil {
		changed := max(src.ModTime().UnixMilli(), synced)
		f.LagMS = max(time.Now().UnixMilli()-changed, 0)
	}
	return f
}
