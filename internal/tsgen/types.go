package tsgen

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/recallhq/recall/commands"
)

// direction says which way a type travels: a client writes params
// (input) and reads results (output). It decides what may be left out or
// sent as null.
type direction uint8

const (
	input direction = 1 << iota
	output
)

type gen struct {
	structs map[reflect.Type]direction // every named struct reached, with the ways it travels
	ids     map[reflect.Type]int       // placeholder ids, see ref
	names   *strings.Replacer          // placeholder -> TypeScript name, once assigned
	tsNames map[reflect.Type]string
	unions  map[string]union // by TypeScript name
	// params holds the table's field descriptions (help, enums) of each
	// params type, by json name.
	params map[reflect.Type]map[string]commands.Field
	errs   []error
}

func newGen() *gen {
	return &gen{structs: map[reflect.Type]direction{}, ids: map[reflect.Type]int{}, tsNames: map[reflect.Type]string{},
		unions: map[string]union{}, params: map[reflect.Type]map[string]commands.Field{}}
}

func (g *gen) fail(where string, format string, a ...any) {
	g.errs = append(g.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, a...)))
}

func (g *gen) err() error { return errors.Join(g.errs...) }

func (g *gen) paramFields(t reflect.Type, fields []commands.Field) {
	m := map[string]commands.Field{}
	for _, f := range fields {
		if f.JSON != "" {
			m[f.JSON] = f
		}
	}
	g.params[t] = m
}

// ref walks t (recording the structs and unions it reaches) and returns
// its TypeScript. Struct names are placeholders until every type is known
// (two packages may both have a Hit); resolve replaces them.
func (g *gen) ref(t reflect.Type, dir direction) string {
	g.walk(t, dir, typeName(t))
	return g.expr(t, dir)
}

func (g *gen) resolve(s string) string { return g.names.Replace(s) }

