package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
)

// Command and request names. Every server command of the table is
// `recall.<name>` (executeCommand) and `recall/<name>` (a custom request);
// reindex is sync with force.
const (
	commandPrefix    = "recall."
	requestPrefix    = "recall/"
	reindex          = "reindex"
	methodTranscript = "recall/transcript"
	// methodIndexUpdated is sent after a background sync changed the index.
	methodIndexUpdated = "recall/indexUpdated"
	// ShowFileSessions is the client-side command of the file code lens.
	ShowFileSessions = "recall.showFileSessions"
)

// CommandNames is the executeCommandProvider list, derived from the table.
func CommandNames() []string {
	var out []string
	for _, c := range commands.ServerCommands() {
		out = append(out, commandPrefix+c.Name)
	}
	out = append(out, commandPrefix+reindex)
	sort.Strings(out)
	return out
}

// customCommand maps `recall/<name>` to a table command name.
func customCommand(method string) (string, bool) {
	name, ok := strings.CutPrefix(method, requestPrefix)
	return name, ok && (name == reindex || isServerCommand(name))
}

func isServerCommand(name string) bool {
	c, ok := commands.Lookup(name)
	return ok && c.Doors&commands.Server != 0
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
	if !ok || (name != reindex && !isServerCommand(name)) {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "unknown command %q; the initialize result lists recall's commands (executeCommandProvider.commands)", echo(p.Command))
	}
	if len(p.Arguments) > 1 {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s takes one argument (a JSON object of its params), got %d", echo(p.Command), len(p.Arguments))
	}
	var arg json.RawMessage
	if len(p.Arguments) == 1 {
		arg = p.Arguments[0]
	}
	return s.runCommand(ctx, name, arg, p.WorkDoneToken)
}

// runCommand decodes params strictly, runs the command through the table
// and returns its result encoded exactly as the CLI's --json does.
func (s *Server) runCommand(ctx context.Context, name string, raw json.RawMessage, token json.RawMessage) (any, error) {
	engineFor := s.historyEngine
	if name == reindex || name == "sync" {
		engineFor = func(context.Context) (*engine.Engine, error) { return s.engine() } // a sync waits for the other syncs anyway
	}
	eng, err := engineFor(ctx)
	if err != nil {
		return nil, err
	}
	force := name == reindex
	if force {
		name = "sync"
		if t := strings.TrimSpace(string(raw)); t != "" && t != "null" && t != "{}" {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "reindex takes no params")
		}
		raw = json.RawMessage(`{"force":true}`)
	}
	c, _ := commands.Lookup(name)
	p, err := commands.DecodeParams(c, raw)
	if err != nil {
		return nil, err
	}
	if sp, ok := p.(*commands.SearchParams); ok && sp.ExcludeSession == "" {
		sp.ExcludeSession = s.options().ExcludeSession
	}
	res, err := s.execute(ctx, eng, c, p, token)
	if err != nil {
		return nil, err
	}
	return encodeResult(res)
}

// runTyped runs a command for the server's own features (symbols, lenses,
// transcripts) and returns the typed result.
func (s *Server) runTyped(ctx context.Context, name string, params any) (any, error) {
	eng, err := s.historyEngine(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c, _ := commands.Lookup(name)
	p, err := commands.DecodeParams(c, raw)
	if err != nil {
		return nil, err
	}
	return s.execute(ctx, eng, c, p, nil)
}

// execute runs a validated command: with the watcher on, requests answer
// from the index as it is (the watcher keeps it fresh; WAL readers never
// wait); without it they sync first, like the CLI, reporting progress.
func (s *Server) execute(ctx context.Context, eng *engine.Engine, c *commands.Command, p commands.Params, token json.RawMessage) (any, error) {
	env := &commands.Env{Engine: eng, Notify: func(msg string) { s.notify(ctx, protocol.MessageTypeInfo, msg) }}
	h, err := s.currentHost()
	if err != nil {
		return nil, err
	}
	writes := c.Name == "sync" || (c.Sync && !s.options().watching)
	if writes {
		prog := s.newProgress(ctx, "Recall: indexing", token)
		defer prog.end("")
		env.Progress = prog.report
		h.syncMu.Lock()
		defer h.syncMu.Unlock()
	}
	if hook := s.testHook.Load(); hook != nil {
		(*hook)(ctx)
	}
	res, err := commands.Execute(ctx, env, c, p, s.options().watching)
	if err != nil {
		return nil, err
	}
	if sr, ok := res.(engine.SearchResult); ok {
		for _, n := range sr.Notices {
			s.notify(ctx, protocol.MessageTypeInfo, n)
		}
	}
	if c.Name == "sync" {
		h.synced(res.(engine.SyncResult)) // every connection on this engine hears of it
	}
	return res, nil
}

// encodeResult encodes like the CLI (encoding/json, no HTML escaping), so
// every door returns byte-identical shapes.
func encodeResult(v any) (jsonrpc2.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return jsonrpc2.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// options is a snapshot of the client's options.
type serverOptions struct {
	InitOptions
	watching bool
}

func (s *Server) options() serverOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return serverOptions{InitOptions: s.opts, watching: s.watching}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// decodeStrict decodes a JSON object, refusing unknown fields.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
