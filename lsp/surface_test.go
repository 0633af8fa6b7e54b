package lsp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// TestWireListsEveryOwnMethod: the surface the client types are generated
// from (Wire) names exactly the recall/ requests the method table
// handles, so a new request cannot reach the server without reaching the
// clients' types.
func TestWireListsEveryOwnMethod(t *testing.T) {
	w := Wire()
	described := map[string]bool{}
	for _, m := range w.Requests {
		described[m.Name] = true
		if m.Params == nil || m.Result == nil {
			t.Errorf("%s: a request needs its params and result types", m.Name)
		}
	}
	for method := range requestHandlers {
		if strings.HasPrefix(method, requestPrefix) && !described[method] {
			t.Errorf("%s is handled but not in Wire().Requests", method)
		}
		delete(described, method)
	}
	for m := range described {
		t.Errorf("Wire().Requests lists %s, which no handler serves", m)
	}
	if len(w.Notifications) == 0 || w.Notifications[0].Name != methodIndexUpdated {
		t.Errorf("Wire().Notifications = %v, want %s", w.Notifications, methodIndexUpdated)
	}
	if len(w.ClientCommands) == 0 || w.ClientCommands[0].Name != ShowFileSessions {
		t.Errorf("Wire().ClientCommands = %v, want %s", w.ClientCommands, ShowFileSessions)
	}
}

// TestWireListsEveryErrorCode: each JSON-RPC code the server's own files
// answer with is among Wire().ErrorCodes (the clients' ErrorCodes).
func TestWireListsEveryErrorCode(t *testing.T) {
	codes := map[string]int64{
		"jsonrpc2.ParseError": int64(jsonrpc2.ParseError), "jsonrpc2.InvalidRequest": int64(jsonrpc2.InvalidRequest),
		"jsonrpc2.MethodNotFound": int64(jsonrpc2.MethodNotFound), "jsonrpc2.InvalidParams": int64(jsonrpc2.InvalidParams),
		"jsonrpc2.InternalError": int64(jsonrpc2.InternalError), "jsonrpc2.ServerNotInitialized": int64(jsonrpc2.ServerNotInitialized),
		"jsonrpc2.UnknownError": int64(jsonrpc2.UnknownError), "protocol.CodeRequestCancelled": int64(protocol.CodeRequestCancelled),
		"protocol.CodeContentModified": int64(protocol.CodeContentModified),
	}
	listed := map[int64]bool{}
	for _, c := range Wire().ErrorCodes {
		listed[c.Code] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if code, ok := codes[x.Name+"."+sel.Sel.Name]; ok {
				used++
				if !listed[code] {
					t.Errorf("%s answers with %s.%s (%d), which Wire().ErrorCodes lacks", fset.Position(sel.Pos()), x.Name, sel.Sel.Name, code)
				}
			}
			return true
		})
	}
	if used == 0 {
		t.Fatal("found no error code in the package's files; the scan is broken")
	}
}
