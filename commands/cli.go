package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
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
)

// Globals are the flags every command takes.
type Globals struct {
	DB       string
	Index    string
	JSON     bool
	NoSync   bool
	LogFile  string
	Quiet    bool
	NoRedact bool
}

// ServeFunc runs a server door (recall lsp) until its client leaves.
type ServeFunc func(ctx context.Context, g Globals, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Main is the whole program: it parses args, runs one command and returns
// the exit code. Nothing below it exits the process.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, serve ServeFunc) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(args) > 0 && args[0] == "lsp" {
		// stdout is the protocol's transport: the server handles its errors.
		g, other, err := parseGlobalsOnly(args[1:])
		if err != nil {
			fmt.Fprintln(stderr, "recall lsp:", err)
			return ExitUsage
		}
		return serve(ctx, g, other, stdin, stdout, stderr)
	}
	out := &outWriter{w: stdout}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(out)
		return out.exit("help", ExitOK, stderr)
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(out, "recall", Version)
		return out.exit("version", ExitOK, stderr)
	}
	name, rest := args[0], args[1:]
	if name == "models" {
		return out.exit(name, modelsMain(ctx, rest, out, stderr), stderr)
	}
	code := runCommand(ctx, name, rest, out, stderr)
	return out.exit(name, code, stderr)
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

// runCommand runs one table command; errors writing stdout are left to Main.
func runCommand(ctx context.Context, name string, rest []string, stdout *outWriter, stderr io.Writer) int {
	c, ok := Lookup(name)
	if !ok || c.Doors&CLI == 0 {
		fmt.Fprintf(stderr, "recall: unknown command %q; run `recall help` for the list\n", name)
		return ExitUsage
	}
	p := c.NewParams()
	g, help, err := parseCLI(c, p, rest)
	if help {
		commandUsage(stdout, c)
		return ExitOK
	}
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "recall %s: %v\n", name, err)
		fmt.Fprintf(stderr, "run `recall %s --help` for usage\n", name)
		return ExitUsage
	}
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
	eng, err := engine.Open(ctx, engine.Options{DBPath: g.DB, IndexPath: g.Index, Logger: logger, NoRedact: g.NoRedact})
	if err != nil {
		fmt.Fprintf(stderr, "recall %s: %v\n", name, err)
		return ExitFailure
	}
	defer eng.Close()
	notify := func(msg string) {
		if !g.Quiet {
			fmt.Fprintln(stderr, "recall:", msg)
		}
	}
	for _, n := range eng.Notices() {
		notify(n)
	}
	env := &Env{Engine: eng, Notify: notify, Stdout: stdout}
	if !g.JSON && !g.Quiet && isTerminal(stderr) {
		env.Progress = progressBar(stderr)
		env.EmbedProgress = embedBar(stderr)
	}
	result, err := Execute(ctx, env, c, p, g.NoSync)
	if err != nil && stdout.err != nil {
		return ExitFailure // streamed output (export) failed to write: Main says so
	}
	if err != nil {
		fmt.Fprintf(stderr, "recall %s: %v\n", name, err)
		if IsParamError(err) {
			return ExitUsage
		}
		return ExitFailure
	}
	if sr, ok := result.(engine.SearchResult); ok {
		for _, n := range sr.Notices {
			notify(n)
		}
	}
	if sr, ok := result.(engine.SyncResult); ok {
		for _, n := range append(sr.Notices, sr.LockNotice()) {
			if n != "" {
				notify(n)
			}
		}
	}
	if g.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(result); err != nil && stdout.err == nil {
			fmt.Fprintf(stderr, "recall %s: encode result: %v\n", name, err)
			return ExitFailure
		}
		return ExitOK
	}
	if err := c.Print(stdout, result); err != nil && stdout.err == nil {
		fmt.Fprintf(stderr, "recall %s: print result: %v\n", name, err)
		return ExitFailure
	}
	return ExitOK
}

var globalFlags = []struct{ name, help string }{
	{"db", "OpenCode database or data dir (default: like OpenCode: OPENCODE_DB, $XDG_DATA_HOME/opencode/opencode.db)"},
	{"index", "Recall's index file (default: under $XDG_DATA_HOME/recall/index/)"},
	{"json", "print the result as one JSON object"},
	{"no-sync", "answer from the index as it is, without syncing first"},
	{"log-file", "write logs to this file"},
	{"quiet", "no notices on stderr"},
	{"no-redact", "show secrets (keys, tokens, passwords) instead of [redacted:<kind>]"},
}

// setGlobal applies a global flag; ok is false for other flags.
func setGlobal(g *Globals, name string, value func() (string, error)) (bool, error) {
	var err error
	switch name {
	case "db":
		g.DB, err = value()
	case "index":
		g.Index, err = value()
	case "log-file", "logfile":
		g.LogFile, err = value()
	case "json":
		g.JSON = true
	case "no-sync":
		g.NoSync = true
	case "quiet", "q":
		g.Quiet = true
	case "no-redact":
		g.NoRedact = true
	default:
		return false, nil
	}
	return true, err
}

