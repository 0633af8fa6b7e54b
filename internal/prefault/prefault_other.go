//go:build !linux

// Package prefault maps the recall binary in at start on Linux (see
// prefault.go); elsewhere it does nothing.
package prefault

// Populated is how many bytes Populate mapped in: none here.
var Populated int

// Populate does nothing outside Linux.
func Populate() {}
