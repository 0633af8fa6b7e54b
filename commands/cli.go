package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"strings"

	"github.com/recallhq/recall/engine"
)

// Version is the program version, set at build time with
// -ldflags "-X github.com/recallhq/recall/commands.Version=…".
var Version = "0.1.0-dev"

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitInterrupted is a command stopped by Ctrl-C (SIGINT): 128 + 2,
	// as shells report a process killed by that signal.
	ExitInterrupted = 130
)

// Globals are the flags every command takes, before or after its name.
type Globals struct {
	DB       []string `flag:"db" meta:"PATH" help:"OpenCode database or data dir; NAME=PATH names it; repeat for several (default: the config's [[source]] list, else like OpenCode: OPENCODE_DB, $XDG_DATA_HOME/opencode/opencode.db)"`
	Index    string   `flag:"index" meta:"PATH" help:"Recall's index file (default: under $XDG_DATA_HOME/recall/index/)"`
	JSON     bool     `flag:"json" help:"print the result as one JSON object"`
	NoSync   bool     `flag:"no-sync" help:"answer from the index as it is, without syncing first"`
	LogFile  string   `flag:"log-file" alias:"logfile" meta:"PATH" help:"write logs to this file"`
	Quiet    bool     `flag:"quiet" short:"q" help:"no notices on stderr"`
	Verbose  bool     `flag:"verbose" help:"every notice every time (the demo history and no-model notices are otherwise said once a day)"`
	NoRedact bool     `flag:"no-redact" help:"show secrets (keys, tokens, passwords) instead of [redacted:<kind>]"`
}

// invocation is one command line on its way to a command.
type invocation struct {
	name    string   // the command as typed ("models pull")
	args    []string // after the command's name, globals included
	globals Globals  // the globals before the command's name
	stdin   io.Reader
	stdout  *outWriter
	raw     io.Writer // stdout itself, for a command that serves on it
	stderr  io.Writer
	getenv  func(string) string
}

// Main is the whole program: it parses args, runs one command and returns
// the exit code. Nothing below it exits the process.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	inv := &invocation{stdin: stdin, stdout: &outWriter{w: stdout}, raw: stdout, stderr: stderr, getenv: os.Getenv}
	// Globals may come before the command's name: read them up to it.
	rest, help, code := inv.leadingGlobals(args)
	if code >= 0 {
		return code
	}
	switch {
	case help:
		rest = append([]string{"help"}, rest...) // recall --help [COMMAND]
	case len(rest) == 0:
		rest = []string{"help"}
	}
	inv.name, inv.args = rest[0], rest[1:]
	if _, ok := groups[inv.name]; ok {
		return inv.stdout.exit(inv.name, runGroup(ctx, inv), stderr)
	}
	e, ok := Lookup(inv.name)
	if !ok || e.Spec().Doors&CLI == 0 {
		fmt.Fprintf(stderr, "recall: unknown command %q; run `recall help` for the list\n", inv.name)
		return ExitUsage
	}
	if e.Spec().Serves {
		return e.runCLI(ctx, inv) // stdout is its transport: it handles its own errors
	}
	return inv.stdout.exit(inv.name, e.runCLI(ctx, inv), stderr)
}

// leadingGlobals reads the global flags before the command's name and
// returns the rest. code is an exit code when the flags were bad (-1:
// none).
func (inv *invocation) leadingGlobals(args []string) (rest []string, help bool, code int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:], help, -1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return args[i:], help, -1
		}
		dashed, val, hasVal := strings.Cut(a, "=")
		name := strings.TrimLeft(dashed, "-")
		switch name {
		case "h", "help":
			help = true
			continue
		case "version":
			return append([]string{"version"}, args[i+1:]...), help, -1
		}
		f, v, ok := lookupFlag([]flagTarget{targetOf(&inv.globals)}, name)
		if !ok {
			fmt.Fprintf(inv.stderr, "recall: unknown flag %s before the command; command flags go after its name (run `recall help`)\n", dashed)
			return nil, false, ExitUsage
		}
		if f.Type.Kind() == reflect.Bool && !hasVal {
			val, hasVal = "true", true
		}
		if !hasVal {
			if i+1 >= len(args) {
				fmt.Fprintf(inv.stderr, "recall: %s needs a value (%s %s)\n", dashed, dashed, f.placeholder())
				return nil, false, ExitUsage
			}
			i++
			val = args[i]
		}
		if err := f.set(v, val); err != nil {
			fmt.Fprintf(inv.stderr, "recall: %v\n", err)
			return nil, false, ExitUsage
		}
	}
	return nil, help, -1
}

