package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/recallhq/recall/engine"
)

// noticeStamps remembers when the CLI last said a notice that would
// otherwise repeat on every command (the demo history in use, no model
// installed), so each is said once a day unless --verbose. The stamps are
// one small file of Recall's own under $XDG_STATE_HOME/recall; --json
// output keeps every notice (scripts read them there).
type noticeStamps struct {
	path  string
	today string
	seen  map[string]string // notice -> the UTC day it was last said
}

// onceADay reports whether msg is one of the notices said once a day.
// The demo notice names the demo's path, so it is once per index too.
func onceADay(msg string) bool {
	return msg == engine.NoModelNotice || strings.Contains(msg, engine.DemoNotice)
}

// noticeStampsPath is the stamps file: $XDG_STATE_HOME/recall/notices.json,
// else ~/.local/state/recall/notices.json ("" without either: every
// notice is said).
func noticeStampsPath(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "recall", "notices.json")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "recall", "notices.json")
	}
	return ""
}

func loadNoticeStamps(getenv func(string) string) *noticeStamps {
	s := &noticeStamps{path: noticeStampsPath(getenv), today: time.Now().UTC().Format(time.DateOnly), seen: map[string]string{}}
	if s.path != "" {
		if b, err := os.ReadFile(s.path); err == nil {
			json.Unmarshal(b, &s.seen) // a damaged file only means notices said again
		}
	}
	return s
}

// sayNow reports whether msg is to be said now, and if it is one said
// once a day, records that it was. A stamp that cannot be written means
// the notice is said again next time, which is harmless.
func (s *noticeStamps) sayNow(msg string) bool {
	if !onceADay(msg) || s.path == "" {
		return true
	}
	if s.seen[msg] == s.today {
		return false
	}
	s.seen[msg] = s.today
	for k, day := range s.seen {
		if day != s.today {
			delete(s.seen, k) // yesterday's stamps say nothing any more
		}
	}
	b, _ := json.Marshal(s.seen)
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return true
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".notices-*")
	if err != nil {
		return true
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil || tmp.Close() != nil {
		return true
	}
	os.Rename(tmp.Name(), s.path)
	return true
}
