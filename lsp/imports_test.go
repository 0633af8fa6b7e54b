package lsp

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineIsTransportFree enforces the layering: nothing under engine/
// may import lsp or go.lsp.dev, directly or through a dependency.
func TestEngineIsTransportFree(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false", "github.com/recallhq/recall/engine/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "go.lsp.dev/") || pkg == "github.com/recallhq/recall/lsp" || pkg == "github.com/recallhq/recall/commands" {
			t.Errorf("engine depends on %s; the engine must stay transport-free", pkg)
		}
	}
}
