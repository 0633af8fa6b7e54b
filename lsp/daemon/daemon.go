// Package daemon is the shared `recall lsp` daemon and its forwarder.
// One `recall lsp --daemon` per history+index serves every editor and the
// OpenCode plugin over a Unix socket, each connection its own LSP session
// over one shared engine (one watcher, one embedder, one index writer).
// `recall lsp` itself is a forwarder that copies bytes between its stdio
// and the socket. The LSP sessions are package lsp's: a Config.Serve.
package daemon

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
)

// Daemon budgets.
const (
	// DefaultIdle is how long a daemon outlives its last client: an
	// editor restart or the next OpenCode run finds the engine warm.
	DefaultIdle = 5 * time.Minute
	// spawnWait bounds the wait for a daemon just started to listen (it
	// opens nothing before listening: a few ms; the rest is for a loaded
	// machine). Past it the forwarder serves in-process.
	spawnWait = 10 * time.Second
	// helloWait bounds the socket handshake: a daemon that accepts but
	// does not answer is hung, and the forwarder serves in-process.
	helloWait = 5 * time.Second
	// protocolVersion changes when the handshake does (2: Resolved lists
	// every source).
	protocolVersion = 2
)

// Hello is the forwarder's first line on the socket: what the client's
// initialize resolved to.
type Hello struct {
	Version  int             `json:"v"`
	Recall   string          `json:"recall"`
	Resolved engine.Resolved `json:"resolved"`
	NoRedact bool            `json:"noRedact,omitempty"` // --no-redact of the forwarder
}

// reply is the daemon's answer line; after it, LSP bytes both ways.
type reply struct {
	OK    bool   `json:"ok"`
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// Key names the daemon of a set of histories and their indexes (and a
// recall version: a newer binary never talks to an older daemon). One
// history's key is what it was before there could be several.
func Key(r engine.Resolved) string {
	text := r.Source + "\x00" + r.Index
	if len(r.Sources) > 1 {
		text = ""
		for _, s := range r.Sources {
			text += s.Name + "\x00" + s.Path + "\x00" + s.Index + "\x00"
		}
	}
	sum := sha256.Sum256([]byte(text + "\x00" + commands.Version))
	return hex.EncodeToString(sum[:8])
}

// RuntimeDir is where sockets live: $XDG_RUNTIME_DIR/recall, else a
// private directory under the user's cache dir ($XDG_CACHE_HOME or
// ~/.cache, then recall/run): not the shared temp dir, where another user
// could create the directory first. Only when that path is too long for a
// socket does it fall back to a directory under the temp dir named by uid.
// Whichever it is must be a directory the user owns with mode 0700, so no
// other user can reach or replace a socket.
func RuntimeDir(getenv func(string) string) (string, error) {
	dir := runtimeDirPath(getenv)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("runtime dir: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// runtimeDirPath is where RuntimeDir puts the sockets, not made or checked.
func runtimeDirPath(getenv func(string) string) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "recall")
	}
	if c := userCacheDir(getenv); c != "" && len(filepath.Join(c, "recall", "run"))+len("/0123456789abcdef.sock") <= maxSocketPath {
		return filepath.Join(c, "recall", "run")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("recall-%d", os.Getuid()))
}

// maxSocketPath is the longest Unix socket path every platform takes
// (sun_path is 104 bytes on macOS and the BSDs, 108 on Linux, with the NUL).
const maxSocketPath = 103

// userCacheDir is $XDG_CACHE_HOME, else $HOME/.cache; "" without either.
func userCacheDir(getenv func(string) string) string {
	if c := getenv("XDG_CACHE_HOME"); filepath.IsAbs(c) {
		return c
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache")
	}
	return ""
}

// Paths are a key's socket, lock and log file.
func Paths(getenv func(string) string, key string) (sock, lock, logFile string, err error) {
	dir, err := RuntimeDir(getenv)
	if err != nil {
		return "", "", "", err
	}
	return filepath.Join(dir, key+".sock"), filepath.Join(dir, key+".lock"),
		filepath.Join(engine.DataDir(getenv), "lsp-daemon-"+key+".log"), nil
}

// Config is how `recall lsp --daemon` runs.
type Config struct {
	Socket string
	// Idle is how long the daemon waits without a connection before it
	// exits; 0 = DefaultIdle.
	Idle   time.Duration
	Logger *slog.Logger
	// Serve serves one connection's LSP session after the handshake (the
	// client's history and index are in hello) and reports whether the
	// client shut down cleanly.
	Serve func(ctx context.Context, conn io.ReadWriteCloser, hello Hello) bool
}

// errDaemonRunning: another daemon holds the key's lock.
var errDaemonRunning = errors.New("another recall daemon serves this socket")

