// Package commands defines each Recall command once: its name, typed
// params and result, validation, docs and text output. The CLI, the LSP
// server (executeCommand, custom requests and its own features) and the
// OpenCode plugin all dispatch through this table, so a command behaves
// the same from every door.
//
// A command is a Command[P, R]: the LSP's features call it typed
// (commands.Search.Call(ctx, env, &SearchParams{…}) returns an
// engine.SearchResult); wire doors go through the erased Entry (decode
// JSON, call, encode); the CLI through Main. No door type-asserts.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// Params is what every params type P implements on its pointer (*P):
// Validate checks and normalises the params; it returns a *ParamError.
// Enum fields (an `enum` tag) are checked before it, from the one list of
// their values.
type Params interface {
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

// Spec is what doors need to know about a command besides its types.
type Spec struct {
	// Name is the command's name: "search", or "models pull" for a
	// subcommand of a group.
	Name    string
	Summary string
	Doors   Door
	// Sync: bring the index up to date first (unless Env.NoSync).
	Sync bool
	// Syncs: the command is itself a sync (sync, reindex). Doors run it in
	// turn with their other syncs and report its progress.
	Syncs bool
	// NoEngine: the command runs without a history or an index (models,
	// lsp, help): the CLI opens none for it.
	NoEngine bool
	// Serves: the command speaks a protocol on stdin/stdout until its
	// client leaves (lsp); the CLI never prints to its stdout.
	Serves bool
	// AliasOf names the command an alias entry runs with fixed params.
	AliasOf string
	// Warm: the CLI runs it in a running daemon of its history when one
	// answers (warm.go). Only a read of the index whose params carry
	// nothing of the CLI's process (paths are absolute by Validate) is.
	Warm bool
}

// Command is one command with typed params P and result R.
type Command[P any, R any] struct {
	Name    string
	Summary string
	Doors   Door
	// Sync, Syncs, NoEngine, Serves, Warm: see Spec.
	Sync, Syncs, NoEngine, Serves, Warm bool
	// Run executes validated params.
	Run func(ctx context.Context, env *Env, p *P) (R, error)
	// Print writes the result for people (the CLI without --json); nil for
	// a command whose result is an Exit.
	Print func(w io.Writer, r R) error
	// PrintFor, when set, prints instead of Print and sees the params: an
	// empty page names the filters that emptied it.
	PrintFor func(w io.Writer, p *P, r R) error

	// fixed, for an alias entry (see Alias), are the params it always runs
	// with; it refuses any others.
	fixed   *P
	aliasOf string
}

// Alias is an entry named name that runs c with the params fixed and
// refuses any others: reindex is sync with {force: true}.
func Alias[P, R any](c *Command[P, R], name, summary string, doors Door, fixed P) *Command[P, R] {
	a := *c
	a.Name, a.Summary, a.Doors, a.fixed, a.aliasOf = name, summary, doors, &fixed, c.Name
	return &a
}

// Exit is the result of a command that prints nothing and only has an exit
// code (lsp: stdout is its transport).
type Exit int

// ParamError is invalid input: the field and how to fix it. Doors map it to
// exit code 2 or JSON-RPC -32602.
type ParamError struct {
	Field string
	Msg   string
	// Whole: Msg is the whole message and names the field itself (a
	// missing required param: "read needs a cursor or a session id: …").
	Whole bool
}

// missing is the error for a required param left out: what the command
// needs, an example, and where to find a value.
func missing(field, msg string) *ParamError { return &ParamError{Field: field, Msg: msg, Whole: true} }

func (e *ParamError) Error() string {
	if e.Field == "" || e.Whole {
		return e.Msg
	}
	return fmt.Sprintf("invalid %s: %s", e.Field, e.Msg)
}

// IsParamError reports whether err is invalid input: a ParamError, or
// input the engine refused itself (its guard behind validation).
func IsParamError(err error) bool {
	var pe *ParamError
	return errors.As(err, &pe) || errors.Is(err, engine.ErrQueryTooLong) || errors.Is(err, engine.ErrUnknownSource) ||
		errors.Is(err, engine.ErrOptions) || errors.Is(err, engine.ErrAmbiguousID) || errors.Is(err, engine.ErrBadPattern)
}

// Env is what a command runs against. Doors fill in what they have.
type Env struct {
	// Engine is the open engine (nil for a NoEngine command).
	Engine *engine.Engine
	// Globals are the CLI's global flags (lsp reads its history and log
	// file from them).
	Globals Globals
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// Stdin, Stdout and Stderr are the CLI's streams: export without -o
	// streams to Stdout; lsp serves on Stdin and Stdout.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// NoSync: answer from the index as it is (--no-sync; the LSP's watcher
	// keeps the index fresh instead).
	NoSync bool
	// ExcludeSession is left out of every search that names no
	// excludeSession and no session itself (the LSP's
	// initializationOptions.excludeSession: the OpenCode plugin's own
	// session, which a search naming it still searches).
	ExcludeSession string
	// Notify receives one-line notices for people (stderr, logMessage).
	Notify func(string)
	// EveryNotice: notices the engine says once come every time, as from
	// an engine of the command's own (the CLI's commands run in a daemon).
	EveryNotice bool
	// OnSync receives the result of each sync the command runs itself
	// (sync, reindex), for a door that tells every client of the engine;
	// nil: its notices go to Notify.
	OnSync func(engine.SyncResult)
	// Progress receives sync progress (done, total) when set.
	Progress func(done, total int)
	// EmbedProgress receives embedding progress (documents done, total).
	EmbedProgress func(done, total int)
	// DownloadProgress receives a model download's progress (models pull).
	DownloadProgress func(done, total int64, file string)
}

func (env *Env) notify(msg string) {
	if env.Notify != nil && msg != "" {
		env.Notify(msg)
	}
}

// Entry is the type-erased view of a command, for the doors that speak
// JSON (and for help, completion and docs).
type Entry interface {
	Spec() Spec
	// Fields describes the params (json names, flags, help, enums).
	Fields() []Field
	// Types are the params and result types (docs, TypeScript generation).
	Types() (params, result reflect.Type)
	// Decode reads JSON params strictly (an unknown field or a wrong type
	// is a ParamError naming the field; empty input means defaults) and
	// validates them, returning the call ready to run.
	Decode(raw json.RawMessage) (Call, error)

	// runCLI is the command from the command line (see Main).
	runCLI(ctx context.Context, inv *invocation) int
}

// Call is a decoded, validated command call.
type Call struct {
	run func(ctx context.Context, env *Env) (any, error)
}

// Run executes the call (see Command.Call); the result is the command's
// R, ready to encode.
func (c Call) Run(ctx context.Context, env *Env) (any, error) { return c.run(ctx, env) }

var (
	table  = map[string]Entry{}
	groups = map[string]string{} // group name -> summary
)

// Register adds a command to the table (at init; a duplicate name
// panics). Packages above commands register their own (lsp registers
// `lsp`).
func Register[P, R any](c *Command[P, R]) *Command[P, R] {
	if _, dup := table[c.Name]; dup {
		panic("duplicate command " + c.Name)
	}
	if _, ok := any(new(P)).(Params); !ok {
		panic(fmt.Sprintf("command %s: *%T has no Validate method", c.Name, *new(P)))
	}
	if c.Run == nil || (c.Print == nil && c.PrintFor == nil && reflect.TypeFor[R]() != reflect.TypeFor[Exit]()) {
		panic("command " + c.Name + " lacks Run or Print")
	}
	// A bad tag panics in fields, at a command's first use: not here, at
	// every CLI start (every command's fields cost 0.4 ms of each process's
	// start), but in TestEveryCommandsFields, which reads them all.
	table[c.Name] = c
	return c
}

// registerGroup names a group of subcommands ("models") for help.
func registerGroup(name, summary string) { groups[name] = summary }

// Lookup finds a command by name ("models pull" for a subcommand).
func Lookup(name string) (Entry, bool) {
	e, ok := table[name]
	return e, ok
}

// All lists the commands sorted by name.
func All() []Entry {
	out := make([]Entry, 0, len(table))
	for _, e := range table {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	return out
}

// ServerCommands lists the commands reachable over JSON-RPC, aliases
// included.
func ServerCommands() []Entry {
	var out []Entry
	for _, e := range All() {
		if e.Spec().Doors&Server != 0 {
			out = append(out, e)
		}
	}
	return out
}

// FieldNames lists the JSON names of an entry's params, sorted.
func FieldNames(e Entry) []string {
	var out []string
	for _, f := range e.Fields() {
		if f.JSON != "" {
			out = append(out, f.JSON)
		}
	}
	sort.Strings(out)
	return out
}

// Spec implements Entry.
func (c *Command[P, R]) Spec() Spec {
	return Spec{Name: c.Name, Summary: c.Summary, Doors: c.Doors, Sync: c.Sync, Syncs: c.Syncs,
		NoEngine: c.NoEngine, Serves: c.Serves, AliasOf: c.aliasOf, Warm: c.Warm}
}

// Fields implements Entry.
func (c *Command[P, R]) Fields() []Field { return fields(reflect.TypeFor[P]()) }

// Types implements Entry.
func (c *Command[P, R]) Types() (reflect.Type, reflect.Type) {
	return reflect.TypeFor[P](), reflect.TypeFor[R]()
}

// Decode implements Entry.
func (c *Command[P, R]) Decode(raw json.RawMessage) (Call, error) {
	p, err := c.decode(raw)
	if err != nil {
		return Call{}, err
	}
	return Call{run: func(ctx context.Context, env *Env) (any, error) { return c.execute(ctx, env, p) }}, nil
}

func (c *Command[P, R]) decode(raw json.RawMessage) (*P, error) {
	trimmed := strings.TrimSpace(string(raw))
	if c.fixed != nil {
		if trimmed != "" && trimmed != "null" && trimmed != "{}" {
			return nil, &ParamError{Msg: c.Name + " takes no params"}
		}
		p := *c.fixed
		return &p, nil
	}
	p := new(P)
	// Clients that encode "no params" as an empty list or object get the
	// defaults too (Lua sends {} as []).
	if trimmed != "" && trimmed != "null" && trimmed != "[]" {
		dec := json.NewDecoder(strings.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(p); err != nil {
			return nil, jsonParamError(c, err)
		}
	}
	if err := validate(p); err != nil {
		return nil, err
	}
	return p, nil
}

func jsonParamError(e Entry, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &ParamError{Field: te.Field, Msg: fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)}
	}
	name := e.Spec().Name
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &ParamError{Field: strings.Trim(f, `"`), Msg: fmt.Sprintf("%s takes no such field; valid fields: %s", name, strings.Join(FieldNames(e), ", "))}
	}
	return &ParamError{Msg: fmt.Sprintf("params of %s must be one JSON object: %v", name, err)}
}

