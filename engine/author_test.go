package engine

import (
	"testing"

	"github.com/recallhq/recall/engine/query"
)

// v1's L3 delegated an audit to an explore subagent: the child session's
// first user message is that prompt, written by the parent agent. --role
// user returns it (the message's role is user); --author human must not,
// --author agent must. Before the author filter there was no way to leave
// it out (the test did not compile: query.Filter had no Author).
func TestAuthorTellsDelegatedPromptsFromTyping(t *testing.T) {
	e := openFixture(t, "v1")
	const child = "ses_dd7571026ffeevVSsbfV4taNZK"
	const prompt = "list every function that touches currency codes"
	for _, m := range []query.Match{query.MatchRanked, query.MatchLiteral} {
		in := func(res SearchResult, sid string) bool {
			for _, h := range res.Hits {
				if h.SessionID == sid && h.Role == "user" {
					return true
				}
			}
			return false
		}
		byRole := search(t, e, prompt, func(p *SearchParams) { p.Match = m; p.Filter.Roles = []query.Role{query.RoleUser}; p.Limit = 50 })
		if !in(byRole, child) {
			t.Fatalf("%s: --role user did not return the delegated prompt (the case this filter exists for): %+v", m, byRole.Hits)
		}
		human := search(t, e, prompt, func(p *SearchParams) { p.Match = m; p.Filter.Author = query.AuthorHuman; p.Limit = 50 })
		if in(human, child) {
			t.Errorf("%s: --author human returned the subagent's delegated prompt", m)
		}
		agent := search(t, e, prompt, func(p *SearchParams) { p.Match = m; p.Filter.Author = query.AuthorAgent; p.Limit = 50 })
		if !in(agent, child) {
			t.Errorf("%s: --author agent missed the delegated prompt: %+v", m, agent.Hits)
		}
		// The parent's own prompt (typed) is human.
		parent := search(t, e, "audit how currency codes are handled", func(p *SearchParams) { p.Match = m; p.Filter.Author = query.AuthorHuman; p.Limit = 50 })
		if !in(parent, "ses_dd75710ceffe6gBi2uc0ZER9fC") {
			t.Errorf("%s: --author human missed L3's typed prompt: %+v", m, parent.Hits)
		}
		// OpenCode's synthetic text (W2's attachment and !shell notes) is
		// not human.
		syn := search(t, e, "The following tool was executed by the user", func(p *SearchParams) { p.Match = m; p.Filter.Author = query.AuthorHuman; p.Limit = 50 })
		if in(syn, "ses_dd7572c15ffeYOkoClbrg3kQ0s") {
			t.Errorf("%s: --author human returned OpenCode's synthetic shell note: %+v", m, syn.Hits)
		}
		for _, h := range human.Hits {
			if h.Role != "user" {
				t.Errorf("%s: --author human returned a %s hit", m, h.Role)
			}
		}
	}
}
