// Package frame reads the LSP base protocol's Content-Length frames and
// resynchronises after a framing error instead of going deaf. The server's
// stream and the daemon's forwarder read clients through it, so both cut
// a client's bytes into messages alike.
package frame

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// MaxMessageBytes bounds one incoming message; a longer declared length
// closes the connection at once, before any of the body is read. The
// largest legitimate message is a didOpen of a big file: VS Code never
// syncs a document over 50 MiB to extensions (TextModel._MODEL_SYNC_LIMIT),
// and JSON-escaping source text grows it by about 10% (1.10x measured over
// Go's own src tree and this repo), so such a didOpen is about 55 MiB and
// 64 MiB still leaves room for quote-heavy files.
const MaxMessageBytes = 64 << 20

// Reader splits a client's bytes into Content-Length frames and
// resynchronises after a framing error instead of going deaf:
//
//   - a header block without a usable Content-Length (missing, negative,
//     not a number) is reported, and the bytes after it are read as header
//     lines until a line ending in a Content-Length header;
//   - a header line may carry junk before its Content-Length (the tail of
//     a body whose declared length was too short, or a body sent without a
//     header): the header is taken from where it starts;
//   - a body that runs into the next message's header (a declared length
//     too long) is cut where that header starts. A JSON body can never
//     contain "Content-Length: <digits>" followed by a raw line break (raw
//     CR/LF is invalid inside a JSON string, and the words are invalid
//     outside one), so the cut never splits a valid message. This also
//     means a body is never waited for past the next request: an editor
//     that waits for each answer is answered.
//
// A declared length over max is an error: the caller answers and closes.
type Reader struct {
	in  *bufio.Reader
	max int64
	// relay, when set, receives every byte the reader consumes, before the
	// reader next waits for input (the forwarder passes them on: it never
	// holds back bytes the daemon needs).
	relay *relay
}

// BufSize is the read buffer: one read of a pipe or socket.
const BufSize = 64 << 10

// NewReader reads frames from r; a declared length over max is an error.
func NewReader(r io.Reader, max int64) *Reader {
	return &Reader{in: bufio.NewReaderSize(r, BufSize), max: max}
}

// NewRelay reads frames from src like NewReader and passes every byte it
// consumes on to dst, exactly as it came (malformed framing included):
// before it next waits for src, and at Flush.
func NewRelay(src io.Reader, dst io.Writer, max int64) *Reader {
	rl := &relay{w: dst}
	r := NewReader(relayReader{r: src, relay: rl}, max)
	r.relay = rl
	return r
}

// Flush writes the bytes consumed so far to a relay's dst.
func (f *Reader) Flush() error {
	if f.relay == nil {
		return nil
	}
	return f.relay.flush()
}

// Max is the largest message the reader accepts.
func (f *Reader) Max() int64 { return f.max }

// Frame is one message, or why there was none.
type Frame struct {
	Body   []byte // nil when bad or not kept
	Length int64
	Bad    string // a framing error, for the -32700 reply ("" = a good frame)
}

// TooLargeError is a declared length over the limit.
type TooLargeError struct{ Length, Max int64 }

func (e *TooLargeError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Length)
	if e.Length == math.MaxInt64 {
		size = "more than 2^63 bytes"
	}
	return fmt.Sprintf("a message of %s is over recall's %d MiB limit; closing the connection (restart the server)", size, e.Max>>20)
}

// Next reads the next frame; bodies up to keep bytes are returned, longer
// ones are consumed (and relayed) without being kept. err is io.EOF at a
// clean end of input, io.ErrUnexpectedEOF inside a message, or a
// *TooLargeError.
func (f *Reader) Next(keep int64) (Frame, error) {
	h, err := f.header()
	if err != nil {
		return Frame{}, err
	}
	switch {
	case h.length < 0:
		return Frame{Length: -1, Bad: h.problem}, nil
	case h.length > f.max:
		return Frame{Length: h.length}, &TooLargeError{h.length, f.max}
	}
	body, cut, err := f.body(h.length, h.length <= keep)
	if err != nil {
		return Frame{}, err
	}
	if cut >= 0 {
		return Frame{Length: h.length, Bad: fmt.Sprintf("the message body ended after %d of its %d bytes (Content-Length) where the next header began; it was skipped", cut, h.length)}, nil
	}
	return Frame{Body: body, Length: h.length}, nil
}

type header struct {
	length  int64  // -1: none usable
	problem string // why there is none
}

// header reads one header block, up to its blank line.
func (f *Reader) header() (header, error) {
	h := header{length: -1, problem: "the message header has no Content-Length"}
	lines := 0
	for {
		line, err := f.line()
		if err != nil {
			if errors.Is(err, io.EOF) && (lines > 0 || len(line) > 0) {
				err = io.ErrUnexpectedEOF
			}
			return h, err
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 {
			if lines == 0 {
				continue // a stray blank line between messages
			}
			return h, nil
		}
		lines++
		h.parseLine(line)
	}
}

// parseLine takes the Content-Length of one header line (with its line
// break), if it has one.
func (h *header) parseLine(line []byte) {
	name, value, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
	if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte(contentLength)) {
		v := bytes.TrimSpace(value)
		n, ok := parseLength(v)
		h.length = n
		if !ok {
			h.problem = fmt.Sprintf("Content-Length %q is not a byte count", clipBytes(v, 40))
		}
		return
	}
	// Junk, or junk and then a header: resynchronise on the header.
	at, st := findHeader(line, len(line))
	if st == headerFound {
		_, _, value := matchHeader(line[at:])
		h.length, _ = parseLength(value)
	}
}

// parseLength reads a Content-Length value: decimal digits only; a number
// too large for int64 is MaxInt64 (over any limit).
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 {
		return -1, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return -1, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return math.MaxInt64, true
	}
	return n, true
}

