// Command recall makes past OpenCode sessions searchable and readable from
// the command line, editors (over LSP) and OpenCode itself.
package main

import (
	"os"

	"github.com/recallhq/recall/commands"
	_ "github.com/recallhq/recall/internal/prefault" // maps the binary in at start (see there)
	_ "github.com/recallhq/recall/lsp"               // registers `recall lsp` in the command table
)

func main() { os.Exit(commands.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
