package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/internal/fixtures"
)

// copyHistory copies a committed fixture's opencode.db to dir/opencode.db.
func copyHistory(t *testing.T, fixture, dir string) string {
	t.Helper()
	p, err := fixtures.CopyHistory("..", fixture, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type wireHit struct {
	Cursor, Source, URI, SessionID, MessageID, PartID string
}

func searchHits(t *testing.T, s *session, params map[string]any) []wireHit {
	t.Helper()
	raw, err := s.call("recall/search", params)
	if err != nil {
		t.Fatalf("search %v: %v", params, err)
	}
	var res struct{ Hits []wireHit }
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

func bySource(hits []wireHit) map[string]int {
	out := map[string]int{}
	for _, h := range hits {
		out[h.Source]++
	}
	return out
}

// The server over two real histories, named in initializationOptions.db
// as a list: search finds both with the right source, --source filters,
// status lists both, transcripts and hovers come from the right source.
func TestServerOverTwoHistories(t *testing.T) {
	root := t.TempDir()
	laptop, desktop := copyHistory(t, "v1", filepath.Join(root, "laptop")), copyHistory(t, "v2", filepath.Join(root, "d"))
	s := startSession(t, sessionOptions{defaultIndexes: true, initOptions: map[string]any{
		"db": []any{laptop, map[string]any{"name": "desktop", "path": desktop}}}})
	hits := searchHits(t, s, map[string]any{"query": "ERR_QUOTA_7731 ERR_EVICT_4410"})
	if n := bySource(hits); n["laptop"] == 0 || n["desktop"] == 0 {
		t.Fatalf("hits by source %v", n)
	}
	only := searchHits(t, s, map[string]any{"query": "ERR_QUOTA_7731 ERR_EVICT_4410", "source": []string{"desktop"}})
	if n := bySource(only); n["laptop"] != 0 || n["desktop"] == 0 {
		t.Errorf("source [desktop]: hits by source %v", n)
	}
	if n := bySource(searchHits(t, s, map[string]any{"query": "ERR_QUOTA_7731 ERR_EVICT_4410", "source": "laptop"})); n["desktop"] != 0 || n["laptop"] == 0 {
		t.Errorf(`source "laptop": hits by source %v`, n)
	}
	if _, err := s.call("recall/search", map[string]any{"query": "x", "source": "phone"}); err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "unknown source") {
		t.Errorf("an unknown source: %v", err)
	}

	raw, err := s.call("recall/status", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Sources []struct{ Name string }
	}
	json.Unmarshal(raw, &st)
	if len(st.Sources) != 2 || st.Sources[0].Name != "laptop" || st.Sources[1].Name != "desktop" {
		t.Errorf("status sources %s", raw)
	}

	var evict wireHit
	for _, h := range hits {
		if h.Source == "desktop" && h.MessageID != "" {
			evict = h
			break
		}
	}
	raw, err = s.call("workspace/textDocumentContent", map[string]any{"uri": evict.URI})
	if err != nil || !strings.Contains(string(raw), "source desktop") {
		t.Errorf("the hit's transcript URI %s: %v %.300s", evict.URI, err, raw)
	}
	doc := "file:///ids.txt"
	s.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": doc, "languageId": "text", "version": 1, "text": evict.MessageID}})
	raw, err = s.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": doc}, "position": map[string]any{"line": 0, "character": 3}})
	if err != nil || !strings.Contains(string(raw), "source desktop") || !strings.Contains(string(raw), "source=desktop") {
		t.Errorf("hover on a desktop id: %v %s", err, raw)
	}
	raw, err = s.call("workspace/symbol", map[string]any{"query": "eviction"})
	if err != nil || !strings.Contains(string(raw), "source=desktop") {
		t.Errorf("symbols: %v %.300s", err, raw)
	}
}

// The same history under two names: every hit twice, distinct by source,
// each cursor reading its own source; --index with several is refused.
func TestServerCollidingHistories(t *testing.T) {
	root := t.TempDir()
	a, b := copyHistory(t, "v1", filepath.Join(root, "a")), copyHistory(t, "v1", filepath.Join(root, "b"))
	s := startSession(t, sessionOptions{defaultIndexes: true, initOptions: map[string]any{"db": []string{a, b}}})
	hits := searchHits(t, s, map[string]any{"query": "ERR_QUOTA_7731"})
	if n := bySource(hits); n["a"] != 1 || n["b"] != 1 {
		t.Fatalf("hits by source %v", n)
	}
	for _, h := range hits {
		raw, err := s.call("recall/read", map[string]any{"cursor": h.Cursor})
		var w struct{ Session struct{ Source string } }
		json.Unmarshal(raw, &w)
		if err != nil || w.Session.Source != h.Source {
			t.Errorf("read of %s's cursor: %v, from %q", h.Source, err, w.Session.Source)
		}
	}

	bad := startSession(t, sessionOptions{skipInit: true})
	_, err := bad.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"db": []string{a, b}, "index": filepath.Join(root, "i.db")}})
	if err == nil || !strings.Contains(err.Error(), "initializationOptions.db") || !strings.Contains(err.Error(), "[[source]]") {
		t.Errorf("index with two sources: %v", err)
	}
	_, err = bad.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"db": []any{map[string]any{"name": "x", "file": a}}}})
	if err == nil || !strings.Contains(err.Error(), "db") {
		t.Errorf("a db entry with an unknown field: %v", err)
	}
}

// One history deleted while the server runs: the next sync says so for
// that source, and both indexes still answer.
func TestServerSourceDeletedAfterOpen(t *testing.T) {
	root := t.TempDir()
	laptop, desktop := copyHistory(t, "v1", filepath.Join(root, "laptop")), copyHistory(t, "v2", filepath.Join(root, "desktop"))
	s := startSession(t, sessionOptions{defaultIndexes: true, initOptions: map[string]any{"db": []string{laptop, desktop}, "watch": false}})
	if _, err := s.call("workspace/executeCommand", map[string]any{"command": "recall.sync"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(desktop); err != nil {
		t.Fatal(err)
	}
	raw, err := s.call("workspace/executeCommand", map[string]any{"command": "recall.sync"})
	if err != nil {
		t.Fatalf("a sync with one history gone failed: %v", err)
	}
	var res struct {
		Sources []struct{ Source, Error string }
	}
	json.Unmarshal(raw, &res)
	if len(res.Sources) != 2 || res.Sources[0].Error != "" || res.Sources[1].Error == "" {
		t.Errorf("sync: %s", raw)
	}
	t.Logf("sync with a history gone: %s", raw)
	if n := bySource(searchHits(t, s, map[string]any{"query": "ERR_QUOTA_7731 ERR_EVICT_4410"})); n["laptop"] == 0 || n["desktop"] == 0 {
		t.Errorf("after the delete, hits by source %v; want both indexes to answer", n)
	}
}
