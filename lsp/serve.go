// Package lsp serves the recall engine over the Language Server Protocol:
// decode, dispatch through package commands, encode. No ranking or SQL here.
package lsp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/recallhq/recall/commands"
)

// serveFlags are the flags of `recall lsp` besides the global ones.
type serveFlags struct {
	noDaemon bool          // --no-daemon or RECALL_NO_DAEMON=1: serve in this process
	daemon   bool          // --daemon: be the shared daemon (started by a forwarder)
	socket   string        // --socket: the daemon's socket
	idle     time.Duration // --daemon-idle or RECALL_DAEMON_IDLE
}

func parseServeFlags(args []string, getenv func(string) string) (serveFlags, error) {
	f := serveFlags{idle: DefaultDaemonIdle}
	if v := getenv("RECALL_NO_DAEMON"); v != "" && v != "0" && v != "false" {
		f.noDaemon = true
	}
	if v := getenv("RECALL_DAEMON_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return f, fmt.Errorf("RECALL_DAEMON_IDLE=%q: want a duration such as 5m", v)
		}
		f.idle = d
	}
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		value := func() (string, error) { return commands.FlagValue(args, &i, name, val, hasVal) }
		var err error
		switch name {
		case "stdio": // what editor clients pass; stdio is the only client transport
		case "no-daemon":
			f.noDaemon = true
		case "daemon":
			f.daemon = true
		case "socket":
			f.socket, err = value()
		case "daemon-idle":
			var v string
			if v, err = value(); err == nil {
				if f.idle, err = time.ParseDuration(v); err == nil && f.idle <= 0 {
					err = errors.New("must be positive")
				}
				if err != nil {
					err = fmt.Errorf("--daemon-idle %q: %v (want a duration such as 5m)", v, err)
				}
			}
		default:
			return f, fmt.Errorf("unexpected argument %q (the server speaks LSP on stdin/stdout)", args[i])
		}
		if err != nil {
			return f, err
		}
	}
	if f.daemon && f.socket == "" {
		return f, errors.New("--daemon needs --socket PATH")
	}
	return f, nil
}

// Serve runs `recall lsp`. By default it forwards stdio to the shared
// daemon for the client's history and index, starting the daemon when none
// runs; with --no-daemon, or when no daemon can be reached, it serves in
// this process. The exit code follows the spec: 0 after shutdown+exit, 1
// when the client left without shutdown.
func Serve(ctx context.Context, g commands.Globals, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags, err := parseServeFlags(args, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "recall lsp: %v\n", err)
		return commands.ExitUsage
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
	cfg := Config{DB: g.DB, Index: g.Index, NoRedact: g.NoRedact, Logger: logger}
	if flags.daemon {
		if err := RunDaemon(ctx, DaemonConfig{Socket: flags.socket, Idle: flags.idle, Logger: logger, Server: cfg}); err != nil {
			logger.Error("daemon", "err", err)
			return commands.ExitFailure
		}
		return commands.ExitOK
	}
	if !flags.noDaemon && daemonSupported {
		exe, err := os.Executable()
		if err == nil {
			fw := &forwarder{cfg: cfg, getenv: os.Getenv, log: logger, idle: flags.idle,
				spawn: func(sock, logFile string) error {
					if g.LogFile != "" {
						// Whoever asked for a log of this client gets the
						// daemon's log too (its syncs, its errors).
						logFile, _ = filepath.Abs(g.LogFile)
					}
					if err := os.MkdirAll(filepath.Dir(logFile), 0o700); err != nil {
						return err
					}
					return spawnDaemon(exe, []string{"lsp", "--daemon", "--socket", sock, "--daemon-idle", flags.idle.String(), "--log-file", logFile})
				}}
			code, err := fw.run(ctx, stdin, stdout)
			var fb *errFallback
			if !errors.As(err, &fb) {
				return code
			}
			logger.Info("serving in this process", "why", fb.err)
			stdin = io.MultiReader(bytes.NewReader(fb.consumed), stdin)
		}
	}
	return serveInProcess(ctx, cfg, stdin, stdout)
}

func serveInProcess(ctx context.Context, cfg Config, stdin io.Reader, stdout io.Writer) int {
	if !NewServer(cfg).Run(ctx, stdio{stdin, stdout}) {
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
