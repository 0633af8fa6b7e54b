//go:build !linux

// Package prefault maps the recall binary in at start on Linux (see
// prefault.go); elsewhere it does nothing.
package prefault

// Populated is how many bytes the start mapped in: none here.
func Populated() int { return 0 }

// Populate does nothing outside Linux.
func Populate() int { return 0 }
