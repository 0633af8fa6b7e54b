package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recallhq/recall/engine/index"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/render"
	"github.com/recallhq/recall/engine/source"
	"github.com/recallhq/recall/engine/source/opencode"
)

// SyncOptions tunes one sync.
type SyncOptions struct {
	// Force re-reads every session (a full rebuild of the index content).
	Force bool
	// LockWait bounds how long to wait for another process's sync.
	LockWait time.Duration
	// Progress, when set, is called after each session.
	Progress func(p SyncProgress)
	// Embed also gives new documents their vectors (Engine.Embed) once the
	// sync is done; EmbedProgress reports it.
	Embed         bool
	EmbedProgress func(EmbedProgress)
	// sources limits the sync to these sources (RebuildIndex).
	sources []string
}

// SyncProgress reports a sync under way.
type SyncProgress struct {
	Done, Total int // sessions
	Parts       int // parts written so far
}

// SyncResult says what a sync did.
type SyncResult struct {
	Idle     bool     `json:"idle"`    // nothing changed; no query ran
	Added    int      `json:"added"`   // sessions new to the index
	Updated  int      `json:"updated"` // sessions re-read
	Deleted  int      `json:"deleted"` // sessions gone from the history
	Parts    int      `json:"parts"`   // parts written
	Skipped  int      `json:"skipped"` // malformed rows skipped
	Warnings []string `json:"warnings,omitempty"`
	Busy     bool     `json:"busy,omitempty"` // another process was syncing; the index may lag
	// Locked: a writer held the history locked past the busy wait; the
	// index is as it was at IndexAsOf (LockNotice says so to people).
	Locked    bool   `json:"locked,omitempty"`
	IndexAsOf string `json:"indexAsOf,omitempty"`
	// Replaced: the history file was replaced (renamed over, restored), so
	// the source was reopened and every session re-read.
	Replaced bool `json:"replaced,omitempty"`
	// Notices are one-line messages for people (a WAL that cannot be
	// read); each is given once per engine.
	Notices []string `json:"notices,omitempty"`
	TookMS  int64    `json:"tookMs"`
	// Embed is what the embedding step did (SyncOptions.Embed).
	Embed *EmbedResult `json:"embed,omitempty"`
	// Sources is what the sync did in each source (the fields above are
	// their totals).
	Sources []SourceSync `json:"sources,omitempty"`
}

// SourceSync is what a sync did in one source.
type SourceSync struct {
	Source    string `json:"source"`
	Idle      bool   `json:"idle"`
	Added     int    `json:"added"`
	Updated   int    `json:"updated"`
	Deleted   int    `json:"deleted"`
	Parts     int    `json:"parts"`
	Skipped   int    `json:"skipped"`
	Busy      bool   `json:"busy,omitempty"`
	Locked    bool   `json:"locked,omitempty"`
	IndexAsOf string `json:"indexAsOf,omitempty"`
	Replaced  bool   `json:"replaced,omitempty"`
	// Missing: the history is not at its path (a configured source); its
	// index is as it was.
	Missing bool `json:"missing,omitempty"`
	// Error is why this source's sync failed while others' succeeded.
	Error  string `json:"error,omitempty"`
	TookMS int64  `json:"tookMs"`
}

// commitEvery bounds a write transaction (parts); each session is written
// whole inside one transaction, so a killed sync never leaves half a session.
var commitEvery = 4000 // a variable for tests

// releaseAfterParts: a sync that wrote more parts than one transaction
// holds has filled its connections' page caches (a var: tests lower it).
var releaseAfterParts = commitEvery

// beginWrite starts an index write transaction, of a bulk load or not
// (a variable: a test makes it fail).
var beginWrite = func(ctx context.Context, ix *index.Index, bulk bool) (*index.Writer, error) {
	if bulk {
		return ix.BeginBulkWrite(ctx)
	}
	return ix.BeginWrite(ctx)
}

// defaultLockWait is how long a command waits for another process's sync
// before it answers from the index as it is.
const defaultLockWait = 3 * time.Second

// firstSyncLockWait is how long a command waits for another process that
// is building a new index (a cold index of 200k parts takes ~30 s).
const firstSyncLockWait = 2 * time.Minute

