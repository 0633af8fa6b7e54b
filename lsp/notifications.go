package lsp

import (
	"context"
	"fmt"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/live"
	"github.com/recallhq/recall/engine/render"
)

// afterSync tells the client what a sync found: its notices (the lock
// notice when sayLock), skipped rows, and when the index changed,
// recall/indexUpdated and a code lens refresh.
func (s *Server) afterSync(ctx context.Context, res engine.SyncResult, sayLock bool) {
	for _, n := range res.Notices {
		s.notify(ctx, protocol.MessageTypeInfo, n)
	}
	if sayLock && res.Locked {
		s.notify(ctx, protocol.MessageTypeInfo, res.LockNotice())
	}
	if res.Skipped > 0 {
		s.notify(ctx, protocol.MessageTypeWarning, "skipped "+render.Count(res.Skipped, "malformed row")+" in the history")
	}
	if res.Idle || res.Added+res.Updated+res.Deleted == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if raw, err := encodeResult(res); err == nil {
		if err := s.conn.Notify(ctx, methodIndexUpdated, raw); err != nil {
			s.log.Warn("indexUpdated", "err", err)
		}
	}
	s.mu.Lock()
	refresh := s.lensRefresh
	s.mu.Unlock()
	if refresh {
		go func() { _ = s.client.CodeLensRefresh(ctx) }() // a request: never wait on the client here
	}
}

// subscriber is how s hears of its engine's live loop: every event goes
// through the outbox, so a slow client never holds up the loop (or, in
// the daemon, the other clients).
func (s *Server) subscriber() live.Subscriber {
	var mu sync.Mutex
	runs := map[uint64]*progress{} // background runs reported to this client
	return live.Subscriber{
		OnSync: func(ev live.SyncEvent) { s.post(func() { s.afterSync(s.base, ev.Result, ev.NewLock) }) },
		OnError: func(err error) {
			s.post(func() {
				s.notify(s.base, protocol.MessageTypeWarning, fmt.Sprintf("updating the index failed: %v", err))
			})
		},
		OnProgress: func(ev live.Progress) {
			mu.Lock()
			p := runs[ev.Run]
			if p == nil {
				title, unit := "Recall: indexing", "sessions"
				if ev.Task == live.TaskEmbed {
					title, unit = "Recall: embedding", "documents"
				}
				p = s.newProgress(s.base, title, nil)
				p.unit = unit
				runs[ev.Run] = p
			}
			if ev.End {
				delete(runs, ev.Run)
			}
			mu.Unlock()
			if ev.End {
				s.post(func() { p.end("") })
				return
			}
			s.post(func() { p.report(ev.Done, ev.Total) })
		},
	}
}

// notify sends a window/logMessage (and logs it).
func (s *Server) notify(ctx context.Context, typ protocol.MessageType, msg string) {
	s.log.Info("notice", "msg", msg)
	if err := s.client.LogMessage(context.WithoutCancel(ctx), &protocol.LogMessageParams{Type: typ, Message: "recall: " + msg}); err != nil {
		s.log.Warn("logMessage", "err", err)
	}
}
