package embed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultModel is the model `recall models pull` installs when given no name.
const DefaultModel = "sentence-transformers/all-MiniLM-L6-v2"

// DefaultRevision pins DefaultModel to a Hugging Face commit so every install
// of Recall computes the same vectors (and stored vectors stay comparable).
const DefaultRevision = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"

// pinnedSHA256 holds known-good checksums per "repo@revision" and file. It is
// deliberately empty until checksums are taken from a real download; until
// then integrity rests on Hugging Face's X-Linked-Etag (the sha256 of LFS
// files) and on the checksums recorded in the manifest on first install.
var pinnedSHA256 = map[string]map[string]string{}

// Store is a folder of installed models, one sub-folder per model name.
type Store struct {
	// Dir is the root, usually engine.ModelDir ($XDG_DATA_HOME/recall/models).
	Dir string
}

// Manifest records what was installed, from where, and its checksums.
type Manifest struct {
	Name      string     `json:"name"`
	Revision  string     `json:"revision"`
	Source    string     `json:"source"` // download URL prefix or imported folder
	Files     []FileInfo `json:"files"`
	Dims      int        `json:"dims"`
	Pooling   string     `json:"pooling"`
	MaxTokens int        `json:"maxTokens"`
	Installed time.Time  `json:"installed"`
	// Dir is where the model lives; not stored.
	Dir string `json:"-"`
}

// FileInfo is one file of a model as it was fetched or imported.
type FileInfo struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Path is the folder a model name installs into.
func (s Store) Path(name string) string {
	if name == "" {
		name = DefaultModel
	}
	return filepath.Join(s.Dir, strings.ReplaceAll(name, "/", "--"))
}

// repoName is a Hugging Face repository id: "owner/name" or "name".
var repoName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)
})

// checkName rejects names that are not Hugging Face repository ids, so a
// name can never point outside the store.
func checkName(name string) error {
	if !repoName().MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("model name %q is not a Hugging Face repository id such as %s", name, DefaultModel)
	}
	return nil
}

// lock serialises installs of one model across processes.
func (s Store) lock(name string) (func(), error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	return lockFile(filepath.Join(s.Dir, ".lock-"+filepath.Base(s.Path(name))))
}

// Open loads an installed model ("" means DefaultModel). It never downloads:
// a missing model is ErrNoModel, whose message tells the user what to run.
func (s Store) Open(name string) (Embedder, error) {
	if err := checkName(orDefault(name)); err != nil {
		return nil, fmt.Errorf("open model: %w", err)
	}
	dir := s.Path(name)
	if _, err := os.Stat(filepath.Join(dir, fileManifest)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open model %s: %w", orDefault(name), ErrNoModel)
	}
	return Load(dir)
}

// List returns the installed models, sorted by name.
func (s Store) List() ([]Manifest, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	var out []Manifest
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(s.Dir, e.Name())
		var m Manifest
		if err := readOptionalJSON(filepath.Join(dir, fileManifest), &m); err != nil {
			return nil, fmt.Errorf("list models: %s: %w", dir, err)
		}
		if m.Name == "" {
			continue // not ours, or not a finished install
		}
		m.Dir = dir
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func orDefault(name string) string {
	if name == "" {
		return DefaultModel
	}
	return name
}

// finishInstall converts the staged snapshot, proves it embeds, writes the
// manifest and moves the folder into place. The installed folder is replaced
// only once the new one is complete, so a failure leaves the old model usable.
func (s Store) finishInstall(ctx context.Context, staging string, man Manifest) (Manifest, error) {
	if err := convert(staging); err != nil {
		return Manifest{}, err
	}
	// The HF weights are only the conversion's input; keep their checksum, not their bytes.
	for _, f := range []string{fileSafetensors, filePyTorch} {
		os.Remove(filepath.Join(staging, f))
	}
	sum, size, err := fileSHA256(filepath.Join(staging, fileSpago))
	if err != nil {
		return Manifest{}, err
	}
	man.Files = append(man.Files, FileInfo{Name: fileSpago, Size: size, SHA256: sum})
	e, err := load(staging)
	if err != nil {
		return Manifest{}, fmt.Errorf("load the converted model: %w", err)
	}
	if err := smokeTest(ctx, e); err != nil {
		return Manifest{}, err
	}
	man.Dims, man.Pooling, man.MaxTokens = e.info.Dims, e.info.Pooling, e.info.MaxTokens
	man.Installed = time.Now().UTC().Truncate(time.Second)
	if err := writeJSONFile(filepath.Join(staging, fileManifest), man); err != nil {
		return Manifest{}, err
	}
	final := s.Path(man.Name)
	old := filepath.Join(s.Dir, ".old-"+filepath.Base(final))
	os.RemoveAll(old)
	if _, err := os.Stat(final); err == nil {
		if err := os.Rename(final, old); err != nil {
			return Manifest{}, fmt.Errorf("install: move the previous version aside: %w", err)
		}
	}
	if err := os.Rename(staging, final); err != nil {
		os.Rename(old, final)
		return Manifest{}, fmt.Errorf("install: %w", err)
	}
	os.RemoveAll(old)
	man.Dir = final
	return man, nil
}

// smokeTest embeds two sentences and checks the vectors are finite, unit
// length and not identical: a wrong conversion usually fails one of these.
func smokeTest(ctx context.Context, e *model) error {
	vecs, err := e.Embed(ctx, []string{"recall searches old coding sessions", "café 123 re-ran"})
	if err != nil {
		return fmt.Errorf("smoke test: %w", err)
	}
	same := true
	for i, v := range vecs {
		if len(v) != e.info.Dims {
			return fmt.Errorf("smoke test: vector %d has %d dims, want %d", i, len(v), e.info.Dims)
		}
		var n float64
		for j, z := range v {
			if math.IsNaN(float64(z)) || math.IsInf(float64(z), 0) {
				return fmt.Errorf("smoke test: vector %d has a non-finite value; the weights are likely corrupt", i)
			}
			n += float64(z) * float64(z)
			if z != vecs[0][j] {
				same = false
			}
		}
		if math.Abs(n-1) > 1e-3 {
			return fmt.Errorf("smoke test: vector %d has norm %.4f, want 1", i, math.Sqrt(n))
		}
	}
	if same {
		return errors.New("smoke test: different texts gave the same vector; the weights are likely corrupt")
	}
	return nil
}
