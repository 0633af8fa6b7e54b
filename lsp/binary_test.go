//go:build unix

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
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// recallBinary builds recall once per test run.
func recallBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "recall-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "recall")
		if out, err := exec.Command("go", "build", "-o", builtBin, "..").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// TestBinaryOverStdio builds recall and speaks LSP to `recall lsp` over its
// stdin/stdout exactly as an editor does: Content-Length frames,
// initialize, a search, shutdown, exit. stdout must carry nothing but
// frames. It runs in-process (--no-daemon) and through the shared daemon:
// a second client reaches the same daemon, a killed daemon's stale socket
// is replaced, and an idle daemon exits.
func TestBinaryOverStdio(t *testing.T) {
	bin := recallBinary(t)
	db, _ := filepath.Abs(fixtureDB)
	t.Run("in-process", func(t *testing.T) {
		dir := t.TempDir()
		env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+dir)
		binaryClient(t, bin, env, "--no-daemon", "--db", db, "--index", filepath.Join(dir, "index.db"))
		if socks, _ := filepath.Glob(filepath.Join(dir, "recall", "*.sock")); len(socks) != 0 {
			t.Errorf("--no-daemon made a socket: %v", socks)
		}
	})
	t.Run("daemon", func(t *testing.T) {
		dir := t.TempDir()
		rt, err := os.MkdirTemp("", "rcl")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(rt)
		env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+rt, "RECALL_NO_DAEMON=", "RECALL_DAEMON_IDLE=1s")
		args := []string{"--db", db, "--index", filepath.Join(dir, "index.db")}
		binaryClient(t, bin, env, args...)
		pid := daemonPID(t, rt)
		binaryClient(t, bin, env, args...) // the same daemon serves the next client
		if again := daemonPID(t, rt); again != pid {
			t.Errorf("second client: daemon %d, want the first one (%d)", again, pid)
		}
		// A killed daemon leaves its socket; the next client replaces it.
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, func() bool { return processGone(pid) }, "the daemon to die")
		binaryClient(t, bin, env, args...)
		fresh := daemonPID(t, rt)
		if fresh == pid {
			t.Error("no new daemon after the old one was killed")
		}
		// Idle for 1s: it exits and removes its socket.
		waitUntil(t, func() bool { return processGone(fresh) }, "the idle daemon to exit")
		if socks, _ := filepath.Glob(filepath.Join(rt, "recall", "*.sock")); len(socks) != 0 {
			t.Errorf("the idle daemon left %v", socks)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "recall", "lsp-daemon-*.log"))
		if len(logs) != 1 {
			t.Errorf("daemon log files: %v, want one in the data dir", logs)
		}
	})
	// Two histories through the daemon: the forwarder resolves both (the
	// handshake carries every source) and the daemon opens both.
	t.Run("daemon, two histories", func(t *testing.T) {
		dir := t.TempDir()
		rt, err := os.MkdirTemp("", "rcl")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(rt)
		v2, _ := filepath.Abs(filepath.Join("..", "testdata", "opencode", "v2", "opencode.db"))
		env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+rt, "RECALL_NO_DAEMON=", "RECALL_DAEMON_IDLE=1s")
		binaryClient(t, bin, env, "--db", "laptop="+db, "--db", "desktop="+v2)
		pid := daemonPID(t, rt)
		logs, _ := filepath.Glob(filepath.Join(dir, "recall", "lsp-daemon-*.log"))
		var log []byte
		if len(logs) == 1 {
			log, _ = os.ReadFile(logs[0])
		}
		if !strings.Contains(string(log), "sources=\"[laptop desktop]\"") {
			t.Errorf("the daemon did not open both sources; its log:\n%s", log)
		}
		waitUntil(t, func() bool { return processGone(pid) }, "the idle daemon to exit")
	})
}

// TestDaemonOutlivesItsClientByItsIdleTime: a client that dies without
// shutdown (its parent killed: stdin closes; or the forwarder itself
// killed) leaves the daemon nothing to serve, and it exits after its idle
// time, removing its socket, which lives in $XDG_RUNTIME_DIR/recall.
func TestDaemonOutlivesItsClientByItsIdleTime(t *testing.T) {
	bin := recallBinary(t)
	db, _ := filepath.Abs(fixtureDB)
	for _, how := range []string{"stdin closed", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			rt, err := os.MkdirTemp("", "rcl")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(rt)
			const idle = 2 * time.Second
			env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_RUNTIME_DIR="+rt, "RECALL_NO_DAEMON=", "RECALL_DAEMON_IDLE="+idle.String())
			c := startBinaryClient(t, bin, env, "--db", db, "--index", filepath.Join(dir, "index.db"))
			pid := daemonPID(t, rt)
			socks, _ := filepath.Glob(filepath.Join(rt, "recall", "*.sock"))
			if len(socks) != 1 {
				t.Fatalf("sockets in $XDG_RUNTIME_DIR/recall: %v", socks)
			}
			if how == "SIGKILL" {
				c.cmd.Process.Kill()
			} else {
				c.stdin.Close()
			}
			c.cmd.Wait()
			left := time.Now()
			// Connected, the daemon would stay; gone, it must exit within its
			// idle time plus the ticker's second and a margin for a loaded machine.
			deadline := left.Add(idle + 4*time.Second)
			for !processGone(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the daemon %d outlived its client by more than %v", pid, time.Since(left))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if gone := time.Since(left); gone < idle-200*time.Millisecond {
				t.Errorf("the daemon exited %v after its client left, before its idle time %v", gone, idle)
			}
			if _, err := os.Stat(socks[0]); !os.IsNotExist(err) {
				t.Errorf("the daemon left its socket %s: %v", socks[0], err)
			}
		})
	}
}

