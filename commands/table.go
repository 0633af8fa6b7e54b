// Package commands defines each Recall command once: its name, params,
// result, validation and docs. The CLI, the LSP server (executeCommand and
// custom requests) and the OpenCode plugin all dispatch through this table,
// so a command behaves the same from every door.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/recallhq/recall/engine"
)

// Params is a command's parameter struct. Fields carry `json` tags (the
// wire names), `flag` tags (CLI flags), `arg` tags ("1", "2" or "rest" for
// positional CLI arguments) and `help` tags.
type Params interface {
	// Validate checks and normalises the params; it returns a *ParamError.
	Validate() error
}

// Door says where a command may be called from.
type Door int

const (
	// CLI commands are reachable from the command line.
	CLI Door = 1 << iota
	// Server commands are reachable over JSON-RPC (LSP, plugin). Commands
	// that write files are not.
	Server
)

// Command is one entry of the table.
type Command struct {
	Name    string
	Summary string
	Doors   Door
	// Sync: bring the index up to date first (unless the caller says no).
	Sync bool
	// NewParams returns a pointer to a zero params struct.
	NewParams func() Params
	// Run executes the command; the result is JSON-encodable.
	Run func(ctx context.Context, env *Env, p Params) (any, error)
	// Print writes the result for people (the CLI without --json).
	Print func(w io.Writer, result any) error
}

// ParamError is invalid input: the field and how to fix it. Doors map it to
// exit code 2 or JSON-RPC -32602.
type ParamError struct {
	Field string
	Msg   string
}

func (e *ParamError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return fmt.Sprintf("invalid %s: %s", e.Field, e.Msg)
}

// IsParamError reports whether err is invalid input: a ParamError, or
// input the engine refused itself (its guard behind validation).
func IsParamError(err error) bool {
	var pe *ParamError
	return errors.As(err, &pe) || errors.Is(err, engine.ErrQueryTooLong)
}

// Env is what a command runs against.
type Env struct {
	Engine *engine.Engine
	// Notify receives one-line notices for people (stderr, logMessage).
	Notify func(string)
	// Stdout receives streamed output (export without -o) on the CLI.
	Stdout io.Writer
	// Progress receives sync progress (done, total) when set.
	Progress func(done, total int)
	// EmbedProgress receives embedding progress (documents done, total).
	EmbedProgress func(done, total int)
}

func (env *Env) notify(msg string) {
	if env.Notify != nil && msg != "" {
		env.Notify(msg)
	}
}

var table = map[string]*Command{}

func register(c *Command) {
	if _, dup := table[c.Name]; dup {
		panic("duplicate command " + c.Name)
	}
	table[c.Name] = c
}

// Lookup finds a command by name.
func Lookup(name string) (*Command, bool) {
	c, ok := table[name]
	return c, ok
}

// All lists commands sorted by name.
func All() []*Command {
	out := make([]*Command, 0, len(table))
	for _, c := range table {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ServerCommands lists the commands reachable over JSON-RPC.
func ServerCommands() []*Command {
	var out []*Command
	for _, c := range All() {
		if c.Doors&Server != 0 {
			out = append(out, c)
		}
	}
	return out
}

// DecodeParams decodes JSON params for c strictly: an unknown field or a
// wrong type is a ParamError naming the field. Empty input means defaults.
func DecodeParams(c *Command, raw json.RawMessage) (Params, error) {
	p := c.NewParams()
	trimmed := strings.TrimSpace(string(raw))
	// Clients that encode "no params" as an empty list or object get the
	// defaults too (Lua sends {} as []).
	if trimmed != "" && trimmed != "null" && trimmed != "[]" {
		dec := json.NewDecoder(strings.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(p); err != nil {
			return nil, jsonParamError(c, err)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

func jsonParamError(c *Command, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &ParamError{Field: te.Field, Msg: fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &ParamError{Field: strings.Trim(f, `"`), Msg: fmt.Sprintf("%s takes no such field; valid fields: %s", c.Name, strings.Join(FieldNames(c), ", "))}
	}
	return &ParamError{Msg: fmt.Sprintf("params of %s must be one JSON object: %v", c.Name, err)}
}

// Execute runs c with validated params: sync first when the command wants
// it (and noSync is false), then Run.
//
// A damaged index is rebuilt from the history and the command run once more:
// the index is a cache, and the user should get an answer, not a repair job.
func Execute(ctx context.Context, env *Env, c *Command, p Params, noSync bool) (any, error) {
	res, err := execute(ctx, env, c, p, noSync)
	if engine.IsIndexDamaged(err) {
		env.notify(fmt.Sprintf("the index was damaged (%v); rebuilding it from the history", err))
		if _, rerr := env.Engine.RebuildIndex(ctx); rerr != nil {
			return nil, fmt.Errorf("rebuild damaged index: %w", rerr)
		}
		res, err = execute(ctx, env, c, p, noSync)
	}
	return res, err
}

func execute(ctx context.Context, env *Env, c *Command, p Params, noSync bool) (any, error) {
	if c.Sync && !noSync {
		if err := syncFirst(ctx, env); err != nil {
			return nil, err
		}
	}
	return c.Run(ctx, env, p)
}

func syncFirst(ctx context.Context, env *Env) error {
	opts := engine.SyncOptions{}
	if env.Progress != nil {
		opts.Progress = func(p engine.SyncProgress) { env.Progress(p.Done, p.Total) }
	}
	res, err := env.Engine.Sync(ctx, opts)
	if err != nil {
		return fmt.Errorf("sync index: %w", err)
	}
	if res.Busy {
		env.notify("another recall process is updating the index; answering from the index as it is")
	}
	for _, n := range res.Notices {
		env.notify(n)
	}
	if n := res.LockNotice(); n != "" {
		env.notify(n)
	}
	if res.Skipped > 0 {
		env.notify(fmt.Sprintf("skipped %d malformed rows in the history (first: %s)", res.Skipped, first(res.Warnings)))
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
