package opencode

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

// readAll is every message of every session of the history at path, as
// the reader yields them with codec c, and how many rows it skipped.
func readAll(t *testing.T, path string, c jsonCodec) ([]*model.Message, int) {
	t.Helper()
	old := codec
	codec = c
	defer func() { codec = old }()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sessions, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []*model.Message
	for _, ss := range sessions {
		if err := s.Messages(context.Background(), ss, func(m *model.Message) error {
			out = append(out, m)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := s.Skipped()
	return out, n
}

// TestCodecMatchesEncodingJSON holds the fast JSON codec to encoding/json:
// every history fixture (each era, the secrets histories with their
// escaped strings) and RECALL_BENCH_DB when set (make bench's clone) read
// to the same messages and parts, field for field.
func TestCodecMatchesEncodingJSON(t *testing.T) {
	var paths []string
	for _, name := range []string{"v1", "v2", "secrets", "secrets2", "blame", "legacy"} {
		paths = append(paths, copyFixture(t, name))
	}
	if db := os.Getenv("RECALL_BENCH_DB"); db != "" {
		paths = append(paths, db)
	}
	for _, p := range paths {
		want, wantSkipped := readAll(t, p, stdCodec)
		got, gotSkipped := readAll(t, p, fastCodec)
		if len(want) == 0 {
			t.Fatalf("%s: no messages read", p)
		}
		if len(got) != len(want) || gotSkipped != wantSkipped {
			t.Fatalf("%s: %d messages, %d skipped; encoding/json: %d, %d", p, len(got), gotSkipped, len(want), wantSkipped)
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s: message %s differs:\n got %+v\nwant %+v", p, want[i].ID, got[i], want[i])
			}
		}
	}
}

// TestCodecEdgeCases: rows OpenCode does not write today but a hand-edited
// or older history may hold decode as encoding/json decodes them.
func TestCodecEdgeCases(t *testing.T) {
	parts := []string{
		`{"type":"text","TEXT":"upper-case key","Synthetic":true}`,
		`{"type":"text","text":"first","text":"duplicate key wins last"}`,
		"{\"type\":\"text\",\"text\":\"invalid \xff\xfe utf-8\"}",
		`{"type":"text","text":null,"time":{"start":null}}`,
		`{"type":"text","text":"\u2028 line separator \u003chtml\u003e \ud83d\ude00 \ud800"}`,
		`{"type":"tool","tool":"bash","call_id":"snake case is another key","callID":"c1","state":{"status":"completed",
			"input":{"z":1,"a":"<b>&</b>","m":{"y":[1.5,2e10,-0,1e-7,12345678901234567890],"x":null},"s":"\u2028\n\t\u0001"},
			"output":"ok","metadata":{"exit":3,"truncated":true,"files":[{"filePath":"/a/b.go"}]}}}`,
		`{"type":"tool","tool":"bash","call_id":"only a snake-case key","Message-ID":"x","state":{"status":"completed"}}`,
		`{"type":"tool","tool":"read","callID":"c2","state":{"status":"completed","input":{"filePath":"/x.go","path":"/y.go","file":"/x.go"},"metadata":{"exit":"not a number"}}}`,
		`{"type":"tool","tool":"bash","callID":"c3","state":{"status":"error","input":"not an object","raw":"raw input","error":"boom"}}`,
		`{"type":"tool","tool":"bash","callID":"c4","state":{"status":"pending","input":{"a":1,}}}`,
		`{"type":"text","text":12}`,
		`{"type":"text","text":"trailing"} garbage`,
		`{"type":"file","filename":"a.txt","url":"file:///tmp/a.txt","source":{"path":"/tmp/a.txt","text":{"value":"hello"}}}`,
		`{"type":"subtask","description":"d","prompt":"p","agent":"general"}`,
		`{"type":"retry","attempt":2.0}`,
		`{"type":"retry","attempt":2.5}`,
		`[1,2,3]`,
		``,
	}
	messages := []string{
		`{"role":"assistant","modelID":"","model":{"modelID":"m1"},"summary":true,"error":{"name":"APIError","data":{"message":"bad"}}}`,
		`{"role":"user","summary":{"diffs":[{"file":"a.go"},{"file":""}]},"time":{"created":5}}`,
		`{"ROLE":"user","Mode":"compaction"}`,
		`{"role":"assistant","summary":"not a bool"}`,
		`{"role":7}`,
	}
	for _, raw := range parts {
		var want, got model.Part
		var wantOK, gotOK bool
		codec = stdCodec
		want, wantOK = (&Source{}).decodePart("s", "m", "p", []byte(raw))
		codec = fastCodec
		got, gotOK = (&Source{}).decodePart("s", "m", "p", []byte(raw))
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("part %s:\n got %v %+v\nwant %v %+v", raw, gotOK, got, wantOK, want)
		}
	}
	for _, raw := range messages {
		codec = stdCodec
		want, wantOK := (&Source{}).decodeMessage("s", "m", 1, []byte(raw))
		codec = fastCodec
		got, gotOK := (&Source{}).decodeMessage("s", "m", 1, []byte(raw))
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("message %s:\n got %v %+v\nwant %v %+v", raw, gotOK, got, wantOK, want)
		}
	}
}
