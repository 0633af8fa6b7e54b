//go:build unix

package lsp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/commands"
)

// `recall lsp --help` (and `recall help lsp`) exits 0 and lists the lsp
// flags; before, it was "unexpected argument" and exit 2.
func TestLSPHelp(t *testing.T) {
	for _, args := range [][]string{{"lsp", "--help"}, {"help", "lsp"}, {"lsp", "-h"}} {
		var out, errb bytes.Buffer
		code := commands.Main(args, nil, &out, &errb)
		if code != 0 || errb.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
		for _, want := range []string{"usage: recall lsp", "--stdio", "--no-daemon", "--daemon ", "--socket PATH", "--daemon-idle DURATION", "RECALL_DAEMON_IDLE", "RECALL_NO_DAEMON", "--db PATH"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v does not list %q:\n%s", args, want, out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := commands.Main([]string{"lsp", "--tcp"}, nil, &out, &errb); code != commands.ExitUsage || !strings.Contains(errb.String(), "unknown flag --tcp") || out.Len() != 0 {
		t.Errorf("lsp --tcp: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// The built binary: completion is sourced as the docs say, and global
// flags go before the command.
func TestBinaryCompletionAndGlobals(t *testing.T) {
	bin := recallBinary(t)
	cmd := exec.Command("bash", "-c", `source <(recall completion bash) && complete -p recall`)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "complete -F _recall recall" {
		t.Errorf("bash completion: %v\n%s", err, out)
	}
	dir := t.TempDir()
	db, _ := filepath.Abs(fixtureDB)
	st := exec.Command(bin, "--db", db, "--index", filepath.Join(dir, "index.db"), "--json", "status")
	st.Env = append(os.Environ(), "XDG_DATA_HOME="+dir)
	if out, err := st.Output(); err != nil || !strings.Contains(string(out), `"sessions":10`) {
		t.Errorf("recall --db … status: %v\n%s", err, out)
	}
}
