package embed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recallhq/recall/engine/embed/bertgen"
)

// hfServer imitates Hugging Face's resolve endpoint over a generated model:
// small files are served directly, weights through a redirect that carries
// X-Linked-Etag (the sha256) and X-Repo-Commit, as the real hub does for LFS.
type hfServer struct {
	*httptest.Server
	dir      string
	repo     string
	rev      string
	missing  map[string]bool
	badEtag  bool
	override map[string][]byte // file -> bytes served instead of the real ones
	mu       sync.Mutex
	cutAfter map[string]int64 // first GET of file sends this many bytes, then drops the connection
	requests []*http.Request
}

func newHFServer(t *testing.T, files bertgen.Files) *hfServer {
	t.Helper()
	_, dir := writeModel(t, bertgen.Tiny(3), files)
	s := &hfServer{dir: dir, repo: DefaultModel, rev: DefaultRevision, missing: map[string]bool{}, cutAfter: map[string]int64{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *hfServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Clone(context.Background()))
	s.mu.Unlock()
	if file, ok := strings.CutPrefix(r.URL.Path, "/cdn/"); ok {
		s.serveFile(w, r, file)
		return
	}
	prefix := "/" + s.repo + "/resolve/" + s.rev + "/"
	file, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok || s.missing[file] {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("X-Repo-Commit", s.rev)
	if file == fileSafetensors || file == filePyTorch {
		raw, err := os.ReadFile(filepath.Join(s.dir, file))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		sum := sha256.Sum256(raw)
		etag := hex.EncodeToString(sum[:])
		if s.badEtag {
			etag = strings.Repeat("0", 64)
		}
		w.Header().Set("X-Linked-Etag", `"`+etag+`"`)
		http.Redirect(w, r, "/cdn/"+file, http.StatusFound)
		return
	}
	s.serveFile(w, r, file)
}

func (s *hfServer) serveFile(w http.ResponseWriter, r *http.Request, file string) {
	raw, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(file)))
	s.mu.Lock()
	if b, ok := s.override[file]; ok {
		raw, err = b, nil
	}
	s.mu.Unlock()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	cut, ok := s.cutAfter[file]
	delete(s.cutAfter, file)
	s.mu.Unlock()
	if ok {
		w.Header().Set("Content-Length", itoa(len(raw)))
		w.WriteHeader(http.StatusOK)
		w.Write(raw[:cut])
		panic(http.ErrAbortHandler) // drop the connection mid-file
	}
	http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(raw))
}

func itoa(n int) string { return strconv.Itoa(n) }

func (s *hfServer) requestsFor(file string) []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*http.Request
	for _, r := range s.requests {
		if strings.HasSuffix(r.URL.Path, "/"+s.rev+"/"+file) || r.URL.Path == "/cdn/"+file {
			out = append(out, r)
		}
	}
	return out
}

