package opencode

import (
	"bytes"
	"encoding/json"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// jsonCodec is how the reader decodes OpenCode's JSON rows and renders a
// tool input compactly. Decoding was the largest single cost of a cold
// sync (a fifth of its CPU: encoding/json validates each row in a pass of
// its own before decoding it, and again for each raw field decoded later).
// go-json-experiment (the maintained prototype of encoding/json/v2, already
// in the module graph through go.lsp.dev/jsonrpc2) decodes in one pass;
// with its v1 options it keeps encoding/json's semantics (case-insensitive
// names, duplicate names, invalid UTF-8 replaced), which
// TestCodecMatchesEncodingJSON checks row by row against encoding/json.
type jsonCodec struct {
	unmarshal func(data []byte, v any) error
	// marshalCompact renders v as compact JSON, map keys sorted, HTML
	// characters not escaped.
	marshalCompact func(v any) ([]byte, error)
}

// v1Semantics is all of encoding/json's behaviour, for rendering.
var v1Semantics = jsonv1.DefaultOptionsV1()

// v1Decoding is the part of encoding/json's behaviour that decides what a
// row decodes to. All of DefaultOptionsV1 decoded slower than encoding/json
// itself (its legacy method and error semantics); these four options gave
// the same values for every row of the fixtures and the public clone, at
// about half encoding/json's CPU (BenchmarkDecodeV1).
var v1Decoding = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsonv2.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true),
)

var fastCodec = jsonCodec{
	unmarshal: func(data []byte, v any) error { return jsonv2.Unmarshal(data, v, v1Decoding) },
	marshalCompact: func(v any) ([]byte, error) {
		return jsonv2.Marshal(v, v1Semantics, jsontext.EscapeForHTML(false))
	},
}

// stdCodec is encoding/json: the reference the fast codec is held to.
var stdCodec = jsonCodec{
	unmarshal: json.Unmarshal,
	marshalCompact: func(v any) ([]byte, error) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return []byte(strings.TrimSuffix(b.String(), "\n")), nil
	},
}

// codec is what the reader uses (a var: the equivalence test swaps it).
var codec = fastCodec

func unmarshal(data []byte, v any) error { return codec.unmarshal(data, v) }
