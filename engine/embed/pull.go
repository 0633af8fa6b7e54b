package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// PullOptions tune Store.Pull. The zero value pulls the pinned DefaultRevision
// from $HF_ENDPOINT (default https://huggingface.co) with $HF_TOKEN if set.
type PullOptions struct {
	Revision string       // commit or branch; default DefaultRevision for DefaultModel, else "main"
	Endpoint string       // default $HF_ENDPOINT, then https://huggingface.co
	Token    string       // bearer token; default $HF_TOKEN
	Client   *http.Client // default http.DefaultClient's transport
	// Force downloads again even when this exact commit is already installed.
	Force bool
	// Progress, if set, is called as bytes arrive; total is -1 when unknown.
	Progress func(done, total int64, file string)
}

// snapshotFiles are fetched besides the weights; optional ones may be absent.
var snapshotFiles = []struct {
	name     string
	optional bool
}{
	{fileConfig, false},
	{fileVocab, false},
	{fileTokConfig, true},
	{fileSTConfig, true},
	{filePooling, true},
}

// errNotFound marks an HTTP 404, which means "try the next file".
var errNotFound = errors.New("not found")

// Pull downloads a model snapshot from Hugging Face, converts it in Go, checks
// it, and installs it under s.Dir ("" name means DefaultModel). Files land in a
// staging folder beside the final one; an interrupted pull leaves that folder
// behind and the next Pull resumes each partial file with an HTTP Range request.
// The installed model is never replaced by an incomplete one.
func (s Store) Pull(ctx context.Context, name string, opts PullOptions) (Manifest, error) {
	name = orDefault(name)
	if err := checkName(name); err != nil {
		return Manifest{}, fmt.Errorf("pull: %w", err)
	}
	unlock, err := s.lock(name)
	if err != nil {
		return Manifest{}, fmt.Errorf("pull %s: %w", name, err)
	}
	defer unlock()
	rev := opts.Revision
	if rev == "" {
		rev = "main"
		if name == DefaultModel {
			rev = DefaultRevision
		}
	}
	if commitHash().MatchString(rev) && !opts.Force {
		var m Manifest
		err := readOptionalJSON(filepath.Join(s.Path(name), fileManifest), &m)
		if err == nil && m.Name == name && m.Revision == rev {
			m.Dir = s.Path(name)
			return m, nil // a commit never changes: nothing to download
		}
	}
	endpoint := opts.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("HF_ENDPOINT")
	}
	if endpoint == "" {
		endpoint = "https://huggingface.co"
	}
	token := opts.Token
	if token == "" {
		token = os.Getenv("HF_TOKEN")
	}
	staging := s.stagingPath(name, rev)
	if err := s.removeStaleStaging(name, staging); err != nil {
		return Manifest{}, err
	}
	if err := os.MkdirAll(staging, 0o755); err != nil {
		return Manifest{}, fmt.Errorf("pull %s: %w", name, err)
	}
	d := downloader{
		base:     strings.TrimRight(endpoint, "/") + "/" + name + "/resolve/" + url.PathEscape(rev) + "/",
		token:    token,
		client:   opts.Client,
		progress: opts.Progress,
		staging:  staging,
		pinned:   pinnedSHA256[name+"@"+rev],
		known:    s.recordedSums(name, rev),
	}
	man := Manifest{Name: name, Revision: rev, Source: d.base}
	for _, f := range snapshotFiles {
		fi, err := d.fetch(ctx, f.name)
		if errors.Is(err, errNotFound) && f.optional {
			continue
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("pull %s: %w", name, err)
		}
		man.Files = append(man.Files, fi)
	}
	// all-MiniLM-L6-v2 ships safetensors; older repos only have the pickle.
	fi, err := d.fetch(ctx, fileSafetensors)
	if errors.Is(err, errNotFound) {
		fi, err = d.fetch(ctx, filePyTorch)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("pull %s: %w", name, err)
	}
	man.Files = append(man.Files, fi)
	if d.commit != "" && d.commit != rev {
		man.Revision = d.commit // a branch name resolved to the commit actually served
	}
	installed, err := s.finishInstall(ctx, staging, man)
	if err != nil {
		// The files arrived whole but do not make a working model; keeping them
		// would make every later pull fail the same way.
		os.RemoveAll(staging)
		return Manifest{}, fmt.Errorf("pull %s: the downloaded files do not form a working model (they were removed): %w", name, err)
	}
	return installed, nil
}

// stagingPath is where a pull of name@rev collects files. It starts with a
// dot so List ignores it, and is stable so a later pull can resume.
func (s Store) stagingPath(name, rev string) string {
	return filepath.Join(s.Dir, ".partial-"+filepath.Base(s.Path(name))+"@"+safeName(rev))
}

// removeStaleStaging deletes staging folders of other revisions of name.
func (s Store) removeStaleStaging(name, keep string) error {
	matches, err := filepath.Glob(filepath.Join(s.Dir, ".partial-"+filepath.Base(s.Path(name))+"@*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if m != keep {
			if err := os.RemoveAll(m); err != nil {
				return fmt.Errorf("pull %s: remove stale download %s: %w", name, m, err)
			}
		}
	}
	return nil
}

