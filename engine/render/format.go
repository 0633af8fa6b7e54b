package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/recallhq/recall/engine/model"
)

// Format is how a window or an export is written out. Formats live here
// because each is one of this package's renderings (or, for json and jsonl,
// the messages as they are).
type Format string

// The formats.
const (
	FormatChatML   Format = "chatml" // the default
	FormatMarkdown Format = "markdown"
	FormatJSON     Format = "json"  // read: the messages as one JSON value
	FormatJSONL    Format = "jsonl" // export: one message per line
)

// ReadFormats are the formats a read window comes in.
var ReadFormats = []Format{FormatChatML, FormatMarkdown, FormatJSON}

// ExportFormats are the formats a whole-session export comes in: jsonl
// instead of json, so a long session streams line by line.
var ExportFormats = []Format{FormatChatML, FormatMarkdown, FormatJSONL}

// ParseFormat reads one of valid ("" is FormatChatML).
func ParseFormat(s string, valid []Format) (Format, error) {
	if s == "" {
		return FormatChatML, nil
	}
	for _, f := range valid {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(valid))
	for i, f := range valid {
		names[i] = string(f)
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
}

// JSONL writes msgs one JSON object per line (HTML left unescaped: the
// reader is a program, not a browser).
func JSONL(w io.Writer, msgs []model.Message) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return nil
}

// Time renders a Unix-ms time the way every result carries it (RFC 3339,
// UTC, with the milliseconds); 0 is "".
func Time(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}
