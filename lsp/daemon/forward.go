package daemon

import (
	"bytes"
	"cmp"
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

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/engine"
	"github.com/recallhq/recall/lsp/frame"
)

// Forwarder is `recall lsp` in front of the shared daemon: it reads the
// client's initialize, resolves the history and index it names, connects
// to (or starts) that daemon, and copies bytes both ways.
type Forwarder struct {
	// DB, Index and NoRedact are the flags of `recall lsp`;
	// initializationOptions.db and .index override the first two.
	DB       []string
	Index    string
	NoRedact bool
	// Spawn starts the daemon for a socket (logging to logFile).
	Spawn  func(sock, logFile string) error
	Getenv func(string) string
	Log    *slog.Logger
}

// FallbackError says the forwarder could not reach a daemon; the caller
// serves in-process with the bytes already read.
type FallbackError struct {
	Consumed []byte
	Err      error
}

func (e *FallbackError) Error() string { return "no daemon: " + e.Err.Error() }

// Run forwards one client until it leaves; the exit code is 0 after
// shutdown+exit, like the in-process server. A *FallbackError carries the
// bytes already read from stdin.
func (f *Forwarder) Run(ctx context.Context, stdin io.Reader, stdout io.Writer) (int, error) {
	rec := &recorder{r: stdin}
	f0, err := frame.NewReader(rec, maxInitializeBytes).Next(maxInitializeBytes)
	if errors.Is(err, io.EOF) {
		return 1, nil // the client left before saying anything
	}
	fallback := func(err error) (int, error) {
		return 1, &FallbackError{Consumed: rec.buf.Bytes(), Err: err}
	}
	if err != nil || f0.Body == nil {
		return fallback(errors.New("the first message is not an initialize"))
	}
	body := f0.Body
	var first struct {
		Method string `json:"method"`
		Params struct {
			InitializationOptions json.RawMessage `json:"initializationOptions"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &first) != nil || first.Method != "initialize" {
		return fallback(errors.New("the first message is not an initialize"))
	}
	// Neovim sends an empty Lua table as [], which means no options (the
	// server says so too); anything else that is not an object is for the
	// server to refuse, in its own words.
	var opts struct {
		DB    commands.DBOption `json:"db"`
		Index string            `json:"index"`
	}
	if raw := bytes.TrimSpace(first.Params.InitializationOptions); len(raw) > 0 && raw[0] == '{' {
		if json.Unmarshal(raw, &opts) != nil {
			return fallback(errors.New("initializationOptions is not a valid object"))
		}
	}
	specs := []engine.SourceSpec(opts.DB)
	if len(specs) == 0 {
		if specs, err = commands.SourceSpecs(f.DB); err != nil {
			return fallback(err)
		}
	}
	res, err := resolve(specs, cmp.Or(opts.Index, f.Index), f.Getenv)
	if err != nil {
		return fallback(err) // the in-process server fails initialize with the clear message
	}
	key := Key(res)
	sock, _, logFile, err := Paths(f.Getenv, key)
	if err != nil {
		return fallback(err)
	}
	conn, err := f.connect(sock, logFile, Hello{Resolved: res, NoRedact: f.NoRedact})
	if err != nil {
		return fallback(err)
	}
	defer conn.Close()
	f.Log.Info("forwarding to the daemon", "socket", sock, "source", res.Source, "index", res.Index)
	// Everything read so far (the initialize and whatever the buffer took
	// beyond it) goes first, then the rest of stdin.
	st := &clientState{}
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		src := io.MultiReader(bytes.NewReader(rec.buf.Bytes()), stdin)
		rec.stop() // rec.buf is not appended to any more
		if err := pumpClient(conn, src, st); err != nil && !errors.Is(err, io.EOF) {
			f.Log.Info("client side ended", "err", err)
		}
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite() // the daemon's session sees the client leave
		}
	}()
	if _, err := io.Copy(stdout, conn); err != nil {
		f.Log.Info("daemon side ended", "err", err)
	}
	return st.code(), nil
}

// connect reaches the key's daemon, starting it when none answers: a
// missing socket, or a stale one (its daemon died: connection refused).
func (f *Forwarder) connect(sock, logFile string, hello Hello) (net.Conn, error) {
	conn, err := dial(sock, hello)
	if err == nil {
		return conn, nil
	}
	f.Log.Info("starting the daemon", "socket", sock, "why", err)
	if err := f.Spawn(sock, logFile); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(spawnWait)
	wait := 5 * time.Millisecond
	for {
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
		if conn, err = dial(sock, hello); err == nil {
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
// the framing on the way with the server's own frame reader (package frame), so both
// resynchronise alike, and it sees shutdown and exit before the daemon
// does. It never holds back bytes while waiting for more: a body the
// daemon needs is on its way before the pump reads on.
func pumpClient(dst io.Writer, src io.Reader, st *clientState) error {
	fr := frame.NewRelay(src, dst, frame.MaxMessageBytes)
	for {
		f, err := fr.Next(inspectBytes)
		if f.Body != nil {
			st.observe(f.Body)
		}
		// An oversized header goes on too: the daemon answers it and closes.
		if ferr := fr.Flush(); ferr != nil && err == nil {
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

// resolve is the history and index a client names, their paths made
// absolute: the daemon serves clients from other directories.
func resolve(specs []engine.SourceSpec, index string, getenv func(string) string) (engine.Resolved, error) {
	for i := range specs {
		specs[i].Path, specs[i].Index = absOrEmpty(specs[i].Path), absOrEmpty(specs[i].Index)
	}
	return engine.Resolve(engine.Options{Sources: specs, IndexPath: absOrEmpty(index), Getenv: getenv})
}

func absOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
