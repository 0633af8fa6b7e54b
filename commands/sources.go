package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine"
)

// SourceList is the `source` param of the commands that take one: which
// histories to ask. On the wire it is a name or a list of names
// ("laptop", ["laptop", "desktop"]); on the command line --source NAME,
// repeated or a comma list. Empty: every source.
type SourceList []string

// UnmarshalJSON takes a string or a list of strings.
func (l *SourceList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = SourceList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return &ParamError{Field: "source", Msg: "expected a source name or a list of names, as in \"laptop\" or [\"laptop\", \"desktop\"]"}
	}
	*l = list
	return nil
}

// names are the list's names, comma lists split, blanks dropped.
func (l SourceList) names() []string {
	var out []string
	for _, v := range l {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// one is the list's single name ("" for none); several are a ParamError
// for a command that reads from one source.
func (l SourceList) one() (string, error) {
	n := l.names()
	switch len(n) {
	case 0:
		return "", nil
	case 1:
		return n[0], nil
	}
	return "", &ParamError{Field: "source", Msg: fmt.Sprintf("takes one source here, not %d (%s)", len(n), strings.Join(n, ", "))}
}

// SourceSpecs are the --db flags as the engine's sources.
func SourceSpecs(dbs []string) ([]engine.SourceSpec, error) {
	var out []engine.SourceSpec
	for _, v := range dbs {
		spec, err := engine.ParseSourceFlag(v)
		if err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	return out, nil
}

// mixed reports whether sources holds more than one name: text output
// names each row's source then.
func mixed(sources ...string) bool {
	for _, s := range sources {
		if s != sources[0] {
			return true
		}
	}
	return false
}

// DBOption is the LSP's initializationOptions.db (and the OpenCode
// plugin's db option): one history or several, each a path ("NAME=PATH"
// names it, as --db does) or {name, path, index}.
//
//	"db": "~/.local/share/opencode/opencode.db"
//	"db": ["/sync/laptop/opencode.db", "desktop=/sync/desktop/opencode.db"]
//	"db": [{"name": "laptop", "path": "/sync/laptop/opencode.db", "index": "/idx/laptop.db"}]
type DBOption []engine.SourceSpec

// UnmarshalJSON takes a string, or a list of strings and objects.
func (d *DBOption) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	bad := func(msg string) error {
		return &ParamError{Field: "db", Msg: msg + `; want a path, or a list of paths and {"name", "path", "index"} objects`}
	}
	var items []json.RawMessage
	switch {
	case len(b) > 0 && b[0] == '"':
		items = []json.RawMessage{b}
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &items); err != nil {
			return bad(err.Error())
		}
	case string(b) == "null":
		*d = nil
		return nil
	default:
		return bad("got " + clipText(string(b), 40))
	}
	var out DBOption
	for i, it := range items {
		it = bytes.TrimSpace(it)
		if len(it) > 0 && it[0] == '"' {
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return bad(err.Error())
			}
			if s == "" {
				continue
			}
			spec, err := engine.ParseSourceFlag(s)
			if err != nil {
				return bad(err.Error())
			}
			out = append(out, spec)
			continue
		}
		var spec struct {
			Name  string `json:"name"`
			Path  string `json:"path"`
			Index string `json:"index"`
		}
		dec := json.NewDecoder(bytes.NewReader(it))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			return bad(fmt.Sprintf("item %d: %v", i+1, err))
		}
		if spec.Path == "" {
			return bad(fmt.Sprintf("item %d has no path", i+1))
		}
		out = append(out, engine.SourceSpec{Name: spec.Name, Path: spec.Path, Index: spec.Index})
	}
	*d = out
	return nil
}