// daemonPID reads the one daemon's pid from its lock file.
func daemonPID(t *testing.T, runtime string) int {
	t.Helper()
	locks, _ := filepath.Glob(filepath.Join(runtime, "recall", "*.lock"))
	if len(locks) != 1 {
		t.Fatalf("daemon lock files: %v", locks)
	}
	b, _ := os.ReadFile(locks[0])
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("lock file %s: %q", locks[0], b)
	}
	return pid
}

// binaryClient is one editor session against `recall lsp args...`.
// liveClient is a `recall lsp` child that has initialized and searched.
type liveClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *strings.Builder
	send   func(map[string]any)
	await  func(id int, until string) map[string]any
}

// startBinaryClient starts `recall lsp` with args, initializes it and runs
// one search; the caller ends it (cmd.Process is killed at cleanup).
func startBinaryClient(t *testing.T, bin string, env []string, args ...string) *liveClient {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"lsp", "--stdio"}, args...)...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
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
	// No wait for recall/indexUpdated: a request waits for the first sync
	// (and a client joining a running daemon hears of no sync at all).
	send(map[string]any{"id": 2, "method": "recall/search", "params": map[string]any{"query": "which error code did the nightly worker hit", "limit": 3}})
	res := await(2, "")
	b, _ := json.Marshal(res["result"])
	if !strings.Contains(string(b), "Investigate nightly worker failure") {
		t.Errorf("search over stdio: %s", b)
	}
	return &liveClient{cmd: cmd, stdin: stdin, stderr: stderr, send: send, await: await}
}

// binaryClient speaks LSP to `recall lsp` like an editor, from initialize to
// shutdown and exit.
func binaryClient(t *testing.T, bin string, env []string, args ...string) {
	t.Helper()
	c := startBinaryClient(t, bin, env, args...)
	send, await, stdin, cmd, stderr := c.send, c.await, c.stdin, c.cmd, c.stderr
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

// processGone reports whether pid has exited (and been reaped).
func processGone(pid int) bool { return syscall.Kill(pid, 0) != nil }

// RECALL_DAEMON=auto (the CLI asked to start a daemon, as gopls's
// -remote=auto): a search that finds no daemon answers in its own process
// and then starts one, detached, for the commands after it; the next
// search runs in it and prints the same; with no client the daemon exits
// after its idle time. Any other value is said on stderr and starts
// nothing.
func TestCLIStartsADaemonWhenAsked(t *testing.T) {
	bin := recallBinary(t)
	db, _ := filepath.Abs(fixtureDB)
	dir := t.TempDir()
	rt, err := os.MkdirTemp("", "rcl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(rt)
	const idle = 2 * time.Second
	env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "XDG_RUNTIME_DIR="+rt,
		"RECALL_NO_DAEMON=", "RECALL_DAEMON_IDLE="+idle.String())
	search := func(daemonSetting string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, "search", "--json", "--db", db, "--index", filepath.Join(dir, "index.db"), "rounding")
		cmd.Env = append(env, "RECALL_DAEMON="+daemonSetting)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || !strings.Contains(out.String(), `"hits":[{`) {
			t.Fatalf("RECALL_DAEMON=%s search: %v\n%s\n%s", daemonSetting, err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	connections := func() int {
		logs, _ := filepath.Glob(filepath.Join(dir, "recall", "lsp-daemon-*.log"))
		if len(logs) != 1 {
			t.Fatalf("daemon logs: %v", logs)
		}
		b, _ := os.ReadFile(logs[0])
		return strings.Count(string(b), "msg=connection ")
	}

	_, stderr := search("yes")
	if !strings.Contains(stderr, `RECALL_DAEMON="yes" is not a setting: "auto" starts a daemon`) {
		t.Errorf("RECALL_DAEMON=yes: stderr %q does not say the setting is wrong", stderr)
	}
	if _, err := os.Stat(filepath.Join(rt, "recall")); !os.IsNotExist(err) {
		t.Errorf("RECALL_DAEMON=yes made the runtime dir (%v)", err)
	}

	alone, _ := search("auto")
	waitUntil(t, func() bool {
		socks, _ := filepath.Glob(filepath.Join(rt, "recall", "*.sock"))
		return len(socks) == 1
	}, "the daemon's socket")
	pid := daemonPID(t, rt)
	if n := connections(); n != 0 {
		t.Errorf("the search that started the daemon ran in it (%d connections)", n)
	}
	warm, _ := search("auto")
	if n := connections(); n != 1 {
		t.Errorf("the search after: %d connections to the daemon, want 1", n)
	}
	if withoutTook(t, alone) != withoutTook(t, warm) {
		t.Errorf("alone\n%s\nthrough the daemon it started\n%s", alone, warm)
	}
	left := time.Now()
	for !processGone(pid) {
		if time.Since(left) > idle+4*time.Second {
			t.Fatalf("the daemon %d the CLI started outlived its last command by %v", pid, time.Since(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
