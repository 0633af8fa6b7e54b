package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/embed"
)

// `recall models` manages the local embedding models (engine/embed's
// Store). It needs no history or index, so it lives beside the command
// table rather than in it, and no server door reaches it: pulls write
// hundreds of megabytes and belong to the user's terminal.

// ModelInfo is one installed model as `models list --json` prints it.
type ModelInfo struct {
	Name      string    `json:"name"`
	Revision  string    `json:"revision"`
	Dims      int       `json:"dims"`
	Pooling   string    `json:"pooling"`
	MaxTokens int       `json:"maxTokens"`
	Installed time.Time `json:"installed"`
	Source    string    `json:"source"`
	Dir       string    `json:"dir"`
	Default   bool      `json:"default"` // the model semantic search uses
}

// ModelList is the result of `models list --json`.
type ModelList struct {
	Dir    string      `json:"dir"`
	Models []ModelInfo `json:"models"`
}

const modelsUsage = `usage: recall models COMMAND [flags]

commands:
  list                     the installed embedding models (--json)
  pull [NAME]              download a model from Hugging Face and install it
                           (default ` + embed.DefaultModel + ` at its pinned revision;
                           --revision REV, --force; HF_ENDPOINT and HF_TOKEN are honoured)
  import DIR [--name NAME] install a Hugging Face snapshot folder already on disk

Models live in $XDG_DATA_HOME/recall/models. Nothing is downloaded unless you
run pull. After installing, ` + "`recall sync --embed`" + ` embeds your history.
`

// modelsMain is `recall models`.
func modelsMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, modelsUsage)
		return ExitOK
	}
	sub, rest := args[0], args[1:]
	var f modelFlags
	if err := f.parse(rest); err != nil {
		fmt.Fprintf(stderr, "recall models %s: %v\nrun `recall models --help` for usage\n", sub, err)
		return ExitUsage
	}
	if f.help {
		fmt.Fprint(stdout, modelsUsage)
		return ExitOK
	}
	store := embed.Store{Dir: engine.ModelDir(os.Getenv)}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "recall models %s: %v\n", sub, err)
		return ExitFailure
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "recall models %s: %s\nrun `recall models --help` for usage\n", sub, msg)
		return ExitUsage
	}
	switch sub {
	case "list":
		if len(f.args) > 0 {
			return usageErr(fmt.Sprintf("unexpected argument %q", f.args[0]))
		}
		list, err := listModels(store)
		if err != nil {
			return fail(err)
		}
		if f.json {
			return writeJSON(stdout, stderr, list)
		}
		if len(list.Models) == 0 {
			fmt.Fprintf(stdout, "no models installed in %s\nrun `recall models pull` (downloads %s) or `recall models import DIR`\n", list.Dir, embed.DefaultModel)
			return ExitOK
		}
		for _, m := range list.Models {
			mark := " "
			if m.Default {
				mark = "*"
			}
			fmt.Fprintf(stdout, "%s %s@%s  %d dims, %s pooling, %d tokens  %s\n", mark, m.Name, shortRev(m.Revision), m.Dims, m.Pooling, m.MaxTokens, m.Dir)
		}
		return ExitOK
	case "pull":
		if len(f.args) > 1 {
			return usageErr(fmt.Sprintf("unexpected argument %q", f.args[1]))
		}
		name := ""
		if len(f.args) == 1 {
			name = f.args[0]
		}
		opts := embed.PullOptions{Revision: f.revision, Force: f.force}
		if !f.json && isTerminal(stderr) {
			opts.Progress = downloadBar(stderr)
		}
		man, err := store.Pull(ctx, name, opts)
		if err != nil {
			return fail(err)
		}
		return reportInstall(stdout, stderr, f.json, man)
	case "import":
		if len(f.args) != 1 {
			return usageErr("needs the snapshot folder: recall models import DIR [--name NAME]")
		}
		man, err := store.Import(ctx, f.args[0], f.name)
		if err != nil {
			return fail(err)
		}
		return reportInstall(stdout, stderr, f.json, man)
	}
	return usageErr(fmt.Sprintf("unknown command %q; use list, pull or import", sub))
}

type modelFlags struct {
	json, force, help bool
	name, revision    string
	args              []string
}

func (f *modelFlags) parse(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			f.args = append(f.args, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			f.args = append(f.args, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		value := func() (string, error) { return FlagValue(args, &i, name, val, hasVal) }
		var err error
		switch name {
		case "json":
			f.json = true
		case "force":
			f.force = true
		case "h", "help":
			f.help = true
		case "name":
			f.name, err = value()
		case "revision":
			f.revision, err = value()
		case "quiet", "q":
		default:
			return fmt.Errorf("unknown flag --%s", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func listModels(store embed.Store) (ModelList, error) {
	ms, err := store.List()
	if err != nil {
		return ModelList{}, err
	}
	out := ModelList{Dir: store.Dir, Models: []ModelInfo{}}
	def := ""
	for _, m := range ms {
		if m.Name == embed.DefaultModel {
			def = m.Name
		}
	}
	if def == "" && len(ms) > 0 {
		def = ms[0].Name // the engine's choice when the default is absent
	}
	for _, m := range ms {
		out.Models = append(out.Models, ModelInfo{Name: m.Name, Revision: m.Revision, Dims: m.Dims, Pooling: m.Pooling,
			MaxTokens: m.MaxTokens, Installed: m.Installed, Source: m.Source, Dir: m.Dir, Default: m.Name == def})
	}
	return out, nil
}

func reportInstall(stdout, stderr io.Writer, asJSON bool, m embed.Manifest) int {
	info := ModelInfo{Name: m.Name, Revision: m.Revision, Dims: m.Dims, Pooling: m.Pooling, MaxTokens: m.MaxTokens,
		Installed: m.Installed, Source: m.Source, Dir: m.Dir}
	if asJSON {
		return writeJSON(stdout, stderr, info)
	}
	fmt.Fprintf(stdout, "installed %s@%s (%d dims) in %s\nrun `recall sync --embed` to embed your history\n", m.Name, shortRev(m.Revision), m.Dims, m.Dir)
	return ExitOK
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "recall models: write result: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// downloadBar draws a pull's progress on a terminal.
func downloadBar(w io.Writer) func(done, total int64, file string) {
	last := time.Time{}
	return func(done, total int64, file string) {
		if total > 0 && done < total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		if total <= 0 {
			fmt.Fprintf(w, "\r\033[Kdownloading %s: %.1f MB", file, float64(done)/1e6)
			return
		}
		const width = 30
		filled := int(int64(width) * done / total)
		fmt.Fprintf(w, "\r\033[Kdownloading %s [%s%s] %.1f/%.1f MB", file, strings.Repeat("#", filled), strings.Repeat(".", width-filled), float64(done)/1e6, float64(total)/1e6)
		if done >= total {
			fmt.Fprint(w, "\r\033[K")
		}
	}
}
