package redact

import (
	"strings"
	"sync"
	"testing"
)

// Every process that opens an engine makes its redactor, and building the
// builtin rules costs ~6 ms of CPU; one that shows no text (status, an
// idle sync) never needs them. New must leave them unbuilt until the
// first text is redacted, and still refuse a bad config pattern at once.
func TestNewBuildsRulesOnFirstUse(t *testing.T) {
	for _, extra := range []map[string]string{nil, {"ticket": `TICKET-[0-9]{6}`}} {
		r, err := New(extra)
		if err != nil {
			t.Fatal(err)
		}
		if r.rules != nil || r.words != nil {
			t.Fatalf("New(%v) built the rules before any text was redacted", extra)
		}
		// First use from several goroutines at once builds them once.
		var wg sync.WaitGroup
		out := make([]string, 4)
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = r.Redact("token=fake-deploy-token-55aa66bb\nsee TICKET-123456")
			}()
		}
		wg.Wait()
		for _, o := range out {
			if strings.Contains(o, "fake-deploy-token-55aa66bb") {
				t.Fatalf("New(%v): the builtin rules did not run: %q", extra, o)
			}
			if hasTicket := strings.Contains(o, "TICKET-123456"); hasTicket != (extra == nil) {
				t.Fatalf("New(%v): the config pattern ran=%v: %q", extra, !hasTicket, o)
			}
		}
	}
	if _, err := New(map[string]string{"broken": `(`}); err == nil || !strings.Contains(err.Error(), `"broken"`) {
		t.Fatalf("a bad config pattern must fail New and name the pattern, got %v", err)
	}
}
