package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// commitHash matches the snapshot folder names of the Hugging Face cache.
var commitHash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

// Import installs a model from a local Hugging Face snapshot folder (for
// example ~/.cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/REV)
// without touching the network. name "" means DefaultModel. The revision is
// the folder name when it is a commit hash, else "local".
func (s Store) Import(ctx context.Context, dir, name string) (Manifest, error) {
	name = orDefault(name)
	if err := checkName(name); err != nil {
		return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
	}
	unlock, err := s.lock(name)
	if err != nil {
		return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
	}
	defer unlock()
	rev := "local"
	if base := filepath.Base(filepath.Clean(dir)); commitHash().MatchString(base) {
		rev = base
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
	}
	staging, err := os.MkdirTemp(s.Dir, ".import-")
	if err != nil {
		return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
	}
	defer os.RemoveAll(staging) // gone after a successful install's rename too
	man := Manifest{Name: name, Revision: rev, Source: abs}
	pinned := pinnedSHA256[name+"@"+rev]
	files := []struct {
		name     string
		optional bool
	}{{fileSafetensors, true}, {filePyTorch, true}}
	files = append(snapshotFiles[:len(snapshotFiles):len(snapshotFiles)], files...)
	haveWeights := false
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
		}
		if haveWeights && f.name == filePyTorch {
			continue
		}
		fi, err := copyFile(filepath.Join(dir, filepath.FromSlash(f.name)), filepath.Join(staging, filepath.FromSlash(f.name)))
		if errors.Is(err, fs.ErrNotExist) && f.optional {
			continue
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
		}
		fi.Name = f.name
		if want := pinned[f.name]; want != "" && want != fi.SHA256 {
			return Manifest{}, fmt.Errorf("import %s: %s does not match the pinned checksum for %s@%s", dir, f.name, name, rev)
		}
		haveWeights = haveWeights || f.name == fileSafetensors || f.name == filePyTorch
		man.Files = append(man.Files, fi)
	}
	if !haveWeights {
		return Manifest{}, fmt.Errorf("import %s: no %s or %s; point at a Hugging Face snapshot folder of a BERT model", dir, fileSafetensors, filePyTorch)
	}
	installed, err := s.finishInstall(ctx, staging, man)
	if err != nil {
		return Manifest{}, fmt.Errorf("import %s: %w", dir, err)
	}
	return installed, nil
}

// copyFile copies src (following symlinks, as the HF cache uses them) and returns its checksum.
func copyFile(src, dst string) (FileInfo, error) {
	in, err := os.Open(src)
	if err != nil {
		return FileInfo{}, err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return FileInfo{}, err
	}
	out, err := os.Create(dst)
	if err != nil {
		return FileInfo{}, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return FileInfo{}, err
	}
	if err := out.Close(); err != nil {
		return FileInfo{}, err
	}
	sum, size, err := fileSHA256(dst)
	return FileInfo{Size: size, SHA256: sum}, err
}
