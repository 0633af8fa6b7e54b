package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"
)

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
