package commands

import (
	"fmt"
	"io"
	"reflect"
	"strings"
)

// flagTarget is one struct the command line fills: the command's params,
// then the globals.
type flagTarget struct {
	fields []Field
	v      reflect.Value // the struct (addressable)
}

func targetOf(p any) flagTarget {
	v := reflect.ValueOf(p).Elem()
	return flagTarget{fields: fields(v.Type()), v: v}
}

// lookupFlag finds the field a flag names (long, short or alias), in
// target order.
func lookupFlag(targets []flagTarget, name string) (Field, reflect.Value, bool) {
	for _, t := range targets {
		for _, f := range t.fields {
			if f.Flag == "" {
				continue
			}
			if name == f.Flag || (f.Short != "" && name == f.Short) || (f.Alias != "" && name == f.Alias) {
				return f, t.v, true
			}
		}
	}
	return Field{}, reflect.Value{}, false
}

// parseFlags is the one command-line parser: every command, the globals,
// models and lsp read their flags through it. Flags and positional
// arguments come in any order; `--` ends the flags; `--name=value` and
// `--name value` both work, a bool flag takes no value (or `=false`). A
// flag may be spelt with one dash or two. Positional arguments fill the
// first target's arg:"1", arg:"2", then arg:"rest". Environment variables
// (env tags) are read first, so a flag overrides them. help reports -h or
// --help (nothing else is checked then).
func parseFlags(args []string, getenv func(string) string, targets ...flagTarget) (help bool, err error) {
	for _, t := range targets {
		for _, f := range t.fields {
			if f.Env == "" || getenv == nil {
				continue
			}
			if val := getenv(f.Env); val != "" {
				if err := f.setEnv(t.v, val); err != nil {
					return false, err
				}
			}
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
		dashes := "-"
		if strings.HasPrefix(a, "--") {
			dashes = "--"
		}
		name, val, hasVal := strings.Cut(a[len(dashes):], "=")
		if name == "h" || name == "help" {
			return true, nil
		}
		f, v, ok := lookupFlag(targets, name)
		if !ok {
			return false, &ParamError{Msg: "unknown flag " + dashes + name}
		}
		if f.Type.Kind() == reflect.Bool && !hasVal {
			val, hasVal = "true", true
		}
		if !hasVal {
			if i+1 >= len(args) {
				return false, &ParamError{Msg: fmt.Sprintf("%s needs a value (%s %s)", dashes+name, dashes+name, f.placeholder())}
			}
			i++
			val = args[i]
		}
		if err := f.set(v, val); err != nil {
			return false, err
		}
	}
	if len(targets) == 0 {
		if len(positional) > 0 {
			return false, &ParamError{Msg: fmt.Sprintf("unexpected argument %q", positional[0])}
		}
		return false, nil
	}
	t := targets[0]
	n := 0
	for _, f := range t.fields {
		switch f.Arg {
		case "1", "2":
			if n < len(positional) {
				if err := f.set(t.v, positional[n]); err != nil {
					return false, err
				}
				n++
			}
		case "rest":
			if n < len(positional) {
				rest := positional[n:]
				if f.Type.Kind() == reflect.Slice {
					for _, r := range rest {
						f.set(t.v, r)
					}
				} else if err := f.set(t.v, strings.Join(rest, " ")); err != nil {
					return false, err
				}
				n = len(positional)
			}
		}
	}
	if n < len(positional) {
		return false, &ParamError{Msg: fmt.Sprintf("unexpected argument %q", positional[n])}
	}
	return false, nil
}

// ParseFlags parses a command line into params p by its tags (with the
// environment from getenv) and validates it: what the CLI does before it
// runs a command, for tests of a command's flags.
func ParseFlags(p Params, args []string, getenv func(string) string) error {
	help, err := parseFlags(args, getenv, targetOf(p))
	if help {
		return &ParamError{Msg: "help was asked for"}
	}
	if err != nil {
		return err
	}
	if err := checkEnums(reflect.ValueOf(p).Elem()); err != nil {
		return err
	}
	return p.Validate()
}

// Help.

// helpRow is one line of a flags table: the flag with its placeholder,
// and its help (with the enum's values).
type helpRow struct{ left, right string }

func flagRows(fs []Field, positional bool) []helpRow {
	var rows []helpRow
	for _, f := range fs {
		help := f.Help
		ph := f.placeholder()
		switch {
		case f.Enum != nil && f.List:
			help += ": " + strings.Join(f.Enum.Values, ", ")
		case f.Enum != nil:
			ph = strings.Join(f.Enum.Values, "|")
		}
		if f.Env != "" {
			help += " (env " + f.Env + ")"
		}
		switch {
		case f.Flag != "" && !positional:
			left := f.FlagName()
			if f.Short != "" {
				left = "-" + f.Short + ", " + left
			}
			if ph != "" {
				left += " " + ph
			}
			rows = append(rows, helpRow{left, help})
		case f.Arg != "" && positional:
			if f.Enum != nil {
				help += " (" + ph + ")"
			}
			rows = append(rows, helpRow{argName(f), help})
		}
	}
	return rows
}

// maxHelpColumn: a flag column wider than this wraps its help onto the
// next line (an 80-column terminal keeps about 45 columns for the text).
const maxHelpColumn = 32

func writeRows(w io.Writer, rows []helpRow) {
	width := 0
	for _, r := range rows {
		if len(r.left) <= maxHelpColumn {
			width = max(width, len(r.left))
		}
	}
	for _, r := range rows {
		if len(r.left) > maxHelpColumn {
			fmt.Fprintf(w, "  %s\n  %-*s  %s\n", r.left, width, "", r.right)
			continue
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.left, r.right)
	}
}

func argName(f Field) string {
	name := f.Meta
	if name == "" {
		name = strings.ToUpper(f.JSON)
	}
	if f.Arg == "rest" {
		return "[" + name + "...]"
	}
	return name
}

// commandUsage is `recall CMD --help`.
func commandUsage(w io.Writer, e Entry) {
	spec := e.Spec()
	var args []string
	for _, f := range e.Fields() {
		if f.Arg != "" {
			args = append(args, argName(f))
		}
	}
	flags := flagRows(e.Fields(), false)
	line := "recall " + spec.Name
	if len(flags) > 0 {
		line += " [flags]"
	}
	if len(args) > 0 {
		line += " " + strings.Join(args, " ")
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", line, spec.Summary)
	if rows := flagRows(e.Fields(), true); len(rows) > 0 {
		fmt.Fprintln(w, "\narguments:")
		writeRows(w, rows)
	}
	if len(flags) > 0 {
		fmt.Fprintln(w, "\nflags:")
		writeRows(w, flags)
	}
	fmt.Fprintln(w, "\nglobal flags (before or after the command):")
	writeRows(w, flagRows(fields(reflect.TypeFor[Globals]()), false))
}

// usage is `recall help`.
func usage(w io.Writer) {
	fmt.Fprintf(w, "recall %s: search and read your past OpenCode sessions\n\nusage: recall [global flags] COMMAND [flags] [args]\n\ncommands:\n", Version)
	var rows []helpRow
	seen := map[string]bool{}
	for _, e := range All() {
		spec := e.Spec()
		if spec.Doors&CLI == 0 {
			continue
		}
		if g, _, ok := strings.Cut(spec.Name, " "); ok {
			if !seen[g] {
				seen[g] = true
				rows = append(rows, helpRow{g, groups[g]})
			}
			continue
		}
		rows = append(rows, helpRow{spec.Name, spec.Summary})
	}
	writeRows(w, rows)
	fmt.Fprintln(w, "\nglobal flags (before or after the command):")
	writeRows(w, flagRows(fields(reflect.TypeFor[Globals]()), false))
	fmt.Fprintln(w, "\nrun `recall help COMMAND` (or `recall COMMAND --help`) for a command's flags")
}

// groupUsage is `recall models --help`.
func groupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: recall %s COMMAND [flags]\n\n%s\n\ncommands:\n", group, groups[group])
	var rows []helpRow
	for _, e := range groupEntries(group) {
		spec := e.Spec()
		left := strings.TrimPrefix(spec.Name, group+" ")
		for _, f := range e.Fields() {
			if f.Arg != "" {
				left += " " + argName(f)
			}
		}
		rows = append(rows, helpRow{left, spec.Summary})
	}
	writeRows(w, rows)
	if d := groupDetails[group]; d != "" {
		fmt.Fprintf(w, "\n%s\n", d)
	}
	fmt.Fprintf(w, "\nrun `recall %s COMMAND --help` for a command's flags\n", group)
}

// groupDetails is a paragraph of a group's help after its commands.
var groupDetails = map[string]string{}

func groupEntries(group string) []Entry {
	var out []Entry
	for _, e := range All() {
		if strings.HasPrefix(e.Spec().Name, group+" ") && e.Spec().Doors&CLI != 0 {
			out = append(out, e)
		}
	}
	return out
}
