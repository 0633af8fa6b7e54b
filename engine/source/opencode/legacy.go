package opencode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/recallhq/recall/engine/model"
)

// The legacy JSON tree of older OpenCode releases:
//
//	storage/session/<projectID>/<sessionID>.json
//	storage/message/<sessionID>/<messageID>.json
//	storage/part/<messageID>/<partID>.json
//	storage/project/<projectID>.json
//
// with the same JSON shapes as `opencode export`'s info objects.

type legacySessionJSON struct {
	ID        string `json:"id"`
	ProjectID string `json:"projectID"`
	ParentID  string `json:"parentID"`
	Directory string `json:"directory"`
	Title     string `json:"title"`
	Slug      string `json:"slug"`
	Version   string `json:"version"`
	Time      struct {
		Created  int64 `json:"created"`
		Updated  int64 `json:"updated"`
		Archived int64 `json:"archived"`
	} `json:"time"`
	Revert *struct {
		MessageID string `json:"messageID"`
	} `json:"revert"`
}

func (s *Source) legacySessionFiles() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(s.storageDir, "session", "*", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.storageDir, err)
	}
	sort.Strings(files)
	return files, nil
}

func (s *Source) legacySessions() ([]model.Session, error) {
	files, err := s.legacySessionFiles()
	if err != nil {
		return nil, err
	}
	var out []model.Session
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			s.warn(f, err.Error())
			continue
		}
		var sj legacySessionJSON
		if err := unmarshal(data, &sj); err != nil || sj.ID == "" {
			s.warn(f, "invalid session JSON")
			continue
		}
		ss := model.Session{ID: sj.ID, ParentID: sj.ParentID, ProjectID: firstNonEmpty(sj.ProjectID, filepath.Base(filepath.Dir(f))),
			Directory: sj.Directory, Title: sj.Title, Slug: sj.Slug, Version: sj.Version,
			Created: sj.Time.Created, Updated: sj.Time.Updated, Archived: sj.Time.Archived, Era: EraJSON}
		if sj.Revert != nil {
			ss.RevertMsgID = sj.Revert.MessageID
		}
		out = append(out, ss)
	}
	return out, nil
}

// legacyStamps stamps each JSON session by the sizes and times of its files.
func (s *Source) legacyStamps() (map[string]string, error) {
	files, err := s.legacySessionFiles()
	if err != nil {
		return nil, err
	}
	stamps := map[string]string{}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		var b strings.Builder
		addStat := func(p string) {
			if st, err := os.Stat(p); err == nil {
				fmt.Fprintf(&b, "%d:%d;", st.Size(), st.ModTime().UnixNano())
			}
		}
		addStat(f)
		msgDir := filepath.Join(s.storageDir, "message", id)
		addStat(msgDir)
		entries, _ := os.ReadDir(msgDir)
		for _, e := range entries {
			addStat(filepath.Join(msgDir, e.Name()))
			addStat(filepath.Join(s.storageDir, "part", strings.TrimSuffix(e.Name(), ".json")))
		}
		stamps[id] = b.String()
	}
	return stamps, nil
}

func (s *Source) legacyMessages(ctx context.Context, ss model.Session, fn func(*model.Message) error) error {
	msgFiles, err := filepath.Glob(filepath.Join(s.storageDir, "message", ss.ID, "*.json"))
	if err != nil {
		return err
	}
	var msgs []*model.Message
	for _, f := range msgFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			s.warn(f, err.Error())
			continue
		}
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		var probe struct {
			ID   string `json:"id"`
			Time struct {
				Created int64 `json:"created"`
			} `json:"time"`
		}
		if unmarshal(data, &probe) == nil && probe.ID != "" {
			id = probe.ID
		}
		m, ok := s.decodeMessage(ss.ID, id, probe.Time.Created, data)
		if !ok {
			continue
		}
		msgs = append(msgs, m)
	}
	sort.Slice(msgs, func(i, j int) bool {
		if msgs[i].Created != msgs[j].Created {
			return msgs[i].Created < msgs[j].Created
		}
		return msgs[i].ID < msgs[j].ID
	})
	for _, m := range msgs {
		partFiles, _ := filepath.Glob(filepath.Join(s.storageDir, "part", m.ID, "*.json"))
		sort.Strings(partFiles)
		for _, f := range partFiles {
			data, err := os.ReadFile(f)
			if err != nil {
				s.warn(f, err.Error())
				continue
			}
			pid := strings.TrimSuffix(filepath.Base(f), ".json")
			if p, ok := s.decodePart(ss.ID, m.ID, pid, data); ok {
				m.Parts = append(m.Parts, p)
			}
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}
