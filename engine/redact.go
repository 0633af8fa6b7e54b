package engine

import (
	"github.com/recallhq/recall/engine/model"
)

// show is how text leaves the engine: redacted unless the user asked for
// raw output (--no-redact).
func (e *Engine) show(s string) string {
	if e.opts.NoRedact {
		return s
	}
	return e.redactor.Redact(s)
}

// showMessages redacts a window's messages in place.
func (e *Engine) showMessages(msgs []model.Message) {
	if e.opts.NoRedact {
		return
	}
	for i := range msgs {
		m := &msgs[i]
		m.Error = e.show(m.Error)
		for j := range m.Parts {
			p := &m.Parts[j]
			p.Text, p.Title, p.Input, p.Output, p.Error = e.show(p.Text), e.show(p.Title), e.show(p.Input), e.show(p.Output), e.show(p.Error)
		}
	}
}

func (e *Engine) showSession(s SessionInfo) SessionInfo {
	s.Title, s.FirstPrompt = e.show(s.Title), e.show(s.FirstPrompt)
	for i := range s.Children {
		s.Children[i].Title = e.show(s.Children[i].Title)
	}
	return s
}
