// Command tsgen writes the editor clients' protocol.gen.ts from the Go
// wire types (see package tsgen). Run it as `go generate ./internal/tsgen`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/recallhq/recall/internal/tsgen"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("tsgen", flag.ContinueOnError)
	root := fs.String("root", ".", "the repository root")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := tsgen.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		return 1
	}
	return 0
}
