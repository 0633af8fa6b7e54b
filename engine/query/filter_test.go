package query

import (
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

func TestParseEnums(t *testing.T) {
	for _, tc := range []struct {
		parse   func(string) (string, error)
		in      string
		want    string
		wantErr string
	}{
		{wrap(ParseMode), "", "auto", ""},
		{wrap(ParseMode), "hybrid", "hybrid", ""},
		{wrap(ParseMode), "recent", "", `"recent" is not one of auto, lexical, semantic, hybrid`},
		{wrap(ParseMode), "Lexical", "", `"Lexical" is not one of`},
		{wrap(ParseGroup), "", "session", ""},
		{wrap(ParseGroup), "none", "none", ""},
		{wrap(ParseGroup), "family", "", `"family" is not one of session, none`},
		{wrap(ParseRole), "assistant", "assistant", ""},
		{wrap(ParseRole), "", "", ""},
		{wrap(ParseRole), "bot", "", `"bot" is not one of user, assistant, system`},
		{wrap(ParseKind), "output", "output", ""},
		{wrap(ParseKind), "outputs", "", `"outputs" is not a kind; use text, reasoning, tool, output`},
	} {
		got, err := tc.parse(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && got != tc.want:
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func wrap[T ~string](parse func(string) (T, error)) func(string) (string, error) {
	return func(s string) (string, error) {
		v, err := parse(s)
		return string(v), err
	}
}

// The lists are the one source of valid values: every listed value is
// Valid, a result-only mode is not.
func TestEnumListsAreValid(t *testing.T) {
	for _, m := range Modes {
		if !m.Valid() {
			t.Errorf("mode %q listed but not valid", m)
		}
	}
	if ModeRecent.Valid() {
		t.Error("recent is what a result reports, not a mode to ask for")
	}
	for _, g := range Groups {
		if !g.Valid() {
			t.Errorf("group %q listed but not valid", g)
		}
	}
	for _, r := range Roles {
		if !r.Valid() {
			t.Errorf("role %q listed but not valid", r)
		}
	}
	if Role("").Valid() {
		t.Error("the empty role is no role")
	}
	if got := Join(model.Kinds); !strings.HasPrefix(got, "text, reasoning, tool") {
		t.Errorf("Join(model.Kinds) = %q", got)
	}
}
