package commands

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

func jsonOf(t *testing.T, r run, v any) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
}

// The CLI over two real histories: status lists each; the same history
// under two names gives every hit twice, distinct by source; a bare id
// reads from the first source; forget asks which one; a cursor outlives
// `sync --force`.
func TestCLISeveralHistories(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	root := t.TempDir()
	laptop, desktop := copyHistory(t, "v1", filepath.Join(root, "laptop")), copyHistory(t, "v2", filepath.Join(root, "desktop"))
	dbs := []string{"--db", laptop, "--db", desktop}

	var st struct {
		Sessions int
		Sources  []struct {
			Name, Path string
			Sessions   int
			Eras       []string
		}
	}
	jsonOf(t, cli(t, append([]string{"status", "--json"}, dbs...)...), &st)
	if len(st.Sources) != 2 || st.Sources[0].Name != "laptop" || st.Sources[1].Name != "desktop" || st.Sessions != st.Sources[0].Sessions+st.Sources[1].Sessions {
		t.Fatalf("status: %+v", st)
	}
	text := cli(t, append([]string{"status"}, dbs...)...)
	if !strings.Contains(text.stdout, "source laptop:  "+laptop) || !strings.Contains(text.stdout, "source desktop:  "+desktop) {
		t.Errorf("status text does not list each source:\n%s", text.stdout)
	}
	if r := cli(t, append([]string{"status", "--index", filepath.Join(root, "i.db")}, dbs...)...); r.code != 2 || !strings.Contains(r.stderr, "[[source]]") {
		t.Errorf("--index with two sources: exit %d %s", r.code, r.stderr)
	}

	// The same history under two names.
	twin := copyHistory(t, "v1", filepath.Join(root, "twin"))
	both := []string{"--db", laptop, "--db", twin}
	var res struct {
		Hits []struct{ Source, SessionID, Cursor string }
	}
	jsonOf(t, cli(t, append([]string{"search", "--json", "ERR_QUOTA_7731"}, both...)...), &res)
	if len(res.Hits) != 2 || res.Hits[0].Source == res.Hits[1].Source || res.Hits[0].SessionID != res.Hits[1].SessionID {
		t.Fatalf("hits over the twins: %+v", res.Hits)
	}
	id := res.Hits[0].SessionID
	var w struct{ Session struct{ Source string } }
	jsonOf(t, cli(t, append([]string{"read", "--json", id}, both...)...), &w)
	if w.Session.Source != "laptop" {
		t.Errorf("read of a bare id both hold: from %q, want laptop (the first)", w.Session.Source)
	}
	if r := cli(t, append([]string{"forget", id}, both...)...); r.code != 2 || !strings.Contains(r.stderr, "--source") {
		t.Errorf("forget of an id both hold: exit %d %s", r.code, r.stderr)
	}
	if r := cli(t, append([]string{"forget", id, "--source", "twin"}, both...)...); r.code != 0 {
		t.Errorf("forget --source twin: exit %d %s", r.code, r.stderr)
	}
	jsonOf(t, cli(t, append([]string{"search", "--json", "ERR_QUOTA_7731"}, both...)...), &res)
	if len(res.Hits) != 1 || res.Hits[0].Source != "laptop" {
		t.Errorf("after forgetting it in twin: %+v", res.Hits)
	}

	// A cursor outlives a forced re-read of every session.
	c := res.Hits[0].Cursor
	if r := cli(t, append([]string{"sync", "--force"}, both...)...); r.code != 0 {
		t.Fatalf("sync --force: %s", r.stderr)
	}
	if r := cli(t, append([]string{"read", c}, both...)...); r.code != 0 || !strings.Contains(r.stdout, `source="laptop"`) {
		t.Errorf("read after sync --force: exit %d %s", r.code, r.stderr)
	}
}

// Configured sources: a missing one is a notice on stderr naming it, and
// the present one answers.
func TestCLIConfiguredSources(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	root := t.TempDir()
	laptop := copyHistory(t, "v1", filepath.Join(root, "laptop"))
	cfg := filepath.Join(root, "config.toml")
	text := "[[source]]\nname = \"laptop\"\npath = \"" + laptop + "\"\n\n[[source]]\nname = \"archive\"\npath = \"" + filepath.Join(root, "gone", "opencode.db") + "\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RECALL_CONFIG", cfg)
	r := cli(t, "search", "ERR_QUOTA_7731")
	if r.code != 0 || !strings.Contains(r.stdout, "Investigate nightly worker failure") {
		t.Fatalf("search with a missing configured source: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `source "archive": no OpenCode history at`) {
		t.Errorf("stderr does not name the missing source:\n%s", r.stderr)
	}
	if r := cli(t, "search", "--db", filepath.Join(root, "none.db"), "x"); r.code != 1 || !strings.Contains(r.stderr, "none.db") {
		t.Errorf("a --db that does not exist: exit %d %s", r.code, r.stderr)
	}
}