// maxLineTail is how much of an over-long header line is kept: only its
// end can hold a header (see findHeader), and a header line is short.
const maxLineTail = 256

// line reads one line, relaying it; of a line longer than the buffer only
// the tail is returned (a body sent without a header, followed by the next
// message's header on the same line).
func (f *Reader) line() ([]byte, error) {
	line, err := f.in.ReadSlice('\n')
	f.consumed(line)
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	var tail []byte
	for errors.Is(err, bufio.ErrBufferFull) {
		tail = append(tail, line[max(0, len(line)-maxLineTail):]...)
		tail = tail[max(0, len(tail)-maxLineTail):]
		line, err = f.in.ReadSlice('\n')
		f.consumed(line)
	}
	return append(tail, line...), err
}

// body reads n bytes of body, kept or not. cut is where the next
// message's header starts inside them (-1: none; the body is whole).
func (f *Reader) body(n int64, keep bool) (body []byte, cut int64, err error) {
	if keep {
		body = make([]byte, 0, n) // n <= max: checked by the caller
	}
	var got int64
	for got < n {
		if f.in.Buffered() == 0 {
			if _, err := f.in.Peek(1); err != nil {
				return nil, -1, unexpectedEOF(err)
			}
		}
		win, _ := f.in.Peek(f.in.Buffered())
		limit := int(min(int64(len(win)), n-got))
		at, st := findHeader(win, limit)
		if keep {
			body = append(body, win[:at]...)
		}
		f.consumed(win[:at])
		f.in.Discard(at)
		got += int64(at)
		switch st {
		case headerFound:
			return body, got, nil
		case headerMaybe:
			// A header may start here; wait for the bytes that decide it
			// (at most a header's length: it is never longer).
			if _, err := f.in.Peek(len(win) - at + 1); err != nil {
				return nil, -1, unexpectedEOF(err)
			}
		}
	}
	return body, -1, nil
}

func (f *Reader) consumed(p []byte) {
	if f.relay != nil {
		f.relay.pending = append(f.relay.pending, p...)
	}
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

const contentLength = "content-length"

type headerScan int

const (
	headerNone  headerScan = iota // no header starts before limit
	headerFound                   // a header starts at the index returned
	headerMaybe                   // one may start there: more bytes decide
)

// findHeader looks for a Content-Length header line starting before
// limit in win; the index is where it starts, or limit when none does.
// Candidates are found by the name's '-' (bytes.IndexByte of a byte rare
// in text; scanning for every 'c' or "ength" made reading a didOpen of
// source code 5-8x slower, see BenchmarkFrameReader); near the end of win,
// where the '-' may not have arrived yet, every position is tried.
func findHeader(win []byte, limit int) (int, headerScan) {
	const before = len("content") // bytes of the name before its '-'
	tail := max(0, len(win)-before)
	for from := 0; ; {
		j := bytes.IndexByte(win[from:], '-')
		if j < 0 {
			break
		}
		at := from + j - before
		from += j + 1
		if at < 0 {
			continue
		}
		if at >= limit {
			break
		}
		if st, _, _ := matchHeader(win[at:]); st != headerNone {
			return at, st
		}
	}
	for at := tail; at < limit; at++ {
		if st, _, _ := matchHeader(win[at:]); st != headerNone {
			return at, st
		}
	}
	return limit, headerNone
}

// maxHeaderMatch bounds a header line the resync recognises (name,
// blanks, up to 19 digits for an int64, CRLF fit easily): a longer one is
// not a header, and a partial match never needs more look-ahead than this.
const maxHeaderMatch = 96

// matchHeader matches `Content-Length[ \t]*:[ \t]*<digits>[ \t]*\r?\n` (the
// name in any case) at the start of p. headerMaybe: p ends before it is
// decided. end is the index after the line break; value the digits.
func matchHeader(p []byte) (st headerScan, end int, value []byte) {
	clipped := len(p) > maxHeaderMatch
	if clipped {
		p = p[:maxHeaderMatch]
	}
	undecided := headerMaybe
	if clipped {
		undecided = headerNone // too long to be a header
	}
	i := 0
	for ; i < len(contentLength); i++ {
		if i == len(p) {
			return undecided, 0, nil
		}
		want := contentLength[i]
		if c := p[i]; c != want && (want == '-' || c|0x20 != want) {
			return headerNone, 0, nil
		}
	}
	skip := func() {
		for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
			i++
		}
	}
	skip()
	if i == len(p) {
		return undecided, 0, nil
	}
	if p[i] != ':' {
		return headerNone, 0, nil
	}
	i++
	skip()
	start := i
	for i < len(p) && p[i] >= '0' && p[i] <= '9' {
		i++
	}
	if i == len(p) {
		return undecided, 0, nil
	}
	if i == start {
		return headerNone, 0, nil
	}
	value = p[start:i]
	skip()
	if i < len(p) && p[i] == '\r' {
		i++
	}
	if i == len(p) {
		return undecided, 0, nil
	}
	if p[i] != '\n' {
		return headerNone, 0, nil
	}
	return headerFound, i + 1, value
}

// relay collects the bytes a Reader consumed and writes them on.
type relay struct {
	w       io.Writer
	pending []byte
}

func (r *relay) flush() error {
	if len(r.pending) == 0 {
		return nil
	}
	_, err := r.w.Write(r.pending)
	r.pending = r.pending[:0]
	return err
}

// relayReader flushes the relay before every read of the input, so what
// was consumed is passed on before the reader waits.
type relayReader struct {
	r     io.Reader
	relay *relay
}

func (r relayReader) Read(p []byte) (int, error) {
	if err := r.relay.flush(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// clipBytes is b cut to at most n bytes, for messages that quote input.
func clipBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
