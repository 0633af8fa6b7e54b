package lsp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/recallhq/recall/engine/embed"
	"github.com/recallhq/recall/engine/embed/bertgen"

	"github.com/recallhq/recall/internal/fixtures"
	"github.com/recallhq/recall/internal/historytest"
)

// gate is a background-sync hook that holds syncs until opened.
type gate struct {
	open    chan struct{}
	entered chan struct{}
	hits    atomic.Int32
}

func newGate() *gate { return &gate{open: make(chan struct{}), entered: make(chan struct{}, 100)} }

func (g *gate) hook(ctx context.Context) {
	g.hits.Add(1)
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.open:
	case <-ctx.Done():
	}
}

// Requests that arrive while the first sync of a fresh index runs wait for
// it and answer from the synced index, never silently from an empty one;
// cancelling such a request ends the wait.
func TestFirstRequestsWaitForFirstSync(t *testing.T) {
	g := newGate()
	s := startSession(t, sessionOptions{noWait: true, config: func(c *Config) { c.beforeSync = g.hook }})
	<-g.entered // the first sync is about to run

	// A cancelled request gives up its wait.
	ctx, cancel := context.WithCancel(s.ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.callCtx(ctx, "recall/search", map[string]any{"query": "ERR_QUOTA_7731"})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled waiting request: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled request kept waiting for the first sync")
	}

	type answer struct {
		method string
		raw    json.RawMessage
		err    error
	}
	answers := make(chan answer, 10)
	ask := func(method string, params any) {
		go func() {
			raw, err := s.call(method, params)
			answers <- answer{method, raw, err}
		}()
	}
	ask("recall/search", map[string]any{"query": "ERR_QUOTA_7731", "limit": 1})
	ask("recall/sessions", map[string]any{"limit": 50})
	ask("workspace/symbol", map[string]any{"query": "nightly worker"})
	ask("workspace/textDocumentContent", map[string]any{"uri": "recall:/session/ses_dd7571907ffe5vPpW7vxTE77tW?mode=head&limit=1"})
	select {
	case a := <-answers:
		t.Fatalf("%s answered before the first sync: %s %v", a.method, a.raw, a.err)
	case <-time.After(300 * time.Millisecond):
	}
	close(g.open)
	for range 4 {
		select {
		case a := <-answers:
			if a.err != nil {
				t.Fatalf("%s: %v", a.method, a.err)
			}
			if strings.Contains(string(a.raw), `"stale":true`) || !strings.Contains(string(a.raw), "nightly") {
				t.Errorf("%s after the first sync: %s", a.method, a.raw)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("requests still waiting after the first sync")
		}
	}
}

// Bad params are refused at once, even while the first sync runs: before,
// a request waited for the first sync (up to a minute on a large history)
// to be told its limit was not a number.
func TestBadParamsDoNotWaitForFirstSync(t *testing.T) {
	g := newGate()
	defer close(g.open)
	s := startSession(t, sessionOptions{noWait: true, config: func(c *Config) { c.beforeSync = g.hook }})
	<-g.entered // the first sync is held
	for _, c := range []struct {
		method string
		params any
	}{
		{"recall/search", map[string]any{"query": "x", "limit": "ten"}},
		{"recall/read", map[string]any{}},
		{"workspace/executeCommand", map[string]any{"command": "recall.sessions", "arguments": []any{map[string]any{"after": "someday"}}}},
	} {
		start := time.Now()
		errc := make(chan error, 1)
		go func() {
			_, err := s.call(c.method, c.params)
			errc <- err
		}()
		select {
		case err := <-errc:
			if got := wireCode(t, err); got != jsonrpc2.InvalidParams {
				t.Errorf("%s %v: code %d, want -32602", c.method, c.params, got)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s %v with bad params waited for the first sync (%v and counting)", c.method, c.params, time.Since(start))
		}
	}
}

// Later requests never wait, even while a background sync runs.
func TestLaterRequestsNeverWait(t *testing.T) {
	db := copyFixture(t)
	var g atomic.Pointer[gate]
	s := startSession(t, sessionOptions{db: db, config: func(c *Config) {
		c.beforeSync = func(ctx context.Context) {
			if gt := g.Load(); gt != nil {
				gt.hook(ctx)
			}
		}
	}})
	gt := newGate()
	defer close(gt.open)
	g.Store(gt)
	touchTitle(t, db, "Renamed while a sync is held")
	select {
	case <-gt.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not start a sync")
	}
	start := time.Now()
	if _, err := s.call("recall/search", map[string]any{"query": "rounding"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a request waited %v for a background sync", d)
	}
}

// The watcher, and with it the first sync's workDoneProgress/create, start
// on initialized, not while initialize is answered.
func TestWatcherStartsOnInitialized(t *testing.T) {
	s := startSession(t, sessionOptions{skipInit: true})
	params := map[string]any{"processId": nil, "rootUri": nil,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}
	if _, err := s.call("initialize", params); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	s.client.mu.Lock()
	early := len(s.client.created) + len(s.client.progress) + len(s.client.custom[methodIndexUpdated])
	s.client.mu.Unlock()
	if early != 0 {
		t.Fatalf("the server started work before initialized: created %v progress %v", s.client.created, s.client.progress)
	}
	s.notify("initialized", map[string]any{})
	s.waitFor(methodIndexUpdated)
	s.client.mu.Lock()
	defer s.client.mu.Unlock()
	if len(s.client.created) != 1 {
		t.Errorf("after initialized: created %v, want one token", s.client.created)
	}
}

// touchTitle renames a fixture session the way OpenCode writes (a
// writable handle on the copy).
func touchTitle(t testing.TB, db, title string) {
	t.Helper()
	w, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := historytest.Rename(w, "ses_dd7571907ffe5vPpW7vxTE77tW", title); err != nil {
		t.Fatal(err)
	}
}

// With a model installed, the server embeds in the background after its
// first sync (reporting "Recall: embedding"), so hybrid search works with
// no CLI step.
func TestBackgroundEmbedding(t *testing.T) {
	s := startSession(t, sessionOptions{dataDir: func(dir string) {
		m, err := bertgen.Generate(bertgen.Tiny(7))
		if err != nil {
			t.Fatal(err)
		}
		snap := filepath.Join(t.TempDir(), "snapshot")
		if err := os.MkdirAll(snap, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteDir(snap, bertgen.Safetensors); err != nil {
			t.Fatal(err)
		}
		if _, err := (embed.Store{Dir: filepath.Join(dir, "recall", "models")}).Import(context.Background(), snap, "test/tiny"); err != nil {
			t.Fatal(err)
		}
	}})
	deadline := time.Now().Add(30 * time.Second)
	var st struct {
		Semantic struct {
			Installed       bool
			Embedded, Total int
		}
	}
	for {
		raw, err := s.call("recall/status", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(raw, &st)
		if st.Semantic.Total > 0 && st.Semantic.Embedded == st.Semantic.Total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background embedding did not finish: %s", raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	raw, err := s.call("recall/search", map[string]any{"query": "rounding drift", "mode": "hybrid", "limit": 3})
	if err != nil || !strings.Contains(string(raw), `"mode":"hybrid"`) {
		t.Errorf("hybrid search after background embedding: %s %v", raw, err)
	}
	waitUntil(t, func() bool {
		s.client.mu.Lock()
		defer s.client.mu.Unlock()
		return strings.Contains(strings.Join(s.client.titles, ","), "Recall: embedding") &&
			strings.HasSuffix(s.client.progress[len(s.client.progress)-1], " end")
	}, "embedding progress begin … end")
	if !s.shutdown() {
		t.Error("shutdown with embedding done")
	}
}

func waitUntil(t testing.TB, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Secrets are redacted in every LSP output by default (search, read,
// transcripts, hovers, symbols) on both secrets fixtures;
// initializationOptions.noRedact shows them, so the check can fail.
func TestNoSecretsOverLSP(t *testing.T) {
	all, err := fixtures.AllPlantedSecrets("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, planted := range all {
		t.Run(planted.Name, func(t *testing.T) { sweepLSPSecrets(t, planted) })
	}
}

func sweepLSPSecrets(t *testing.T, planted fixtures.Secrets) {
	db := planted.DB
	everything := func(s *session) (string, map[string]bool) {
		var all strings.Builder
		leaked := map[string]bool{}
		call := func(method string, params any) json.RawMessage {
			raw, err := s.call(method, params)
			if err != nil {
				t.Fatalf("%s %v: %v", method, params, err)
			}
			for _, v := range planted.Leaks(string(raw)) {
				if !leaked[v] {
					leaked[v] = true
					fmt.Fprintf(&all, "\n[%q in %s %v]\n", v, method, params) // names the door that leaked
				}
			}
			all.Write(raw)
			return raw
		}
		var sl struct {
			Sessions []struct {
				ID, Title, Cursor string
				Children          []struct{ ID string }
			}
		}
		_ = json.Unmarshal(call("recall/sessions", map[string]any{"limit": 50}), &sl)
		if len(sl.Sessions) == 0 {
			t.Fatal("no sessions in the secrets fixture")
		}
		var hoverDoc strings.Builder
		for _, ses := range sl.Sessions {
			hoverDoc.WriteString(ses.ID + "\n")
			call("recall/read", map[string]any{"cursor": ses.Cursor, "mode": "full", "format": "chatml"})
			call("recall/read", map[string]any{"cursor": ses.Cursor, "mode": "full", "format": "markdown"})
			var rd struct {
				Messages []struct {
					ID    string
					Parts []struct{ ID string }
				}
			}
			_ = json.Unmarshal(call("recall/read", map[string]any{"cursor": ses.Cursor, "mode": "full", "format": "json"}), &rd)
			for _, m := range rd.Messages {
				hoverDoc.WriteString(m.ID + "\n")
				for _, p := range m.Parts {
					hoverDoc.WriteString(p.ID + "\n")
				}
			}
			ids := []string{ses.ID}
			for _, c := range ses.Children {
				ids = append(ids, c.ID)
			}
			for _, id := range ids {
				call("workspace/textDocumentContent", map[string]any{"uri": "recall:/session/" + id})
				call("recall/transcript", map[string]any{"uri": "recall:/session/" + id + "?format=chatml"})
			}
			call("workspace/symbol", map[string]any{"query": ses.Title})
		}
		call("workspace/symbol", map[string]any{"query": ""})
		queries := append([]string{"", "key", "token", "password", "secret", "AKIA", "ghp", "sk-proj", "sk_live", "BEGIN", "AccountKey"}, planted.Searchable...)
		for _, q := range append(queries, planted.Values...) {
			call("recall/search", map[string]any{"query": q, "limit": 50})
			if strings.TrimSpace(q) == "" {
				continue
			}
			// A literal scan reads the history itself; get pages a hit's
			// part whole from it.
			var lit struct{ Hits []struct{ Cursor string } }
			_ = json.Unmarshal(call("recall/search", map[string]any{"query": q, "match": "literal", "limit": 20}), &lit)
			for _, h := range lit.Hits {
				call("recall/get", map[string]any{"id": h.Cursor, "length": 100000})
			}
		}
		call("recall/status", map[string]any{})
		doc := "file:///secrets-hover.txt"
		s.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": doc, "languageId": "text", "version": 1, "text": hoverDoc.String()}})
		for line := range strings.Count(hoverDoc.String(), "\n") {
			call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": doc}, "position": map[string]any{"line": line, "character": 5}})
		}
		return all.String(), leaked
	}
	redacted, leaked := everything(startSession(t, sessionOptions{db: db}))
	for v := range leaked {
		i := strings.Index(redacted, fmt.Sprintf("[%q in ", v))
		t.Errorf("secret leaked over LSP: %s", redacted[i:i+strings.Index(redacted[i:], "]\n")+1])
	}
	if !strings.Contains(redacted, "[redacted:") {
		t.Error("no redaction marker in any output: the check saw no secret-bearing text")
	}
	if _, shown := everything(startSession(t, sessionOptions{db: db, initOptions: map[string]any{"noRedact": true}})); len(shown) == 0 {
		t.Error("noRedact: true showed no secret; the option is not reaching the engine")
	}
}