// Sync brings each source's index up to date with its history, one
// source after another (each under its own writer lock). It reads nothing
// of a history whose files are unchanged since its last sync.
//
// On read-only storage it fails at once, saying to use --no-sync; a full
// disk fails with "disk full" and the index path, keeping what earlier
// transactions committed.
func (e *Engine) Sync(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	start := time.Now()
	shs, err := e.shardsFor(opts.sources)
	if err != nil {
		return SyncResult{}, err
	}
	total := SyncResult{Idle: true}
	var firstErr error
	failed := 0
	for _, sh := range shs {
		res, err := sh.syncOne(ctx, opts)
		if len(shs) > 1 && res.Parts > releaseAfterParts {
			// The next source's sync should not stack on this one's
			// page caches: three cold syncs of 32k parts in one process
			// peaked at 171 MB, 103 MB with this (one alone: 72 MB).
			sh.ix.ReleaseMemory()
		}
		ss := SourceSync{Source: sh.name, Idle: res.Idle, Added: res.Added, Updated: res.Updated, Deleted: res.Deleted, Parts: res.Parts,
			Skipped: res.Skipped, Busy: res.Busy, Locked: res.Locked, IndexAsOf: res.IndexAsOf, Replaced: res.Replaced,
			Missing: sh.source() == nil, TookMS: res.TookMS}
		if err != nil {
			// One source failing does not fail the others' sync, unless
			// its index is damaged (the door rebuilds it) or the caller
			// gave up.
			if len(shs) == 1 || IsIndexDamaged(err) || ctx.Err() != nil {
				return res, sh.wrap(err)
			}
			e.log.Warn("sync", "source", sh.name, "err", err)
			firstErr = cmp.Or(firstErr, sh.wrap(err))
			failed++
			ss.Error = err.Error()
			res = SyncResult{Idle: true, Notices: []string{fmt.Sprintf("source %q could not be synced (%v); its index answers as it was, and the other sources were synced", sh.name, err)}}
		}
		if len(shs) == 1 {
			total = res
		} else {
			total.add(res)
		}
		total.Sources = append(total.Sources, ss)
	}
	if failed == len(shs) {
		return total, firstErr
	}
	if len(shs) > 1 {
		total.TookMS = time.Since(start).Milliseconds()
	}
	if !opts.Embed {
		return total, nil
	}
	er, err := e.Embed(ctx, EmbedOptions{Progress: opts.EmbedProgress, LockWait: opts.LockWait})
	total.Embed = &er
	if err != nil && len(shs) == 1 {
		err = index.ExplainWrite(shs[0].ix.Path(), err)
	}
	return total, err
}

// add counts r into the totals.
func (t *SyncResult) add(r SyncResult) {
	t.Idle = t.Idle && r.Idle
	t.Added += r.Added
	t.Updated += r.Updated
	t.Deleted += r.Deleted
	t.Parts += r.Parts
	t.Skipped += r.Skipped
	t.Warnings = append(t.Warnings, r.Warnings...)
	t.Busy = t.Busy || r.Busy
	t.Locked = t.Locked || r.Locked
	if r.IndexAsOf != "" && (t.IndexAsOf == "" || r.IndexAsOf < t.IndexAsOf) {
		t.IndexAsOf = r.IndexAsOf
	}
	t.Replaced = t.Replaced || r.Replaced
	t.Notices = append(t.Notices, r.Notices...)
}

// syncOne is one shard's sync. A configured history that is missing is
// looked for again: still missing, the sync is idle (Open said so).
func (sh *shard) syncOne(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	if sh.ix.ReadOnly() {
		return SyncResult{}, sh.ix.ReadOnlyError()
	}
	if sh.source() == nil {
		found, err := sh.reopenMissing(ctx)
		if err != nil || !found {
			return SyncResult{Idle: true}, err
		}
	}
	res, err := sh.sync(ctx, opts)
	return res, index.ExplainWrite(sh.ix.Path(), err)
}

