package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// A CLI command marked Warm runs in a warm engine when there is one: the
// shared daemon that `recall lsp` starts for editors and the OpenCode
// plugin keeps the history's index open and its caches filled, so a
// search through it skips what a fresh process pays to open and first
// read the index (docs/benchmarks.md, "The CLI in a warm engine"). With
// none running, or any error from one, the command runs in its own
// process as before, and says any error in its own words. The CLI starts
// a daemon only when asked (RECALL_DAEMON=auto, as gopls's -remote=auto):
// then a command that found none starts one after it has answered, for
// the commands after it.

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

// warm runs a WarmCall in a running daemon, and startWarm starts the
// daemon of a WarmCall's history and index without waiting for it;
// package lsp sets both (SetWarm).
var (
	warm      func(context.Context, *WarmCall) (json.RawMessage, error)
	startWarm func(*WarmCall) error
)

// SetWarm installs how the CLI reaches a running daemon and how it starts
// one. Package lsp calls it at init, as it registers `recall lsp`.
func SetWarm(call func(context.Context, *WarmCall) (json.RawMessage, error), start func(*WarmCall) error) {
	warm, startWarm = call, start
}

// runWarm runs the command in a running daemon, if it may and one
// answers; ok is false otherwise. The daemon's notices are held back
// until its result is in hand: a call that fails runs again here, and
// its notices are said once. start is the call to start a daemon for
// once the command has run here: RECALL_DAEMON=auto, and none answered.
func (c *Command[P, R]) runWarm(ctx context.Context, inv *invocation, g Globals, p *P, notify func(string)) (res R, ok bool, start *WarmCall) {
	// --no-sync answers from the index as it is, which a daemon's session
	// cannot be asked for per request; --log-file asks for this process's
	// own log. Both run here.
	if !c.Warm || warm == nil || g.NoSync || g.LogFile != "" || noDaemon(inv.getenv) {
		return res, false, nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return res, false, nil
	}
	var notices []string
	wc := &WarmCall{Name: c.Name, Params: raw, DB: g.DB, Index: g.Index, NoRedact: g.NoRedact,
		Getenv: inv.getenv, Notify: func(msg string) { notices = append(notices, msg) }}
	out, err := warm(ctx, wc)
	if err != nil || json.Unmarshal(out, &res) != nil {
		var zero R
		if errors.Is(err, ErrNoDaemon) && autoDaemon(inv.getenv, notify) {
			wc.Notify = nil
			start = wc
		}
		return zero, false, start
	}
	for _, n := range notices {
		notify(n)
	}
	return res, true, nil
}

// startDaemon starts the daemon runWarm asked for, after the command ran
// in this process: the next command of this history finds its engine
// warm. The command's answer does not wait for it, and a daemon that
// cannot start costs a notice, never the answer.
func startDaemon(wc *WarmCall, notify func(string)) {
	if wc == nil || startWarm == nil {
		return
	}
	if err := startWarm(wc); err != nil {
		notify(fmt.Sprintf("RECALL_DAEMON=auto: could not start a daemon for the next command: %v", err))
	}
}

// autoDaemon reports RECALL_DAEMON=auto: a warm command that finds no
// daemon starts one. Any other value is said, and starts none.
func autoDaemon(getenv func(string) string, notify func(string)) bool {
	switch v := getenv("RECALL_DAEMON"); v {
	case "auto":
		return true
	case "":
		return false
	default:
		notify(fmt.Sprintf(`RECALL_DAEMON=%q is not a setting: "auto" starts a daemon for the commands after this one; unset, none is started`, v))
		return false
	}
}

// noDaemon reports RECALL_NO_DAEMON set true (the env of `recall lsp
// --no-daemon`): every door serves in its own process.
func noDaemon(getenv func(string) string) bool {
	v, err := strconv.ParseBool(getenv("RECALL_NO_DAEMON"))
	return err == nil && v
}
