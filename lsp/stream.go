package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/lsp/frame"
)

// stream is the LSP Content-Length framing with the failure handling the
// spec asks for and the stock framer does not do: a malformed body gets a
// -32700 reply (null id) and reading goes on; a framing error (a missing
// or wrong Content-Length) gets one too, and reading resynchronises on the
// next header (see frame.Reader); a message over MaxMessageBytes is
// answered and the connection closed, so the client restarts the server
// instead of waiting on it. Writes go through the stock framer (one write
// per message, serialised).
type stream struct {
	in  *frame.Reader
	out jsonrpc2.Stream
	log *slog.Logger
}

func newStream(rwc io.ReadWriteCloser, maxBytes int64, log *slog.Logger) *stream {
	return &stream{in: frame.NewReader(rwc, maxBytes), out: jsonrpc2.NewHeaderStream(rwc), log: log}
}

// Read returns the next well-formed message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		f, err := s.in.Next(s.in.Max())
		var big *frame.TooLargeError
		if errors.As(err, &big) {
			s.log.Error("closing the connection", "err", big)
			s.replyError(ctx, nil, jsonrpc2.InvalidRequest, big.Error())
			return nil, 0, err
		}
		if err != nil {
			return nil, 0, err
		}
		if f.Bad != "" {
			s.log.Warn("framing error; reading on from the next header", "problem", f.Bad)
			s.replyError(ctx, nil, jsonrpc2.ParseError, f.Bad)
			continue
		}
		msg, err := jsonrpc2.DecodeMessage(f.Body)
		if err != nil {
			s.rejectBody(ctx, f.Body, err)
			continue
		}
		return msg, f.Length, nil
	}
}

// rejectBody answers an undecodable message: -32700 for invalid JSON,
// -32600 (with the request's id when it has one) for JSON that is not a
// JSON-RPC message.
func (s *stream) rejectBody(ctx context.Context, body []byte, err error) {
	if !json.Valid(body) {
		s.replyError(ctx, nil, jsonrpc2.ParseError, "invalid JSON: "+err.Error())
		return
	}
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	s.replyError(ctx, env.ID, jsonrpc2.InvalidRequest, "not a JSON-RPC 2.0 message: "+err.Error())
}

func (s *stream) replyError(ctx context.Context, rawID json.RawMessage, code jsonrpc2.Code, msg string) {
	var id jsonrpc2.ID
	if n, err := strconv.ParseInt(string(rawID), 10, 64); err == nil {
		id = jsonrpc2.NewNumberID(n)
	} else if str := ""; json.Unmarshal(rawID, &str) == nil && len(rawID) > 0 {
		id = jsonrpc2.NewStringID(str)
	}
	_, _ = s.out.Write(context.WithoutCancel(ctx), jsonrpc2.NewResponse(id, nil, wireError(code, msg)))
}

// Write sends one message.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.out.Write(ctx, msg)
}

// Close closes the transport.
func (s *stream) Close() error { return s.out.Close() }

// MaxMessageBytes bounds one incoming message (see frame.MaxMessageBytes).
const MaxMessageBytes = frame.MaxMessageBytes

// codec encodes payloads with the protocol package's union-aware JSON (the
// typed LSP structures); already-encoded results (commands' JSON) pass
// through verbatim.
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case nil:
		return []byte("null"), nil
	case jsonrpc2.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case *jsonrpc2.RawMessage:
		if m == nil || *m == nil {
			return []byte("null"), nil
		}
		return *m, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}