func (sh *shard) sync(ctx context.Context, opts SyncOptions) (res SyncResult, err error) {
	start := time.Now()
	// Named results: the deferred write must reach the caller.
	defer func() { res.TookMS = time.Since(start).Milliseconds() }()
	fp := sh.syncFingerprint()
	if !opts.Force {
		if sh.unchanged(ctx, sh.ix, fp) {
			res.Idle = true
			return res, nil
		}
	}
	wait := opts.LockWait
	if wait == 0 {
		wait = defaultLockWait
		// An index that never finished a sync has nothing worth answering
		// from: wait for the other process's first sync instead (several
		// commands started at once on a new index, e.g. a script).
		if synced, err := sh.ix.Meta(ctx, "synced_at"); err == nil && synced == "" {
			wait = firstSyncLockWait
		}
	}
	lctx, cancel := context.WithTimeout(ctx, wait)
	lock, err := index.LockWriter(lctx, sh.ix.Path())
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			res.Busy = true
			return res, nil
		}
		return res, err
	}
	defer lock.Unlock()
	// Another process may have synced while we waited.
	if !opts.Force {
		if last, err := sh.ix.Meta(ctx, "source_fingerprint"); err == nil && last == fp {
			res.Idle = true
			return res, nil
		}
	}
	replaced, err := sh.reopenSource(ctx)
	if err != nil {
		return res, err
	}
	src := sh.source()
	res.Replaced = replaced
	if n := src.Notice(); n != "" && !sh.said[n] {
		sh.said[n] = true
		res.Notices = append(res.Notices, n)
	}
	src.ResetWarnings()
	err = sh.syncLocked(ctx, src, fp, opts, &res)
	var warns []model.Warning
	res.Skipped, warns = src.Skipped()
	for _, w := range warns {
		res.Warnings = append(res.Warnings, w.Where+": "+w.Reason)
	}
	if sh.vocab != nil {
		sh.vocab.invalidate()
	}
	if errors.Is(err, source.ErrLocked) {
		// A writer holds the history: the index as it is is the answer,
		// unless it was never synced (then there is nothing to answer from
		// and the error says what to do).
		if synced, merr := sh.ix.Meta(ctx, "synced_at"); merr == nil && synced != "" {
			ms, _ := strconv.ParseInt(synced, 10, 64)
			res.Locked, res.IndexAsOf = true, render.Time(ms)
			return res, nil
		}
	}
	return res, err
}

// LockNotice is what to tell people when a history was locked ("" when
// none was).
func (r SyncResult) LockNotice() string {
	if !r.Locked {
		return ""
	}
	if len(r.Sources) <= 1 {
		return "the history is locked by another process (OpenCode writing?); answered from the index as of " + r.IndexAsOf
	}
	var locked []string
	for _, s := range r.Sources {
		if s.Locked {
			locked = append(locked, fmt.Sprintf("%q (index as of %s)", s.Source, s.IndexAsOf))
		}
	}
	return "the history of source " + strings.Join(locked, ", ") + " is locked by another process (OpenCode writing?); answered from its index as it was"
}

// reopenMissing looks for a missing configured history at its path, and
// opens it when it is there.
func (sh *shard) reopenMissing(ctx context.Context) (bool, error) {
	located, err := opencode.Locate(sh.path, sh.e.opts.Getenv)
	if err != nil {
		return false, nil
	}
	src, err := sh.open(ctx, located)
	if err != nil {
		return false, err
	}
	sh.srcMu.Lock()
	sh.src = src
	sh.srcMu.Unlock()
	sh.e.log.Info("history found; syncing it", "source", sh.name, "path", sh.path)
	return true, nil
}

// reopenSource opens the history again when the file at its path is not
// the one the open handle reads (an open handle keeps reading a file
// renamed over or deleted), or when the handle cannot see later writes
// (immutable). It reports whether the identity changed. The caller holds
// the index writer lock, so no other sync reads the old handle.
func (sh *shard) reopenSource(ctx context.Context) (bool, error) {
	old := sh.source()
	cur, err := old.CurrentIdentity()
	if err == nil && cur.Equal(old.Identity()) && !old.Immutable() {
		return false, nil
	}
	src, err := sh.open(ctx, old.Path()) // also says why the path no longer reads
	if err != nil {
		return false, err
	}
	sh.srcMu.Lock()
	sh.src = src
	sh.srcMu.Unlock()
	if err := old.Close(); err != nil {
		sh.e.log.Warn("close replaced history", "path", old.Path(), "err", err)
	}
	replaced := !src.Identity().Equal(old.Identity())
	if replaced {
		sh.e.log.Info("history replaced; re-reading it", "path", src.Path(), "was", old.Identity().String(), "now", src.Identity().String())
	}
	return replaced, nil
}

// syncFingerprint is what a sync records as source_fingerprint: the
// source's files and the config that shaped the documents.
func (sh *shard) syncFingerprint() string {
	return sh.fingerprint() + "|config:" + sh.e.config.Hash()
}

func (sh *shard) syncLocked(ctx context.Context, src source.Source, fp string, opts SyncOptions, res *SyncResult) error {
	// A change of excluded directories or redaction patterns changes what
	// every session's documents hold: each stored stamp carries the config
	// hash, so all sessions are re-read, and a re-read (or a first sync)
	// that was interrupted resumes where it stopped instead of starting
	// over (forcing every sync until one completed never got anywhere on a
	// history too big to index between two kills).
	//
	// The source's identity is in the stamp for the same reason: a history
	// replaced by another file (a restore, a reinstall) may give a session
	// the same counts and times for other content, so every session is
	// re-read from the new file, and an interrupted re-read resumes.
	cfg := "|config:" + sh.e.config.Hash() + "|src:" + src.Identity().String()
	plan, ok, err := sh.planChanges(ctx, src, cfg, opts.Force)
	if err != nil {
		return err
	}
	if !ok {
		if plan, err = sh.planWhole(ctx, src, cfg, opts.Force); err != nil {
			return err
		}
	}
	return sh.apply(ctx, src, fp, cfg, plan, opts, res)
}

