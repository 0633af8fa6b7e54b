package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Global flags go before the command's name as well as after it (before,
// `recall --db X search q` was "unknown command --db").
func TestGlobalFlagsBeforeCommand(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	for _, args := range [][]string{
		{"--db", db, "--index", ix, "--json", "search", "ERR_QUOTA_7731"},
		{"--db=" + db, "-q", "search", "--index", ix, "--json", "ERR_QUOTA_7731"},
		{"--json", "--db", db, "--index", ix, "--", "search", "ERR_QUOTA_7731"},
	} {
		var res struct{ Hits []struct{ Cursor string } }
		decodeJSON(t, cli(t, args...), &res)
		if len(res.Hits) == 0 {
			t.Errorf("%v: no hits", args)
		}
	}
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	r := cli(t, "--json", "models", "list")
	var list ModelList
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Errorf("--json models list: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	// A command's own flag before the command is refused with where it goes.
	r = cli(t, "--limit", "3", "search", "x")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--limit") || !strings.Contains(r.stderr, "after") {
		t.Errorf("--limit before the command: exit %d %q", r.code, r.stderr)
	}
}

// `recall help CMD` is `recall CMD --help`: usage, every flag with its
// value placeholder, single-dash short flags, enum values from their one
// list; exit 0 and nothing on stderr.
func TestHelpOutputs(t *testing.T) {
	for _, e := range All() {
		spec := e.Spec()
		if spec.Doors&CLI == 0 {
			continue
		}
		h := cli(t, append([]string{"help"}, strings.Fields(spec.Name)...)...)
		f := cli(t, append(strings.Fields(spec.Name), "--help")...)
		if h.code != 0 || f.code != 0 || h.stderr != "" || f.stderr != "" {
			t.Errorf("%s: help exit %d %q, --help exit %d %q", spec.Name, h.code, h.stderr, f.code, f.stderr)
		}
		if h.stdout != f.stdout || !strings.HasPrefix(h.stdout, "usage: recall "+spec.Name) {
			t.Errorf("recall help %s and recall %s --help differ:\n%s\n---\n%s", spec.Name, spec.Name, h.stdout, f.stdout)
		}
		for _, fl := range e.Fields() {
			if fl.Flag != "" && !strings.Contains(f.stdout, "  "+fl.FlagName()) {
				t.Errorf("%s --help does not list %s", spec.Name, fl.FlagName())
			}
		}
	}
	search := cli(t, "search", "--help").stdout
	for _, want := range []string{"--limit N", "--after TIME", "--role user|assistant|system", "--explain  ", "[QUERY...]", "--db PATH", "other"} {
		if !strings.Contains(search, want) {
			t.Errorf("search --help lacks %q:\n%s", want, search)
		}
	}
	export := cli(t, "help", "export").stdout
	if !strings.Contains(export, "  -o FILE") || strings.Contains(export, "--o") {
		t.Errorf("export help should show -o FILE, not --o:\n%s", export)
	}
	top := cli(t, "help")
	for _, name := range cliNames() {
		if !strings.Contains(top.stdout, "\n  "+name+" ") {
			t.Errorf("recall help does not list %s:\n%s", name, top.stdout)
		}
	}
	if r := cli(t); r.code != 0 || r.stdout != top.stdout {
		t.Errorf("recall with no command: exit %d, want the help", r.code)
	}
	if r := cli(t, "--help", "search"); r.stdout != search {
		t.Errorf("recall --help search differs from recall search --help")
	}
	if r := cli(t, "models", "--help"); r.code != 0 || !strings.Contains(r.stdout, "pull [NAME]") || !strings.Contains(r.stdout, "import DIR") {
		t.Errorf("models --help: exit %d\n%s", r.code, r.stdout)
	}
	if r := cli(t, "help", "frobnicate"); r.code != ExitUsage || !strings.Contains(r.stderr, "frobnicate") {
		t.Errorf("help of an unknown command: exit %d %q", r.code, r.stderr)
	}
}

