package lsp

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// handle is the one entry point for every incoming message. Notifications
// run inline, in wire order (document changes must land before the hover
// that follows them); calls other than the lifecycle ones are released to
// run concurrently so a slow search never holds up a hover.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	method := req.Method()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "recall: internal error in %s: %v", echo(method), r)
			if !req.IsCall() {
				err = nil // a notification error would end the connection
			}
		}
	}()
	if !req.IsCall() {
		s.notification(ctx, method, req.Params())
		return nil, nil
	}
	if method == protocol.MethodShutdown {
		return s.shutdown(ctx)
	}
	if method != protocol.MethodInitialize {
		jsonrpc2.Async(ctx)
	}
	// The request's own context is pooled by jsonrpc2 and must not be the
	// parent of anything that outlives this call (a context's watcher
	// goroutine would touch it after recycling); cancellation comes from
	// our own map, fed by $/cancelRequest.
	ctx, cancel := context.WithCancel(s.base)
	id := req.ID()
	s.mu.Lock()
	s.inflight[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, id)
		s.mu.Unlock()
		cancel()
	}()
	start := time.Now()
	result, err = s.call(ctx, method, req.Params())
	err = rpcError(err)
	s.log.Debug("request", "method", method, "ms", time.Since(start).Milliseconds(), "err", err)
	if err == nil && result == nil {
		result = jsonrpc2.RawMessage("null")
	}
	return result, err
}

// call dispatches one request after the lifecycle checks.
func (s *Server) call(ctx context.Context, method string, raw jsonrpc2.RawMessage) (any, error) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == protocol.MethodInitialize:
		if state != stateNew {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize was already called")
		}
		return s.initialize(ctx, raw)
	case state == stateNew:
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized; send initialize first")
	case state == stateShutdown:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down; send exit")
	}
	if h, ok := requestHandlers[method]; ok {
		return h(s, ctx, raw)
	}
	if e, ok := customCommand(method); ok {
		return s.runEntry(ctx, e, json.RawMessage(raw), nil)
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "recall lsp does not handle %s", echo(method))
}

// The method tables: each method's handler is in its own file.
type (
	requestHandler      func(s *Server, ctx context.Context, raw jsonrpc2.RawMessage) (any, error)
	notificationHandler func(s *Server, ctx context.Context, raw jsonrpc2.RawMessage) error
)

var (
	requestHandlers      map[string]requestHandler
	notificationHandlers map[string]notificationHandler
)

func init() { // not a literal: the handlers reach the tables through call
	requestHandlers = map[string]requestHandler{
		protocol.MethodWorkspaceExecuteCommand:      (*Server).executeCommand,
		protocol.MethodWorkspaceSymbol:              (*Server).symbols,
		protocol.MethodTextDocumentHover:            (*Server).hover,
		protocol.MethodTextDocumentCodeLens:         (*Server).codeLens,
		protocol.MethodWorkspaceTextDocumentContent: (*Server).textDocumentContent,
		methodTranscript:                            (*Server).transcript,
	}
	notificationHandlers = map[string]notificationHandler{
		protocol.MethodInitialized:           (*Server).initialized,
		protocol.MethodCancelRequest:         (*Server).cancelRequest,
		protocol.MethodTextDocumentDidOpen:   (*Server).didOpen,
		protocol.MethodTextDocumentDidChange: (*Server).didChange,
		protocol.MethodTextDocumentDidClose:  (*Server).didClose,
	}
}

// notification handles a notification; errors are logged, never returned
// (jsonrpc2 would end the connection).
func (s *Server) notification(ctx context.Context, method string, raw jsonrpc2.RawMessage) {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	if method == protocol.MethodExit {
		s.exit(state)
		return
	}
	if state == stateNew {
		return // the spec: drop notifications before initialize
	}
	if h, ok := notificationHandlers[method]; ok {
		if err := h(s, ctx, raw); err != nil {
			s.log.Warn("bad notification", "method", method, "err", err)
		}
	}
}