// syncPlan is what a sync writes: the sessions to (re-)read, those gone,
// and the stamps and mark to record.
type syncPlan struct {
	// todo: the sessions to write, oldest first, each with its top-level
	// session and the source's stamp (packTodo).
	todo sessionTable
	gone []string
	// clearAll: the index is emptied first and todo holds every session.
	clearAll bool
	// bulk: most of the history is written (a bulk load).
	bulk    bool
	indexed map[string]string // stored stamps, of todo's sessions at least
	mark    string            // the change mark to record
	total   int               // sessions the history holds (indexable)
}

// planWhole lists every session of the history and compares every stamp.
func (sh *shard) planWhole(ctx context.Context, src source.Source, cfg string, force bool) (syncPlan, error) {
	var sessions []model.Session
	var listing string
	var err error
	if cl, ok := src.(source.ChangeLister); ok {
		sessions, listing, err = cl.ListSessions(ctx)
	} else {
		sessions, err = src.Sessions(ctx)
	}
	if err != nil {
		return syncPlan{}, err
	}
	if sessions, err = sh.keepIndexable(ctx, sessions); err != nil {
		return syncPlan{}, err
	}
	byID := make(map[string]*model.Session, len(sessions))
	for i := range sessions {
		byID[sessions[i].ID] = &sessions[i]
	}
	indexed, err := sh.ix.Stamps(ctx)
	if err != nil {
		return syncPlan{}, err
	}
	stamps, mark, err := sh.sourceStamps(ctx, src, force, indexed, cfg, sessions, listing)
	if err != nil {
		return syncPlan{}, err
	}
	plan := syncPlan{indexed: indexed, mark: mark, total: len(sessions)}
	// A stored stamp is the source's with cfg after it; compared here and
	// made for the sessions written, not for every session up front (each
	// was held for the whole sync).
	var todo []*model.Session
	for _, s := range sessions {
		old, ok := indexed[s.ID]
		if !ok || force || !isStamp(old, stamps[s.ID], cfg) {
			todo = append(todo, byID[s.ID])
		}
	}
	for id := range indexed {
		if _, ok := byID[id]; !ok {
			plan.gone = append(plan.gone, id)
		}
	}
	sort.Strings(plan.gone)
	// A re-read of most of the index (a config change, a history replaced
	// by a copy, --force) clears it at once and writes every session as new:
	// deleting them one by one costs many times a cold index
	// (Writer.ClearSessions). The documents of sessions left unchanged are
	// written again in the same sync.
	rereads := 0
	for _, s := range todo {
		if _, ok := indexed[s.ID]; ok {
			rereads++
		}
	}
	if plan.clearAll = rereads > 0 && rereads*2 > len(indexed); plan.clearAll {
		todo = todo[:0]
		for i := range sessions {
			todo = append(todo, &sessions[i])
		}
	}
	// A bulk load: most of the history written (a cold sync, one resumed,
	// a re-read of most of it).
	plan.bulk = len(todo) > 0 && len(todo)*2 > len(sessions)
	if plan.bulk {
		// The plan is packed beside the listing it copies. Collected
		// first (the source's tables of counts are garbage by now), the
		// packing grows a heap of the listing and its stamps, not one whose
		// target is twice those and the tables: peak RSS 301 against 218
		// MB at 4.2M parts (runs beside other work, sampled each second).
		// apply collects the listing once it is packed.
		runtime.GC()
	}
	plan.todo = packTodo(todo, func(s *model.Session) string { return rootOf(s, byID) }, stamps)
	return plan, nil
}

// packTodo is todo oldest first, so an interrupted cold sync has the
// history's start, packed (sessionTable) with each session's top-level
// session (root's) and the source's stamp.
func packTodo(todo []*model.Session, root func(*model.Session) string, stamps map[string]string) sessionTable {
	slices.SortStableFunc(todo, func(a, b *model.Session) int { return cmp.Compare(a.Created, b.Created) })
	roots := make([]string, len(todo))
	size := 0
	for i, s := range todo {
		roots[i] = root(s)
		size += sessionSize(s, roots[i], stamps[s.ID])
	}
	var t sessionTable
	t.grow(len(todo), size)
	for i, s := range todo {
		t.add(s, roots[i], stamps[s.ID])
	}
	return t
}

