package lsp

import (
	"bytes"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// encodeResult encodes like the CLI (encoding/json, no HTML escaping), so
// every door returns byte-identical shapes.
func encodeResult(v any) (jsonrpc2.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return jsonrpc2.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// decode reads a method's LSP params (the protocol package's union-aware
// JSON); a malformed one is -32602.
func decode[T any](raw jsonrpc2.RawMessage) (*T, error) {
	var p T
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: %v", err)
	}
	return &p, nil
}

// decodeStrict decodes a JSON object, refusing unknown fields.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
