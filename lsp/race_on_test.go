//go:build race

package lsp

// raceEnabled: the race detector slows the engine about tenfold; the load
// test shrinks its history to keep its sync at a few seconds.
const raceEnabled = true