// fresh reports a load that only adds: the index was emptied first, or
// holds none of todo's sessions (a cold sync, one resumed), so nothing
// is deleted through an index that Writer.DeferIndexes would drop.
func (p *syncPlan) fresh() bool {
	if p.clearAll {
		return true
	}
	for i := range p.todo.len() {
		if _, ok := p.indexed[string(p.todo.bytes(i, strID))]; ok {
			return false
		}
	}
	return true
}

// planChanges plans a sync from what changed since the last one when the
// source can tell it (source.ChangeLister): the sessions written to, read
// without listing the others or reading every stored stamp. ok false: the
// whole history is to be listed instead (forced, no mark, another config
// or file than the index was last synced with, a deletion, a parent it
// cannot place, or what the source declines).
func (sh *shard) planChanges(ctx context.Context, src source.Source, cfg string, force bool) (syncPlan, bool, error) {
	cl, ok := src.(source.ChangeLister)
	if force || !ok {
		return syncPlan{}, false, nil
	}
	var meta [3]string
	for i, key := range []string{changeMarkKey, "config_hash", "source_identity"} {
		v, err := sh.ix.Meta(ctx, key)
		if err != nil {
			return syncPlan{}, false, err
		}
		meta[i] = v
	}
	if meta[0] == "" || meta[1] != sh.e.config.Hash() || meta[2] != src.Identity().String() {
		return syncPlan{}, false, nil
	}
	start := time.Now()
	ch, ok, err := cl.SessionsSince(ctx, meta[0])
	if err != nil || !ok {
		return syncPlan{}, false, err
	}
	forgotten, err := sh.ix.Forgotten(ctx)
	if err != nil {
		return syncPlan{}, false, err
	}
	byID := make(map[string]*model.Session, len(ch.Sessions))
	ids := make([]string, len(ch.Sessions))
	for i := range ch.Sessions {
		byID[ch.Sessions[i].ID] = &ch.Sessions[i]
		ids[i] = ch.Sessions[i].ID
	}
	indexed, err := sh.ix.StampsOf(ctx, ids)
	if err != nil {
		return syncPlan{}, false, err
	}
	plan := syncPlan{indexed: indexed, mark: ch.Next, total: ch.Total}
	var todo []*model.Session
	roots := map[string]string{}
	for i := range ch.Sessions {
		s := &ch.Sessions[i]
		// Forget records every session of the family it drops (and drops
		// them from the index). A session the index holds that is now
		// excluded (its directory changed) is for a listing to drop.
		if sh.e.config.Excluded(s.Directory) || forgotten[s.ID] {
			if _, held := indexed[s.ID]; held {
				return syncPlan{}, false, nil
			}
			continue
		}
		root, ok, err := sh.placeRoot(ctx, s, byID, forgotten)
		if err != nil || !ok {
			return syncPlan{}, false, err
		}
		if forgotten[root] {
			continue
		}
		if old, ok := indexed[s.ID]; ok && isStamp(old, ch.Stamps[s.ID], cfg) {
			continue
		}
		todo = append(todo, s)
		roots[s.ID] = root
	}
	plan.todo = packTodo(todo, func(s *model.Session) string { return roots[s.ID] }, ch.Stamps)
	sh.e.log.Info("history changes", "source", sh.name, "sessions", len(ch.Sessions), "todo", plan.todo.len(), "ms", time.Since(start).Milliseconds())
	return plan, true, nil
}

// placeRoot is s's top-level session, as rootOf finds it among the
// indexable sessions: up its parents among the changed sessions, then the
// index's root of the first parent it holds. ok false, for the sync to
// list every session instead, when a parent is neither, or is a changed
// session that is not indexable (excluded, forgotten): rootOf's walk over
// the listing then decides.
func (sh *shard) placeRoot(ctx context.Context, s *model.Session, changed map[string]*model.Session, forgotten map[string]bool) (string, bool, error) {
	id := s.ID
	for range len(changed) + 1 {
		cur := changed[id]
		if cur.ParentID == "" {
			return id, true, nil
		}
		if p, ok := changed[cur.ParentID]; ok {
			if sh.e.config.Excluded(p.Directory) || forgotten[p.ID] {
				return "", false, nil
			}
			id = p.ID
			continue
		}
		return sh.ix.RootOf(ctx, cur.ParentID)
	}
	return "", false, nil // a cycle
}

