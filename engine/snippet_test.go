package engine

import (
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/query"
	"github.com/recallhq/recall/engine/rank"
)

// needlesFor builds a query's snippet needles as lexicalRank does, with
// made-up weights (rarer terms later in the query weigh more).
func needlesFor(raw string) []needle {
	q := query.Parse(raw)
	var out []needle
	for j, t := range q.Searchable() {
		rt := rank.Term{Weight: float64(j + 1)}
		if len(t.Tokens) > 1 {
			rt.Parts = t.Tokens[1:]
		} else {
			rt.Needles = []string{rank.Stem(t.Key())}
		}
		out = append(out, termNeedles(t, rt, j)...)
	}
	if v := verbatim(q); v != "" {
		out = append(out, needle{text: v, group: -1, weight: 100})
	}
	return out
}

// Issue 12's snippet defects: a compound split into needles (`1` and
// `001s`) anchored on the wrong cluster, and one window missing the answer
// that sits past the densest cluster of common words. Both failed on the
// old snippet (one 220-character window on the densest cluster).
func TestSnippetShowsTheAnswer(t *testing.T) {
	filler := strings.Repeat("step 1 of 1 ok, 1 file, 1 warning. ", 12)
	text := filler + "the cache warm-up took 1.001s in total. " + filler
	got, _ := snippet(text, needlesFor("1.001s"), false)
	if !strings.Contains(got, "1.001s") {
		t.Errorf("compound needle: snippet %q lacks 1.001s", got)
	}
	text = strings.Repeat("the retry loop retried the webhook and the retry failed again. ", 8) +
		"We chose full jitter because plain exponential backoff still sends retries in synchronized waves. " +
		strings.Repeat("more notes on the deploy and the webhook retry. ", 8)
	got, _ = snippet(text, needlesFor("why full jitter instead of retry"), false)
	if !strings.Contains(got, "full jitter") || len([]rune(got)) > snippetMax+2*len(windowSep)+2 {
		t.Errorf("rarest term: snippet %q (%d characters) lacks full jitter or is too long", got, len([]rune(got)))
	}
	answer := "Recommendation: don't migrate. Build the status page as a separate static page.\n\n" +
		strings.Repeat("The dashboard sits behind SSO and Next.js would replace the static deploy. ", 6)
	got, _ = snippet(answer, needlesFor("move the dashboard to Next.js"), true)
	if !strings.HasPrefix(got, "Recommendation: don't migrate.") {
		t.Errorf("answer lead: snippet %q does not open with the conclusion", got)
	}
}

// In an assistant's answer a query word inside a `code span` names what
// was done (`mask_email`), and its window wins over one that only uses
// the word in passing (public query p024 missed the answer this way).
func TestSnippetPrefersTheCodeSpan(t *testing.T) {
	filler := strings.Repeat("Nothing else changed in this part of the pipeline. ", 4)
	text := "Both leaks are fixed.\n" + filler + "The logs had the email in them before. " + filler +
		"Now it writes `mask_email(addr)` to the logs instead. " + filler
	got, _ := snippet(text, needlesFor("email logs"), true)
	if !strings.Contains(got, "mask_email") {
		t.Errorf("snippet %q lacks the code span mask_email", got)
	}
}
