package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// MaxMessageBytes bounds one incoming message. The largest real requests
// (didOpen of a big generated file) stay well below it; a bigger declared
// body is skipped without being buffered and answered with an error.
const MaxMessageBytes = 64 << 20

// stream is the LSP Content-Length framing with the failure handling the
// spec asks for and the stock framer does not do: a malformed body gets a
// -32700 reply (null id) and reading goes on; an oversized one is skipped
// and answered with -32600; junk header lines are ignored. Writes go through
// the stock framer (one write per message, serialised).
type stream struct {
	in  *bufio.Reader
	out jsonrpc2.Stream
	max int64
}

func newStream(rwc io.ReadWriteCloser, maxBytes int64) *stream {
	return &stream{in: bufio.NewReaderSize(rwc, 64<<10), out: jsonrpc2.NewHeaderStream(rwc), max: maxBytes}
}

// Read returns the next well-formed message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, consumed, err := readHeader(s.in)
		if err != nil {
			return nil, 0, err
		}
		if length < 0 {
			s.replyError(ctx, nil, jsonrpc2.ParseError, "message header has no valid Content-Length")
			continue
		}
		if length > s.max {
			if _, err := io.CopyN(io.Discard, s.in, length); err != nil {
				return nil, 0, io.ErrUnexpectedEOF
			}
			s.replyError(ctx, nil, jsonrpc2.InvalidRequest, fmt.Sprintf("message of %d bytes is over the %d MiB limit; it was skipped", length, s.max>>20))
			continue
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(s.in, body); err != nil {
			return nil, 0, io.ErrUnexpectedEOF
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			s.rejectBody(ctx, body, err)
			continue
		}
		return msg, consumed + length, nil
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
	_, _ = s.out.Write(context.WithoutCancel(ctx), jsonrpc2.NewResponse(id, nil, jsonrpc2.NewError(code, msg)))
}

// Write sends one message.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.out.Write(ctx, msg)
}

// Close closes the transport.
func (s *stream) Close() error { return s.out.Close() }

// readHeader reads one header block. length is -1 when the block has no
// usable Content-Length; err is io.EOF at a clean end of input.
func readHeader(r *bufio.Reader) (length, consumed int64, err error) {
	length = -1
	lines := 0
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An absurdly long header line: skip it whole.
			consumed += int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				consumed += int64(len(line))
			}
			if err != nil {
				return 0, 0, eofOrTruncated(err, true)
			}
			lines++
			continue
		}
		if err != nil {
			return 0, 0, eofOrTruncated(err, lines > 0 || len(line) > 0)
		}
		consumed += int64(len(line))
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 {
			if lines == 0 {
				continue // stray blank line between messages
			}
			return length, consumed, nil
		}
		lines++
		name, value, ok := bytes.Cut(trimmed, []byte(":"))
		if !ok || !bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			continue
		}
		n, perr := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if perr == nil && n > 0 {
			length = n
		}
	}
}

func eofOrTruncated(err error, started bool) error {
	if errors.Is(err, io.EOF) && started {
		return io.ErrUnexpectedEOF
	}
	return err
}

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
