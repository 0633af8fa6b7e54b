package lsp

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// Malformed input is answered and survived: bad JSON (-32700), a header
// without Content-Length, a body over the size cap (-32600, skipped
// without buffering) and junk header lines; the next request is served.
func TestFraming(t *testing.T) {
	srvConn, cli := net.Pipe()
	srv := NewServer(Config{DB: []string{fixtureDB}, Index: t.TempDir() + "/index.db"})
	done := make(chan bool, 1)
	go func() { done <- srv.Run(t.Context(), srvConn) }()
	r := bufio.NewReader(cli)
	write := func(s string) { _, _ = cli.Write([]byte(s)) } // a failed write shows as a missing reply
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	next := func() string {
		cli.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, err := readFrame(r)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(m["id"], " ", m["error"])
	}
	go write(frame("{not json"))
	if got := next(); !strings.Contains(got, "-32700") || !strings.HasPrefix(got, "<nil>") {
		t.Errorf("bad JSON: %s", got)
	}
	go write("X-Junk: 1\r\n\r\n")
	if got := next(); !strings.Contains(got, "-32700") {
		t.Errorf("no Content-Length: %s", got)
	}
	go write(frame(`{"jsonrpc":"2.0","id":7}`))
	if got := next(); !strings.Contains(got, "-32600") || !strings.HasPrefix(got, "7 ") {
		t.Errorf("not a request: %s", got)
	}
	go write("Some garbage line\r\n" + frame(`{"jsonrpc":"2.0","id":8,"method":"recall/status","params":{}}`))
	if got := next(); !strings.HasPrefix(got, "8 ") || !strings.Contains(got, "-32002") {
		t.Errorf("request after junk: %s", got)
	}
	cli.Close()
	<-done
}
