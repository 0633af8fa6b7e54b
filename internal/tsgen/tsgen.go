// Package tsgen writes the TypeScript types the editor clients use
// (Targets) from the Go types that go on the wire: the params and results
// of every server command of the table (commands.ServerCommands) and the
// LSP's own surface (lsp.Wire). The clients import them instead of copying
// server knowledge by hand, and a test fails when a checked-in file is
// stale, so client and server cannot drift apart unnoticed.
//
// The TypeScript follows encoding/json, which is how every door encodes:
// json tag names; `omitempty` (or `omitzero`) makes a field optional; a
// pointer, slice or map field without it can be sent as null, so a
// result's field says `| null`; embedded structs are flattened; `json:"-"`
// and unexported fields are left out. A named string type becomes a union
// of its values, taken from the engine's lists (stringTypes): generation
// fails for one with no list rather than guess.
package tsgen

//go:generate go run ./cmd/tsgen -root ../..

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/render"
	"github.com/recallhq/recall/lsp"
)

// Targets are the generated files, relative to the repository root: one
// module, written to each client (each builds on its own).
var Targets = []string{"editors/vscode/src/protocol.gen.ts", "editors/opencode/src/protocol.gen.ts"}

// Regenerate is the command that rewrites Targets.
const Regenerate = "go generate ./internal/tsgen"

// union is a named string type in TypeScript: its name and its values.
type union struct {
	Name   string
	Values []string
	Doc    string
	goType bool // from stringTypes, not a table enum
}

// stringTypes are the named string types that may appear on the wire,
// each with the engine's one list of its values. query.Mode also takes
// ModeRecent: a result reports it for a query that asked for recent
// activity (it cannot be asked for).
var stringTypes = map[reflect.Type]union{
	reflect.TypeFor[query.Mode]():      {Name: "Mode", Values: strs(append(slices.Clone(query.Modes), query.ModeRecent, query.ModeLiteral, query.ModeRegex)), Doc: "query.Mode: how a search matches (a result says what ran: never auto; recent for a query that asked for recent activity; literal or regex for a match scan)."},
	reflect.TypeFor[query.Match]():     {Name: "Match", Values: strs(query.Matches), Doc: "query.Match: ranked search, or a literal or regex scan of the history's text."},
	reflect.TypeFor[query.Group]():     {Name: "Group", Values: strs(query.Groups), Doc: "query.Group: a few hits per session, or every hit."},
	reflect.TypeFor[query.Role]():      {Name: "Role", Values: strs(query.Roles), Doc: "query.Role: who wrote a message."},
	reflect.TypeFor[model.Kind]():      {Name: "Kind", Values: strs(model.Kinds), Doc: "model.Kind: what a part of a message is."},
	reflect.TypeFor[engine.ReadMode](): {Name: "ReadMode", Values: strs(engine.ReadModes), Doc: "engine.ReadMode: which window of a session a read returns."},
	reflect.TypeFor[render.Format]():   {Name: "Format", Values: strs(dedupe(append(slices.Clone(render.ReadFormats), render.ExportFormats...))), Doc: "render.Format: how a window or an export is written."},
}

// enumNames name the table's enums (a params field's `enum` tag) in
// TypeScript; their values are the enum's own. An enum missing here is
// written inline as a union of its values.
var enumNames = map[*commands.Enum]string{
	commands.Roles:         "Role",
	commands.Kinds:         "Kind",
	commands.SearchModes:   "SearchMode",
	commands.Groups:        "Group",
	commands.ReadModes:     "ReadMode",
	commands.Matches:       "Match",
	commands.Authors:       "Author",
	commands.ReadFormats:   "ReadFormat",
	commands.ExportFormats: "ExportFormat",
	commands.Shells:        "Shell",
}

// Generate returns the TypeScript module of the server's wire types.
func Generate() ([]byte, error) {
	return generate(commands.ServerCommands(), lsp.Wire())
}

