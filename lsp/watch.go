package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/live"
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
		s.notify(ctx, protocol.MessageTypeWarning, fmt.Sprintf("skipped %d malformed rows in the history", res.Skipped))
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

// progress reports one sync as work-done progress. It begins lazily, at
// the first session synced, so an idle sync sends nothing.
type progress struct {
	s       *Server
	ctx     context.Context // for notifications: an end is sent even after cancellation
	cancel  context.Context // for the create request: never wait on a client past shutdown
	title   string
	unit    string // what report counts: sessions, documents
	token   protocol.ProgressToken
	mu      sync.Mutex
	begun   bool
	ok      bool
	lastPct int
}

var progressSeq atomic.Int64

// createWait bounds the wait for a client's answer to
// window/workDoneProgress/create; without one the sync goes on unreported.
const createWait = 5 * time.Second

// newProgress prepares progress under the client's token (a workDoneToken
// it sent) or, when the client supports it, a token the server creates.
func (s *Server) newProgress(ctx context.Context, title string, clientToken json.RawMessage) *progress {
	p := &progress{s: s, ctx: context.WithoutCancel(ctx), cancel: ctx, title: title, unit: "sessions", lastPct: -1}
	var n int32
	var str string
	switch {
	case len(clientToken) == 0 || string(clientToken) == "null":
	case json.Unmarshal(clientToken, &n) == nil:
		p.token, p.ok = protocol.Integer(n), true
	case json.Unmarshal(clientToken, &str) == nil:
		p.token, p.ok = protocol.String(str), true
	}
	return p
}

func (p *progress) report(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.begun {
		p.begun = true
		if !p.ok {
			p.s.mu.Lock()
			capable := p.s.progressCap
			p.s.mu.Unlock()
			if !capable {
				return
			}
			p.token = protocol.String(fmt.Sprintf("recall/sync/%d", progressSeq.Add(1)))
			cctx, cancel := context.WithTimeout(p.cancel, createWait)
			err := p.s.client.WorkDoneProgressCreate(cctx, &protocol.WorkDoneProgressCreateParams{Token: p.token})
			cancel()
			if err != nil {
				p.s.log.Warn("workDoneProgress/create", "err", err)
				return
			}
			p.ok = true
		}
		p.send(&protocol.WorkDoneProgressBegin{Kind: "begin", Title: p.title, Percentage: ptr(uint32(0)),
			Message: ptr(fmt.Sprintf("0/%d %s", total, p.unit))})
	}
	if !p.ok || total == 0 {
		return
	}
	pct := 100 * done / total
	if pct == p.lastPct {
		return // one report per percent at most
	}
	p.lastPct = pct
	p.send(&protocol.WorkDoneProgressReport{Kind: "report", Percentage: ptr(uint32(pct)), Message: ptr(fmt.Sprintf("%d/%d %s", done, total, p.unit))})
}

func (p *progress) end(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.begun || !p.ok {
		return
	}
	end := &protocol.WorkDoneProgressEnd{Kind: "end"}
	if msg != "" {
		end.Message = &msg
	}
	p.send(end)
	p.ok = false
}

func (p *progress) send(value any) {
	raw, err := protocol.Marshal(value)
	if err != nil {
		return
	}
	if err := p.s.client.Progress(p.ctx, &protocol.ProgressParams{Token: p.token, Value: raw}); err != nil {
		p.s.log.Warn("$/progress", "err", err)
	}
}
