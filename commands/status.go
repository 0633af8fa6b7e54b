package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/render"
)

// StatusParams are the params of `status`.
type StatusParams struct {
	Source SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"only this source (repeat, or a comma list; default: every source)"`
}

// Validate checks nothing.
func (*StatusParams) Validate() error { return nil }

// SyncParams are the params of `sync`.
type SyncParams struct {
	Force bool `json:"force,omitempty" flag:"force" help:"re-read every session (rebuild the index content)"`
	Embed bool `json:"embed,omitempty" flag:"embed" help:"also embed new documents for semantic search (needs a model: recall models pull)"`
}

// Validate checks nothing.
func (*SyncParams) Validate() error { return nil }

// ExportParams are the params of `export`.
type ExportParams struct {
	Session string     `json:"session" arg:"1" help:"the session id (ses_...)"`
	Format  string     `json:"format,omitempty" flag:"format" meta:"FORMAT" enum:"exportFormat" help:"how to write it (default chatml)"`
	Output  string     `json:"output,omitempty" flag:"o" meta:"FILE" help:"write to this file (default: stdout)"`
	Source  SourceList `json:"source,omitempty" flag:"source" meta:"NAME" help:"the source that holds it (default: the first that does)"`
}

// Validate checks the params.
func (p *ExportParams) Validate() error {
	if p.Session == "" {
		return &ParamError{Field: "session", Msg: "is required; see `recall sessions` for ids"}
	}
	_, err := p.Source.one()
	return err
}

// ExportResult says where an export went.
type ExportResult struct {
	Session string `json:"session"`
	Output  string `json:"output"`
	Bytes   int64  `json:"bytes"`
}

// Status is `status`: the history, its eras, index counts and freshness.
var Status = Register(&Command[StatusParams, engine.Status]{
	Name: "status", Summary: "the history being read, its storage eras, index counts and freshness",
	Doors: CLI | Server, Sync: true,
	Run: func(ctx context.Context, env *Env, p *StatusParams) (engine.Status, error) {
		return env.Engine.Status(ctx, p.Source.names()...)
	},
	Print: func(w io.Writer, st engine.Status) error {
		if len(st.Sources) > 1 {
			return printSources(w, st)
		}
		demo := ""
		if st.Demo {
			demo = " (bundled demo history)"
		}
		fmt.Fprintf(w, "source:   %s%s\neras:     %s\nindex:    %s (%d KiB, schema %d)\n", st.Source, demo,
			strings.Join(st.Eras, ", "), st.Index, st.IndexBytes/1024, st.Schema)
		fmt.Fprintf(w, "content:  %d sessions, %d messages, %d parts, %d search documents\n", st.Sessions, st.Messages, st.Parts, st.Documents)
		lag := "up to date"
		if st.Freshness.Stale {
			lag = fmt.Sprintf("behind the history by %.1fs", float64(st.Freshness.LagMS)/1000)
		}
		fmt.Fprintf(w, "synced:   %s (%s)\n", st.Freshness.SyncedAt, lag)
		printSemanticStatus(w, st.Semantic)
		return nil
	},
})

// Sync is `sync`: bring the index up to date now. A door that shares the
// engine (the LSP) hears of the result through Env.OnSync; without one,
// its notices go to Notify.
var Sync = Register(&Command[SyncParams, engine.SyncResult]{
	Name: "sync", Summary: "bring the index up to date with the history (idle when nothing changed)",
	Doors: CLI | Server, Syncs: true,
	Run:   runSync,
	Print: printSync,
})

// Reindex is sync with {force: true}, for clients' "reindex" buttons.
var Reindex = Register(Alias(Sync, "reindex", "re-read every session of the history (sync with force)", Server, SyncParams{Force: true}))

func runSync(ctx context.Context, env *Env, p *SyncParams) (engine.SyncResult, error) {
	opts := engine.SyncOptions{Force: p.Force, Embed: p.Embed}
	if env.Progress != nil {
		opts.Progress = func(sp engine.SyncProgress) { env.Progress(sp.Done, sp.Total) }
	}
	if env.EmbedProgress != nil {
		opts.EmbedProgress = func(ep engine.EmbedProgress) { env.EmbedProgress(ep.Done, ep.Total) }
	}
	res, err := env.Engine.Sync(ctx, opts)
	if err != nil {
		return res, err
	}
	if env.OnSync != nil {
		env.OnSync(res)
		return res, nil
	}
	for _, n := range append(res.Notices, res.LockNotice()) {
		env.notify(n)
	}
	return res, nil
}

func printSync(w io.Writer, r engine.SyncResult) error {
	var err error
	switch {
	case r.Idle:
		_, err = fmt.Fprintf(w, "index up to date (%d ms)\n", r.TookMS)
	case r.Locked:
		_, err = fmt.Fprintf(w, "index not updated: the history is locked (%d ms)\n", r.TookMS)
	default:
		_, err = fmt.Fprintf(w, "synced: %d new, %d updated, %d deleted sessions, %d parts, %d rows skipped (%d ms)\n",
			r.Added, r.Updated, r.Deleted, r.Parts, r.Skipped, r.TookMS)
	}
	if r.Embed != nil && err == nil {
		_, err = fmt.Fprintf(w, "embedded: %d texts, %d reused, %d/%d documents have vectors (%s, %d ms)\n",
			r.Embed.Embedded, r.Embed.Cached, r.Embed.Done, r.Embed.Total, r.Embed.Model, r.Embed.TookMS)
	}
	return err
}

// Export is `export`: a whole session to a file or stdout. It writes
// files, so no server door reaches it.
var Export = Register(&Command[ExportParams, ExportResult]{
	Name: "export", Summary: "write a whole session as ChatML, markdown or JSON lines",
	Doors: CLI, Sync: true,
	Run: runExport,
	Print: func(w io.Writer, r ExportResult) error {
		if r.Output == "" {
			return nil
		}
		_, err := fmt.Fprintf(w, "wrote %s (%d bytes)\n", r.Output, r.Bytes)
		return err
	},
})

// runExport writes the named file only: created fresh through a temporary
// file in the same directory and renamed, so a failed export leaves nothing
// half-written. Only a new path or an existing regular file (or a symlink
// to one, which is written through) is a target: a rename onto a device
// node, a FIFO or a socket would replace it.
func runExport(ctx context.Context, env *Env, ep *ExportParams) (ExportResult, error) {
	src, _ := ep.Source.one()
	params := engine.ExportParams{SessionID: ep.Session, Format: render.Format(ep.Format), Source: src}
	if ep.Output == "" || ep.Output == "-" {
		out := env.Stdout
		if out == nil {
			out = io.Discard
		}
		return ExportResult{Session: ep.Session}, env.Engine.Export(ctx, params, out)
	}
	path, err := exportTarget(engine.ExportPath(ep.Output))
	if err != nil {
		return ExportResult{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".recall-export-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // its path is the temporary file's, not one the user knows
		}
		return ExportResult{}, fmt.Errorf("export to %s: cannot create a file in %s: %w", path, filepath.Dir(path), err)
	}
	defer os.Remove(tmp.Name())
	if err := env.Engine.Export(ctx, params, tmp); err != nil {
		tmp.Close()
		return ExportResult{}, err
	}
	st, _ := tmp.Stat()
	if err := tmp.Close(); err != nil {
		return ExportResult{}, fmt.Errorf("export to %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return ExportResult{}, fmt.Errorf("export to %s: %w", path, err)
	}
	return ExportResult{Session: ep.Session, Output: path, Bytes: st.Size()}, nil
}

// exportTarget checks an -o path: a new path in an existing directory, or
// an existing regular file; a symlink is followed to its target. It
// returns the path to write.
func exportTarget(path string) (string, error) {
	bad := func(format string, a ...any) error {
		return &ParamError{Field: "-o", Msg: fmt.Sprintf(format, a...) + "; export writes a regular file: give a new path or an existing regular file"}
	}
	lst, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return "", &ParamError{Field: "-o", Msg: fmt.Sprintf("%s: the directory %s does not exist; create it first", path, dir)}
		}
		return path, nil
	case err != nil:
		return "", fmt.Errorf("export to %s: %w", path, err)
	case lst.Mode().IsRegular():
		return path, nil
	case lst.Mode()&fs.ModeSymlink == 0:
		return "", bad("%s is %s", path, describeMode(lst.Mode()))
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", bad("%s is a symlink that does not resolve (%v)", path, err)
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("export to %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return "", bad("%s is a symlink to %s (%s)", path, describeMode(st.Mode()), target)
	}
	return target, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device node"
	}
	return "not a regular file"
}

func printSemanticStatus(w io.Writer, s engine.SemanticStatus) {
	if !s.Installed {
		fmt.Fprintf(w, "vectors:  none (%s)\n", s.Notice)
		return
	}
	fmt.Fprintf(w, "vectors:  %d/%d documents embedded (%s@%s, %d dims)", s.Embedded, s.Total, s.Model, shortRev(s.Revision), s.Dims)
	if s.Notice != "" {
		fmt.Fprintf(w, "; %s", s.Notice)
	}
	fmt.Fprintln(w)
}

// printSources is status over several sources: each one, then the totals.
func printSources(w io.Writer, st engine.Status) error {
	for _, s := range st.Sources {
		demo := ""
		if s.Demo {
			demo = " (bundled demo history)"
		}
		fmt.Fprintf(w, "source %s:  %s%s\n", s.Name, s.Path, demo)
		if s.Error != "" {
			fmt.Fprintf(w, "  error:    %s\n", s.Error)
		}
		fmt.Fprintf(w, "  eras:     %s\n  index:    %s (%d KiB)\n", strings.Join(s.Eras, ", "), s.Index, s.IndexBytes/1024)
		fmt.Fprintf(w, "  content:  %d sessions, %d messages, %d parts, %d search documents\n", s.Sessions, s.Messages, s.Parts, s.Documents)
		fmt.Fprintf(w, "  synced:   %s (%s)\n", s.Freshness.SyncedAt, lagText(s.Freshness))
	}
	fmt.Fprintf(w, "all %d:    %d sessions, %d messages, %d parts, %d search documents (schema %d)\n", len(st.Sources),
		st.Sessions, st.Messages, st.Parts, st.Documents, st.Schema)
	printSemanticStatus(w, st.Semantic)
	return nil
}

func lagText(f engine.Freshness) string {
	if f.Stale {
		return fmt.Sprintf("behind the history by %.1fs", float64(f.LagMS)/1000)
	}
	return "up to date"
}