// An unknown flag is reported as typed: -x, not --x.
func TestUnknownFlagAsTyped(t *testing.T) {
	for _, c := range []struct{ flag, want string }{{"-x", "unknown flag -x"}, {"--bogus", "unknown flag --bogus"}, {"--bogus=3", "unknown flag --bogus\n"}} {
		r := cli(t, "search", c.flag, "q")
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || (c.flag == "-x" && strings.Contains(r.stderr, "--x")) {
			t.Errorf("search %s: exit %d %q, want %q", c.flag, r.code, r.stderr, c.want)
		}
	}
}

// Help, validation and the error name the same values for every enum:
// `--role system` and `--kind other` are valid (both are indexed), and
// listed (before, help said "user or assistant" while the error listed
// system, and help left out other).
func TestEnumsAgreeEverywhere(t *testing.T) {
	db, ix := fixtureDB(t), filepath.Join(t.TempDir(), "i.db")
	for _, c := range []struct {
		flag string
		enum *Enum
	}{{"--role", Roles}, {"--kind", Kinds}, {"--mode", SearchModes}, {"--group", Groups}} {
		help := cli(t, "search", "--help").stdout
		r := cli(t, "search", "--db", db, "--index", ix, c.flag, "nope", "x")
		for _, v := range c.enum.Values {
			if !strings.Contains(help, v) {
				t.Errorf("search --help lacks %s %s", c.flag, v)
			}
			if !strings.Contains(r.stderr, v) {
				t.Errorf("the %s error lacks %s: %q", c.flag, v, r.stderr)
			}
			if v == "semantic" || v == "hybrid" {
				continue // valid, but they need a model
			}
			if ok := cli(t, "search", "--db", db, "--index", ix, "--json", c.flag, v, "x"); ok.code != 0 {
				t.Errorf("search %s %s: exit %d %s", c.flag, v, ok.code, ok.stderr)
			}
		}
		if !strings.Contains(r.stderr, strings.Join(c.enum.Values, ", ")) {
			t.Errorf("the %s error does not list the values in order: %q", c.flag, r.stderr)
		}
	}
}

// Completion scripts come from the table: each names every command and
// flag; bash's registers a completion for recall.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range Shells.Values {
		r := cli(t, "completion", sh)
		if r.code != 0 || r.stdout == "" {
			t.Fatalf("completion %s: exit %d %s", sh, r.code, r.stderr)
		}
		for _, name := range cliNames() {
			if !strings.Contains(r.stdout, name) {
				t.Errorf("%s completion does not name %s", sh, name)
			}
		}
		for _, e := range All() {
			for _, f := range e.Fields() {
				if f.Flag != "" && e.Spec().Doors&CLI != 0 && !strings.Contains(r.stdout, f.Flag) {
					t.Errorf("%s completion does not name %s %s", sh, e.Spec().Name, f.FlagName())
				}
			}
		}
		for _, v := range Roles.Values {
			if !strings.Contains(r.stdout, v) {
				t.Errorf("%s completion does not offer --role %s", sh, v)
			}
		}
		script := filepath.Join(t.TempDir(), "recall."+sh)
		if err := os.WriteFile(script, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		switch sh {
		case "bash":
			out, err := exec.Command("bash", "-c", `source <(cat "$1"); complete -p recall`, "bash", script).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "complete -F _recall recall") {
				t.Errorf("bash: %v\n%s", err, out)
			}
			// What bash offers after `recall search --role `.
			out, err = exec.Command("bash", "-c", `source "$1"; COMP_WORDS=(recall --db x search --role ""); COMP_CWORD=5; _recall; echo "${COMPREPLY[*]}"`, "bash", script).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != strings.Join(Roles.Values, " ") {
				t.Errorf("bash offers %q after --role (%v), want %v", out, err, Roles.Values)
			}
			// Commands, flags, enum values and globals, as bash completes
			// them for a person pressing Tab.
			cwd := t.TempDir()
			os.Mkdir(filepath.Join(cwd, "projects"), 0o700)
			os.WriteFile(filepath.Join(cwd, "profile.txt"), nil, 0o600)
			for _, c := range []struct{ words, want string }{
				{`recall se`, "search sessions"},
				{`recall --db x sy`, "sync"},
				{`recall search --li`, "--limit"},
				{`recall search invoice --verb`, "--verbose"},
				{`recall read --format `, strings.Join(ReadFormats.Values, " ")},
				{`recall export --format m`, "markdown"},
				{`recall search --kind text,re`, "text,reasoning"},
				{`recall completion `, strings.Join(Shells.Values, " ")},
				{`recall models `, "import list pull"},
				{`recall search --directory pro`, "projects"}, // a directory, not the file beside it
			} {
				words := strings.Fields(c.words)
				if strings.HasSuffix(c.words, " ") {
					words = append(words, "")
				}
				quoted := make([]string, len(words))
				for i, w := range words {
					quoted[i] = "'" + w + "'"
				}
				code := fmt.Sprintf(`source "$1"; COMP_WORDS=(%s); COMP_CWORD=%d; _recall; echo "${COMPREPLY[*]}"`, strings.Join(quoted, " "), len(words)-1)
				cmd := exec.Command("bash", "-c", code, "bash", script)
				cmd.Dir = cwd
				out, err := cmd.CombinedOutput()
				if err != nil || strings.TrimSpace(string(out)) != c.want {
					t.Errorf("bash completes %q to %q (%v), want %q", c.words, strings.TrimSpace(string(out)), err, c.want)
				}
			}
		default:
			// zsh and fish check the syntax when installed (CI has bash only).
			if _, err := exec.LookPath(sh); err != nil {
				t.Logf("%s not installed: its script's syntax is not checked", sh)
				continue
			}
			if out, err := exec.Command(sh, "-n", script).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh, err, out)
			}
		}
	}
	if r := cli(t, "completion", "tcsh"); r.code != ExitUsage || !strings.Contains(r.stderr, "bash, zsh, fish") {
		t.Errorf("completion tcsh: exit %d %q", r.code, r.stderr)
	}
}