// runGroup runs `recall models …`: a subcommand, or the group's help.
func runGroup(ctx context.Context, inv *invocation) int {
	group := inv.name
	sub := ""
	for j, a := range inv.args {
		if !strings.HasPrefix(a, "-") {
			sub = a
			inv.args = append(inv.args[:j:j], inv.args[j+1:]...)
			break
		}
		if a == "-h" || a == "--help" {
			break
		}
	}
	if sub == "" || sub == "help" {
		groupUsage(inv.stdout, group)
		return ExitOK
	}
	e, ok := Lookup(group + " " + sub)
	if !ok || e.Spec().Doors&CLI == 0 {
		var names []string
		for _, e := range groupEntries(group) {
			names = append(names, strings.TrimPrefix(e.Spec().Name, group+" "))
		}
		fmt.Fprintf(inv.stderr, "recall %s %s: unknown command %q; use %s\nrun `recall %s --help` for usage\n", group, sub, sub, strings.Join(names, ", "), group)
		return ExitUsage
	}
	inv.name = group + " " + sub
	return e.runCLI(ctx, inv)
}

// usageHint is the line after a usage error: where the help is.
func (inv *invocation) usageHint() string {
	name := inv.name
	if g, _, ok := strings.Cut(name, " "); ok {
		name = g // a group's help lists its commands and their flags
	}
	return fmt.Sprintf("run `recall %s --help` for usage", name)
}

// runCLI implements Entry: parse the command line into P and the
// globals, open the engine (unless the command needs none), run, print.
func (c *Command[P, R]) runCLI(ctx context.Context, inv *invocation) int {
	stderr := inv.stderr
	p := new(P)
	g := inv.globals
	help, err := parseFlags(inv.args, inv.getenv, targetOf(p), targetOf(&g))
	if help {
		commandUsage(inv.stdout, c)
		return ExitOK
	}
	if err == nil && c.fixed != nil {
		if reflect.DeepEqual(*p, *new(P)) {
			*p = *c.fixed
		} else {
			err = &ParamError{Msg: c.Name + " takes no params"}
		}
	}
	if err == nil {
		err = validate(p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "recall %s: %v\n%s\n", inv.name, err, inv.usageHint())
		return ExitUsage
	}
	var stamps *noticeStamps
	notify := func(msg string) {
		if g.Quiet {
			return
		}
		if !g.Verbose && onceADay(msg) {
			if stamps == nil {
				stamps = loadNoticeStamps(inv.getenv)
			}
			if !stamps.sayNow(msg) {
				return
			}
		}
		fmt.Fprintln(stderr, "recall:", msg)
	}
	env := &Env{Globals: g, Getenv: inv.getenv, Stdin: inv.stdin, Stdout: inv.stdout, Stderr: stderr,
		NoSync: g.NoSync, Notify: notify}
	if c.Serves {
		env.Stdout = inv.raw
	}
	res, ok, start := c.runWarm(ctx, inv, g, p, notify)
	if ok {
		return c.output(inv, g, p, res)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "recall %s: interrupted\n", inv.name)
		return ExitInterrupted
	}
	if !c.NoEngine {
		logger := slog.New(slog.DiscardHandler)
		if g.LogFile != "" {
			f, err := os.OpenFile(g.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				fmt.Fprintf(stderr, "recall: open log file: %v\n", err)
				return ExitUsage
			}
			defer f.Close()
			logger = slog.New(slog.NewTextHandler(f, nil))
		}
		specs, err := SourceSpecs(g.DB)
		var eng *engine.Engine
		if err == nil {
			// One command, then the process ends: it keeps no pages for a
			// later one (engine.Options.OneCommand). A sync (`sync`,
			// `reindex`) reads its pages again between its commits, and
			// the server for as long as it runs.
			eng, err = engine.Open(ctx, engine.Options{Sources: specs, IndexPath: g.Index, Logger: logger, NoRedact: g.NoRedact,
				OneCommand: !c.Syncs && !c.Serves})
		}
		if errors.Is(err, engine.ErrOptions) {
			fmt.Fprintf(stderr, "recall %s: %v\n%s\n", inv.name, err, inv.usageHint())
			return ExitUsage
		}
		if err != nil {
			fmt.Fprintf(stderr, "recall %s: %v\n", inv.name, err)
			return ExitFailure
		}
		defer eng.Close()
		for _, n := range eng.Notices() {
			notify(n)
		}
		env.Engine = eng
	}
	var bar *syncBar
	if !g.JSON && !g.Quiet && isTerminal(stderr) {
		bar = progressBar(stderr)
		env.Progress = bar.update
		env.EmbedProgress = embedBar(stderr)
	}
	if !g.JSON && isTerminal(stderr) {
		env.DownloadProgress = downloadBar(stderr)
	}
	result, err := c.execute(ctx, env, p)
	if bar != nil {
		bar.clear()
	}
	if err != nil && inv.stdout.err != nil {
		return ExitFailure // streamed output (export) failed to write: Main says so
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		// Ctrl-C: what was committed stays (each sync commits as it goes,
		// and the next picks up from its watermarks), so say how to go on
		// rather than "context canceled". Any error after the cancel is
		// its consequence: database/sql closes a cancelled transaction's
		// statements, so a write in flight fails with "sql: statement is
		// closed", not context.Canceled (TestCtrlCDuringSync caught it).
		msg := "interrupted"
		if c.Sync || c.Syncs {
			msg += "; run again to resume"
		}
		fmt.Fprintf(stderr, "recall %s: %s\n", inv.name, msg)
		return ExitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "recall %s: %v\n", inv.name, err)
		if IsParamError(err) {
			return ExitUsage
		}
		return ExitFailure
	}
	code := c.output(inv, g, p, result)
	startDaemon(start, notify)
	return code
}

