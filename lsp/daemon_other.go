//go:build !unix

package lsp

import "errors"

// daemonSupported: no Unix sockets here; `recall lsp` serves in-process.
const daemonSupported = false

var errNoDaemon = errors.New("the shared daemon needs a Unix system")

func checkPrivateDir(string) error       { return errNoDaemon }
func lockDaemon(string) (func(), error)  { return nil, errNoDaemon }
func spawnDaemon(string, []string) error { return errNoDaemon }
