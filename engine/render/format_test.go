package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("", ReadFormats); err != nil || f != FormatChatML {
		t.Errorf(`"" = %q, %v; want chatml`, f, err)
	}
	if f, err := ParseFormat("jsonl", ExportFormats); err != nil || f != FormatJSONL {
		t.Errorf("jsonl for export = %q, %v", f, err)
	}
	_, err := ParseFormat("jsonl", ReadFormats)
	if err == nil || err.Error() != `"jsonl" is not one of chatml, markdown, json` {
		t.Errorf("jsonl for read: %v", err)
	}
}

func TestJSONLOneMessagePerLine(t *testing.T) {
	var b bytes.Buffer
	msgs := []model.Message{{ID: "msg_1", Parts: []model.Part{{Text: "a <b> & c"}}}, {ID: "msg_2"}}
	if err := JSONL(&b, msgs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"a <b> & c"`) {
		t.Errorf("jsonl: %q", b.String())
	}
}
