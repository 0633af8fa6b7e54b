// Package lsp serves the recall engine over the Language Server Protocol:
// decode, dispatch through package commands, encode. No ranking or SQL here.
package lsp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/recallhq/recall/commands"
)

// Serve runs the server on stdin/stdout until the client exits. The exit
// code follows the spec: 0 after shutdown+exit, 1 when the client left
// without shutdown.
func Serve(ctx context.Context, g commands.Globals, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, a := range args {
		switch a {
		case "--stdio", "-stdio", "stdio": // what editor clients pass; stdio is the only transport
		default:
			fmt.Fprintf(stderr, "recall lsp: unexpected argument %q (the server speaks LSP on stdin/stdout)\n", a)
			return commands.ExitUsage
		}
	}
	logOut := stderr
	if g.LogFile != "" {
		f, err := os.OpenFile(g.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "recall lsp: open log file: %v\n", err)
			return commands.ExitUsage
		}
		defer f.Close()
		logOut = f
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := NewServer(Config{DB: g.DB, Index: g.Index, NoRedact: g.NoRedact, Logger: logger})
	clean := s.Run(ctx, stdio{stdin, stdout})
	if !clean {
		return commands.ExitFailure
	}
	return commands.ExitOK
}

// stdio joins the process's stdin and stdout into one transport.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		c.Close()
	}
	return nil
}
