package lsp

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/commands"
)

// Command and request names. Every server command of the table is
// `recall.<name>` (executeCommand) and `recall/<name>` (a custom request).
const (
	commandPrefix    = "recall."
	requestPrefix    = "recall/"
	methodTranscript = "recall/transcript"
	// methodIndexUpdated is sent after a background sync changed the index.
	methodIndexUpdated = "recall/indexUpdated"
	// ShowFileSessions is the client-side command of the file code lens.
	ShowFileSessions = "recall.showFileSessions"
)

// CommandNames is the executeCommandProvider list, derived from the table.
func CommandNames() []string {
	var out []string
	for _, e := range commands.ServerCommands() {
		out = append(out, commandPrefix+e.Spec().Name)
	}
	sort.Strings(out)
	return out
}

// serverEntry is the table's server command called name.
func serverEntry(name string) (commands.Entry, bool) {
	e, ok := commands.Lookup(name)
	return e, ok && e.Spec().Doors&commands.Server != 0
}

// customCommand maps `recall/<name>` to its table entry.
func customCommand(method string) (commands.Entry, bool) {
	name, ok := strings.CutPrefix(method, requestPrefix)
	if !ok {
		return nil, false
	}
	return serverEntry(name)
}

// executeCommand runs `recall.<name>` with its one JSON object argument.
func (s *Server) executeCommand(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p struct {
		Command       string            `json:"command"`
		Arguments     []json.RawMessage `json:"arguments"`
		WorkDoneToken json.RawMessage   `json:"workDoneToken"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "executeCommand params: %v", err)
	}
	name, ok := strings.CutPrefix(p.Command, commandPrefix)
	e, known := serverEntry(name)
	if !ok || !known {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "unknown command %q; the initialize result lists recall's commands (executeCommandProvider.commands)", echo(p.Command))
	}
	if len(p.Arguments) > 1 {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes one argument (a JSON object of its params), got %d", echo(p.Command), len(p.Arguments))
	}
	var arg json.RawMessage
	if len(p.Arguments) == 1 {
		arg = p.Arguments[0]
	}
	return s.runEntry(ctx, e, arg, p.WorkDoneToken)
}

// runEntry decodes params strictly, runs the command and returns its
// result encoded once, exactly as the CLI's --json does.
func (s *Server) runEntry(ctx context.Context, e commands.Entry, raw, token json.RawMessage) (any, error) {
	call, err := e.Decode(raw)
	if err != nil {
		return nil, err
	}
	var res any
	err = s.withEnv(ctx, e.Spec(), token, func(env *commands.Env) (err error) {
		res, err = call.Run(ctx, env)
		return err
	})
	if err != nil {
		return nil, err
	}
	return encodeResult(res)
}

// runTyped runs a command for the server's own features (symbols, lenses,
// transcripts) and returns its typed result.
func runTyped[P, R any](ctx context.Context, s *Server, c *commands.Command[P, R], p *P) (R, error) {
	var res R
	err := s.withEnv(ctx, c.Spec(), nil, func(env *commands.Env) (err error) {
		res, err = c.Call(ctx, env, p)
		return err
	})
	return res, err
}

// withEnv runs fn with the connection's command environment. A command
// that reads the history first waits for the first background sync
// (unless it is a sync: it waits for the other syncs anyway). With the
// watcher on, commands answer from the index as it is (the watcher keeps
// it fresh; WAL readers never wait); without it they sync first, like the
// CLI, reporting progress; a sync takes its turn with the engine's others.
func (s *Server) withEnv(ctx context.Context, spec commands.Spec, token json.RawMessage, fn func(*commands.Env) error) error {
	h, err := s.currentHost()
	if err != nil {
		return err
	}
	opts := s.options()
	if !spec.Syncs && opts.watching {
		if err := h.waitReady(ctx); err != nil {
			return err
		}
	}
	env := &commands.Env{Engine: h.eng, NoSync: opts.watching, ExcludeSession: opts.ExcludeSession, OnSync: h.live.Synced, EveryNotice: opts.EveryNotice,
		Notify: func(msg string) { s.notify(ctx, protocol.MessageTypeInfo, msg) }}
	if spec.Syncs || (spec.Sync && !opts.watching) {
		prog := s.newProgress(ctx, "Recall: indexing", token)
		defer prog.end("")
		env.Progress = prog.report
		done := h.live.Turn()
		defer done()
	}
	if hook := s.cfg.BeforeCommand; hook != nil {
		hook(ctx)
	}
	return fn(env)
}
