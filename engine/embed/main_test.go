package embed

import (
	"os"
	"runtime"
	"testing"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

func TestMain(m *testing.M) {
	// RECALL_EMBED_KERNEL=avx2 runs the tests and benchmarks without the
	// AVX-512 kernel, to compare the two on one machine.
	if os.Getenv("RECALL_EMBED_KERNEL") == "avx2" {
		useAVX512 = false
	}
	code := m.Run()
	if miniLMDir != "" {
		os.RemoveAll(miniLMDir)
	}
	os.Exit(code)
}