func placeholder(id int) string { return "\x00" + strconv.Itoa(id) + "\x00" }

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	numberType    = reflect.TypeFor[json.Number]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	unmarshalType = reflect.TypeFor[json.Unmarshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// overrides are the TypeScript of the wire types that encode (or decode)
// themselves: a MarshalJSON may write anything, and an UnmarshalJSON may
// accept more than its struct (a string or a list, say), so such a type
// needs its TypeScript said here, by hand, next to a comment on why.
var overrides = map[reflect.Type]string{
	// SourceList takes one source name, a comma list, or a list of names.
	reflect.TypeFor[commands.SourceList](): "string | string[]",
	// DBOption takes one path ("NAME=PATH" names it), or a list of paths and
	// {name, path, index} objects.
	reflect.TypeFor[commands.DBOption](): "string | Array<string | { name?: string; path: string; index?: string }>",
}

// special is the TypeScript of a type that encodes itself ("" for one
// that encoding/json walks), or an error for one this generator cannot
// know.
func special(t reflect.Type) (string, error) {
	if s, ok := overrides[t]; ok {
		return s, nil
	}
	switch t {
	case timeType:
		return "string", nil // RFC 3339
	case rawType:
		return "unknown", nil
	case numberType:
		return "number", nil
	}
	if t.Kind() == reflect.Interface {
		return "", nil
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return "", fmt.Errorf("%s has its own JSON encoding (MarshalJSON); add its TypeScript to overrides in internal/tsgen", t)
	}
	if t.Implements(unmarshalType) || reflect.PointerTo(t).Implements(unmarshalType) {
		return "", fmt.Errorf("%s has its own JSON decoding (UnmarshalJSON); add the TypeScript of what it accepts to overrides in internal/tsgen", t)
	}
	if t.Implements(textType) || reflect.PointerTo(t).Implements(textType) {
		return "string", nil
	}
	return "", nil
}

func (g *gen) walk(t reflect.Type, dir direction, where string) {
	if s, err := special(t); err != nil {
		g.fail(where, "%v", err)
		return
	} else if s != "" {
		return
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64,
		reflect.Interface:
	case reflect.String:
		if t.PkgPath() == "" {
			return
		}
		u, ok := stringTypes[t]
		if !ok {
			g.fail(where, "the named string type %s has no list of values; add it to stringTypes in internal/tsgen (from the engine's exported list), or to overrides as \"string\" if its values are open (a name, an id)", t)
			return
		}
		u.goType = true
		g.addUnion(u, t.String())
	case reflect.Pointer, reflect.Slice, reflect.Array:
		g.walk(t.Elem(), dir, where+"[]")
	case reflect.Map:
		k := t.Key()
		switch {
		case k.Kind() == reflect.String, k.Kind() >= reflect.Int && k.Kind() <= reflect.Uint64, k.Implements(textType):
		default:
			g.fail(where, "map key %s does not encode as JSON", k)
		}
		g.walk(t.Elem(), dir, where+"[key]")
	case reflect.Struct:
		if t.Name() != "" {
			if g.structs[t]&dir == dir {
				return
			}
			g.structs[t] |= dir
			if _, ok := g.ids[t]; !ok {
				g.ids[t] = len(g.ids)
			}
			where = typeName(t)
		}
		for _, f := range jsonFields(t) {
			g.walk(f.typ, dir, where+"."+f.name)
			if pf, ok := g.params[t][f.name]; ok && pf.Enum != nil {
				g.enumUnion(pf.Enum, where+"."+f.name)
			}
		}
	default:
		g.fail(where, "%s (%s) does not encode as JSON", t, t.Kind())
	}
}

func (g *gen) addUnion(u union, from string) {
	if prev, ok := g.unions[u.Name]; ok {
		if !sameValues(prev.Values, u.Values) {
			g.fail(from, "the TypeScript type %s would be both %q and %q; give one of them another name in internal/tsgen", u.Name, prev.Values, u.Values)
		}
		if u.goType && !prev.goType { // the Go type's doc says more than "the values of a param"
			g.unions[u.Name] = u
		}
		return
	}
	g.unions[u.Name] = u
}

func sameValues(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// expr is t's TypeScript (its own nullability is the caller's: see
// nullable).
func (g *gen) expr(t reflect.Type, dir direction) string {
	if s, _ := special(t); s != "" {
		return s
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		if t.PkgPath() == "" {
			return "string"
		}
		return stringTypes[t].Name
	case reflect.Pointer:
		return g.expr(t.Elem(), dir)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // []byte is base64
		}
		return paren(g.elem(t.Elem(), dir)) + "[]"
	case reflect.Array:
		e := g.elem(t.Elem(), dir)
		if t.Len() > 8 {
			return paren(e) + "[]"
		}
		return "[" + strings.TrimSuffix(strings.Repeat(e+", ", t.Len()), ", ") + "]"
	case reflect.Map:
		return "Record<string, " + g.elem(t.Elem(), dir) + ">"
	case reflect.Struct:
		if t.Name() != "" {
			return placeholder(g.ids[t])
		}
		var parts []string
		for _, f := range g.fields(t, dir) {
			parts = append(parts, f.name+f.opt+": "+f.ts)
		}
		if len(parts) == 0 {
			return "Record<string, never>"
		}
		return "{ " + strings.Join(parts, "; ") + " }"
	case reflect.Interface:
		return "unknown"
	}
	return "number" // the integer and float kinds; walk refused the rest
}

// elem is the TypeScript of a slice element or map value, which is null
// when the Go value is a nil pointer, slice or map.
func (g *gen) elem(t reflect.Type, dir direction) string {
	e := g.expr(t, dir)
	if dir&output != 0 && nullable(t) {
		e += " | null"
	}
	return e
}

// nullable: encoding/json writes null for a nil value of t (interfaces
// are unknown, which has null already).
func nullable(t reflect.Type) bool {
	if s, _ := special(t); s != "" {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return true
	}
	return false
}

func paren(e string) string {
	if strings.Contains(e, " | ") {
		return "(" + e + ")"
	}
	return e
}

// tsField is one property of an interface.
type tsField struct {
	name, opt, ts, doc string
}

// fields renders the properties of struct t, which travels dir.
func (g *gen) fields(t reflect.Type, dir direction) []tsField {
	docs := g.params[t]
	var out []tsField
	for _, f := range jsonFields(t) {
		ts := g.expr(f.typ, dir)
		var doc string
		if pf, ok := docs[f.name]; ok {
			doc = pf.Help
			if e := pf.Enum; e != nil {
				u := g.enumUnion(e, typeName(t)+"."+f.name)
				switch {
				case pf.List && f.typ.Kind() == reflect.String:
					doc += " (comma-separated: " + strings.Join(e.Values, ", ") + ")"
				case f.typ.Kind() == reflect.String:
					ts = u
				case f.typ.Kind() == reflect.Slice:
					ts = paren(u) + "[]"
				}
			}
		}
		if f.quoted {
			switch f.typ.Kind() {
			case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
				reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				ts = "string"
			}
		}
		// omitempty leaves out nil pointers, slices and maps, so such a
		// field is never null; without it a result sends null for them. A
		// client may leave out a pointer param (it decodes to nil).
		opt := f.omit || f.viaPtr || (dir&input != 0 && f.typ.Kind() == reflect.Pointer)
		if dir&output != 0 && !f.omit && nullable(f.typ) {
			ts += " | null"
		}
		o := ""
		if opt {
			o = "?"
		}
		out = append(out, tsField{name: propName(f.name), opt: o, ts: ts, doc: doc})
	}
	return out
}

// enumUnion is the TypeScript of a table enum: its name when it has one,
// else its values inline.
func (g *gen) enumUnion(e *commands.Enum, where string) string {
	u := union{Name: enumNames[e], Values: e.Values, Doc: "The values of a " + e.Name + " param."}
	if u.Name == "" {
		var vals []string
		for _, v := range e.Values {
			vals = append(vals, quote(v))
		}
		return strings.Join(vals, " | ")
	}
	g.addUnion(u, where)
	return u.Name
}

var identRE = func(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// propName quotes a json name that is not a TypeScript identifier.
func propName(s string) string {
	if identRE(s) {
		return s
	}
	return quote(s)
}

// assignNames names every struct: its Go name, or its package and Go name
// where two packages share one.
func (g *gen) assignNames() error {
	byBase := map[string][]reflect.Type{}
	for t := range g.structs {
		b := baseName(t)
		byBase[b] = append(byBase[b], t)
	}
	taken := map[string]string{}
	for _, n := range reserved {
		taken[n] = "a name this module declares itself"
	}
	for n := range g.unions {
		taken[n] = "a union of string values"
		taken[n+"Values"] = "the values of " + n
	}
	var pairs []string
	bases := make([]string, 0, len(byBase))
	for b := range byBase {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	for _, b := range bases {
		ts := byBase[b]
		sort.Slice(ts, func(i, j int) bool { return ts[i].PkgPath() < ts[j].PkgPath() })
		for _, t := range ts {
			name := b
			if len(ts) > 1 {
				name = upperFirst(pkgName(t)) + b
			}
			if prev, ok := taken[name]; ok {
				return fmt.Errorf("%s: its TypeScript name %s is already %s; rename one in internal/tsgen", t, name, prev)
			}
			taken[name] = t.String()
			g.tsNames[t] = name
			pairs = append(pairs, placeholder(g.ids[t]), name)
		}
	}
	g.names = strings.NewReplacer(pairs...)
	return nil
}

// reserved are the names the module declares besides the types.
var reserved = []string{"Scheme", "Requests", "Commands", "Notifications", "ClientCommands", "ErrorCodes",
	"RequestTypes", "CommandTypes", "NotificationTypes", "ClientCommandTypes", "RequestParams", "RequestResult"}

func baseName(t reflect.Type) string {
	name := t.Name()
	base, args, generic := strings.Cut(name, "[")
	if generic { // Page[github.com/x/engine.Hit] -> PageHit
		for _, a := range strings.Split(strings.TrimSuffix(args, "]"), ",") {
			a = a[strings.LastIndexAny(a, "./")+1:]
			base += upperFirst(strings.Map(func(r rune) rune {
				if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, a))
		}
	}
	return upperFirst(base)
}

func pkgName(t reflect.Type) string {
	p := t.PkgPath()
	return p[strings.LastIndexByte(p, '/')+1:]
}

func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return pkgName(t) + "." + t.Name()
	}
	return t.String()
}

func (g *gen) writeUnions(b *bytes.Buffer) {
	names := make([]string, 0, len(g.unions))
	for n := range g.unions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var vals []string
		for _, v := range g.unions[n].Values {
			vals = append(vals, quote(v))
		}
		// The values at run time too (a client validates or offers them
		// from the same list), and the type from them.
		if d := g.unions[n].Doc; d != "" {
			fmt.Fprintf(b, "/** %s */\n", jsdoc(d))
		}
		fmt.Fprintf(b, "export const %sValues = [%s] as const;\n", n, strings.Join(vals, ", "))
		fmt.Fprintf(b, "export type %s = (typeof %sValues)[number];\n\n", n, n)
	}
}

func (g *gen) writeStructs(b *bytes.Buffer) {
	ts := make([]reflect.Type, 0, len(g.structs))
	for t := range g.structs {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return g.tsNames[ts[i]] < g.tsNames[ts[j]] })
	for _, t := range ts {
		dir := g.structs[t]
		how := map[direction]string{input: "params", output: "a result", input | output: "params and results"}[dir]
		fmt.Fprintf(b, "/** %s (in %s). */\n", typeName(t), how)
		fs := g.fields(t, dir)
		if len(fs) == 0 {
			fmt.Fprintf(b, "export type %s = Record<string, never>;\n\n", g.tsNames[t])
			continue
		}
		fmt.Fprintf(b, "export interface %s {\n", g.tsNames[t])
		for _, f := range fs {
			if f.doc != "" {
				fmt.Fprintf(b, "  /** %s */\n", jsdoc(f.doc))
			}
			fmt.Fprintf(b, "  %s%s: %s;\n", f.name, f.opt, g.resolve(f.ts))
		}
		b.WriteString("}\n\n")
	}
}

