package index

import (
	"context"
	"reflect"
	"testing"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/query"
)

// MatchTexts reads the candidates and their texts in one statement; it
// must return exactly what the match alone and then DocText do, for every kind of
// document (title, text, reasoning, tool call, output) and under a filter.
func TestMatchTextsIsMatchThenDocText(t *testing.T) {
	ix := testIndex(t)
	ctx := context.Background()
	for name, f := range map[string]query.Filter{
		"none":      {},
		"directory": {Directory: "/w/app/"},
		"kinds":     {Kinds: []model.Kind{model.KindTool, model.KindOutput, model.KindReasoning}},
	} {
		for _, limit := range []int{2, 50} {
			want, err := ix.match(ctx, `"pelican"`, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			rids := make([]int64, len(want))
			for i, c := range want {
				rids[i] = c.DocRID
			}
			wantTexts, err := ix.DocText(ctx, rids)
			if err != nil {
				t.Fatal(err)
			}
			got, texts, err := ix.MatchTexts(ctx, `"pelican"`, f, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%s: nothing matched; the test compares nothing", name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%d: candidates differ:\n got %+v\nwant %+v", name, limit, got, want)
			}
			if !reflect.DeepEqual(texts, wantTexts) {
				t.Errorf("%s/%d: texts differ:\n got %v\nwant %v", name, limit, texts, wantTexts)
			}
		}
	}
}

// match is the FTS match alone, without the texts (what search read
// before MatchTexts, and what the tests of the match's filters check).
func (ix *Index) match(ctx context.Context, expr string, f query.Filter, limit int) ([]Candidate, error) {
	q, args := matchQuery(expr, f, limit, "")
	rows, err := ix.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanCandidates(rows)
}