// output prints a command's result: its exit code, --json, or its text.
func (c *Command[P, R]) output(inv *invocation, g Globals, p *P, result R) int {
	stderr := inv.stderr
	if code, ok := any(result).(Exit); ok {
		return int(code)
	}
	if g.JSON {
		enc := json.NewEncoder(inv.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(result); err != nil && inv.stdout.err == nil {
			fmt.Fprintf(stderr, "recall %s: encode result: %v\n", inv.name, err)
			return ExitFailure
		}
		return ExitOK
	}
	print := c.Print
	if c.PrintFor != nil {
		print = func(w io.Writer, r R) error { return c.PrintFor(w, p, r) }
	}
	if err := print(inv.stdout, result); err != nil && inv.stdout.err == nil {
		fmt.Fprintf(stderr, "recall %s: print result: %v\n", inv.name, err)
		return ExitFailure
	}
	return ExitOK
}

// outWriter is stdout with its first write error kept: a command whose
// output could not be written (a full disk, a closed pipe) fails, whatever
// its printer did with the error.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	o.err = err
	return n, err
}

// exit is the exit code once output is written: a write error makes it a
// failure, reported once.
func (o *outWriter) exit(name string, code int, stderr io.Writer) int {
	if o.err == nil {
		return code
	}
	fmt.Fprintf(stderr, "recall %s: write output: %v\n", name, o.err)
	return ExitFailure
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// syncBar draws sync progress on a terminal.
type syncBar struct {
	w     io.Writer
	drawn bool // a line of the bar is on the terminal
}

func progressBar(w io.Writer) *syncBar { return &syncBar{w: w} }

// update draws done of total sessions.
func (b *syncBar) update(done, total int) {
	if total < 20 {
		return
	}
	const width = 30
	filled := width * done / total
	fmt.Fprintf(b.w, "\rindexing [%s%s] %d/%d sessions", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
	if done == total {
		// What follows the last session (recording the sync, and after a
		// bulk load merging the full-text index: 30 s on a 4M-part
		// history) shows as such until the command ends (clear).
		fmt.Fprint(b.w, "\r\033[Kindexing: finishing")
	}
	b.drawn = true
}

// clear removes the bar's line, if it drew one.
func (b *syncBar) clear() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
}

// embedBar draws embedding progress (`recall sync --embed`) on a terminal.
func embedBar(w io.Writer) func(done, total int) {
	return func(done, total int) {
		if total == 0 {
			return
		}
		const width = 30
		filled := width * done / total
		fmt.Fprintf(w, "\rembedding [%s%s] %d/%d documents", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
		if done == total {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
