package index

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/recallhq/recall/engine/model"
)

// Bounds on what the index keeps of one part. OpenCode itself caps tool
// output near 50 KB; a 50 MB output from a custom tool must not blow up the
// index or a read window, so long texts keep their head and tail and the
// original length is stored beside them.
const (
	// OutputCap is the most of one tool output (or error) the index keeps,
	// stores and makes findable whole; a longer one keeps its first three
	// quarters and last quarter of it. It was 16 KiB, and a token only in
	// the middle of a 27 KB log was not found. OpenCode cuts its own tools'
	// outputs near 50 KB, so at 64 KiB every byte of those is findable.
	// BenchmarkIndexLongOutput (redactor on, a busy 2-core machine) costs
	// one part of 16 KiB 12 ms to index, 64 KiB 28 ms, 256 KiB 87 ms and
	// 1 MiB 810 ms (superlinear), at about 1.5 index bytes per source byte;
	// so a cap past OpenCode's own limit would buy bytes only custom tools
	// write at a cost a sync notices. Above it the literal/regex scan of
	// the source reads the rest.
	OutputCap  = 64 << 10
	OutputHead = OutputCap / 4 * 3 // bytes kept from the start of a tool output
	OutputTail = OutputCap / 4     // bytes kept from its end
	TextHead   = 48 << 10          // prose and reasoning: bytes kept from the start
	TextTail   = 8 << 10           // and from the end
)

// FirstPromptBytes is how much of a session's first prompt the listing
// keeps.
const FirstPromptBytes = 400

// TruncationMark separates the head and tail of a bounded text.
const TruncationMark = "\n…[truncated]…\n"

// Bound returns s cut to head+tail bytes (on rune boundaries) with a
// TruncationMark between them, and whether it cut anything.
func Bound(s string, head, tail int) (string, bool) {
	return model.Clip(s, head, tail, TruncationMark)
}

// maxStretch is how far a cut may move to keep a secret whole (a 4096-bit
// RSA key in PEM is 3.2 KB); a longer secret is dropped from the kept
// part instead.
const maxStretch = 4 << 10

// bound is Bound that never cuts inside a secret. Outputs redact the
// stored copy, and a cut piece of a secret (the head of a key, the end
// of a quoted password, a key body without its BEGIN line) is something
// no rule recognises. So the redactor's findings are looked up first and
// a cut inside one moves to its end, or its start when that is nearer
// than maxStretch allows.
func (ix *Index) bound(s string, head, tail int) string {
	if len(s) <= head+tail+len(TruncationMark) {
		return s
	}
	h := head
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s)
	if tail > 0 {
		t = len(s) - tail
		for t < len(s) && !utf8.RuneStart(s[t]) {
			t++
		}
	}
	if ix.redactor != nil {
		spans := ix.redactor.Spans(s)
		// Findings are merged, but the text their rules read may overlap;
		// len(spans) rounds settle any chain of moves.
		for round, moved := 0, true; moved && round <= len(spans); round++ {
			moved = false
			for _, sp := range spans {
				if sp.MatchStart < h && h < sp.MatchEnd {
					if sp.MatchEnd-h <= maxStretch {
						h = sp.MatchEnd
					} else {
						h = sp.MatchStart
					}
					moved = true
				}
				if tail > 0 && sp.MatchStart < t && t < sp.MatchEnd {
					if t-sp.MatchStart <= maxStretch {
						t = sp.MatchStart
					} else {
						t = sp.MatchEnd
					}
					moved = true
				}
			}
		}
	}
	if tail == 0 {
		if h >= len(s) {
			return s
		}
		return s[:h]
	}
	if h >= t {
		return s
	}
	return s[:h] + TruncationMark + s[t:]
}

// InputText renders a tool input (compact JSON) as the words worth
// searching: every string value, keys dropped, one per line.
func InputText(input string) string {
	if input == "" || input[0] != '{' {
		return input
	}
	var m map[string]any
	if json.Unmarshal([]byte(input), &m) != nil {
		return input
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			ks := make([]string, 0, len(x))
			for k := range x {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				walk(x[k])
			}
		case float64, bool:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.TrimSpace(strings.Trim(string(mustMarshal(x)), `"`)))
		}
	}
	for _, k := range keys {
		walk(m[k])
	}
	return b.String()
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// ToolDocText is the searchable text of a tool call's input side: its name,
// title and input values.
func ToolDocText(tool, title, input string) string {
	var b strings.Builder
	b.WriteString(tool)
	if title != "" {
		b.WriteByte('\n')
		b.WriteString(title)
	}
	if in := InputText(input); in != "" {
		b.WriteByte('\n')
		b.WriteString(in)
	}
	return b.String()
}

// Doc fields: which column of a part a search document was made from.
const (
	FieldText   = "text"
	FieldInput  = "input"
	FieldOutput = "output"
	FieldPaths  = "paths"
	FieldTitle  = "title"
)

// docSpec is one search document a part yields.
type docSpec struct {
	kind  model.Kind
	field string
	text  string
}

// partDocs lists the search documents of a stored part. What is left out on
// purpose: step bookkeeping and snapshots (never stored), compaction markers
// and agent mentions (no words worth finding).
func partDocs(p *storedPart) []docSpec {
	switch p.Kind {
	case model.KindText, model.KindReasoning, model.KindSubtask, model.KindFile, model.KindSummary:
		if strings.TrimSpace(p.Text) == "" {
			return nil
		}
		return []docSpec{{p.Kind, FieldText, p.Text}}
	case model.KindTool:
		docs := []docSpec{{model.KindTool, FieldInput, ToolDocText(p.Tool, p.Title, p.Input)}}
		// Recall's own tools (the OpenCode plugin's history_*) return copies
		// of other sessions: indexing those would make every search find
		// each hit twice. Their input (what the agent looked for) stays.
		if strings.HasPrefix(p.Tool, "history_") {
			return docs
		}
		if out := p.OutputOrError(); strings.TrimSpace(out) != "" {
			docs = append(docs, docSpec{model.KindOutput, FieldOutput, out})
		}
		return docs
	case model.KindPatch:
		if len(p.Paths) == 0 {
			return nil
		}
		return []docSpec{{model.KindPatch, FieldPaths, strings.Join(p.Paths, "\n")}}
	}
	return nil
}
