package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// HelpParams are the params of `help`.
type HelpParams struct {
	Command string `json:"command,omitempty" arg:"rest" meta:"COMMAND" help:"the command to explain (none: list them all)"`
}

// Validate checks that the command exists.
func (p *HelpParams) Validate() error {
	if p.Command == "" {
		return nil
	}
	if _, ok := groups[p.Command]; ok {
		return nil
	}
	if e, ok := Lookup(p.Command); ok && e.Spec().Doors&CLI != 0 {
		return nil
	}
	return &ParamError{Msg: fmt.Sprintf("unknown command %q; run `recall help` for the list", p.Command)}
}

// Help is `help [COMMAND]`: the same text as `recall COMMAND --help`.
var Help = Register(&Command[HelpParams, string]{
	Name: "help", Summary: "list the commands, or explain one (the same as recall COMMAND --help)",
	Doors: CLI, NoEngine: true,
	Run: func(_ context.Context, _ *Env, p *HelpParams) (string, error) {
		var b bytes.Buffer
		switch e, ok := Lookup(p.Command); {
		case p.Command == "":
			usage(&b)
		case ok:
			commandUsage(&b, e)
		default:
			groupUsage(&b, p.Command)
		}
		return b.String(), nil
	},
	Print: func(w io.Writer, text string) error {
		_, err := io.WriteString(w, text)
		return err
	},
})

// VersionParams: version takes none.
type VersionParams struct{}

// Validate checks nothing.
func (*VersionParams) Validate() error { return nil }

// VersionResult is what `version --json` prints.
type VersionResult struct {
	Version string `json:"version"`
}

// VersionCommand is `version` (and `--version`).
var VersionCommand = Register(&Command[VersionParams, VersionResult]{
	Name: "version", Summary: "print the version",
	Doors: CLI, NoEngine: true,
	Run: func(context.Context, *Env, *VersionParams) (VersionResult, error) {
		return VersionResult{Version: Version}, nil
	},
	Print: func(w io.Writer, r VersionResult) error {
		_, err := fmt.Fprintln(w, "recall", r.Version)
		return err
	},
})

// cliNames lists every CLI command as typed, groups as their first word
// once ("models"), sorted.
func cliNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range All() {
		spec := e.Spec()
		if spec.Doors&CLI == 0 {
			continue
		}
		name, _, _ := strings.Cut(spec.Name, " ")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}