// parseCLI reads global flags, the command's flags and its positional
// arguments, in any order; `--` ends the flags.
func parseCLI(c *Command, p Params, args []string) (Globals, bool, error) {
	var g Globals
	fields := fieldsOf(p)
	byFlag := map[string]field{}
	for _, f := range fields {
		if f.flag != "" {
			byFlag[f.flag] = f
		}
	}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		if name == "h" || name == "help" {
			return g, true, nil
		}
		next := func() (string, error) {
			v, err := FlagValue(args, &i, name, val, hasVal)
			if err != nil {
				return "", &ParamError{Field: name, Msg: "needs a value"}
			}
			return v, nil
		}
		if ok, err := setGlobal(&g, name, next); ok {
			if err != nil {
				return g, false, err
			}
			continue
		}
		f, ok := byFlag[name]
		if !ok {
			return g, false, &ParamError{Msg: fmt.Sprintf("unknown flag --%s", name)}
		}
		if f.kind.String() == "bool" && !hasVal {
			val, hasVal = "true", true
		}
		v, err := next()
		if err != nil {
			return g, false, err
		}
		if err := setField(p, f, v); err != nil {
			return g, false, err
		}
	}
	// Positional arguments fill arg:"1", arg:"2", then arg:"rest".
	n := 0
	for _, f := range fields {
		switch f.arg {
		case "1", "2":
			if n < len(positional) {
				if err := setField(p, f, positional[n]); err != nil {
					return g, false, err
				}
				n++
			}
		case "rest":
			if n < len(positional) {
				if err := setField(p, f, strings.Join(positional[n:], " ")); err != nil {
					return g, false, err
				}
				n = len(positional)
			}
		}
	}
	if n < len(positional) {
		return g, false, &ParamError{Msg: fmt.Sprintf("unexpected argument %q", positional[n])}
	}
	return g, false, nil
}

func parseGlobalsOnly(args []string) (Globals, []string, error) {
	var g Globals
	var rest []string
	for i := 0; i < len(args); i++ {
		name := strings.TrimLeft(args[i], "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		next := func() (string, error) { return FlagValue(args, &i, name, val, hasVal) }
		ok, err := setGlobal(&g, name, next)
		if err != nil {
			return g, nil, err
		}
		if !ok {
			rest = append(rest, args[i])
		}
	}
	return g, rest, nil
}

// FlagValue is the value of the flag at args[*i]: the part after "=" when
// there was one, else the next argument (advancing *i). Every door's flag
// parser reads values through it.
func FlagValue(args []string, i *int, name, val string, hasVal bool) (string, error) {
	if hasVal {
		return val, nil
	}
	if *i+1 >= len(args) {
		return "", fmt.Errorf("--%s needs a value", name)
	}
	*i++
	return args[*i], nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "recall %s: search and read your past OpenCode sessions\n\nusage: recall COMMAND [flags] [args]\n\ncommands:\n", Version)
	for _, c := range All() {
		if c.Doors&CLI != 0 {
			fmt.Fprintf(w, "  %-9s %s\n", c.Name, c.Summary)
		}
	}
	fmt.Fprintf(w, "  %-9s %s\n  %-9s %s\n", "models", "list, pull or import the local embedding model", "lsp", "serve the engine over the Language Server Protocol on stdio")
	fmt.Fprintln(w, "\nglobal flags:")
	for _, f := range globalFlags {
		fmt.Fprintf(w, "  --%-9s %s\n", f.name, f.help)
	}
	fmt.Fprintln(w, "\nrun `recall COMMAND --help` for a command's flags")
}

func commandUsage(w io.Writer, c *Command) {
	p := c.NewParams()
	var args []string
	for _, f := range fieldsOf(p) {
		switch f.arg {
		case "1", "2":
			args = append(args, strings.ToUpper(f.json))
		case "rest":
			args = append(args, "["+strings.ToUpper(f.json)+"...]")
		}
	}
	fmt.Fprintf(w, "usage: recall %s [flags] %s\n\n%s\n\nflags:\n", c.Name, strings.Join(args, " "), c.Summary)
	for _, f := range fieldsOf(p) {
		if f.flag != "" {
			fmt.Fprintf(w, "  --%-16s %s\n", f.flag, f.help)
		}
		if f.arg != "" {
			fmt.Fprintf(w, "  %-18s %s\n", strings.ToUpper(f.json), f.help)
		}
	}
	fmt.Fprintln(w, "\nglobal flags: --db PATH --index PATH --json --no-sync --no-redact --log-file PATH --quiet")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws sync progress on a terminal.
func progressBar(w io.Writer) func(done, total int) {
	return func(done, total int) {
		if total < 20 {
			return
		}
		const width = 30
		filled := width * done / total
		fmt.Fprintf(w, "\rindexing [%s%s] %d/%d sessions", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
		if done == total {
			fmt.Fprint(w, "\r\033[K")
		}
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