// validate checks p's enum fields against their lists, then p.Validate.
func validate[P any](p *P) error {
	if err := checkEnums(reflect.ValueOf(p).Elem()); err != nil {
		return err
	}
	return any(p).(Params).Validate()
}

// Call validates p and runs the command: a sync first when the command
// wants one (unless env.NoSync), and once more after a rebuild when the
// index turns out damaged.
func (c *Command[P, R]) Call(ctx context.Context, env *Env, p *P) (R, error) {
	if c.fixed != nil {
		fixed := *c.fixed
		p = &fixed
	}
	if err := validate(p); err != nil {
		var zero R
		return zero, err
	}
	return c.execute(ctx, env, p)
}

// execute runs validated params. A damaged index is rebuilt from the
// history and the command run once more: the index is a cache, and the
// user should get an answer, not a repair job.
func (c *Command[P, R]) execute(ctx context.Context, env *Env, p *P) (R, error) {
	res, err := c.executeOnce(ctx, env, p)
	if engine.IsIndexDamaged(err) && env.Engine != nil {
		env.notify(fmt.Sprintf("the index was damaged (%v); rebuilding it from the history", err))
		if _, rerr := env.Engine.RebuildIndex(ctx, engine.DamagedSources(err)...); rerr != nil {
			var zero R
			return zero, fmt.Errorf("rebuild damaged index: %w", rerr)
		}
		res, err = c.executeOnce(ctx, env, p)
	}
	return res, err
}

func (c *Command[P, R]) executeOnce(ctx context.Context, env *Env, p *P) (R, error) {
	if c.Sync && !env.NoSync && env.Engine != nil {
		if err := syncFirst(ctx, env); err != nil {
			var zero R
			return zero, err
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
		env.notify(fmt.Sprintf("skipped %s in the history (first: %s)", render.Count(res.Skipped, "malformed row"), first(res.Warnings)))
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
