package opencode

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/recallhq/recall/engine/model"
)

// messageJSON is the part of OpenCode's Message JSON that Recall uses.
type messageJSON struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	Role      string `json:"role"`
	Time      struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Agent    string         `json:"agent"`
	Mode     string         `json:"mode"`
	ModelID  string         `json:"modelID"`
	Model    jsontext.Value `json:"model"`
	Finish   string         `json:"finish"`
	ParentID string         `json:"parentID"`
	Summary  jsontext.Value `json:"summary"`
	Error    *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

// partJSON is the union of OpenCode's Part shapes that Recall uses.
type partJSON struct {
	ID          string         `json:"id"`
	MessageID   string         `json:"messageID"`
	SessionID   string         `json:"sessionID"`
	Type        string         `json:"type"`
	Text        string         `json:"text"`
	Synthetic   bool           `json:"synthetic"`
	Ignored     bool           `json:"ignored"`
	Tool        string         `json:"tool"`
	CallID      string         `json:"callID"`
	State       *toolStateJSON `json:"state"`
	Files       []string       `json:"files"`
	Mime        string         `json:"mime"`
	Filename    string         `json:"filename"`
	URL         string         `json:"url"`
	Name        string         `json:"name"`
	Prompt      string         `json:"prompt"`
	Description string         `json:"description"`
	Agent       string         `json:"agent"`
	Command     string         `json:"command"`
	Auto        bool           `json:"auto"`
	Attempt     int            `json:"attempt"`
	Source      *struct {
		Path string `json:"path"`
		Text *struct {
			Value string `json:"value"`
		} `json:"text"`
	} `json:"source"`
	Time struct {
		Start int64 `json:"start"`
	} `json:"time"`
}

type toolStateJSON struct {
	Status   string         `json:"status"`
	Input    jsontext.Value `json:"input"`
	Raw      string         `json:"raw"`
	Output   string         `json:"output"`
	Error    string         `json:"error"`
	Title    string         `json:"title"`
	Metadata jsontext.Value `json:"metadata"`
	Time     struct {
		Start     int64 `json:"start"`
		Compacted int64 `json:"compacted"`
	} `json:"time"`
}

func (s *Source) v1Messages(ctx context.Context, ss model.Session, fn func(*model.Message) error) error {
	// One streaming query: messages in display order, each followed by its
	// parts in id order. Memory stays bounded by one message.
	rows, err := s.db.QueryContext(ctx, `SELECT m.id, m.time_created, m.data, p.id, p.data
		FROM message m LEFT JOIN part p ON p.message_id = m.id
		WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id`, ss.ID)
	if err != nil {
		return describeDBError(s.dbPath, err)
	}
	defer rows.Close()
	var cur *model.Message
	flush := func() error {
		if cur == nil {
			return nil
		}
		m := cur
		cur = nil
		return fn(m)
	}
	for rows.Next() {
		var mid string
		var created int64
		// Raw: the decoders copy what they keep, so the row's bytes need
		// not be copied out first (two copies of every row otherwise).
		var mdata, pdata sql.RawBytes
		var pid sql.NullString
		if err := rows.Scan(&mid, &created, &mdata, &pid, &pdata); err != nil {
			return describeDBError(s.dbPath, err)
		}
		if cur == nil || cur.ID != mid {
			if err := flush(); err != nil {
				return err
			}
			m, ok := s.decodeMessage(ss.ID, mid, created, mdata)
			if !ok {
				// Skip the message and its parts.
				cur = &model.Message{ID: mid, Role: "skip"}
				continue
			}
			cur = m
		}
		if cur.Role == "skip" || !pid.Valid {
			continue
		}
		if part, ok := s.decodePart(ss.ID, mid, pid.String, pdata); ok {
			cur.Parts = append(cur.Parts, part)
		}
	}
	if err := rows.Err(); err != nil {
		return describeDBError(s.dbPath, err)
	}
	if cur != nil && cur.Role == "skip" {
		return nil
	}
	return flush()
}

func (s *Source) decodeMessage(sessionID, id string, created int64, data []byte) (*model.Message, bool) {
	var mj messageJSON
	if err := unmarshal(data, &mj); err != nil {
		s.warn("message "+id, "invalid JSON: "+err.Error())
		return nil, false
	}
	if mj.Role == "" {
		s.warn("message "+id, "no role")
		return nil, false
	}
	m := &model.Message{
		ID: id, SessionID: sessionID, Role: mj.Role,
		Created: mj.Time.Created, Completed: mj.Time.Completed,
		Agent: firstNonEmpty(mj.Agent, mj.Mode), Finish: mj.Finish, ParentID: mj.ParentID,
	}
	if m.Created == 0 {
		m.Created = created
	}
	m.Model = modelName(mj.ModelID, mj.Model)
	if mj.Error != nil {
		m.Error = strings.TrimSpace(mj.Error.Name + ": " + mj.Error.Data.Message)
	}
	// Assistant summaries carry `summary: true`; user messages carry an
	// object with the diffs of files changed while answering them.
	if len(mj.Summary) > 0 {
		if bytes.Equal(bytes.TrimSpace(mj.Summary), []byte("true")) {
			m.Summary = true
		}
	}
	if mj.Mode == "compaction" || mj.Agent == "compaction" {
		m.Summary = m.Summary || mj.Role == "assistant"
	}
	if mj.Role == "user" && len(mj.Summary) > 0 && mj.Summary[0] == '{' {
		var sum struct {
			Diffs []struct {
				File string `json:"file"`
			} `json:"diffs"`
		}
		if unmarshal(mj.Summary, &sum) == nil && len(sum.Diffs) > 0 {
			var paths []string
			for _, d := range sum.Diffs {
				if d.File != "" {
					paths = append(paths, d.File)
				}
			}
			if len(paths) > 0 {
				m.Parts = append(m.Parts, model.Part{ID: id + "#diffs", MessageID: id, SessionID: sessionID,
					Type: "diffs", Kind: model.KindPatch, Paths: paths, Created: m.Created, Synthetic: true})
			}
		}
	}
	return m, true
}

