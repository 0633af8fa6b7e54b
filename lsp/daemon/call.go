package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/recallhq/recall/commands"
	"github.com/recallhq/recall/lsp/frame"
)

// callWait bounds a CLI call's handshake with a daemon: past it the daemon
// is taken for hung and the command runs in its own process. Far below
// helloWait: a CLI command that finds no daemon pays nothing, but one
// that finds a hung daemon pays this.
const callWait = time.Second

func init() { commands.SetWarm(Call, Start) }

// Call runs one CLI command in the running daemon of its history and
// index (the one `recall lsp` forwards to; Key), as one LSP session:
// initialize without the watcher (so the command syncs first, as the CLI
// does), executeCommand, shutdown, exit. It starts no daemon: with none
// listening it returns commands.ErrNoDaemon at once. A command's error is
// returned as an error; the CLI then runs the command itself and says it
// in its own words.
func Call(ctx context.Context, wc *commands.WarmCall) (json.RawMessage, error) {
	if !Supported {
		return nil, commands.ErrNoDaemon
	}
	specs, err := commands.SourceSpecs(wc.DB)
	if err != nil {
		return nil, err
	}
	res, err := resolve(specs, wc.Index, wc.Getenv)
	if err != nil {
		return nil, err
	}
	// Only a directory of ours that no one else may enter holds a socket
	// we trust with the answer; looking makes nothing.
	dir := runtimeDirPath(wc.Getenv)
	if !isPrivateDir(dir) {
		return nil, commands.ErrNoDaemon
	}
	sock := filepath.Join(dir, Key(res)+".sock")
	conn, err := dialWithin(sock, Hello{Resolved: res, NoRedact: wc.NoRedact}, callWait)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", commands.ErrNoDaemon, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // Ctrl-C ends the call
	defer stop()
	s := &session{conn: conn, fr: frame.NewReader(conn, frame.MaxMessageBytes), notify: wc.Notify}
	initParams := map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"watch": false, "everyNotice": true}}
	if _, err := s.request(1, "initialize", initParams, ""); err != nil {
		return nil, err
	}
	exec := map[string]any{"command": "recall." + wc.Name, "arguments": []json.RawMessage{wc.Params}}
	out, err := s.request(2, "workspace/executeCommand", exec, `{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	// A clean goodbye; the session's end is the daemon's to finish.
	s.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, err
}

// session is the client side of a CLI call's LSP session.
type session struct {
	conn   net.Conn
	fr     *frame.Reader
	notify func(string)
}

// send writes messages, each in its own frame.
func (s *session) send(msgs ...string) error {
	var b bytes.Buffer
	for _, m := range msgs {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(m), m)
	}
	_, err := s.conn.Write(b.Bytes())
	return err
}

// request sends a request (after the notification before, if any) and
// reads until its response: notices on the way go to notify, and any
// request from the server is answered that the CLI has no such method.
func (s *session) request(id int, method string, params any, before string) (json.RawMessage, error) {
	raw, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	msgs := []string{string(raw)}
	if before != "" {
		msgs = append([]string{before}, msgs...)
	}
	if err := s.send(msgs...); err != nil {
		return nil, err
	}
	for {
		f, err := s.fr.Next(frame.MaxMessageBytes)
		if err != nil {
			return nil, fmt.Errorf("the daemon's session ended: %w", err)
		}
		if f.Body == nil {
			return nil, errors.New("the daemon sent a malformed message: " + f.Bad)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(f.Body, &m); err != nil {
			return nil, fmt.Errorf("the daemon sent a message that is not JSON: %w", err)
		}
		switch {
		case m.Method == "window/logMessage" || m.Method == "window/showMessage":
			if s.notify != nil {
				s.notify(strings.TrimPrefix(m.Params.Message, "recall: "))
			}
		case m.Method != "" && len(m.ID) > 0:
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"a CLI call takes no requests"}}`, m.ID))
		case m.Method == "" && string(m.ID) == fmt.Sprint(id):
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
			}
			return m.Result, nil
		}
	}
}

// Start starts the daemon of a CLI call's history and index, detached,
// and does not wait for it (RECALL_DAEMON=auto: the command that found no
// daemon has answered in its own process; the ones after it find this
// one). A daemon already running for the key exits at once (its lock).
// It takes its idle time from RECALL_DAEMON_IDLE, which it inherits.
func Start(wc *commands.WarmCall) error {
	if !Supported {
		return commands.ErrNoDaemon
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// A Go test binary handed `lsp --daemon` would run its tests again,
	// and start more of itself: a test that calls commands.Main with
	// RECALL_DAEMON=auto in its environment starts nothing.
	if strings.HasSuffix(filepath.Base(exe), ".test") {
		return errors.New("not from a test binary")
	}
	specs, err := commands.SourceSpecs(wc.DB)
	if err != nil {
		return err
	}
	res, err := resolve(specs, wc.Index, wc.Getenv)
	if err != nil {
		return err
	}
	sock, _, logFile, err := Paths(wc.Getenv, Key(res))
	if err != nil {
		return err
	}
	return SpawnServer(exe, sock, logFile)
}

// SpawnServer starts `exe lsp --daemon` on a socket, logging to logFile
// (its directory made, private, when missing); extra flags follow.
func SpawnServer(exe, sock, logFile string, extra ...string) error {
	if err := os.MkdirAll(filepath.Dir(logFile), 0o700); err != nil {
		return err
	}
	return Spawn(exe, append([]string{"lsp", "--daemon", "--socket", sock, "--log-file", logFile}, extra...))
}
