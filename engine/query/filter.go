package query

import (
	"fmt"
	"strings"

	"github.com/recallhq/recall/engine/model"
)

// Filter is the scope of one search: the only description of it, compiled
// by engine/index into SQL and by engine/vectors into its pre-filter. Zero
// values mean no restriction.
type Filter struct {
	// Directory keeps sessions that ran in this directory or below it
	// (path-boundary aware: /a/b does not keep /a/bc).
	Directory string
	// After and Before bound a document's time, Unix ms: After <= t < Before.
	After, Before int64
	Roles         []Role
	Kinds         []model.Kind
	Tools         []string
	// Session keeps this session and its subagents.
	Session string
	// ExcludeSession leaves out this session and its whole subagent family
	// (the root it belongs to and every session under that root), also
	// when the session itself is not indexed yet (an agent searching from
	// inside the session it is in).
	ExcludeSession string
	// ExcludeRoots are more families to leave out with ExcludeSession's:
	// its forks (the engine fills them in from the index; a fork is a new
	// top-level session OpenCode does not link to its source).
	ExcludeRoots []string
	// Sources will name the histories to search when there are several;
	// nil means all of them.
	Sources []string
	// Author keeps what a person typed or what an agent wrote ("" keeps
	// both).
	Author Author
}

// Mode is how a search ranks: lexically (FTS5 BM25 and re-ranking),
// semantically (vector similarity), or both fused.
type Mode string

// The search modes a caller may ask for.
const (
	ModeAuto     Mode = "auto" // hybrid when a model and vectors exist, else lexical
	ModeLexical  Mode = "lexical"
	ModeSemantic Mode = "semantic"
	ModeHybrid   Mode = "hybrid"
)

// ModeRecent is the mode a result reports when the query asked for recent
// activity (an empty query, "what did I do lately"); it cannot be asked for.
const ModeRecent Mode = "recent"

// ModeLiteral and ModeRegex are what a result reports for a literal or a
// regex match (asked for with Match, not Mode).
const (
	ModeLiteral Mode = "literal"
	ModeRegex   Mode = "regex"
)

// Modes lists the valid Mode values, in the order help text shows them.
var Modes = []Mode{ModeAuto, ModeLexical, ModeSemantic, ModeHybrid}

// Valid reports whether m is one of Modes ("" counts: it means ModeAuto).
func (m Mode) Valid() bool { return m == "" || member(Modes, m) }

// ParseMode reads a mode ("" is ModeAuto).
func ParseMode(s string) (Mode, error) { return parseEnum(s, Modes, ModeAuto) }

// Group is how hits are grouped.
type Group string

// The groupings.
const (
	// GroupSession gives each session family a few hits (the default), so
	// one long session does not fill the page.
	GroupSession Group = "session"
	// GroupNone ranks documents alone.
	GroupNone Group = "none"
)

// Groups lists the valid Group values.
var Groups = []Group{GroupSession, GroupNone}

// Valid reports whether g is one of Groups ("" counts: GroupSession).
func (g Group) Valid() bool { return g == "" || member(Groups, g) }

// ParseGroup reads a grouping ("" is GroupSession).
func ParseGroup(s string) (Group, error) { return parseEnum(s, Groups, GroupSession) }

// Role is who wrote a message.
type Role string

// The roles a search can keep. OpenCode writes user and assistant
// messages; system is kept for histories that carry one.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
)

// Roles lists the valid Role values.
var Roles = []Role{RoleUser, RoleAssistant, RoleSystem}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return member(Roles, r) }

// ParseRole reads a role ("" is no role: the empty Role, which is not
// Valid).
func ParseRole(s string) (Role, error) { return parseEnum(s, Roles, "") }

// ParseKind reads a part kind (model.Kinds lists them).
func ParseKind(s string) (model.Kind, error) {
	if s == "" || !member(model.Kinds, model.Kind(s)) {
		return "", fmt.Errorf("%q is not a kind; use %s", s, Join(model.Kinds))
	}
	return model.Kind(s), nil
}

// Join renders valid values for a message or help text: "a, b, c".
func Join[T ~string](vals []T) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

func member[T comparable](vals []T, v T) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}

// parseEnum is the one reading of every enum: "" is the default, anything
// else must be a listed value. The message matches the command layer's.
func parseEnum[T ~string](s string, valid []T, def T) (T, error) {
	if s == "" {
		return def, nil
	}
	if member(valid, T(s)) {
		return T(s), nil
	}
	return def, fmt.Errorf("%q is not one of %s", s, Join(valid))
}

// Match is how a search finds text: ranked (the index's BM25 and vectors)
// or by scanning the history's full text for a literal or a regex.
type Match string

// The match modes.
const (
	MatchRanked  Match = "ranked"
	MatchLiteral Match = "literal" // case-insensitive substring
	MatchRegex   Match = "regex"   // Go RE2 syntax
)

// Matches lists the valid Match values.
var Matches = []Match{MatchRanked, MatchLiteral, MatchRegex}

// Valid reports whether m is one of Matches ("" counts: MatchRanked).
func (m Match) Valid() bool { return m == "" || member(Matches, m) }

// ParseMatch reads a match mode ("" is MatchRanked).
func ParseMatch(s string) (Match, error) { return parseEnum(s, Matches, MatchRanked) }

// Author is who wrote a text: a person, or an agent.
type Author string

// The authors a search can keep.
const (
	// AuthorHuman keeps what a person typed: user-role parts that are not
	// synthetic (OpenCode's attachments, shell notes, continuations,
	// plugin-injected text), not a compaction's, and not in a subagent
	// session (whose user messages the parent agent wrote).
	AuthorHuman Author = "human"
	// AuthorAgent keeps everything else: what models wrote and what
	// OpenCode, plugins and parent agents put in user messages.
	AuthorAgent Author = "agent"
)

// Authors lists the valid Author values.
var Authors = []Author{AuthorHuman, AuthorAgent}

// Valid reports whether a is one of Authors ("" counts: no filter).
func (a Author) Valid() bool { return a == "" || member(Authors, a) }

// HumanKinds are the part kinds a person can type into a user message: a
// prompt, an attached file, a subtask command.
var HumanKinds = []model.Kind{model.KindText, model.KindFile, model.KindSubtask}
