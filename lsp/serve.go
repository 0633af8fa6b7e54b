// Package lsp serves the recall engine over the Language Server Protocol:
// decode, dispatch through package commands, encode. No ranking or SQL here.
package lsp

import (
	"context"
	"fmt"
	"io"

	"github.com/recallhq/recall/commands"
)

// Serve runs the server on stdin/stdout until the client exits.
func Serve(ctx context.Context, g commands.Globals, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "recall lsp: not implemented yet")
	return commands.ExitFailure
}