// Run serves LSP connections on the socket until it has had none for
// Idle or ctx ends. A daemon already serving the socket makes it return at
// once (nil): two forwarders may start one each.
func Run(ctx context.Context, dc Config) error {
	if dc.Idle <= 0 {
		dc.Idle = DefaultIdle
	}
	if dc.Logger == nil {
		dc.Logger = slog.New(slog.DiscardHandler)
	}
	log := dc.Logger
	unlock, err := lockDaemon(lockPathFor(dc.Socket))
	if errors.Is(err, errDaemonRunning) {
		log.Info("daemon already running", "socket", dc.Socket)
		return nil
	} else if err != nil {
		return err
	}
	defer unlock()
	// Holding the lock, any socket file is a dead daemon's.
	_ = os.Remove(dc.Socket)
	ln, err := net.Listen("unix", dc.Socket)
	if err != nil {
		return fmt.Errorf("listen %s: %w", dc.Socket, err)
	}
	if err := os.Chmod(dc.Socket, 0o600); err != nil {
		ln.Close()
		return err
	}
	log.Info("daemon listening", "socket", dc.Socket, "pid", os.Getpid(), "idle", dc.Idle)
	d := &daemon{cfg: dc, log: log, last: time.Now()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go d.serve(ctx, c)
		}
	}()
	tick := time.NewTicker(max(min(dc.Idle/4, time.Second), 10*time.Millisecond))
	defer tick.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-tick.C:
			if d.idleFor(dc.Idle) {
				log.Info("daemon idle; exiting", "idle", dc.Idle)
				break wait
			}
		}
	}
	ln.Close() // removes the socket file
	cancel()
	d.wg.Wait()
	return nil
}

type daemon struct {
	cfg     Config
	log     *slog.Logger
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   int
	last    time.Time // when the last connection ended
	closing bool
}

// idleFor reports whether the daemon has had no connection for d, and if
// so stops taking new ones (a forwarder whose connection is then refused
// starts a new daemon).
func (d *daemon) idleFor(idle time.Duration) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conns > 0 || time.Since(d.last) < idle {
		return false
	}
	d.closing = true
	return true
}

// serve is one forwarder's connection: the handshake, then one LSP session.
func (d *daemon) serve(ctx context.Context, c net.Conn) {
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		c.Close()
		return
	}
	d.conns++
	d.wg.Add(1)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.conns--
		d.last = time.Now()
		d.mu.Unlock()
		d.wg.Done()
	}()
	br := bufio.NewReaderSize(c, 64<<10)
	c.SetReadDeadline(time.Now().Add(helloWait))
	line, err := br.ReadSlice('\n')
	c.SetReadDeadline(time.Time{})
	var hello Hello
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	rep := reply{OK: true, PID: os.Getpid()}
	switch {
	case err != nil:
		rep = reply{Error: fmt.Sprintf("bad hello: %v", err)}
	case hello.Version != protocolVersion || hello.Recall != commands.Version:
		rep = reply{Error: fmt.Sprintf("daemon is recall %s (protocol %d), client is %s (protocol %d)",
			commands.Version, protocolVersion, hello.Recall, hello.Version)}
	}
	raw, _ := json.Marshal(rep)
	if _, werr := c.Write(append(raw, '\n')); werr != nil || !rep.OK {
		d.log.Warn("refused a connection", "err", rep.Error, "write", werr)
		c.Close()
		return
	}
	d.log.Info("connection", "source", hello.Resolved.Source, "index", hello.Resolved.Index)
	clean := d.cfg.Serve(ctx, bufferedConn{br, c}, hello)
	d.log.Info("connection closed", "clean", clean)
}

// bufferedConn reads through the handshake's buffer.
type bufferedConn struct {
	r *bufio.Reader
	net.Conn
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// dial connects to a daemon and does the handshake.
func dial(sock string, hello Hello) (net.Conn, error) { return dialWithin(sock, hello, helloWait) }

// dialWithin is dial with the handshake bounded by wait.
func dialWithin(sock string, hello Hello, wait time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("unix", sock, wait)
	if err != nil {
		return nil, err
	}
	hello.Version, hello.Recall = protocolVersion, commands.Version
	raw, _ := json.Marshal(hello)
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write(append(raw, '\n')); err != nil {
		c.Close()
		return nil, err
	}
	// One byte at a time: nothing past the reply line may be consumed.
	var line []byte
	b := make([]byte, 1)
	for len(line) < 4096 {
		if _, err := io.ReadFull(c, b); err != nil {
			c.Close()
			return nil, fmt.Errorf("daemon handshake: %w", err)
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
	}
	c.SetDeadline(time.Time{})
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil || !rep.OK {
		c.Close()
		return nil, fmt.Errorf("daemon refused: %s (%v)", rep.Error, err)
	}
	return c, nil
}

func lockPathFor(sock string) string {
	return sock[:len(sock)-len(filepath.Ext(sock))] + ".lock"
}
