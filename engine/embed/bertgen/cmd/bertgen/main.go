// Command bertgen writes a random BERT model folder (Hugging Face layout) for
// tests and benchmarks: go run ./engine/embed/bertgen/cmd/bertgen -out DIR.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/recallhq/recall/engine/embed/bertgen"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("bertgen", flag.ContinueOnError)
	out := fs.String("out", "", "output folder (required)")
	size := fs.String("size", "tiny", "tiny or minilm")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "bertgen: -out is required")
		return 2
	}
	cfg := bertgen.Tiny(*seed)
	switch *size {
	case "tiny":
	case "minilm":
		cfg = bertgen.MiniLM(*seed)
	default:
		fmt.Fprintf(os.Stderr, "bertgen: unknown -size %q (want tiny or minilm)\n", *size)
		return 2
	}
	m, err := bertgen.Generate(cfg)
	if err == nil {
		err = m.WriteDir(*out, bertgen.AllFiles)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bertgen:", err)
		return 1
	}
	return 0
}
