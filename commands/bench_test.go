package commands

import "testing"

// BenchmarkDecodeSearch is the JSON door's cost before a search runs:
// strict decode, the enum checks from the tags, Validate. On the shared
// 2-core machine it was 20-28 µs, 29 allocs, as DecodeParams was before
// the typed table (20-28 µs, 28 allocs); a search takes milliseconds.
func BenchmarkDecodeSearch(b *testing.B) {
	c, _ := Lookup("search")
	raw := []byte(`{"query":"webhook retry storm","limit":10,"kind":"text,tool,output","role":"assistant","after":"2d","mode":"lexical"}`)
	for b.Loop() {
		if _, err := c.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}
