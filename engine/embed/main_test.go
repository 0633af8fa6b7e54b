package embed

import (
	"os"
	"runtime"
	"testing"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

func TestMain(m *testing.M) {
	code := m.Run()
	if miniLMDir != "" {
		os.RemoveAll(miniLMDir)
	}
	os.Exit(code)
}
