package commands

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// A CLI command marked Warm runs in a warm engine when there is one: the
// shared daemon that `recall lsp` starts for editors and the OpenCode
// plugin keeps the history's index open, its pages mapped and its caches
// filled, so a search through it skips what a fresh process pays to open
// and first touch the index (docs/benchmarks.md, "The CLI in a warm
// engine"). The CLI never starts a daemon for this: with none running, or
// any error from one, the command runs in its own process as before, and
// says any error in its own words.

// WarmCall is one command line for a running daemon.
type WarmCall struct {
	Name   string          // the command's name in the table
	Params json.RawMessage // its validated params, as the wire takes them
	// DB, Index and NoRedact are the globals that choose the history, the
	// index and the redaction: together they name the daemon.
	DB       []string
	Index    string
	NoRedact bool
	Getenv   func(string) string
	// Notify receives the daemon's notices for this call (the engine's,
	// the sync's, the command's), as the CLI's own would be.
	Notify func(string)
}

// ErrNoDaemon is a WarmCall that found no daemon to run it.
var ErrNoDaemon = errors.New("no recall daemon runs for this history")

// warm runs a WarmCall in a running daemon; package lsp sets it (SetWarm).
var warm func(context.Context, *WarmCall) (json.RawMessage, error)

// SetWarm installs how the CLI reaches a running daemon. Package lsp calls
// it at init, as it registers `recall lsp`.
func SetWarm(f func(context.Context, *WarmCall) (json.RawMessage, error)) { warm = f }

// runWarm runs the command in a running daemon, if it may and one
// answers; ok is false otherwise. The daemon's notices are held back
// until its result is in hand: a call that fails runs again here, and
// its notices are said once.
func (c *Command[P, R]) runWarm(ctx context.Context, inv *invocation, g Globals, p *P, notify func(string)) (res R, ok bool) {
	// --no-sync answers from the index as it is, which a daemon's session
	// cannot be asked for per request; --log-file asks for this process's
	// own log. Both run here.
	if !c.Warm || warm == nil || g.NoSync || g.LogFile != "" || noDaemon(inv.getenv) {
		return res, false
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return res, false
	}
	var notices []string
	out, err := warm(ctx, &WarmCall{Name: c.Name, Params: raw, DB: g.DB, Index: g.Index, NoRedact: g.NoRedact,
		Getenv: inv.getenv, Notify: func(msg string) { notices = append(notices, msg) }})
	if err != nil || json.Unmarshal(out, &res) != nil {
		var zero R
		return zero, false
	}
	for _, n := range notices {
		notify(n)
	}
	return res, true
}

// noDaemon reports RECALL_NO_DAEMON set true (the env of `recall lsp
// --no-daemon`): every door serves in its own process.
func noDaemon(getenv func(string) string) bool {
	v, err := strconv.ParseBool(getenv("RECALL_NO_DAEMON"))
	return err == nil && v
}