// jsonField is a field as encoding/json sees it.
type jsonField struct {
	name   string
	typ    reflect.Type
	index  []int
	tagged bool // the name comes from a json tag
	omit   bool // omitempty or omitzero
	quoted bool // ,string
	// viaPtr: the field is promoted from an embedded pointer, so it is
	// left out altogether when that pointer is nil.
	viaPtr bool
}

// jsonFields lists t's fields in encoding/json's order with its rules:
// exported fields (and those promoted from embedded structs, exported or
// not) under their json names, `json:"-"` left out, and of fields sharing
// a name the shallowest wins, a tagged one among equals; a tie drops them
// all.
func jsonFields(t reflect.Type) []jsonField {
	type level struct {
		t      reflect.Type
		index  []int
		viaPtr bool
	}
	var all []jsonField
	depth := map[*jsonField]int{}
	var depths []int
	next := []level{{t: t}}
	seen := map[reflect.Type]bool{}
	for d := 0; len(next) > 0; d++ {
		cur := next
		next = nil
		for _, l := range cur {
			if seen[l.t] {
				continue
			}
			seen[l.t] = true
			for i := 0; i < l.t.NumField(); i++ {
				sf := l.t.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(append([]int(nil), l.index...), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{t: ft, index: index, viaPtr: l.viaPtr || sf.Type.Kind() == reflect.Pointer})
					continue
				}
				f := jsonField{name: name, typ: sf.Type, index: index, tagged: name != "", viaPtr: l.viaPtr}
				if name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						f.omit = true
					case "string":
						f.quoted = true
					}
				}
				all = append(all, f)
				depths = append(depths, d)
			}
		}
	}
	for i := range all {
		depth[&all[i]] = depths[i]
	}
	byName := map[string][]*jsonField{}
	for i := range all {
		byName[all[i].name] = append(byName[all[i].name], &all[i])
	}
	var out []jsonField
	for _, fs := range byName {
		min := depth[fs[0]]
		for _, f := range fs {
			if depth[f] < min {
				min = depth[f]
			}
		}
		var top []*jsonField
		for _, f := range fs {
			if depth[f] == min {
				top = append(top, f)
			}
		}
		if len(top) > 1 {
			var tagged []*jsonField
			for _, f := range top {
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
			top = tagged
		}
		if len(top) == 1 {
			out = append(out, *top[0])
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].index, out[j].index
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
	return out
}
