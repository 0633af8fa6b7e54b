package commands

import (
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/render"
)

// Enum is the one list of a field's valid values: validation, its error,
// help and shell completion all read it.
type Enum struct {
	Name   string
	Values []string
}

func (e *Enum) check(field, val string) error {
	if val == "" {
		return nil
	}
	for _, v := range e.Values {
		if val == v {
			return nil
		}
	}
	return &ParamError{Field: field, Msg: fmt.Sprintf("%q is not one of %s", val, strings.Join(e.Values, ", "))}
}

// The enums of the table, each from the engine's one list of valid values
// (the engine validates the same values). Roles include system: OpenCode's
// v2 engine stores system messages, and the index keeps their role. Kinds
// are model.Kinds, "other" included (agent mentions, compaction markers,
// retry notes are indexed under it).
var (
	Roles         = &Enum{"role", enumValues(query.Roles)}
	Kinds         = &Enum{"kind", enumValues(model.Kinds)}
	SearchModes   = &Enum{"mode", enumValues(query.Modes)}
	Groups        = &Enum{"group", enumValues(query.Groups)}
	ReadModes     = &Enum{"read mode", enumValues(engine.ReadModes)}
	ReadFormats   = &Enum{"read format", enumValues(render.ReadFormats)}
	ExportFormats = &Enum{"export format", enumValues(render.ExportFormats)}
	Shells        = &Enum{"shell", []string{"bash", "zsh", "fish"}}
	Matches       = &Enum{"match", enumValues(query.Matches)}
	Authors       = &Enum{"author", enumValues(query.Authors)}
)

var enums = map[string]*Enum{
	"role": Roles, "kind": Kinds, "searchMode": SearchModes, "group": Groups, "readMode": ReadModes,
	"readFormat": ReadFormats, "exportFormat": ExportFormats, "shell": Shells,
	"match": Matches, "author": Authors,
}

func enumValues[T ~string](vals []T) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}