func modelName(id string, raw jsontext.Value) string {
	if id != "" {
		return id
	}
	if len(raw) == 0 {
		return ""
	}
	var mm struct {
		ID      string `json:"id"`
		ModelID string `json:"modelID"`
	}
	if unmarshal(raw, &mm) == nil {
		return firstNonEmpty(mm.ModelID, mm.ID)
	}
	return ""
}

func (s *Source) decodePart(sessionID, messageID, id string, data []byte) (model.Part, bool) {
	var pj partJSON
	if err := unmarshal(data, &pj); err != nil {
		s.warn("part "+id, "invalid JSON: "+err.Error())
		return model.Part{}, false
	}
	p := model.Part{ID: id, MessageID: messageID, SessionID: sessionID, Type: pj.Type, Synthetic: pj.Synthetic, Created: pj.Time.Start}
	switch pj.Type {
	case "text":
		if pj.Ignored {
			return p, false
		}
		p.Kind, p.Text = model.KindText, pj.Text
	case "reasoning":
		p.Kind, p.Text = model.KindReasoning, pj.Text
	case "tool":
		if pj.State == nil {
			s.warn("part "+id, "tool part without state")
			return p, false
		}
		p.Kind = model.KindTool
		fillTool(&p, pj.Tool, pj.CallID, pj.State)
	case "patch":
		p.Kind, p.Paths = model.KindPatch, pj.Files
	case "file":
		p.Kind = model.KindFile
		p.Text = pj.Filename
		path := strings.TrimPrefix(pj.URL, "file://")
		if pj.Source != nil {
			path = firstNonEmpty(pj.Source.Path, path)
			if pj.Source.Text != nil {
				p.Text = strings.TrimSpace(pj.Filename + "\n" + pj.Source.Text.Value)
			}
		}
		if path != "" && !strings.HasPrefix(path, "data:") {
			p.Paths = []string{path}
		}
	case "subtask":
		p.Kind = model.KindSubtask
		p.Text = strings.TrimSpace(pj.Description + "\n" + pj.Prompt)
		p.Tool = pj.Agent
	case "agent":
		p.Kind, p.Text = model.KindOther, "@"+pj.Name
	case "compaction":
		p.Kind, p.Text = model.KindOther, "compaction"
		if pj.Auto {
			p.Text = "compaction (automatic)"
		}
	case "retry":
		p.Kind, p.Text = model.KindOther, fmt.Sprintf("retry attempt %d", pj.Attempt)
	case "step-start", "step-finish", "snapshot":
		// Bookkeeping: not content.
		return p, false
	case "":
		s.warn("part "+id, "no type")
		return p, false
	default:
		s.warn("part "+id, "unknown part type "+pj.Type)
		return p, false
	}
	return p, true
}

// fillTool copies a v1 tool state into p.
func fillTool(p *model.Part, tool, callID string, st *toolStateJSON) {
	p.Tool, p.CallID, p.Status, p.Title = tool, callID, st.Status, st.Title
	p.Input = compactJSON(st.Input)
	if p.Input == "" && st.Raw != "" {
		p.Input = st.Raw
	}
	p.Output, p.Error = st.Output, st.Error
	p.Compacted = st.Time.Compacted != 0
	if p.Created == 0 {
		p.Created = st.Time.Start
	}
	var meta struct {
		Truncated bool `json:"truncated"`
		Exit      *int `json:"exit"`
		Files     []struct {
			FilePath string `json:"filePath"`
		} `json:"files"`
	}
	if len(st.Metadata) > 0 && unmarshal(st.Metadata, &meta) == nil {
		p.Truncated = meta.Truncated
		p.ExitCode = meta.Exit
		for _, f := range meta.Files {
			if f.FilePath != "" {
				p.Paths = append(p.Paths, f.FilePath)
			}
		}
	}
	p.Paths = appendInputPaths(p.Paths, st.Input)
}

// appendInputPaths adds the file paths a tool input names (read/write/edit
// take filePath, v2 tools take path).
func appendInputPaths(paths []string, input jsontext.Value) []string {
	if len(input) == 0 || input[0] != '{' {
		return paths
	}
	var in map[string]jsontext.Value
	if unmarshal(input, &in) != nil {
		return paths
	}
	for _, key := range []string{"filePath", "path", "file"} {
		var v string
		if raw, ok := in[key]; ok && unmarshal(raw, &v) == nil && v != "" {
			paths = append(paths, v)
		}
	}
	return dedupe(paths)
}

func dedupe(in []string) []string {
	if len(in) < 2 {
		return in
	}
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// compactJSON renders a tool input as compact JSON with sorted keys (as
// encoding/json writes maps), so it indexes and displays the same way
// whatever the writer's key order.
func compactJSON(raw []byte) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var v any
	if err := unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := codec.marshalCompact(v)
	if err != nil {
		return string(raw)
	}
	return strings.TrimSpace(string(b))
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func revertMessageID(raw string) string {
	if raw == "" || raw == "null" {
		return ""
	}
	var r struct {
		MessageID string `json:"messageID"`
	}
	if unmarshal([]byte(raw), &r) == nil {
		return r.MessageID
	}
	return ""
}
