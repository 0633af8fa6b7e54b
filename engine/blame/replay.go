package blame

import (
	"encoding/json"
	"strings"
)

// Replay follows a file's text through its recorded calls, oldest first,
// from the first whole-file write on, as far as the calls can be replayed
// (an edit whose oldString is not in the text, a patch, or a person's
// change in between ends it until the next write). It serves one thing:
// a later write that rewrites the whole file wrote only the lines that
// differ from the text before it; the lines it kept are context, so their
// older authors keep them.
type Replay struct {
	text  string
	known bool
}

// Apply follows one call and returns its blocks, a write's kept lines
// marked as context. Calls must come oldest first.
func (r *Replay) Apply(tool, input string, blocks []Block) []Block {
	var in editJSON
	if json.Unmarshal([]byte(input), &in) != nil {
		r.known = false
		return blocks
	}
	switch tool {
	case "write":
		if r.known && len(blocks) == 1 {
			before := SplitLines(r.text)
			b := blocks[0]
			written := append([]bool(nil), b.Written...)
			if markShared(written, b.Lines, before) {
				blocks = []Block{{Lines: b.Lines, Written: written}}
			}
		}
		r.text, r.known = in.Content, true
	case "edit":
		r.replace(in.OldString, in.NewString)
	case "multiedit":
		for _, e := range in.Edits {
			r.replace(e.OldString, e.NewString)
		}
	default:
		r.known = false
	}
	return blocks
}

func (r *Replay) replace(oldS, newS string) {
	if !r.known || oldS == "" || !strings.Contains(r.text, oldS) {
		r.known = false
		return
	}
	r.text = strings.Replace(r.text, oldS, newS, 1)
}
