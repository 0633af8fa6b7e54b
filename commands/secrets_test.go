package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type plantedSecrets struct {
	Secrets    map[string][]string `json:"secrets"`
	BodyLines  []string            `json:"rsa_private_key_body_lines"`
	Searchable []string            `json:"searchable"`
}

func loadSecrets(t *testing.T) (plantedSecrets, []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "opencode", "secrets", "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ps plantedSecrets
	if err := json.Unmarshal(raw, &ps); err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, vs := range ps.Secrets {
		for _, v := range vs {
			// A PEM block is checked line by line: no line of it may leak.
			for _, line := range strings.Split(v, "\n") {
				if !strings.HasPrefix(line, "-----") && len(line) >= 8 {
					values = append(values, line)
				}
			}
		}
	}
	values = append(values, ps.BodyLines...)
	return ps, values
}

func leaks(out string, values []string) []string {
	var found []string
	for _, v := range values {
		if strings.Contains(out, v) {
			found = append(found, v)
		}
	}
	return found
}

// Every output of every command on a history full of secrets holds none
// of them; searching for a secret finds nothing; the words around the
// secrets stay searchable; --no-redact shows them (so the check can fail).
func TestNoSecretInAnyOutput(t *testing.T) {
	ps, values := loadSecrets(t)
	src, _ := os.ReadFile(filepath.Join("..", "testdata", "opencode", "secrets", "opencode.db"))
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
	if found := leaks(all.String(), values); len(found) > 0 {
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
	if len(leaks(raw.stdout+raw2.stdout, values)) == 0 {
		t.Error("--no-redact shows no secret: the fixture or the flag is broken")
	}
}
