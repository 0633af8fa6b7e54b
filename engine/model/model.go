// Package model defines the normalised shape of OpenCode history that every
// storage era is read into: sessions, messages and parts.
package model

// Kind classifies a part for search filters and rendering.
type Kind string

// The part kinds users can filter on (`--kind`).
const (
	KindText      Kind = "text"      // user or assistant prose
	KindReasoning Kind = "reasoning" // model reasoning
	KindTool      Kind = "tool"      // a tool call: its input
	KindOutput    Kind = "output"    // a tool's output or error
	KindPatch     Kind = "patch"     // files changed by a step
	KindSubtask   Kind = "subtask"   // a subtask command's prompt
	KindFile      Kind = "file"      // an attached file
	KindTitle     Kind = "title"     // the session title
	KindSummary   Kind = "summary"   // a compaction summary
	KindOther     Kind = "other"     // anything else worth keeping (agent mentions, compaction markers)
)

// Kinds lists every valid Kind in display order.
var Kinds = []Kind{KindText, KindReasoning, KindTool, KindOutput, KindPatch, KindSubtask, KindFile, KindTitle, KindSummary, KindOther}

// Session is one OpenCode session (a conversation), top-level or subagent.
type Session struct {
	ID          string `json:"id,omitempty"`
	ParentID    string `json:"parentId,omitempty"` // subagent sessions: the session whose task tool created it
	ProjectID   string `json:"projectId,omitempty"`
	Directory   string `json:"directory,omitempty"`
	Title       string `json:"title,omitempty"`
	Slug        string `json:"slug,omitempty"`
	Agent       string `json:"agent,omitempty"`
	Version     string `json:"version,omitempty"`
	Created     int64  `json:"created,omitempty"`  // Unix ms
	Updated     int64  `json:"updated,omitempty"`  // Unix ms
	Archived    int64  `json:"archived,omitempty"` // Unix ms, 0 when not archived
	Compacting  int64  `json:"compacting,omitempty"`
	RevertMsgID string `json:"revertMessageId,omitempty"` // messages at or after this id are hidden (reverted)
	Era         string `json:"era,omitempty"`             // storage era the session came from: "v1", "v2" or "json"
}

// Message is one message of a session in display order.
type Message struct {
	ID        string `json:"id,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Role      string `json:"role,omitempty"` // user | assistant | system
	Created   int64  `json:"created,omitempty"`
	Completed int64  `json:"completed,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Model     string `json:"model,omitempty"`
	Finish    string `json:"finish,omitempty"`
	Error     string `json:"error,omitempty"`    // a failed model call: "APIError: message"
	Summary   bool   `json:"summary,omitempty"`  // a compaction summary message
	ParentID  string `json:"parentId,omitempty"` // assistant: the user message it answers
	Parts     []Part `json:"parts"`
	Ord       int    `json:"ord"` // position in the session's display order, from 0
}

// Part is one piece of a message.
type Part struct {
	ID        string `json:"id,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Type      string `json:"type,omitempty"` // OpenCode's part type: text, reasoning, tool, patch, file, ...
	Kind      Kind   `json:"kind,omitempty"`
	Text      string `json:"text,omitempty"`      // text, reasoning, file source text, subtask prompt, summary
	Synthetic bool   `json:"synthetic,omitempty"` // inserted by OpenCode, not typed by the user
	Created   int64  `json:"created,omitempty"`

	// Tool parts.
	Tool      string `json:"tool,omitempty"`
	CallID    string `json:"callId,omitempty"`
	Status    string `json:"status,omitempty"` // pending | running | completed | error
	Title     string `json:"title,omitempty"`
	Input     string `json:"input,omitempty"` // tool input rendered as compact JSON
	Output    string `json:"output,omitempty"`
	Error     string `json:"error,omitempty"`
	Compacted bool   `json:"compacted,omitempty"` // output hidden from the model (pruned), still stored
	Truncated bool   `json:"truncated,omitempty"` // OpenCode itself truncated the output
	ExitCode  *int   `json:"exitCode,omitempty"`

	// Original lengths when the stored text or output was bounded
	// (0 = not bounded).
	TextLen   int `json:"textLen,omitempty"`
	OutputLen int `json:"outputLen,omitempty"`

	// Paths the part names: patch files, tool file paths, attachments.
	Paths []string `json:"paths,omitempty"`
}

// Warning describes a row the reader skipped or could not fully decode.
type Warning struct {
	Where  string `json:"where,omitempty"` // e.g. "part prt_…"
	Reason string `json:"reason,omitempty"`
}

// OutputOrErrorRaw is what a tool call produced: its output, else its error.
func (p *Part) OutputOrErrorRaw() string {
	if p.Output != "" {
		return p.Output
	}
	return p.Error
}