func TestPullInstallsVerifiedModel(t *testing.T) {
	srv := newHFServer(t, bertgen.AllFiles)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "hf_secret")
	store := Store{Dir: t.TempDir()}
	var progressed []string
	man, err := store.Pull(context.Background(), "", PullOptions{
		Progress: func(done, total int64, file string) {
			if done > total && total >= 0 {
				t.Errorf("progress %s: done %d > total %d", file, done, total)
			}
			progressed = append(progressed, file)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if man.Name != DefaultModel || man.Revision != DefaultRevision || man.Dims != 32 || man.Pooling != "mean" || man.MaxTokens != 32 {
		t.Errorf("manifest = %+v", man)
	}
	sums := map[string]string{}
	for _, f := range man.Files {
		sums[f.Name] = f.SHA256
	}
	raw, _ := os.ReadFile(filepath.Join(srv.dir, fileSafetensors))
	want := sha256.Sum256(raw)
	if sums[fileSafetensors] != hex.EncodeToString(want[:]) {
		t.Errorf("manifest sha256 of %s = %q, want %x", fileSafetensors, sums[fileSafetensors], want)
	}
	if sums[fileSpago] == "" || sums[fileConfig] == "" || sums[filePooling] == "" {
		t.Errorf("manifest misses checksums: %v", sums)
	}
	if len(srv.requestsFor(filePyTorch)) != 0 {
		t.Error("pulled pytorch_model.bin although model.safetensors exists")
	}
	if len(progressed) == 0 {
		t.Error("no progress reported")
	}
	for _, r := range srv.requestsFor(fileConfig) {
		if got := r.Header.Get("Authorization"); got != "Bearer hf_secret" {
			t.Errorf("Authorization = %q, want the HF_TOKEN bearer", got)
		}
	}
	entries, _ := os.ReadDir(store.Dir)
	if len(names(entries)) != 1 {
		t.Errorf("store holds %v, want only the installed model (no staging left)", names(entries))
	}
	list, err := store.List()
	if err != nil || len(list) != 1 || list[0].Name != DefaultModel {
		t.Fatalf("List() = %+v, %v", list, err)
	}
	e, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if info := e.Info(); info.ID != DefaultModel || info.Revision != DefaultRevision || info.Dims != 32 {
		t.Errorf("Info() = %+v", info)
	}
	if _, err := os.Stat(filepath.Join(store.Path(""), fileSafetensors)); err == nil {
		t.Error("the converted model keeps the 2x-size HF weights")
	}
}

// names lists a store folder, leaving out lock files (kept on purpose: removing
// a flock'd file races with the next locker).
func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".lock-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestPullResumesAfterDroppedConnection(t *testing.T) {
	srv := newHFServer(t, bertgen.Safetensors)
	st, _ := os.Stat(filepath.Join(srv.dir, fileSafetensors))
	half := st.Size() / 2
	srv.cutAfter[fileSafetensors] = half
	store := Store{Dir: t.TempDir()}
	opts := PullOptions{Endpoint: srv.URL}
	_, err := store.Pull(context.Background(), "", opts)
	if err == nil {
		t.Fatal("first pull succeeded although the connection dropped")
	}
	if !strings.Contains(err.Error(), "resume") {
		t.Errorf("error %q does not tell the user to pull again", err)
	}
	if _, err := store.Open(""); !errors.Is(err, ErrNoModel) {
		t.Errorf("after a failed pull Open() = %v, want ErrNoModel (no broken model installed)", err)
	}
	part := filepath.Join(store.stagingPath(DefaultModel, DefaultRevision), fileSafetensors+".part")
	if pst, err := os.Stat(part); err != nil || pst.Size() != half {
		t.Fatalf("partial file after drop: %v, %v; want %d bytes kept for resume", pst, err, half)
	}
	if _, err := store.Pull(context.Background(), "", opts); err != nil {
		t.Fatalf("second pull: %v", err)
	}
	reqs := srv.requestsFor(fileSafetensors)
	last := reqs[len(reqs)-1]
	if got, want := last.Header.Get("Range"), "bytes="+itoa(int(half))+"-"; got != want {
		t.Errorf("resume request Range = %q, want %q", got, want)
	}
	if n := len(srv.requestsFor(fileConfig)); n != 1 {
		t.Errorf("config.json downloaded %d times; files completed before the drop must not be fetched again", n)
	}
	entries, _ := os.ReadDir(store.Dir)
	if len(names(entries)) != 1 {
		t.Errorf("store holds %v after install, want only the model", names(entries))
	}
}

func TestPullRejectsChecksumMismatch(t *testing.T) {
	srv := newHFServer(t, bertgen.Safetensors)
	srv.badEtag = true
	store := Store{Dir: t.TempDir()}
	_, err := store.Pull(context.Background(), "", PullOptions{Endpoint: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("Pull() = %v, want a checksum error", err)
	}
	if _, err := os.Stat(store.Path("")); err == nil {
		t.Error("a model with a bad checksum was installed")
	}
	weights := filepath.Join(store.stagingPath(DefaultModel, DefaultRevision), fileSafetensors)
	if _, err := os.Stat(weights); err == nil {
		t.Error("the corrupt file was kept; the next pull would reuse it")
	}
}

func TestPullFallsBackToPyTorchWeights(t *testing.T) {
	srv := newHFServer(t, bertgen.PyTorch)
	srv.missing[fileSafetensors] = true
	srv.missing[filePooling] = true // optional files may be absent
	store := Store{Dir: t.TempDir()}
	man, err := store.Pull(context.Background(), "", PullOptions{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range man.Files {
		got = append(got, f.Name)
	}
	if !strings.Contains(strings.Join(got, " "), filePyTorch) {
		t.Errorf("manifest files %v, want %s", got, filePyTorch)
	}
}

func TestPullReportsMissingModel(t *testing.T) {
	srv := newHFServer(t, bertgen.Safetensors)
	store := Store{Dir: t.TempDir()}
	_, err := store.Pull(context.Background(), "someone/not-there", PullOptions{Endpoint: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("Pull() = %v, want an error naming the missing file", err)
	}
	if list, _ := store.List(); len(list) != 0 {
		t.Errorf("List() = %v after a failed pull", list)
	}
}

func TestImportInstallsLocalSnapshot(t *testing.T) {
	gen, src := writeModel(t, bertgen.Tiny(5), bertgen.AllFiles)
	snap := filepath.Join(t.TempDir(), "c9745ed1d9f207416be6d2e6f8de32d1f16199bf")
	if err := os.Rename(src, snap); err != nil {
		t.Fatal(err)
	}
	store := Store{Dir: t.TempDir()}
	man, err := store.Import(context.Background(), snap, "")
	if err != nil {
		t.Fatal(err)
	}
	if man.Revision != "c9745ed1d9f207416be6d2e6f8de32d1f16199bf" || man.Source != snap {
		t.Errorf("manifest = %+v", man)
	}
	e, err := store.Open(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(context.Background(), []string{"the file"})
	if err != nil {
		t.Fatal(err)
	}
	ids := append(append([]int{2}, e.(*model).tok.IDs("the file")...), 3)
	if d := maxAbsDiff(vecs[0], gen.Reference(ids)); d > 1e-4 {
		t.Errorf("imported model differs from the reference by %.2g", d)
	}
	entries, _ := os.ReadDir(store.Dir)
	if len(names(entries)) != 1 {
		t.Errorf("store holds %v, want only the model", names(entries))
	}
}

func TestOpenWithoutModelSaysWhatToRun(t *testing.T) {
	_, err := Store{Dir: t.TempDir()}.Open("")
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("Open() = %v, want ErrNoModel", err)
	}
	for _, want := range []string{"recall models pull", "recall models import DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestPullDiscardsFilesThatDoNotFormAModel: an empty config.json (what a
// failed cybertron download leaves behind) must not poison later pulls.
func TestPullDiscardsFilesThatDoNotFormAModel(t *testing.T) {
	srv := newHFServer(t, bertgen.Safetensors)
	srv.override = map[string][]byte{fileConfig: {}}
	store := Store{Dir: t.TempDir()}
	if _, err := store.Pull(context.Background(), "", PullOptions{Endpoint: srv.URL}); err == nil {
		t.Fatal("pull of an empty config.json succeeded")
	}
	if _, err := os.Stat(store.stagingPath(DefaultModel, DefaultRevision)); err == nil {
		t.Error("the bad download was kept")
	}
	srv.mu.Lock()
	srv.override = nil
	srv.mu.Unlock()
	if _, err := store.Pull(context.Background(), "", PullOptions{Endpoint: srv.URL}); err != nil {
		t.Fatalf("pull after the server was fixed: %v", err)
	}
}

func TestStoreRejectsNamesOutsideTheStore(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	for _, name := range []string{"..", "../x", "a/../../b", "/abs", "a/b/c"} {
		if _, err := store.Pull(context.Background(), name, PullOptions{Endpoint: "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "repository id") {
			t.Errorf("Pull(%q) = %v, want a name error", name, err)
		}
	}
}

func TestPullRefusesWhileAnotherInstallRuns(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	unlock, err := store.lock(DefaultModel)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = store.Pull(context.Background(), "", PullOptions{Endpoint: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "another") {
		t.Errorf("Pull during another install = %v, want a busy error", err)
	}
}

func TestPullOfInstalledCommitIsOffline(t *testing.T) {
	srv := newHFServer(t, bertgen.Safetensors)
	store := Store{Dir: t.TempDir()}
	opts := PullOptions{Endpoint: srv.URL}
	first, err := store.Pull(context.Background(), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	before := len(srv.requests)
	srv.mu.Unlock()
	again, err := store.Pull(context.Background(), "", opts)
	if err != nil || again.Installed != first.Installed {
		t.Fatalf("second Pull() = %+v, %v; want the installed manifest", again, err)
	}
	srv.mu.Lock()
	after := len(srv.requests)
	srv.mu.Unlock()
	if after != before {
		t.Errorf("re-pulling an installed commit made %d requests", after-before)
	}
	opts.Force = true
	if _, err := store.Pull(context.Background(), "", opts); err != nil {
		t.Fatalf("forced Pull(): %v", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.requests) == after {
		t.Error("Force did not download")
	}
}
