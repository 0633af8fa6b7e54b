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
	"time"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/lsp/daemon"
)

// ServeParams are the flags of `recall lsp` besides the global ones.
type ServeParams struct {
	Stdio      bool          `flag:"stdio" help:"speak LSP on stdin/stdout (what editor clients pass; the only client transport)"`
	NoDaemon   bool          `flag:"no-daemon" env:"RECALL_NO_DAEMON" help:"serve in this process, not through the shared daemon"`
	Daemon     bool          `flag:"daemon" help:"be the shared daemon (a forwarder starts it, detached)"`
	Socket     string        `flag:"socket" meta:"PATH" help:"the daemon's Unix socket (with --daemon)"`
	DaemonIdle time.Duration `flag:"daemon-idle" env:"RECALL_DAEMON_IDLE" help:"how long the daemon outlives its last client (default 5m)"`
}

// Validate checks the flags and fills in the idle default.
func (p *ServeParams) Validate() error {
	if p.DaemonIdle < 0 {
		return &commands.ParamError{Field: "--daemon-idle", Msg: fmt.Sprintf("%v must be positive (want a duration such as 5m)", p.DaemonIdle)}
	}
	if p.DaemonIdle == 0 {
		p.DaemonIdle = DefaultDaemonIdle
	}
	if p.Daemon && p.Socket == "" {
		return &commands.ParamError{Msg: "--daemon needs --socket PATH"}
	}
	return nil
}

// ServeCommand is `recall lsp`, in the command table like every command:
// its flags are parsed, and its help printed, by the same code.
var ServeCommand = commands.Register(&commands.Command[ServeParams, commands.Exit]{
	Name:    "lsp",
	Summary: "serve the engine over the Language Server Protocol on stdio",
	Doors:   commands.CLI, NoEngine: true, Serves: true,
	Run: func(ctx context.Context, env *commands.Env, p *ServeParams) (commands.Exit, error) {
		return serve(ctx, env.Globals, p, env.Stdin, env.Stdout, env.Stderr)
	},
})

// serve runs `recall lsp`. By default it forwards stdio to the shared
// daemon for the client's history and index, starting the daemon when none
// runs; with --no-daemon, or when no daemon can be reached, it serves in
// this process. The exit code follows the spec: 0 after shutdown+exit, 1
// when the client left without shutdown.
func serve(ctx context.Context, g commands.Globals, flags *ServeParams, stdin io.Reader, stdout, stderr io.Writer) (commands.Exit, error) {
	logOut := stderr
	if g.LogFile != "" {
		f, err := os.OpenFile(g.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return commands.ExitUsage, &commands.ParamError{Msg: fmt.Sprintf("open log file: %v", err)}
		}
		defer f.Close()
		logOut = f
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := Config{DB: g.DB, Index: g.Index, NoRedact: g.NoRedact, Logger: logger}
	if flags.Daemon {
		if err := RunDaemon(ctx, DaemonConfig{Socket: flags.Socket, Idle: flags.DaemonIdle, Logger: logger, Server: cfg}); err != nil {
			logger.Error("daemon", "err", err)
			return commands.ExitFailure, nil
		}
		return commands.ExitOK, nil
	}
	if !flags.NoDaemon && daemon.Supported {
		exe, err := os.Executable()
		if err == nil {
			fw := &daemon.Forwarder{DB: cfg.DB, Index: cfg.Index, NoRedact: cfg.NoRedact, Getenv: os.Getenv, Log: logger,
				Spawn: func(sock, logFile string) error {
					if g.LogFile != "" {
						// Whoever asked for a log of this client gets the
						// daemon's log too (its syncs, its errors).
						logFile, _ = filepath.Abs(g.LogFile)
					}
					return daemon.SpawnServer(exe, sock, logFile, "--daemon-idle", flags.DaemonIdle.String())
				}}
			code, err := fw.Run(ctx, stdin, stdout)
			var fb *daemon.FallbackError
			if !errors.As(err, &fb) {
				return commands.Exit(code), nil
			}
			logger.Info("serving in this process", "why", fb.Err)
			stdin = io.MultiReader(bytes.NewReader(fb.Consumed), stdin)
		}
	}
	if !NewServer(cfg).Run(ctx, stdio{stdin, stdout}) {
		return commands.ExitFailure, nil
	}
	return commands.ExitOK, nil
}

// DefaultDaemonIdle is how long the daemon outlives its last client.
const DefaultDaemonIdle = daemon.DefaultIdle

// DaemonConfig is how `recall lsp --daemon` runs.
type DaemonConfig struct {
	Socket string
	Idle   time.Duration // 0 = DefaultDaemonIdle
	Logger *slog.Logger
	// Server is the template of each connection's server config.
	Server Config
}

// RunDaemon serves LSP connections on the socket (see daemon.Run): each
// connection its own Server, all of them sharing the engines they open.
func RunDaemon(ctx context.Context, dc DaemonConfig) error {
	shared := newHosts()
	shared.linger = true
	defer shared.closeAll()
	if dc.Server.Logger == nil {
		dc.Server.Logger = dc.Logger
	}
	return daemon.Run(ctx, daemon.Config{Socket: dc.Socket, Idle: dc.Idle, Logger: dc.Logger,
		Serve: func(ctx context.Context, conn io.ReadWriteCloser, hello daemon.Hello) bool {
			cfg := dc.Server
			// The history and index the forwarder resolved, relative to the
			// client's working directory.
			cfg.pinned, cfg.hosts, cfg.NoRedact = &hello.Resolved, shared, hello.NoRedact
			return NewServer(cfg).Run(ctx, conn)
		}})
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
