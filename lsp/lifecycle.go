package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// shutdown marks the server shut down in wire order (an exit right behind
// it must see it), then releases the read loop before stopping the watcher:
// the watcher may be waiting on the client, whose reply needs the read loop.
func (s *Server) shutdown(ctx context.Context) (any, error) {
	s.mu.Lock()
	state := s.state
	if state == stateRunning {
		s.state = stateShutdown
	}
	s.mu.Unlock()
	switch state {
	case stateNew:
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized; send initialize first")
	case stateShutdown:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down; send exit")
	}
	jsonrpc2.Async(ctx)
	s.stop()
	return jsonrpc2.RawMessage("null"), nil
}

// cancelRequest is $/cancelRequest: it cancels the context of the request
// it names (the engine's queries run on it).
func (s *Server) cancelRequest(_ context.Context, raw jsonrpc2.RawMessage) error {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	var id jsonrpc2.ID
	var n int64
	var str string
	switch {
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(n)
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	default:
		return fmt.Errorf("malformed id %s", p.ID)
	}
	s.mu.Lock()
	cancel := s.inflight[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// exit ends the connection; it is clean after shutdown (exit code 0).
func (s *Server) exit(state lifecycle) {
	select {
	case s.exited <- state == stateShutdown:
	default:
	}
}
