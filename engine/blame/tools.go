package blame

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Tools are the OpenCode tools whose calls change a file's text, as their
// inputs are recorded (tools/ocgen/opencode-db.md): edit {filePath,
// oldString, newString}, write {filePath, content}, multiedit {filePath,
// edits: [{oldString, newString}]}, apply_patch/patch {patchText}. The
// session-next engine names the path "path".
var Tools = []string{"edit", "write", "multiedit", "apply_patch", "patch"}

// IsTool reports whether tool changes files (one of Tools).
func IsTool(tool string) bool {
	for _, t := range Tools {
		if t == tool {
			return true
		}
	}
	return false
}

type editJSON struct {
	FilePath  string `json:"filePath"`
	Path      string `json:"path"`
	OldString string `json:"oldString"`
	NewString string `json:"newString"`
	Content   string `json:"content"`
	PatchText string `json:"patchText"`
	Patch     string `json:"patch"`
	Edits     []struct {
		OldString string `json:"oldString"`
		NewString string `json:"newString"`
	} `json:"edits"`
}

// FromTool reads the blocks a call of tool with input (JSON) left in the
// file path (absolute). dir is the session's directory, against which a
// relative path in the input is resolved. ok is false when the call did not
// change path or its input does not parse.
func FromTool(tool, input, path, dir string) (blocks []Block, ok bool) {
	var in editJSON
	if json.Unmarshal([]byte(input), &in) != nil {
		return nil, false
	}
	target := in.FilePath
	if target == "" {
		target = in.Path
	}
	switch tool {
	case "edit":
		if !samePath(target, path, dir) {
			return nil, false
		}
		return []Block{editBlock(in.OldString, in.NewString)}, true
	case "multiedit":
		if !samePath(target, path, dir) {
			return nil, false
		}
		for _, e := range in.Edits {
			blocks = append(blocks, editBlock(e.OldString, e.NewString))
		}
		return blocks, true
	case "write":
		if !samePath(target, path, dir) {
			return nil, false
		}
		lines := SplitLines(in.Content)
		return []Block{{Lines: lines, Written: all(len(lines), true)}}, true
	case "apply_patch", "patch":
		text := in.PatchText
		if text == "" {
			text = in.Patch
		}
		blocks = patchBlocks(text, path, dir)
		return blocks, len(blocks) > 0
	}
	return nil, false
}

// editBlock is newString with the lines it shares with oldString (by a
// longest common subsequence) marked as context: an edit that changes one
// line of five wrote one line.
func editBlock(oldS, newS string) Block {
	oldL, newL := SplitLines(oldS), SplitLines(newS)
	written := all(len(newL), true)
	markShared(written, newL, oldL)
	return Block{Lines: newL, Written: written}
}

// markShared marks as not written (false) each line of newL that a
// longest common subsequence shares with oldL, and reports whether the two
// were small enough to compare (MaxLCSCells); when not, written is left as
// it was.
func markShared(written []bool, newL, oldL []string) bool {
	ids := map[string]int32{}
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	n, o := intern(newL), intern(oldL)
	if len(n)*len(o) > MaxLCSCells {
		return false
	}
	for _, p := range lcs(n, o, func(i, j int) bool { return n[i] == o[j] }, 0) {
		written[p.b] = false
	}
	return true
}

// patchBlocks reads the hunks of an apply_patch text for path: "*** Add
// File:" (every + line written) and "*** Update File:" (each @@ hunk a
// block of its ' ' and '+' lines; '+' written). Other files' sections and
// "*** Delete File:" leave nothing.
func patchBlocks(text, path, dir string) []Block {
	var out []Block
	var cur *Block
	mine := false
	flush := func() {
		if cur != nil && len(cur.Lines) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "*** Add File:"), strings.HasPrefix(l, "*** Update File:"):
			flush()
			_, name, _ := strings.Cut(l, ":")
			mine = samePath(strings.TrimSpace(name), path, dir)
			if mine {
				cur = &Block{}
			}
		case strings.HasPrefix(l, "*** Move to:"):
			// A moved file's hunks apply to its new name.
			_, name, _ := strings.Cut(l, ":")
			was := mine
			mine = samePath(strings.TrimSpace(name), path, dir)
			if mine && !was {
				cur = &Block{}
			} else if !mine {
				cur = nil
			}
		case strings.HasPrefix(l, "***"):
			flush()
			mine = false
		case !mine:
		case strings.HasPrefix(l, "@@"):
			flush()
			cur = &Block{}
		case cur == nil:
		case strings.HasPrefix(l, "+"):
			cur.Lines = append(cur.Lines, l[1:])
			cur.Written = append(cur.Written, true)
		case strings.HasPrefix(l, " "):
			cur.Lines = append(cur.Lines, l[1:])
			cur.Written = append(cur.Written, false)
		case l == "":
			// An empty context line whose leading space was trimmed.
			cur.Lines = append(cur.Lines, "")
			cur.Written = append(cur.Written, false)
		}
	}
	flush()
	return out
}

// samePath reports whether name (from a tool input, absolute or relative to
// dir) is path.
func samePath(name, path, dir string) bool {
	if name == "" {
		return false
	}
	if !filepath.IsAbs(name) {
		if dir == "" {
			return false
		}
		name = filepath.Join(dir, name)
	}
	return filepath.Clean(name) == filepath.Clean(path)
}

// SplitLines splits text into lines without their line ends; a final line
// end adds no empty line.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	return strings.Split(s, "\n")
}

func all(n int, v bool) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = v
	}
	return out
}
