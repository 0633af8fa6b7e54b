package lsp

import (
	"context"
	"errors"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// rpcError maps an error to its JSON-RPC code: invalid input (a ParamError,
// a bad cursor or recall: URI) is -32602 with the message naming the field;
// a cancelled request is -32800; anything else -32603.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var wire *jsonrpc2.Error
	switch {
	case errors.As(err, &wire):
		return wireError(wire.Code, wire.Message)
	case commands.IsParamError(err), errors.Is(err, engine.ErrBadCursor), errors.Is(err, engine.ErrBadURI):
		return wireError(jsonrpc2.InvalidParams, err.Error())
	case errors.Is(err, context.Canceled):
		return jsonrpc2.NewError(protocol.CodeRequestCancelled, "request cancelled")
	}
	return wireError(jsonrpc2.InternalError, err.Error())
}

// Budgets for the client input an error message quotes back.
const (
	// maxEcho: a method, command name or URI is recognisable in far less.
	maxEcho = 120
	// maxErrorMessage bounds any error message on the wire; the longest
	// recall writes (a field list, a path and what to do) stay under 1 KiB.
	maxErrorMessage = 4 << 10
)

// echo makes client input fit to quote in a reply: valid UTF-8 (invalid
// bytes become U+FFFD) and clipped.
func echo(s string) string { return render.Clip(strings.ToValidUTF8(s, "\uFFFD"), maxEcho) }

// wireError is an error as it goes on the wire. Every error reply passes
// here, so none carries invalid UTF-8 (a frame with it is not JSON and
// clients drop it) whatever input its message quotes.
func wireError(code jsonrpc2.Code, msg string) *jsonrpc2.Error {
	return jsonrpc2.NewError(code, render.Clip(strings.ToValidUTF8(msg, "\uFFFD"), maxErrorMessage))
}
