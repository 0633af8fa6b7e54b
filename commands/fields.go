package commands

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// field describes one params field, from its struct tags.
type field struct {
	index int
	json  string
	flag  string // CLI flag name ("" = not a flag)
	arg   string // positional: "1", "2" or "rest"
	help  string
	kind  reflect.Kind
}

func fieldsOf(p Params) []field {
	t := reflect.TypeOf(p).Elem()
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		j := strings.Split(sf.Tag.Get("json"), ",")[0]
		if j == "" || j == "-" {
			continue
		}
		out = append(out, field{index: i, json: j, flag: sf.Tag.Get("flag"), arg: sf.Tag.Get("arg"),
			help: sf.Tag.Get("help"), kind: sf.Type.Kind()})
	}
	return out
}

// FieldNames lists the JSON names of c's params.
func FieldNames(c *Command) []string {
	var out []string
	for _, f := range fieldsOf(c.NewParams()) {
		out = append(out, f.json)
	}
	sort.Strings(out)
	return out
}

// setField assigns a CLI string to a field.
func setField(p Params, f field, val string) error {
	v := reflect.ValueOf(p).Elem().Field(f.index)
	switch f.kind {
	case reflect.String:
		v.SetString(val)
	case reflect.Int:
		n, err := strconv.Atoi(val)
		if err != nil {
			return &ParamError{Field: f.json, Msg: fmt.Sprintf("%q is not a whole number", val)}
		}
		v.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(val)
		if err != nil {
			return &ParamError{Field: f.json, Msg: fmt.Sprintf("%q is not true or false", val)}
		}
		v.SetBool(b)
	default:
		return &ParamError{Field: f.json, Msg: "cannot be set from the command line"}
	}
	return nil
}
