package lsp

import (
	"reflect"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/engine"
)

// Method is one of recall's own JSON-RPC methods (besides the table's
// recall/<command>) with the Go types of what travels.
type Method struct {
	Name string
	// Summary is one line for the generated client docs.
	Summary string
	// Params of a request or a client command, the payload of a
	// notification.
	Params reflect.Type
	// Result of a request (nil for notifications and client commands).
	Result reflect.Type
}

// ErrorCode is a JSON-RPC error code the server answers with.
type ErrorCode struct {
	Name string
	Code int64
}

// WireSurface is what a client needs to know beyond the command table:
// the initializationOptions, recall's own requests and notifications,
// the client-side commands the server puts into code lenses, the
// transcript URI scheme and the error codes. It is declared here, next
// to the handlers (a test keeps it and the method table in step), so the
// client types generated from it (internal/tsgen) cannot drift from them.
type WireSurface struct {
	InitOptions    reflect.Type
	Requests       []Method
	Notifications  []Method
	ClientCommands []Method
	Scheme         string
	ErrorCodes     []ErrorCode
}

// Wire describes recall's own LSP surface (see WireSurface).
func Wire() WireSurface {
	return WireSurface{
		InitOptions: reflect.TypeFor[InitOptions](),
		Requests: []Method{{Name: methodTranscript, Summary: "a recall: URI's transcript, for clients without workspace/textDocumentContent",
			Params: reflect.TypeFor[transcriptParams](), Result: reflect.TypeFor[engine.ReadResult]()}},
		Notifications: []Method{{Name: methodIndexUpdated, Summary: "a background sync changed the index",
			Params: reflect.TypeFor[engine.SyncResult]()}},
		ClientCommands: []Method{{Name: ShowFileSessions, Summary: "the file code lens: list the sessions that touched the file",
			Params: reflect.TypeFor[fileLensArgs]()}},
		Scheme: engine.TranscriptScheme,
		ErrorCodes: []ErrorCode{
			{"invalidParams", int64(jsonrpc2.InvalidParams)},
			{"methodNotFound", int64(jsonrpc2.MethodNotFound)},
			{"invalidRequest", int64(jsonrpc2.InvalidRequest)},
			{"serverNotInitialized", int64(jsonrpc2.ServerNotInitialized)},
			{"requestCancelled", int64(protocol.CodeRequestCancelled)},
			{"internalError", int64(jsonrpc2.InternalError)},
			{"parseError", int64(jsonrpc2.ParseError)},
		},
	}
}
