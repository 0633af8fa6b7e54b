package commands

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Field describes one params field, read from its struct tags:
//
//	json:"name"     the wire name (JSON-RPC, --json); "" for CLI-only fields
//	flag:"name"     the CLI flag; a one-letter name is a single-dash flag (-o)
//	short:"q"       a one-letter alias of a long flag (-q for --quiet)
//	alias:"name"    another accepted spelling, not shown in help
//	arg:"1"         positional: "1", "2" or "rest" (the rest, joined by spaces)
//	meta:"N"        the value's placeholder in help (--limit N)
//	enum:"role"     the value (each item, with list) is one of an Enum
//	list:","        a comma-separated list (each item checked)
//	env:"VAR"       read from the environment first; a flag overrides it
//	help:"…"        one line of help
type Field struct {
	JSON  string
	Flag  string
	Short string
	Alias string
	Arg   string
	Meta  string
	Enum  *Enum
	List  bool
	Env   string
	Help  string
	Type  reflect.Type
	index int
}

// FlagName is the flag as people type it: -o, --limit.
func (f Field) FlagName() string {
	if len(f.Flag) == 1 {
		return "-" + f.Flag
	}
	return "--" + f.Flag
}

// placeholder is the value's name in help ("" for a bool).
func (f Field) placeholder() string {
	switch {
	case f.Type.Kind() == reflect.Bool:
		return ""
	case f.Meta != "":
		return f.Meta
	case f.Type == durationType:
		return "DURATION"
	case f.Type.Kind() == reflect.Int:
		return "N"
	}
	return "VALUE"
}

// name is how messages name the field: its wire name, else its flag.
func (f Field) name() string {
	if f.JSON != "" {
		return f.JSON
	}
	return f.FlagName()
}

var durationType = reflect.TypeFor[time.Duration]()

var fieldCache sync.Map // reflect.Type -> []Field

// fields reads the tags of a params struct. A bad tag is a programming
// error: it panics (at init, from Register).
func fields(t reflect.Type) []Field {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]Field)
	}
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		j := strings.Split(sf.Tag.Get("json"), ",")[0]
		if j == "-" {
			j = ""
		}
		f := Field{JSON: j, Flag: sf.Tag.Get("flag"), Short: sf.Tag.Get("short"), Alias: sf.Tag.Get("alias"),
			Arg: sf.Tag.Get("arg"), Meta: sf.Tag.Get("meta"), List: sf.Tag.Get("list") != "", Env: sf.Tag.Get("env"),
			Help: sf.Tag.Get("help"), Type: sf.Type, index: i}
		if f.JSON == "" && f.Flag == "" && f.Arg == "" {
			continue // internal state (parsed times)
		}
		if name := sf.Tag.Get("enum"); name != "" {
			e, ok := enums[name]
			if !ok {
				panic(fmt.Sprintf("%s.%s: no enum %q", t, sf.Name, name))
			}
			f.Enum = e
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Int, reflect.Bool:
		case reflect.Int64:
			if f.Type != durationType {
				panic(fmt.Sprintf("%s.%s: unsupported type %s", t, sf.Name, f.Type))
			}
		case reflect.Slice:
			if f.Type.Elem().Kind() != reflect.String {
				panic(fmt.Sprintf("%s.%s: unsupported type %s", t, sf.Name, f.Type))
			}
		default:
			panic(fmt.Sprintf("%s.%s: unsupported type %s", t, sf.Name, f.Type))
		}
		if (f.Flag != "" || f.Arg != "") && f.Help == "" {
			panic(fmt.Sprintf("%s.%s: a flag or argument needs a help tag", t, sf.Name))
		}
		out = append(out, f)
	}
	fieldCache.Store(t, out)
	return out
}

// set assigns a string from the command line (or the environment) to a
// field; a slice field gets one more item.
func (f Field) set(v reflect.Value, val string) error {
	fv := v.Field(f.index)
	switch {
	case f.Type == durationType:
		d, err := time.ParseDuration(val)
		if err != nil {
			return &ParamError{Field: f.name(), Msg: fmt.Sprintf("%q is not a duration; use one such as 30s, 5m or 1h", val)}
		}
		fv.SetInt(int64(d))
	case f.Type.Kind() == reflect.String:
		fv.SetString(val)
	case f.Type.Kind() == reflect.Int:
		n, err := strconv.Atoi(val)
		if err != nil {
			return &ParamError{Field: f.name(), Msg: fmt.Sprintf("%q is not a whole number", val)}
		}
		if n == 0 {
			// Every int param of the table is a limit whose zero value (no
			// field on the wire) is its default: typed, 0 is a mistake,
			// not a request for the default.
			return &ParamError{Field: f.name(), Msg: fmt.Sprintf("0 is not allowed; leave %s out for the default, or give a positive number: %s", f.FlagName(), f.Help)}
		}
		fv.SetInt(int64(n))
	case f.Type.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return &ParamError{Field: f.name(), Msg: fmt.Sprintf("%q is not true or false", val)}
		}
		fv.SetBool(b)
	case f.Type.Kind() == reflect.Slice:
		fv.Set(reflect.Append(fv, reflect.ValueOf(val)))
	}
	return nil
}

// setEnv assigns a field from its environment variable. A bool is on for
// any value but "", "0" and "false" (RECALL_NO_DAEMON=1, =yes).
func (f Field) setEnv(v reflect.Value, val string) error {
	if f.Type.Kind() == reflect.Bool {
		v.Field(f.index).SetBool(val != "" && val != "0" && val != "false")
		return nil
	}
	if err := f.set(v, val); err != nil {
		return &ParamError{Msg: fmt.Sprintf("%s=%q: %s", f.Env, val, err.(*ParamError).Msg)}
	}
	return nil
}

// checkEnums checks every enum field of a params struct value.
func checkEnums(v reflect.Value) error {
	for _, f := range fields(v.Type()) {
		if f.Enum == nil {
			continue
		}
		var vals []string
		switch fv := v.Field(f.index); fv.Kind() {
		case reflect.String:
			vals = []string{fv.String()}
			if f.List {
				vals = splitList(fv.String())
			}
		case reflect.Slice:
			vals = fv.Interface().([]string)
		}
		for _, val := range vals {
			if err := f.Enum.check(f.name(), val); err != nil {
				return err
			}
		}
	}
	return nil
}
