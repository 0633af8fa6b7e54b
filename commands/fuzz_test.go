package commands

import (
	"testing"
)

// FuzzDecodeParams: for every command, any JSON-RPC params either decode
// and validate, or fail with a ParamError (-32602), never a panic or
// another error.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `[]`, `{"query":"x","limit":3}`, `{"limit":-1}`, `{"cursor":""}`, `{"after":"2d"}`,
		`{"after":"nope"}`, `{"kind":"tool,output"}`, `{"mode":"semantic"}`, `{"query":1}`, `{"x":1}`, `[1]`, `"str"`, `{`, `{"limit":1e99}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, c := range All() {
			call, err := c.Decode([]byte(raw))
			if err != nil && !IsParamError(err) {
				t.Fatalf("%s %q: not a ParamError: %v", c.Spec().Name, raw, err)
			}
			if err == nil && call.run == nil {
				t.Fatalf("%s %q: no call without error", c.Spec().Name, raw)
			}
		}
	})
}
