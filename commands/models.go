package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/embed"
)

// `recall models` manages the local embedding models (engine/embed's
// Store). Its commands need no history or index, and no server door
// reaches them: pulls write hundreds of megabytes and belong to the user's
// terminal.

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

func init() {
	registerGroup("models", "list, pull or import the local embedding model")
	groupDetails["models"] = "pull downloads " + embed.DefaultModel + " at its pinned revision\n" +
		"unless you name another (HF_ENDPOINT and HF_TOKEN are honoured). Models live in\n" +
		"$XDG_DATA_HOME/recall/models; nothing is downloaded unless you run pull. After\n" +
		"installing, `recall sync --embed` embeds your history."
}

// ModelsListParams: models list takes none.
type ModelsListParams struct{}

// Validate checks nothing.
func (*ModelsListParams) Validate() error { return nil }

// ModelsPullParams are the params of `models pull`.
type ModelsPullParams struct {
	Name     string `json:"name,omitempty" arg:"1" meta:"[NAME]" help:"the Hugging Face model, ORG/NAME (default: the one search is tuned for, at its pinned revision)"`
	Revision string `json:"revision,omitempty" flag:"revision" meta:"REV" help:"the revision to download (HF_ENDPOINT and HF_TOKEN are honoured)"`
	Force    bool   `json:"force,omitempty" flag:"force" help:"download again over an installed copy"`
}

// Validate checks nothing.
func (*ModelsPullParams) Validate() error { return nil }

// ModelsImportParams are the params of `models import`.
type ModelsImportParams struct {
	Dir  string `json:"dir" arg:"1" meta:"DIR" help:"a Hugging Face snapshot folder already on disk"`
	Name string `json:"name,omitempty" flag:"name" meta:"NAME" help:"the name to install it under (default: from its config)"`
}

// Validate checks that a folder was given.
func (p *ModelsImportParams) Validate() error {
	if p.Dir == "" {
		return &ParamError{Msg: "needs the snapshot folder: recall models import DIR [--name NAME]"}
	}
	return nil
}

func modelStore(env *Env) embed.Store {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return embed.Store{Dir: engine.ModelDir(getenv)}
}

// ModelsList is `models list`.
var ModelsList = Register(&Command[ModelsListParams, ModelList]{
	Name: "models list", Summary: "the installed embedding models (* marks the one search uses)",
	Doors: CLI, NoEngine: true,
	Run: func(_ context.Context, env *Env, _ *ModelsListParams) (ModelList, error) {
		return listModels(modelStore(env))
	},
	Print: func(w io.Writer, list ModelList) error {
		if len(list.Models) == 0 {
			_, err := fmt.Fprintf(w, "no models installed in %s\nrun `recall models pull` (downloads %s) or `recall models import DIR`\n", list.Dir, embed.DefaultModel)
			return err
		}
		for _, m := range list.Models {
			mark := " "
			if m.Default {
				mark = "*"
			}
			fmt.Fprintf(w, "%s %s@%s  %d dims, %s pooling, %d tokens  %s\n", mark, m.Name, shortRev(m.Revision), m.Dims, m.Pooling, m.MaxTokens, m.Dir)
		}
		return nil
	},
})

// ModelsPull is `models pull`.
var ModelsPull = Register(&Command[ModelsPullParams, ModelInfo]{
	Name: "models pull", Summary: "download a model from Hugging Face and install it",
	Doors: CLI, NoEngine: true,
	Run: func(ctx context.Context, env *Env, p *ModelsPullParams) (ModelInfo, error) {
		opts := embed.PullOptions{Revision: p.Revision, Force: p.Force, Progress: env.DownloadProgress}
		man, err := modelStore(env).Pull(ctx, p.Name, opts)
		return installed(man), err
	},
	Print: printInstalled,
})

// ModelsImport is `models import`.
var ModelsImport = Register(&Command[ModelsImportParams, ModelInfo]{
	Name: "models import", Summary: "install a Hugging Face snapshot folder already on disk",
	Doors: CLI, NoEngine: true,
	Run: func(ctx context.Context, env *Env, p *ModelsImportParams) (ModelInfo, error) {
		man, err := modelStore(env).Import(ctx, p.Dir, p.Name)
		return installed(man), err
	},
	Print: printInstalled,
})

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

func installed(m embed.Manifest) ModelInfo {
	return ModelInfo{Name: m.Name, Revision: m.Revision, Dims: m.Dims, Pooling: m.Pooling, MaxTokens: m.MaxTokens,
		Installed: m.Installed, Source: m.Source, Dir: m.Dir}
}

func printInstalled(w io.Writer, m ModelInfo) error {
	_, err := fmt.Fprintf(w, "installed %s@%s (%d dims) in %s\nrun `recall sync --embed` to embed your history\n", m.Name, shortRev(m.Revision), m.Dims, m.Dir)
	return err
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
