package blame

import (
	"reflect"
	"strings"
	"testing"
)

func TestAttribute(t *testing.T) {
	lines := func(s string) []string { return strings.Split(s, "\n") }
	edit := func(key int, time int64, old, new string) Op {
		return Op{Key: key, Time: time, Blocks: []Block{editBlock(old, new)}}
	}
	write := func(key int, time int64, text string) Op {
		l := SplitLines(text)
		return Op{Key: key, Time: time, Blocks: []Block{{Lines: l, Written: all(len(l), true)}}}
	}
	for _, tc := range []struct {
		name    string
		current string
		ops     []Op
		want    []int
	}{
		{"edit context is not written", "a := 1\nb := 2\nc := 3",
			[]Op{write(0, 1, "a := 1\nb := 0\nc := 3\n"), edit(1, 2, "a := 1\nb := 0\n", "a := 1\nb := 2\n")},
			[]int{0, 1, 0}},
		{"a changed line is nobody's", "func f() {\n\treturn 42 // by hand\n}",
			[]Op{write(0, 1, "func f() {\n\treturn 41\n}\n")},
			[]int{0, -1, 0}},
		{"a lone bracket does not anchor", "func f() {\n}\nfunc g() {\n}",
			[]Op{edit(0, 1, "", "}\n")},
			[]int{-1, -1, -1, -1}},
		{"newest writer wins", "x = 1\ny = 2",
			[]Op{write(0, 1, "x = 1\ny = 2\n"), write(1, 2, "x = 1\ny = 2\n")},
			[]int{1, 1}},
		{"lines inserted by a person inside a block", "one line\nby hand\ntwo line\nthree line",
			[]Op{write(0, 1, "one line\ntwo line\nthree line\n")},
			[]int{0, -1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Attribute(lines(tc.current), tc.ops); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFromTool(t *testing.T) {
	patch := `{"patchText":"*** Begin Patch\n*** Add File: /p/new.md\n+# t\n+body\n*** Update File: /p/a.yaml\n@@\n port: 1\n-level: info\n+level: debug\n*** End Patch"}`
	b, ok := FromTool("apply_patch", patch, "/p/a.yaml", "/p")
	if !ok || len(b) != 1 || !reflect.DeepEqual(b[0].Lines, []string{"port: 1", "level: debug"}) || !reflect.DeepEqual(b[0].Written, []bool{false, true}) {
		t.Errorf("update hunk: %+v %v", b, ok)
	}
	b, ok = FromTool("apply_patch", patch, "/p/new.md", "/p")
	if !ok || len(b) != 1 || !reflect.DeepEqual(b[0].Written, []bool{true, true}) {
		t.Errorf("add file: %+v %v", b, ok)
	}
	if _, ok := FromTool("edit", `{"filePath":"/p/other.go","oldString":"a","newString":"b"}`, "/p/a.go", "/p"); ok {
		t.Error("an edit of another file counted")
	}
	b, ok = FromTool("multiedit", `{"filePath":"a.go","edits":[{"oldString":"x","newString":"y"},{"oldString":"1","newString":"2"}]}`, "/p/a.go", "/p")
	if !ok || len(b) != 2 {
		t.Errorf("multiedit with a relative path: %+v %v", b, ok)
	}
	if _, ok := FromTool("edit", `{broken`, "/p/a.go", "/p"); ok {
		t.Error("broken input counted")
	}
}

// A later write that rewrites the whole file wrote only what changed: the
// lines it kept stay with their older authors.
func TestReplayRewrite(t *testing.T) {
	calls := []struct{ tool, input string }{
		{"write", `{"filePath":"/p/a.py","content":"alpha = 1\nbeta = 2\ngamma = 3\n"}`},
		{"edit", `{"filePath":"/p/a.py","oldString":"beta = 2\n","newString":"beta = 20\n"}`},
		{"write", `{"filePath":"/p/a.py","content":"alpha = 1\nbeta = 20\ngamma = 3\ndelta = 4\n"}`},
	}
	var r Replay
	var ops []Op
	for i, c := range calls {
		blocks, ok := FromTool(c.tool, c.input, "/p/a.py", "/p")
		if !ok {
			t.Fatalf("call %d not read", i)
		}
		ops = append(ops, Op{Key: i, Time: int64(i), Blocks: r.Apply(c.tool, c.input, blocks)})
	}
	got := Attribute([]string{"alpha = 1", "beta = 20", "gamma = 3", "delta = 4"}, ops)
	if want := []int{0, 1, 0, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// An edit that does not replay (a person changed the text between)
	// leaves the next write claiming all it wrote.
	r = Replay{}
	r.Apply("write", `{"content":"x = 1\n"}`, nil)
	r.Apply("edit", `{"oldString":"not there","newString":"y"}`, nil)
	b := r.Apply("write", `{"content":"x = 1\n"}`, []Block{{Lines: []string{"x = 1"}, Written: []bool{true}}})
	if !b[0].Written[0] {
		t.Error("a write after a broken replay lost its line")
	}
}
