package lsp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
)

// InitOptions are the initializationOptions a client may send.
type InitOptions struct {
	// DB is one history or several (a path, or a list of paths and
	// {name, path, index} objects; see commands.DBOption).
	DB             commands.DBOption `json:"db,omitempty"`
	Index          string            `json:"index,omitempty"`
	ExcludeSession string            `json:"excludeSession,omitempty"`
	Watch          *bool             `json:"watch,omitempty"`
	NoRedact       *bool             `json:"noRedact,omitempty"`
	// EveryNotice: every notice an engine of the client's own would say,
	// the engine's own before any answer and the once-only ones in every
	// result (the CLI's commands run in the daemon ask for it).
	EveryNotice bool `json:"everyNotice,omitempty"`
}

// initOptionNames lists the fields of InitOptions for error messages.
const initOptionNames = "db, index, excludeSession, watch, noRedact, everyNotice"

// decodeInitOptions reads initializationOptions. Absent, null, {} and []
// are no options: Neovim encodes an empty Lua table (setup({})) as [].
func decodeInitOptions(raw []byte) (InitOptions, error) {
	var opts InitOptions
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return opts, nil
	}
	if trimmed[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(trimmed, &list) == nil && len(list) == 0 {
			return opts, nil
		}
		return opts, jsonrpc2.Errorf(jsonrpc2.InvalidParams,
			"invalid initializationOptions: got an array, want an object such as {\"db\": \"/path/to/opencode.db\"}; valid fields: %s", initOptionNames)
	}
	if err := decodeStrict(trimmed, &opts); err != nil {
		return opts, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid initializationOptions: %v; valid fields: %s", err, initOptionNames)
	}
	return opts, nil
}

// initialize opens the engine with the client's options and answers with
// the capabilities.
func (s *Server) initialize(ctx context.Context, raw jsonrpc2.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initialize params: %v", err)
	}
	opts, err := decodeInitOptions(p.InitializationOptions)
	if err != nil {
		return nil, err
	}
	specs := []engine.SourceSpec(opts.DB)
	if len(specs) == 0 {
		var err error
		if specs, err = commands.SourceSpecs(s.cfg.DB); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "--db: %v", err)
		}
	}
	for i := range specs {
		specs[i].Path, _ = filepath.Abs(specs[i].Path)
	}
	index := cmp.Or(opts.Index, s.cfg.Index)
	if p := s.cfg.pinned; p != nil {
		specs, index = p.Specs(), ""
		if p.Demo {
			specs = nil // found again by discovery, so the engine says it is the demo
		}
	}
	noRedact := s.cfg.NoRedact
	if opts.NoRedact != nil {
		noRedact = *opts.NoRedact
	}
	h, err := s.cfg.hosts.acquire(ctx, newHostKey(specs, index, noRedact), hostConfig{log: s.log, getenv: s.cfg.Getenv,
		poll: s.cfg.PollInterval, maxLag: s.cfg.MaxLag, beforeSync: s.cfg.beforeSync}, s)
	if errors.Is(err, engine.ErrIndexRefused) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initializationOptions.index: %v", err)
	}
	if errors.Is(err, engine.ErrOptions) {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initializationOptions.db: %v", err)
	}
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "recall cannot open the history: %v (set initializationOptions.db to an opencode.db)", err)
	}
	eng := h.eng
	caps := p.Capabilities
	s.mu.Lock()
	s.host, s.opts, s.state = h, opts, stateRunning
	s.watching = opts.Watch == nil || *opts.Watch
	s.progressCap = caps.Window != nil && caps.Window.WorkDoneProgress != nil && *caps.Window.WorkDoneProgress
	s.lensRefresh = caps.Workspace != nil && caps.Workspace.CodeLens != nil && caps.Workspace.CodeLens.RefreshSupport != nil && *caps.Workspace.CodeLens.RefreshSupport
	s.mu.Unlock()
	s.log.Info("initialize", "source", eng.SourcePath(), "index", eng.IndexPath(), "sources", eng.SourceNames(), "watch", s.watching, "noRedact", noRedact)
	return &protocol.InitializeResult{Capabilities: capabilities(), ServerInfo: protocol.ServerInfo{
		Name: "recall", Version: protocol.NewOptional(commands.Version)}}, nil
}

// initialized sends the engine's notices and starts the watcher, whose
// first sync may create work-done progress: a client accepts requests
// from the server only once it sent initialized (VS Code logs "Unhandled
// method" for a create that comes earlier). It runs inline, in wire order,
// so a request behind it finds the watcher started.
func (s *Server) initialized(context.Context, jsonrpc2.RawMessage) error {
	s.mu.Lock()
	h, watching, state := s.host, s.watching, s.state
	s.mu.Unlock()
	if h == nil || state != stateRunning {
		return nil
	}
	s.mu.Lock()
	every := s.opts.EveryNotice
	s.mu.Unlock()
	for _, n := range h.eng.Notices() {
		if every {
			s.notify(s.base, protocol.MessageTypeInfo, n) // before any answer, as a CLI process says it
			continue
		}
		s.post(func() { s.notify(s.base, protocol.MessageTypeInfo, n) })
	}
	if watching {
		h.live.Start()
	}
	return nil
}

func capabilities() protocol.ServerCapabilities {
	return protocol.ServerCapabilities{
		TextDocumentSync:        protocol.TextDocumentSyncKindFull,
		HoverProvider:           protocol.Boolean(true),
		WorkspaceSymbolProvider: protocol.Boolean(true),
		CodeLensProvider:        &protocol.CodeLensOptions{ResolveProvider: ptr(false)},
		ExecuteCommandProvider:  protocol.ExecuteCommandOptions{Commands: CommandNames()},
		Workspace: &protocol.WorkspaceOptions{
			TextDocumentContent: &protocol.TextDocumentContentOptions{Schemes: []string{engine.TranscriptScheme}},
		},
	}
}

func ptr[T any](v T) *T { return &v }