// recordedSums are the checksums of an installed model of the same revision,
// so a re-pull must produce the same bytes (trust on first use).
func (s Store) recordedSums(name, rev string) map[string]string {
	var m Manifest
	if err := readOptionalJSON(filepath.Join(s.Path(name), fileManifest), &m); err != nil || m.Revision != rev {
		return nil
	}
	sums := map[string]string{}
	for _, f := range m.Files {
		sums[f.Name] = f.SHA256
	}
	return sums
}

type downloader struct {
	base, token, staging string
	client               *http.Client
	progress             func(done, total int64, file string)
	pinned, known        map[string]string
	commit               string // X-Repo-Commit reported by the server
}

// fetch downloads one file into the staging folder, resuming a partial
// download, and verifies its sha256 against every checksum available.
func (d *downloader) fetch(ctx context.Context, file string) (FileInfo, error) {
	dst := filepath.Join(d.staging, filepath.FromSlash(file))
	part := dst + ".part"
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return FileInfo{}, err
	}
	var linked string
	if _, err := os.Stat(dst); err != nil {
		var err error
		if linked, err = d.download(ctx, file, part); err != nil {
			return FileInfo{}, err
		}
		if err := os.Rename(part, dst); err != nil {
			return FileInfo{}, err
		}
	}
	sum, size, err := fileSHA256(dst)
	if err != nil {
		return FileInfo{}, err
	}
	for _, want := range []struct{ sum, what string }{
		{d.pinned[file], "the pinned checksum"},
		{d.known[file], "the checksum recorded when this revision was first installed"},
		{linked, "the server's X-Linked-Etag"},
	} {
		if want.sum != "" && !strings.EqualFold(want.sum, sum) {
			os.Remove(dst)
			return FileInfo{}, fmt.Errorf("%s: sha256 %s does not match %s (%s); the file was deleted, run the pull again", file, sum, want.what, want.sum)
		}
	}
	return FileInfo{Name: file, Size: size, SHA256: sum}, nil
}

// download appends the rest of file to part, using a Range request when part
// already holds bytes from an earlier attempt. It returns the sha256 the server
// vouches for (X-Linked-Etag of LFS files), if any.
func (d *downloader) download(ctx context.Context, file, part string) (string, error) {
	var offset int64
	if st, err := os.Stat(part); err == nil {
		offset = st.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+file, nil)
	if err != nil {
		return "", err
	}
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	// Hugging Face answers LFS files with a redirect to a CDN; the checksum
	// and commit headers are on the redirect, so catch them there. Go drops
	// the Authorization header when the redirect leaves the host.
	var linked, commit string
	client := http.DefaultClient
	if d.client != nil {
		client = d.client
	}
	c := *client
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		if r.Response != nil {
			linked = firstNonEmpty(linked, etagSHA256(r.Response.Header.Get("X-Linked-Etag")))
			commit = firstNonEmpty(commit, r.Response.Header.Get("X-Repo-Commit"))
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("download %s: %w (check the network, or use `recall models import DIR`)", file, err)
	}
	defer resp.Body.Close()
	linked = firstNonEmpty(linked, etagSHA256(resp.Header.Get("X-Linked-Etag")))
	d.commit = firstNonEmpty(d.commit, commit, resp.Header.Get("X-Repo-Commit"))
	flags := os.O_CREATE | os.O_WRONLY
	switch resp.StatusCode {
	case http.StatusPartialContent:
		flags |= os.O_APPEND
	case http.StatusOK:
		flags |= os.O_TRUNC // the server ignored Range: start over
		offset = 0
	case http.StatusRequestedRangeNotSatisfiable:
		os.Remove(part) // the partial file is longer than the file: start over next time
		return "", fmt.Errorf("download %s: partial file did not match the server's; it was removed, run the pull again", file)
	case http.StatusNotFound:
		return "", fmt.Errorf("download %s: %w", file, errNotFound)
	case http.StatusUnauthorized, http.StatusForbidden:
		return "", fmt.Errorf("download %s: %s; set HF_TOKEN to a Hugging Face token with access to the model", file, resp.Status)
	default:
		return "", fmt.Errorf("download %s: %s", file, resp.Status)
	}
	total := int64(-1)
	if resp.ContentLength >= 0 {
		total = offset + resp.ContentLength
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return "", err
	}
	w := &progressWriter{w: f, done: offset, total: total, file: file, report: d.progress}
	_, err = io.Copy(w, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("download %s: interrupted after %d bytes (run the pull again to resume): %w", file, w.done, err)
	}
	if total >= 0 && w.done != total {
		return "", fmt.Errorf("download %s: got %d of %d bytes (run the pull again to resume)", file, w.done, total)
	}
	return linked, nil
}

type progressWriter struct {
	w           io.Writer
	done, total int64
	file        string
	report      func(done, total int64, file string)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.report != nil {
		p.report(p.done, p.total, p.file)
	}
	return n, err
}

// etagSHA256 returns the sha256 in an ETag-style header, or "" if it holds
// something else (git blob ids of small files are sha1).
func etagSHA256(v string) string {
	v = strings.TrimPrefix(strings.Trim(v, `"`), "W/")
	v = strings.Trim(v, `"`)
	if len(v) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(v); err != nil {
		return ""
	}
	return strings.ToLower(v)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