// The one parser: repeated flags fill a slice, durations and env
// variables parse, `--` ends the flags, a bool takes =false.
func TestParseFlags(t *testing.T) {
	type params struct {
		Tags  []string `flag:"tag" help:"x"`
		Wait  int      `flag:"wait" env:"TEST_WAIT" help:"x"`
		Quiet bool     `flag:"quiet" short:"q" help:"x"`
		Out   string   `flag:"o" help:"x"`
		Rest  string   `arg:"rest" help:"x"`
	}
	var p params
	help, err := parseFlags([]string{"--tag", "a", "-tag=b", "-q", "--quiet=false", "-o", "f", "one", "--", "--two"},
		func(k string) string { return map[string]string{"TEST_WAIT": "7"}[k] }, targetOf(&p))
	want := params{Tags: []string{"a", "b"}, Wait: 7, Out: "f", Rest: "one --two"}
	if help || err != nil || !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v %v, want %+v", p, err, want)
	}
	if _, err := parseFlags([]string{"--wait"}, nil, targetOf(&p)); err == nil || !strings.Contains(err.Error(), "--wait needs a value (--wait N)") {
		t.Errorf("a flag without its value: %v", err)
	}
}

// Each models subcommand takes its own flags only: `models list --force`
// and `models import DIR --revision X` were accepted and ignored.
func TestModelsSubcommandFlags(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for _, args := range [][]string{{"models", "list", "--force"}, {"models", "import", t.TempDir(), "--revision", "x"}, {"models", "pull", "--name", "x"}} {
		r := cli(t, args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "unknown flag") || !strings.Contains(r.stderr, "recall models --help") {
			t.Errorf("%v: exit %d %q, want exit 2 naming the flag and the help", args, r.code, r.stderr)
		}
	}
}

// Every command's params read as fields (a bad tag, an unknown enum or an
// unsupported type panics in fields, and Register leaves that to the
// first use, so it is checked here for all), and no two of a command's
// flags share a name.
func TestEveryCommandsFields(t *testing.T) {
	for _, e := range All() {
		seen := map[string]bool{}
		for _, f := range e.Fields() {
			for _, name := range []string{f.Flag, f.Short, f.Alias} {
				if name == "" {
					continue
				}
				if seen[name] {
					t.Errorf("%s: two flags are named %q", e.Spec().Name, name)
				}
				seen[name] = true
			}
		}
	}
}
