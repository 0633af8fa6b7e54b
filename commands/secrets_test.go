package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/internal/fixtures"
)

// Every output of every command on a history full of secrets holds none
// of them; searching for a secret finds nothing; the words around the
// secrets stay searchable; --no-redact shows them (so the check can fail).
func TestNoSecretInAnyOutput(t *testing.T) {
	ps, err := fixtures.PlantedSecrets("..")
	if err != nil {
		t.Fatal(err)
	}
	values := ps.Values
	src, _ := os.ReadFile(ps.DB)
	db := filepath.Join(t.TempDir(), "opencode.db")
	os.WriteFile(db, src, 0o644)
	ix := filepath.Join(t.TempDir(), "i.db")
	base := []string{"--db", db, "--index", ix}
	var all strings.Builder
	runAll := func(args ...string) run {
		r := cli(t, append(args, base...)...)
		all.WriteString(r.stdout + r.stderr)
		return r
	}
	sessions := runAll("sessions", "--json", "--limit", "50")
	var sl struct {
		Sessions []struct{ ID, Cursor string }
	}
	json.Unmarshal([]byte(sessions.stdout), &sl)
	if len(sl.Sessions) == 0 {
		t.Fatal("no sessions in the secrets fixture")
	}
	for _, s := range sl.Sessions {
		runAll("read", "--mode", "full", s.Cursor)
		runAll("read", "--mode", "full", "--format", "markdown", s.Cursor)
		runAll("read", "--mode", "full", "--format", "json", "--json", s.Cursor)
		for _, f := range []string{"chatml", "markdown", "jsonl"} {
			runAll("export", "--format", f, s.ID)
		}
	}
	for _, w := range append(ps.Searchable, "env", "key", "token", "password", "secret", "Bearer", "PRIVATE KEY", "redacted") {
		runAll("search", "--json", "--limit", "20", "--group", "none", "--", w)
		runAll("search", "--limit", "20", "--", w)
	}
	runAll("search", "--json", "--limit", "20", "")
	runAll("status", "--json")
	if found := ps.Leaks(all.String()); len(found) > 0 {
		t.Errorf("secrets leaked in outputs: %q", found)
	}
	for _, v := range values {
		r := cli(t, append([]string{"search", "--json", "--", v}, base...)...)
		var res struct{ Hits []any }
		json.Unmarshal([]byte(r.stdout), &res)
		if strings.ContainsAny(v, " ") {
			continue
		}
		for _, h := range res.Hits {
			b, _ := json.Marshal(h)
			if strings.Contains(string(b), v) {
				t.Errorf("searching for a secret returned it: %q", v)
			}
		}
	}
	for _, w := range ps.Searchable {
		r := cli(t, append([]string{"search", "--json", "--", w}, base...)...)
		if !strings.Contains(r.stdout, `"cursor"`) {
			t.Errorf("surrounding words %q are no longer searchable", w)
		}
	}
	// The raw view exists (and so the assertions above can fail).
	raw := cli(t, append([]string{"read", "--no-redact", "--mode", "full", sl.Sessions[0].Cursor}, base...)...)
	raw2 := cli(t, append([]string{"export", "--no-redact", sl.Sessions[len(sl.Sessions)-1].ID}, base...)...)
	if len(ps.Leaks(raw.stdout+raw2.stdout)) == 0 {
		t.Error("--no-redact shows no secret: the fixture or the flag is broken")
	}
}
