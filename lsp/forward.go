package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/recallhq/recall/engine"
)

// forwarder is `recall lsp` in front of the shared daemon: it reads the
// client's initialize, resolves the history and index it names, connects
// to (or starts) that daemon, and copies bytes both ways.
type forwarder struct {
	cfg    Config // DB, Index, NoRedact from the flags; Getenv; Logger
	idle   time.Duration
	spawn  func(sock, logFile string) error // start the daemon for sock
	getenv func(string) string
	log    *slog.Logger
}

// errFallback says the forwarder could not reach a daemon; the caller
// serves in-process with the bytes already read.
type errFallback struct {
	consumed []byte
	err      error
}

func (e *errFallback) Error() string { return "no daemon: " + e.err.Error() }

// run forwards one client until it leaves; the exit code is 0 after
// shutdown+exit, like the in-process server. A fallback error carries the
// bytes already read from stdin.
func (f *forwarder) run(ctx context.Context, stdin io.Reader, stdout io.Writer) (int, error) {
	rec := &recorder{r: stdin}
	f0, err := newFrameReader(rec, maxInitializeBytes).next(maxInitializeBytes)
	if errors.Is(err, io.EOF) {
		return 1, nil // the client left before saying anything
	}
	fallback := func(err error) (int, error) {
		return 1, &errFallback{consumed: rec.buf.Bytes(), err: err}
	}
	if err != nil || f0.body == nil {
		return fallback(errors.New("the first message is not an initialize"))
	}
	body := f0.body
	var first struct {
		Method string `json:"method"`
		Params struct {
			InitializationOptions struct {
				DB    string `json:"db"`
				Index string `json:"index"`
			} `json:"initializationOptions"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &first) != nil || first.Method != "initialize" {
		return fallback(errors.New("the first message is not an initialize"))
	}
	opts := first.Params.InitializationOptions
	res, err := engine.Resolve(engine.Options{DBPath: absOrEmpty(firstNonEmpty(opts.DB, f.cfg.DB)),
		IndexPath: absOrEmpty(firstNonEmpty(opts.Index, f.cfg.Index)), Getenv: f.getenv})
	if err != nil {
		return fallback(err) // the in-process server fails initialize with the clear message
	}
	key := daemonKey(res)
	sock, _, logFile, err := daemonPaths(f.getenv, key)
	if err != nil {
		return fallback(err)
	}
	conn, err := f.connect(sock, logFile, daemonHello{Resolved: res, NoRedact: f.cfg.NoRedact})
	if err != nil {
		return fallback(err)
	}
	defer conn.Close()
	f.log.Info("forwarding to the daemon", "socket", sock, "source", res.Source, "index", res.Index)
	// Everything read so far (the initialize and whatever the buffer took
	// beyond it) goes first, then the rest of stdin.
	st := &clientState{}
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		src := io.MultiReader(bytes.NewReader(rec.buf.Bytes()), stdin)
		rec.stop() // rec.buf is not appended to any more
		if err := pumpClient(conn, src, st); err != nil && !errors.Is(err, io.EOF) {
			f.log.Info("client side ended", "err", err)
		}
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite() // the daemon's session sees the client leave
		}
	}()
	if _, err := io.Copy(stdout, conn); err != nil {
		f.log.Info("daemon side ended", "err", err)
	}
	return st.code(), nil
}

// connect reaches the key's daemon, starting it when none answers: a
// missing socket, or a stale one (its daemon died: connection refused).
func (f *forwarder) connect(sock, logFile string, hello daemonHello) (net.Conn, error) {
	conn, err := dialDaemon(sock, hello)
	if err == nil {
		return conn, nil
	}
	f.log.Info("starting the daemon", "socket", sock, "why", err)
	if err := f.spawn(sock, logFile); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(spawnWait)
	wait := 5 * time.Millisecond
	for {
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
		if conn, err = dialDaemon(sock, hello); err == nil {
			return conn, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon did not come up within %v: %w (log: %s)", spawnWait, err, logFile)
		}
	}
}

// clientState follows the client's lifecycle messages for the exit code.
type clientState struct {
	shutdown, exit atomic.Bool
}

func (c *clientState) code() int {
	if c.exit.Load() && c.shutdown.Load() {
		return 0
	}
	return 1
}

// maxInitializeBytes bounds the first message, which the forwarder reads
// whole: an initialize is a few KiB; anything larger is served in-process.
const maxInitializeBytes = 1 << 20

// inspectBytes: bodies up to this size are looked at for shutdown and exit
// (both are tiny); larger ones stream through untouched.
const inspectBytes = 4 << 10

func (c *clientState) observe(body []byte) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	switch {
	case m.Method == "shutdown" && len(m.ID) > 0:
		c.shutdown.Store(true)
	case m.Method == "exit":
		c.exit.Store(true)
	}
}

// pumpClient copies the client's bytes to the daemon exactly as they come
// (malformed framing included: the daemon's server answers it), reading
// the framing on the way with the daemon's own frame reader, so both
// resynchronise alike, and it sees shutdown and exit before the daemon
// does. It never holds back bytes while waiting for more: a body the
// daemon needs is on its way before the pump reads on.
func pumpClient(dst io.Writer, src io.Reader, st *clientState) error {
	rl := &relay{w: dst}
	fr := newFrameReader(relayReader{r: src, relay: rl}, MaxMessageBytes)
	fr.relay = rl
	for {
		f, err := fr.next(inspectBytes)
		if f.body != nil {
			st.observe(f.body)
		}
		// An oversized header goes on too: the daemon answers it and closes.
		if ferr := rl.flush(); ferr != nil && err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
}

// recorder keeps what was read through it until stopped.
type recorder struct {
	r       io.Reader
	buf     bytes.Buffer
	stopped atomic.Bool
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if !r.stopped.Load() {
		r.buf.Write(p[:n])
	}
	return n, err
}

func (r *recorder) stop() { r.stopped.Store(true) }

func absOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
