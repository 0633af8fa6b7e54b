package lsp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBinaryOverStdio builds recall and speaks LSP to `recall lsp` over its
// stdin/stdout exactly as an editor does: Content-Length frames,
// initialize, a search, shutdown, exit. stdout must carry nothing but
// frames.
func TestBinaryOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "recall")
	build := exec.Command("go", "build", "-o", bin, "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db, _ := filepath.Abs(fixtureDB)
	cmd := exec.Command(bin, "lsp", "--stdio", "--db", db, "--index", filepath.Join(dir, "index.db"))
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir)
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewReader(stdoutPipe)
	frames := make(chan map[string]any, 100)
	go func() {
		defer close(frames)
		for {
			msg, err := readFrame(out)
			if err != nil {
				if err != io.EOF {
					frames <- map[string]any{"frameError": err.Error()}
				}
				return
			}
			frames <- msg
		}
	}()
	send := func(msg map[string]any) {
		msg["jsonrpc"] = "2.0"
		b, _ := json.Marshal(msg)
		fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	// await reads frames until the response to id, answering the server's
	// own requests (workDoneProgress/create) on the way.
	await := func(id int, until string) map[string]any {
		timeout := time.After(20 * time.Second)
		for {
			select {
			case m, ok := <-frames:
				if !ok {
					t.Fatalf("server closed stdout; stderr:\n%s", stderr.String())
				}
				if e, bad := m["frameError"]; bad {
					t.Fatalf("stdout is not clean LSP framing: %v", e)
				}
				if m["method"] != nil && m["id"] != nil {
					send(map[string]any{"id": m["id"], "result": nil})
					continue
				}
				if until != "" && m["method"] == until {
					return m
				}
				if until == "" && m["method"] == nil && m["id"] == float64(id) {
					return m
				}
			case <-timeout:
				t.Fatalf("no answer; stderr:\n%s", stderr.String())
			}
		}
	}
	send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"processId": os.Getpid(), "rootUri": nil,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}})
	init := await(1, "")
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	send(map[string]any{"method": "initialized", "params": map[string]any{}})
	await(0, methodIndexUpdated)
	send(map[string]any{"id": 2, "method": "recall/search", "params": map[string]any{"query": "which error code did the nightly worker hit", "limit": 3}})
	res := await(2, "")
	b, _ := json.Marshal(res["result"])
	if !strings.Contains(string(b), "Investigate nightly worker failure") {
		t.Errorf("search over stdio: %s", b)
	}
	send(map[string]any{"id": 3, "method": "shutdown"})
	await(3, "")
	send(map[string]any{"method": "exit"})
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after shutdown: %v (want status 0); stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("recall lsp did not exit")
	}
}

func readFrame(r *bufio.Reader) (map[string]any, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("header line %q", line)
		}
		if strings.EqualFold(k, "Content-Length") {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("frame without Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("frame body %q: %w", body, err)
	}
	return m, nil
}