// apply writes plan and records the sync.
func (sh *shard) apply(ctx context.Context, src source.Source, fp, cfg string, plan syncPlan, opts SyncOptions, res *SyncResult) error {
	// A load into an empty index writes without its secondary indexes and
	// makes them once written (DeferIndexes, below). Any other sync writes
	// through them, so one after a load cut short makes them first; a
	// resumed fresh load does not (it would drop them again at once).
	// Planning reads none of them (sessions, forgotten, meta).
	deferIndexes := plan.bulk && plan.fresh()
	if !deferIndexes {
		if err := sh.ix.AddMissingIndexes(ctx); err != nil {
			return err
		}
	}
	w, err := beginWrite(ctx, sh.ix, plan.bulk)
	if err != nil {
		return err
	}
	// w is never nil below: a Ctrl-C between a commit and the next
	// transaction's start used to leave it nil for this Rollback (a panic
	// instead of "interrupted"). Rolling back a committed transaction does
	// nothing.
	defer func() { w.Rollback() }()
	// The change mark speaks for an index that holds everything up to it:
	// dropped in the first transaction that writes, written again after
	// the last, so a sync cut short (a forced re-read that cleared the
	// index, a session half way) leaves none, and the next sync lists
	// every session instead of reading only the changes since it.
	if err := w.DeleteMeta(ctx, changeMarkKey); err != nil {
		return err
	}
	flush := func() error {
		if err := w.Commit(ctx); err != nil {
			return err
		}
		next, err := beginWrite(ctx, sh.ix, plan.bulk)
		if err != nil {
			return err
		}
		w = next
		return nil
	}
	if plan.clearAll {
		if err := w.ClearSessions(ctx); err != nil {
			return err
		}
		// The index no longer holds what the recorded fingerprint says it
		// does: a sync cut short after this commits must not find the
		// history unchanged and stop there.
		if err := w.DeleteMeta(ctx, "source_fingerprint"); err != nil {
			return err
		}
		res.Deleted = len(plan.gone)
	} else {
		for _, id := range plan.gone {
			if err := w.DeleteSession(ctx, id); err != nil {
				return err
			}
			res.Deleted++
		}
	}
	// A bulk load leaves FTS5's segments unmerged until it ends: it
	// merges them all then (MergeFullText), and merging them as they were
	// flushed was work done twice. Marked pending in the same transaction,
	// a load cut short has them merged, and merging set back, by the next
	// sync that writes. Its commits checkpoint the WAL less often
	// (Index.BeginBulkWrite); the merge truncates it.
	if plan.bulk {
		if err := w.DeferMerges(ctx); err != nil {
			return err
		}
		if deferIndexes {
			if err := w.DeferIndexes(ctx); err != nil {
				return err
			}
		}
		if err := w.SetMeta(ctx, mergePendingKey, "1"); err != nil {
			return err
		}
	}
	if plan.bulk {
		// What planning held (the listing, the stamps) is garbage now;
		// collected, the load's target is set from the packed plan alone
		// (docs/benchmarks.md, "A cold index's plan off the scanned heap").
		runtime.GC()
	}
	writeStart := time.Now()
	now := writeStart.UnixMilli()
	// Room for the collector while the sessions are written (gcroom.go),
	// set again for the heap as it grows at each commit.
	gc := holdGCRoom()
	defer gc.release()
	rd := startReader(ctx, src, sh.ix.NewBatchingPreparer(), &plan.todo)
	defer rd.stop()
	for i := range plan.todo.len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := plan.todo.str(i, strID)
		stamp, existed := plan.indexed[id]
		if existed && !plan.clearAll {
			// A session written under this configuration keeps the
			// documents it writes again unchanged (Writer.RereadSession).
			drop := w.DeleteSession
			if strings.HasSuffix(stamp, cfg) {
				drop = w.RereadSession
			}
			if err := drop(ctx, id); err != nil {
				return err
			}
		}
		n, df, err := sh.writeSession(ctx, w, rd, id, plan.todo.str(i, strRoot), plan.todo.str(i, strStamp)+cfg, now)
		if err != nil {
			return err
		}
		if existed {
			res.Updated++
		} else {
			res.Added++
		}
		res.Parts += n
		if opts.Progress != nil {
			opts.Progress(SyncProgress{Done: i + 1, Total: plan.todo.len(), Parts: res.Parts})
		}
		// The reader ends a transaction's worth of sessions (commitEvery
		// parts) with that transaction's vocabulary counts.
		if df != nil {
			w.AddTerms(df)
			gc.adjust()
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := w.Commit(ctx); err != nil {
		return err
	}
	if plan.bulk {
		sh.e.log.Info("wrote the sessions", "source", sh.name, "sessions", plan.todo.len(), "parts", res.Parts, "ms", time.Since(writeStart).Milliseconds())
	}
	// The indexes a fresh load deferred, made before the sync is recorded
	// (cut short, the next sync makes them: first, or at its end when it
	// resumes the load). Any other sync, the one after each of OpenCode's
	// writes too, has them already.
	if deferIndexes {
		start := time.Now()
		if err := sh.ix.AddMissingIndexes(ctx); err != nil {
			return err
		}
		sh.e.log.Info("made the deferred indexes", "source", sh.name, "ms", time.Since(start).Milliseconds())
	}
	for _, kv := range [][2]string{{"source_fingerprint", fp}, {changeMarkKey, plan.mark}, {"config_hash", sh.e.config.Hash()},
		{"source_identity", src.Identity().String()}, {"synced_at", fmt.Sprint(time.Now().UnixMilli())}} {
		if err := sh.ix.SetMeta(ctx, kv[0], kv[1]); err != nil {
			return fmt.Errorf("record sync: %w", err)
		}
	}
	// A sync that wrote most of the index (a cold one, a resumed one, a
	// re-read after a config change) left the bulk load's segments: merged,
	// every later search walks one. Its doc_lens rows lie scattered through
	// the file: packed first, a fresh process reads them in few page faults. After the meta, so a merge cut short
	// loses only itself; it is marked pending first, and the next sync that
	// writes anything merges then.
	merge := false
	if written := res.Added + res.Updated; written > 0 && written*2 > plan.total {
		merge = true
	} else if pending, err := sh.ix.Meta(ctx, mergePendingKey); err == nil && pending != "" {
		merge = true
	}
	if !merge {
		return nil
	}
	if err := sh.ix.SetMeta(ctx, mergePendingKey, "1"); err != nil {
		return fmt.Errorf("record sync: %w", err)
	}
	// Its failure loses nothing: the index is whole, only unmerged. One cut
	// short stays pending; one that failed (a full disk) is not retried by
	// every later sync.
	start := time.Now()
	if err := sh.ix.PackDocLens(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sh.e.log.Warn("pack the document lengths", "source", sh.name, "err", err)
	}
	if err := sh.ix.MergeFullText(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sh.e.log.Warn("merge the full-text index", "source", sh.name, "err", err)
		return sh.ix.SetMeta(ctx, mergePendingKey, "")
	}
	sh.e.log.Info("merged the full-text index", "source", sh.name, "ms", time.Since(start).Milliseconds())
	return sh.ix.SetMeta(ctx, mergePendingKey, "")
}

// mergePendingKey is the meta key set while the full-text index is to be
// merged (Index.MergeFullText): a merge cut short is run again by the next
// sync that writes.
const mergePendingKey = "fulltext_merge_pending"

// changeMarkKey is the meta key of the source's change mark: where its
// history stood at the last sync that completed (source.ChangeTracker).
const changeMarkKey = "source_changes"

// sourceStamps reads the stamps of sessions: from what changed
// since the last completed sync when the source can tell (a sync after a
// write to a large history then reads a few sessions' rows, not all of
// them), else from the whole history. mark is what to record once this
// sync has written everything.
func (sh *shard) sourceStamps(ctx context.Context, src source.Source, force bool, indexed map[string]string, cfg string, sessions []model.Session, listing string) (stamps map[string]string, mark string, err error) {
	ct, ok := src.(source.ChangeTracker)
	if !ok {
		stamps, err = src.Stamps(ctx)
		return stamps, "", err
	}
	prev := ""
	if !force {
		if prev, err = sh.ix.Meta(ctx, changeMarkKey); err != nil {
			return nil, "", err
		}
	}
	// The source's own stamps, as it gave them: a stored stamp of another
	// config or file is not one (that session is re-read anyway).
	old := make(map[string]string, len(indexed))
	for id, st := range indexed {
		if body, ok := strings.CutSuffix(st, cfg); ok {
			old[id] = body
		}
	}
	start := time.Now()
	st, err := ct.StampsSince(ctx, prev, old, sessions, listing)
	if err != nil {
		return nil, "", err
	}
	sh.e.log.Info("history stamps", "source", sh.name, "walked", st.Walked, "lookups", st.Lookups, "sessions", len(st.Stamps), "ms", time.Since(start).Milliseconds())
	return st.Stamps, st.Next, nil
}

// isStamp reports whether stored is the stamp st+cfg.
func isStamp(stored, st, cfg string) bool {
	return len(stored) == len(st)+len(cfg) && strings.HasPrefix(stored, st) && strings.HasSuffix(stored, cfg)
}

// writeSession writes the reader's next session, id (the session the
// reader took from the plan: the one its items carry); df is non-nil when
// the transaction is to end after it, holding its vocabulary counts.
func (sh *shard) writeSession(ctx context.Context, w *index.Writer, rd *reader, id, root, stamp string, now int64) (parts int, df map[string]int, err error) {
	var counts index.SessionCounts
	var s *model.Session
	ord := 0
	for {
		it, err := rd.next(ctx)
		if err != nil {
			return 0, nil, err
		}
		if it.s.ID != id {
			return 0, nil, fmt.Errorf("read session %s: the reader is at session %s", id, it.s.ID) // a bug: reader and writer walk todo in step
		}
		s = it.s
		if it.err != nil {
			return 0, nil, fmt.Errorf("read session %s: %w", id, it.err)
		}
		if it.m == nil {
			df = it.df
			break // the session's end
		}
		if err := w.PutPrepared(ctx, s, root, ord, it.m, &counts); err != nil {
			return 0, nil, err
		}
		ord++
		parts += it.m.Parts()
	}
	return parts, df, w.PutSession(ctx, s, index.SessionMeta{RootID: root, Stamp: stamp, Now: now}, counts)
}

// reader reads the sessions a sync writes on a goroutine of its own, so
// reading the history, decoding its JSON, redacting and tokenizing (half
// of a cold sync's CPU) run beside the index writes instead of before
// each. It hands over whole prepared messages in order, each session's
// followed by an end item (m nil), and never holds more than
// readAheadBytes of text read ahead (one message may exceed it on its
// own, as it always could).
type reader struct {
	items  chan readItem
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	cond   *sync.Cond
	ahead  int // bytes of text handed over and not yet taken
	closed bool
}

type readItem struct {
	s   *model.Session
	m   *index.PreparedMessage // nil: the session's end (or its error)
	err error
	n   int // bytes of text in m
	// df, on a session's end: the transaction ends after this session,
	// and these are the document frequencies of what it wrote
	// (Preparer.TakeTerms).
	df map[string]int
}

// readAheadBytes bounds what the reader holds ahead of the writer: enough
// for a few hundred typical messages (the public corpus's average ~3 KB),
// small beside the 150 MB a cold sync may use.
const readAheadBytes = 8 << 20

func startReader(ctx context.Context, src source.Source, prep *index.Preparer, todo *sessionTable) *reader {
	rctx, cancel := context.WithCancel(ctx)
	r := &reader{items: make(chan readItem, 256), cancel: cancel, done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	go func() {
		defer close(r.done)
		defer close(r.items)
		send := func(it readItem) bool {
			r.mu.Lock()
			for r.ahead > 0 && r.ahead+it.n > readAheadBytes && !r.closed {
				r.cond.Wait()
			}
			r.ahead += it.n
			closed := r.closed
			r.mu.Unlock()
			if closed {
				return false
			}
			select {
			case r.items <- it:
				return true
			case <-rctx.Done():
				return false
			}
		}
		pending := 0 // parts since the last transaction's end
		for i := range todo.len() {
			s := todo.session(i)
			err := src.Messages(rctx, *s, func(m *model.Message) error {
				pm := prep.Prepare(m)
				pending += pm.Parts()
				if !send(readItem{s: s, m: pm, n: textBytes(m)}) {
					return context.Canceled
				}
				return nil
			})
			end := readItem{s: s, err: err}
			if pending >= commitEvery || i == todo.len()-1 {
				end.df, pending = prep.TakeTerms(), 0
			}
			if rctx.Err() != nil || !send(end) || err != nil {
				return
			}
		}
	}()
	return r
}

// next is the next item; a cancelled sync ends it with ctx's error.
func (r *reader) next(ctx context.Context) (readItem, error) {
	select {
	case it, ok := <-r.items:
		if !ok {
			if err := ctx.Err(); err != nil {
				return it, err
			}
			return it, errors.New("the history reader stopped early")
		}
		r.mu.Lock()
		r.ahead -= it.n
		r.cond.Signal()
		r.mu.Unlock()
		return it, nil
	case <-ctx.Done():
		return readItem{}, ctx.Err()
	}
}

// stop ends the reader and waits for it: the source is the caller's again
// (its warnings are read, it may be closed).
func (r *reader) stop() {
	r.cancel()
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	for range r.items { // unblock a send
	}
	<-r.done
}

// textBytes is the size of a message's texts, what the reader's budget
// counts.
func textBytes(m *model.Message) int {
	n := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		n += len(p.Text) + len(p.Input) + len(p.Output) + len(p.Error)
	}
	return n
}

// rootOf follows parent links to the top-level session (cycles and missing
// parents stop the walk).
func rootOf(s *model.Session, byID map[string]*model.Session) string {
	id := s.ID
	seen := map[string]bool{}
	for {
		cur, ok := byID[id]
		if !ok || cur.ParentID == "" || seen[id] {
			return id
		}
		seen[id] = true
		if _, ok := byID[cur.ParentID]; !ok {
			return id
		}
		id = cur.ParentID
	}
}
