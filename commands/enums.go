package commands

import (
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/model"
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

// The enums of the table. Roles include system: OpenCode's v2 engine
// stores system messages, and the index keeps their role. Kinds are
// model.Kinds, "other" included (agent mentions, compaction markers, retry
// notes are indexed under it).
var (
	Roles         = &Enum{"role", []string{"user", "assistant", "system"}}
	Kinds         = &Enum{"kind", kindNames()}
	SearchModes   = &Enum{"mode", []string{"auto", "lexical", "semantic", "hybrid"}}
	Groups        = &Enum{"group", []string{"session", "none"}}
	ReadModes     = &Enum{"read mode", []string{"around", "next", "prev", "head", "tail", "full"}}
	ReadFormats   = &Enum{"read format", []string{"chatml", "markdown", "json"}}
	ExportFormats = &Enum{"export format", []string{"chatml", "markdown", "jsonl"}}
	Shells        = &Enum{"shell", []string{"bash", "zsh", "fish"}}
)

var enums = map[string]*Enum{
	"role": Roles, "kind": Kinds, "searchMode": SearchModes, "group": Groups, "readMode": ReadModes,
	"readFormat": ReadFormats, "exportFormat": ExportFormats, "shell": Shells,
}

func kindNames() []string {
	var out []string
	for _, k := range model.Kinds {
		out = append(out, string(k))
	}
	return out
}
