//go:build !unix

package daemon

import "errors"

// Supported: no Unix sockets here; `recall lsp` serves in-process.
const Supported = false

var errNoDaemon = errors.New("the shared daemon needs a Unix system")

func checkPrivateDir(string) error      { return errNoDaemon }
func isPrivateDir(string) bool          { return false }
func lockDaemon(string) (func(), error) { return nil, errNoDaemon }
func Spawn(string, []string) error      { return errNoDaemon }
