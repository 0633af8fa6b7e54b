package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/recallhq/recall/engine/model"
)

// v2MessageJSON is a session_message row's data (OpenCode's v2 engine keeps
// a message's content inline instead of in part rows).
type v2MessageJSON struct {
	Time struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Text    string          `json:"text"`
	Agent   string          `json:"agent"`
	Model   jsontext.Value  `json:"model"`
	Finish  string          `json:"finish"`
	Content []v2ContentJSON `json:"content"`
	// shell rows
	CallID  string `json:"callID"`
	Command string `json:"command"`
	Output  string `json:"output"`
	// compaction rows
	Summary string         `json:"summary"`
	Reason  string         `json:"reason"`
	Error   jsontext.Value `json:"error"`
}

type v2ContentJSON struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Text  string `json:"text"`
	Name  string `json:"name"`
	State *struct {
		Status     string         `json:"status"`
		Input      jsontext.Value `json:"input"`
		Content    []v2OutJSON    `json:"content"`
		Structured jsontext.Value `json:"structured"`
		Error      jsontext.Value `json:"error"`
		Title      string         `json:"title"`
	} `json:"state"`
	Time struct {
		Created int64 `json:"created"`
		Pruned  int64 `json:"pruned"`
	} `json:"time"`
}

type v2OutJSON struct {
	Type string `json:"type"`
	Text string `json:"text"`
	URI  string `json:"uri"`
}

func (s *Source) v2Messages(ctx context.Context, ss model.Session, fn func(*model.Message) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, type, coalesce(time_created,0), data FROM session_message
		WHERE session_id = ? ORDER BY seq, id`, ss.ID)
	if err != nil {
		return describeDBError(s.dbPath, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, typ string
		var created int64
		var data []byte
		if err := rows.Scan(&id, &typ, &created, &data); err != nil {
			return describeDBError(s.dbPath, err)
		}
		m, ok := s.decodeV2(ss.ID, id, typ, created, data)
		if !ok {
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return describeDBError(s.dbPath, err)
	}
	return nil
}

func (s *Source) decodeV2(sessionID, id, typ string, created int64, data []byte) (*model.Message, bool) {
	var mj v2MessageJSON
	if err := unmarshal(data, &mj); err != nil {
		s.warn("session_message "+id, "invalid JSON: "+err.Error())
		return nil, false
	}
	m := &model.Message{ID: id, SessionID: sessionID, Created: mj.Time.Created, Completed: mj.Time.Completed,
		Agent: mj.Agent, Model: modelName("", mj.Model), Finish: mj.Finish}
	if m.Created == 0 {
		m.Created = created
	}
	part := func(kind model.Kind, typ, text string) model.Part {
		return model.Part{ID: fmt.Sprintf("%s#%d", id, len(m.Parts)), MessageID: id, SessionID: sessionID,
			Type: typ, Kind: kind, Text: text, Created: m.Created}
	}
	switch typ {
	case "user":
		m.Role = "user"
		m.Parts = append(m.Parts, part(model.KindText, "text", mj.Text))
	case "synthetic":
		m.Role = "user"
		p := part(model.KindText, "text", mj.Text)
		p.Synthetic = true
		m.Parts = append(m.Parts, p)
	case "system":
		m.Role = "system"
		m.Parts = append(m.Parts, part(model.KindText, "text", mj.Text))
	case "shell":
		m.Role = "assistant"
		p := part(model.KindTool, "tool", "")
		p.Tool, p.CallID, p.Status = "bash", mj.CallID, "completed"
		p.Input = compactJSON(mustJSON(map[string]string{"command": mj.Command}))
		p.Output = mj.Output
		m.Parts = append(m.Parts, p)
	case "compaction":
		m.Role, m.Summary = "assistant", true
		m.Parts = append(m.Parts, part(model.KindSummary, "text", mj.Summary))
	case "assistant":
		m.Role = "assistant"
		if len(mj.Error) > 0 && string(mj.Error) != "null" {
			m.Error = errorText(mj.Error)
		}
		for _, c := range mj.Content {
			switch c.Type {
			case "text":
				m.Parts = append(m.Parts, part(model.KindText, "text", c.Text))
			case "reasoning":
				m.Parts = append(m.Parts, part(model.KindReasoning, "reasoning", c.Text))
			case "tool":
				p := part(model.KindTool, "tool", "")
				p.Tool, p.CallID = c.Name, c.ID
				p.Compacted = c.Time.Pruned != 0
				if c.State != nil {
					p.Status = c.State.Status
					p.Title = c.State.Title
					p.Input = compactJSON(c.State.Input)
					p.Output = v2Output(c.State.Content, c.State.Structured)
					if len(c.State.Error) > 0 && string(c.State.Error) != "null" {
						p.Error = errorText(c.State.Error)
					}
					p.Paths = appendInputPaths(nil, c.State.Input)
				}
				m.Parts = append(m.Parts, p)
			default:
				s.warn("session_message "+id, "unknown content type "+c.Type)
			}
		}
	case "agent-switched", "model-switched":
		return nil, false
	default:
		s.warn("session_message "+id, "unknown message type "+typ)
		return nil, false
	}
	return m, true
}

// v2Output joins a v2 tool's text outputs; a read keeps its file content in
// `structured.content` instead.
func v2Output(content []v2OutJSON, structured jsontext.Value) string {
	var b strings.Builder
	for _, c := range content {
		switch c.Type {
		case "text":
			b.WriteString(c.Text)
		case "file":
			b.WriteString(c.URI)
		}
	}
	if b.Len() > 0 || len(structured) == 0 {
		return b.String()
	}
	var st struct {
		Content string `json:"content"`
	}
	if unmarshal(structured, &st) == nil && st.Content != "" {
		return st.Content
	}
	if string(structured) == "{}" || string(structured) == "null" {
		return ""
	}
	return compactJSON(structured)
}

func errorText(raw jsontext.Value) string {
	var str string
	if unmarshal(raw, &str) == nil {
		return str
	}
	var e struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	if unmarshal(raw, &e) == nil {
		return strings.TrimSpace(e.Name + ": " + firstNonEmpty(e.Message, e.Data.Message))
	}
	return string(raw)
}

func mustJSON(v any) jsontext.Value {
	b, _ := json.Marshal(v)
	return b
}