func generate(entries []commands.Entry, wire lsp.WireSurface) ([]byte, error) {
	g := newGen()
	var reqs, cmds []method
	for _, e := range entries {
		spec := e.Spec()
		pt, rt := e.Types()
		g.paramFields(pt, e.Fields())
		params := "Record<string, never>" // an alias runs fixed params and refuses any others
		if spec.AliasOf == "" {
			params = g.ref(pt, input)
		}
		result := g.ref(rt, output)
		summary := spec.Summary
		if spec.AliasOf != "" {
			summary += " (takes no params)"
		}
		reqs = append(reqs, method{key: camel(spec.Name), name: "recall/" + spec.Name, summary: summary, params: params, result: result})
		cmds = append(cmds, method{key: camel(spec.Name), name: "recall." + spec.Name, summary: summary, params: params, result: result})
	}
	for _, m := range wire.Requests {
		reqs = append(reqs, g.wireMethod(m, input))
	}
	var notes, client []method
	for _, m := range wire.Notifications {
		notes = append(notes, g.wireMethod(m, output))
	}
	for _, m := range wire.ClientCommands {
		client = append(client, g.wireMethod(m, output))
	}
	g.ref(wire.InitOptions, input) // initializationOptions: its interface is all a client needs
	if err := g.err(); err != nil {
		return nil, err
	}
	if err := g.assignNames(); err != nil {
		return nil, err
	}
	for _, ms := range [][]method{reqs, cmds, notes, client} {
		for i := range ms {
			ms[i].params, ms[i].result = g.resolve(ms[i].params), g.resolve(ms[i].result)
		}
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go generate; DO NOT EDIT.\n// Regenerate with `%s` after a change to a command's\n", Regenerate)
	b.WriteString("// params or result or to the LSP's own surface (lsp.Wire); see\n// internal/tsgen for how Go types map to these.\n\n")
	b.WriteString("/** The URI scheme of transcripts (virtual documents). Clients open the\n * URIs the server gives them and never parse them. */\n")
	fmt.Fprintf(&b, "export const Scheme = %s;\n\n", quote(wire.Scheme))
	writeNames(&b, "Custom requests: every server command as recall/<name>, and recall's own requests.", "Requests", reqs)
	writeNames(&b, "workspace/executeCommand names of the same commands (the server advertises them).", "Commands", cmds)
	writeNames(&b, "Notifications the server sends.", "Notifications", notes)
	writeNames(&b, "Client-side commands the server puts into code lenses (the client registers them).", "ClientCommands", client)
	b.WriteString("/** JSON-RPC error codes the server answers with. */\nexport const ErrorCodes = {\n")
	for _, c := range wire.ErrorCodes {
		fmt.Fprintf(&b, "  %s: %d,\n", c.Name, c.Code)
	}
	b.WriteString("} as const;\n\n")

	writeMap(&b, "Each request's [params, result], for a typed request<M extends keyof RequestTypes>(method: M, params: RequestTypes[M][0]): Promise<RequestTypes[M][1]>.", "RequestTypes", reqs, true)
	writeMap(&b, "Each command's [argument, result] (executeCommand takes the argument as its only element).", "CommandTypes", cmds, true)
	writeMap(&b, "Each notification's payload.", "NotificationTypes", notes, false)
	writeMap(&b, "Each client command's argument.", "ClientCommandTypes", client, false)
	b.WriteString("/** The params of request M. */\nexport type RequestParams<M extends keyof RequestTypes> = RequestTypes[M][0];\n")
	b.WriteString("/** The result of request M. */\nexport type RequestResult<M extends keyof RequestTypes> = RequestTypes[M][1];\n\n")

	g.writeUnions(&b)
	g.writeStructs(&b)
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n'), nil
}

// Write generates the module and writes it to each of Targets under the
// repository root, leaving a file that is already current untouched.
func Write(root string) error {
	src, err := Generate()
	if err != nil {
		return fmt.Errorf("generate client types: %w", err)
	}
	for _, t := range Targets {
		path := filepath.Join(root, filepath.FromSlash(t))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, src) {
			continue
		}
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			return fmt.Errorf("write %s: %w (is -root the repository root?)", t, err)
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", t, err)
		}
	}
	return nil
}

// method is one row of the Requests, Commands, … constants and maps.
type method struct {
	key, name, summary string
	params, result     string // TypeScript (with name placeholders, see ref)
}

func (g *gen) wireMethod(m lsp.Method, dir direction) method {
	key := m.Name[strings.IndexAny(m.Name, "/.")+1:]
	out := method{key: camel(key), name: m.Name, summary: m.Summary, params: g.ref(m.Params, dir)}
	if m.Result != nil {
		out.result = g.ref(m.Result, output)
	}
	return out
}

func writeNames(b *bytes.Buffer, doc, name string, ms []method) {
	fmt.Fprintf(b, "/** %s */\nexport const %s = {\n", jsdoc(doc), name)
	for _, m := range sortedMethods(ms) {
		if m.summary != "" {
			fmt.Fprintf(b, "  /** %s */\n", jsdoc(m.summary))
		}
		fmt.Fprintf(b, "  %s: %s,\n", m.key, quote(m.name))
	}
	b.WriteString("} as const;\n\n")
}

func writeMap(b *bytes.Buffer, doc, name string, ms []method, pair bool) {
	fmt.Fprintf(b, "/** %s */\nexport interface %s {\n", jsdoc(doc), name)
	for _, m := range sortedMethods(ms) {
		if pair {
			fmt.Fprintf(b, "  %s: [%s, %s];\n", quote(m.name), m.params, m.result)
		} else {
			fmt.Fprintf(b, "  %s: %s;\n", quote(m.name), m.params)
		}
	}
	b.WriteString("}\n\n")
}

func sortedMethods(ms []method) []method {
	out := slices.Clone(ms)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// camel is a command name as a TypeScript key: "models list" → modelsList.
func camel(name string) string {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '-' || r == '_' || r == '/' || r == '.' })
	for i := 1; i < len(parts); i++ {
		parts[i] = upperFirst(parts[i])
	}
	return strings.Join(parts, "")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// quote is a TypeScript string literal (JSON's escaping is valid there).
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSpace(b.String())
}

// jsdoc makes text safe inside a /** */ comment.
func jsdoc(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "*/", "*\\/"), "\n", " ")
}

func strs[T ~string](vals []T) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

func dedupe[T comparable](vals []T) []T {
	var out []T
	for _, v := range vals {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
