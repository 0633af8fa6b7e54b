package lsp

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// wordAt is the [A-Za-z0-9_] word at a UTF-16 position, with its range.
func wordAt(text string, pos protocol.Position) (string, protocol.Range, bool) {
	start := 0
	for i := uint32(0); i < pos.Line; i++ {
		j := strings.IndexByte(text[start:], '\n')
		if j < 0 {
			return "", protocol.Range{}, false
		}
		start += j + 1
	}
	line := text[start:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	off := byteOffset(line, pos.Character)
	a, b := off, off
	for a > 0 && isWordByte(line[a-1]) {
		a--
	}
	for b < len(line) && isWordByte(line[b]) {
		b++
	}
	if a == b {
		return "", protocol.Range{}, false
	}
	rng := protocol.Range{Start: protocol.Position{Line: pos.Line, Character: utf16Len(line[:a])},
		End: protocol.Position{Line: pos.Line, Character: utf16Len(line[:b])}}
	return line[a:b], rng, true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// byteOffset converts a UTF-16 column to a byte offset in line.
func byteOffset(line string, col uint32) int {
	units, off := uint32(0), 0
	for off < len(line) && units < col {
		r, size := utf8.DecodeRuneInString(line[off:])
		units += uint32(utf16.RuneLen(r))
		if utf16.RuneLen(r) < 0 {
			units++
		}
		off += size
	}
	return off
}

func utf16Len(s string) uint32 {
	n := uint32(0)
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += uint32(l)
		} else {
			n++
		}
	}
	return n
}

// applyRange replaces a UTF-16 range of text.
func applyRange(text string, r protocol.Range, with string) string {
	offset := func(p protocol.Position) int {
		start := 0
		for i := uint32(0); i < p.Line; i++ {
			j := strings.IndexByte(text[start:], '\n')
			if j < 0 {
				return len(text)
			}
			start += j + 1
		}
		line := text[start:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		return start + byteOffset(line, p.Character)
	}
	a, b := offset(r.Start), offset(r.End)
	if a > b {
		a, b = b, a
	}
	return text[:a] + with + text[b:]
}
