package commands

import (
	"context"
	"fmt"
	"io"
)

// modelsMain is `recall models`; the embedder lands with the local model
// store.
func modelsMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "recall models: not available in this build")
	return ExitUsage
}
