package frame

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// The reader's outcomes, message by message, for each kind of bad
// framing: every case ends with the good message it must still find.
func TestReader(t *testing.T) {
	good := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	body := `{"jsonrpc":"2.0","id":1,"method":"recall/status"}`
	frame := func(n int, b string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", n, b) }
	cases := []struct {
		name, in string
		want     []string // "body:<text>", "bad", or an error
	}{
		{"good", frame(len(good), good), []string{"body:" + good}},
		{"lowercase header, extra header, stray blank line", "\r\ncontent-length: 52\r\nContent-Type: x\r\n\r\n" + good, []string{"body:" + good}},
		{"missing", "Content-Type: x\r\n\r\n" + body + frame(len(good), good), []string{"bad", "body:" + good}},
		{"negative", "Content-Length: -3\r\n\r\n" + body + frame(len(good), good), []string{"bad", "body:" + good}},
		{"plus sign", "Content-Length: +3\r\n\r\n" + body + frame(len(good), good), []string{"bad", "body:" + good}},
		{"too short", frame(len(body)-5, body) + frame(len(good), good), []string{"body:" + body[:len(body)-5], "body:" + good}},
		{"too long", frame(len(body)+500, body) + frame(len(good), good), []string{"bad", "body:" + good}},
		{"too long into the next header", frame(len(body)+4, body) + frame(len(good), good), []string{"bad", "body:" + good}},
		{"junk line", "garbage: 1\r\n" + frame(len(good), good), []string{"body:" + good}},
		{"header text inside a JSON string stays", frame(len(`{"t":"Content-Length: 5\\r\\n"}`), `{"t":"Content-Length: 5\\r\\n"}`), []string{`body:{"t":"Content-Length: 5\\r\\n"}`}},
		{"over the limit", "Content-Length: 2000\r\n\r\n", []string{"too large"}},
		{"beyond int64", "Content-Length: 99999999999999999999999\r\n\r\n", []string{"too large"}},
		{"a long junk line ending in a header", strings.Repeat("x", 200<<10) + frame(len(good), good), []string{"body:" + good}},
		{"truncated body", frame(100, "{"), []string{io.ErrUnexpectedEOF.Error()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fr := NewReader(strings.NewReader(tc.in), 1024)
			var got []string
			for {
				f, err := fr.Next(fr.Max())
				var big *TooLargeError
				switch {
				case errors.As(err, &big):
					got = append(got, "too large")
				case errors.Is(err, io.EOF):
				case err != nil:
					got = append(got, err.Error())
				case f.Bad != "":
					got = append(got, "bad")
				default:
					got = append(got, "body:"+string(f.Body))
				}
				if err != nil {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// BenchmarkReader reads messages through the resynchronising Reader;
// the baseline is the bare Content-Length framing it replaced (header
// lines, then io.ReadFull of the body).
func BenchmarkReader(b *testing.B) {
	text := strings.Repeat("func (c *conn) Read(ctx context.Context) error { return nil } // comment\n", 1<<20/72)
	didOpen, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen",
		"params": map[string]any{"textDocument": map[string]any{"uri": "file:///a.go", "text": text}}})
	for _, size := range []struct {
		name string
		body string
	}{
		{"search-request", `{"jsonrpc":"2.0","id":12,"method":"recall/search","params":{"query":"webhook retry storm","limit":10}}`},
		{"didOpen-1MiB", string(didOpen)},
	} {
		in := []byte(strings.Repeat(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(size.body), size.body), 8))
		b.Run(size.name+"/frameReader", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				fr := NewReader(bytes.NewReader(in), MaxMessageBytes)
				for {
					if _, err := fr.Next(MaxMessageBytes); err != nil {
						break
					}
				}
			}
		})
		b.Run(size.name+"/plain", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				r := bufio.NewReaderSize(bytes.NewReader(in), BufSize)
				for {
					n := -1
					for {
						line, err := r.ReadSlice('\n')
						if err != nil {
							n = -2
							break
						}
						if len(bytes.TrimSpace(line)) == 0 {
							break
						}
						if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
							n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
						}
					}
					if n < 0 {
						break
					}
					body := make([]byte, n)
					io.ReadFull(r, body)
				}
			}
		})
	}
}
