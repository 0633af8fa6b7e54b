// Package blame attributes the lines of a file as it is now to the recorded
// changes that wrote them (OpenCode's edit, write, multiedit and
// apply_patch tool calls): it turns a tool's input into the blocks of text
// the call left in the file, and matches those blocks against the current
// lines. It reads nothing itself; the engine gathers the calls.
//
// Why matching rather than replaying: a replay needs the file as it was
// before the first recorded call (usually from git, which the history does
// not hold) and breaks at the first change nobody recorded (a person's
// edit, a formatter, a checkout). Matching each call's text against the
// file as it is now needs neither: a line some call wrote and nobody changed
// since is still there, verbatim, near the other lines that call wrote.
package blame

import (
	"cmp"
	"slices"
	"strings"
)

// Block is a run of lines one call left in the file, in file order: the
// lines it wrote and the unchanged context around them (an edit's oldString
// and newString share context lines; a patch hunk has ' ' lines). Context
// anchors the block in the file but is not attributed to the call.
type Block struct {
	Lines   []string
	Written []bool // per line: the call wrote it (false: context)
}

// Op is one recorded call with the blocks it left; Attribute reports Key.
type Op struct {
	Key    int
	Time   int64 // Unix ms; later calls win a line over earlier ones
	Blocks []Block
}

// Budgets. A file or block past them is still attributed, only coarser.
const (
	// MaxLCSCells bounds one block's longest-common-subsequence table
	// (block lines × window lines). 4M cells is ~4 MB of int32 and ~10 ms;
	// a block that large (a 2,000-line write) falls back to the diagonal
	// match alone, which still attributes every line nobody changed.
	MaxLCSCells = 4 << 20
	// windowSlack is how many lines beyond a block's own length its window
	// in the file may span on each side: lines people inserted inside the
	// region (up to this many) do not stop the lines around them matching.
	windowSlack = 16
)

// Attribute returns, per line of current (0-based), the Key of the op that
// wrote it, or -1 when no recorded op did (a person wrote or changed it, or
// the history does not reach back that far).
//
// Ops are matched newest first: the newest call that wrote a line still in
// the file is its author, and an older call's text only claims the lines no
// newer call did. Each block is placed where most of its lines line up with
// the file (a vote per line on the offset between the block and the file),
// then aligned with a longest common subsequence inside a window around that
// place, so lines people inserted, removed or changed inside the block leave
// the rest of it attributed, and a changed line matches nothing. A per-line
// hash lookup over the whole file instead would pin common lines (a blank,
// a closing bracket) on whichever call wrote such a line first anywhere;
// the window keeps each match next to the rest of its call.
func Attribute(current []string, ops []Op) []int {
	owner := make([]int, len(current))
	for i := range owner {
		owner[i] = -1
	}
	if len(current) == 0 {
		return owner
	}
	// Lines become small ints so comparisons are cheap and a line's places
	// in the file are one map lookup away.
	ids := map[string]int32{}
	intern := func(s string) int32 {
		s = strings.TrimRight(s, " \t\r")
		id, ok := ids[s]
		if !ok {
			id = int32(len(ids))
			ids[s] = id
		}
		return id
	}
	file := make([]int32, len(current))
	where := map[int32][]int{}
	for i, l := range current {
		file[i] = intern(l)
		where[file[i]] = append(where[file[i]], i)
	}
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	// Newest first; equal times keep input order.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ops[b].Time, ops[a].Time) })
	for _, oi := range order {
		op := ops[oi]
		for _, b := range op.Blocks {
			block := make([]int32, len(b.Lines))
			for i, l := range b.Lines {
				if id, ok := ids[strings.TrimRight(l, " \t\r")]; ok {
					block[i] = id
				} else {
					block[i] = -1 // in no line of the file
				}
			}
			// A line a newer call already claimed is no place for this
			// call's written lines (its context may still sit there).
			free := func(i, f int) bool { return !b.Written[i] || owner[f] == -1 }
			pairs := match(block, file, where, owner, free)
			// A blank or a lone bracket is everywhere: the block claims
			// lines only when it also matched a line with some substance,
			// so a one-line "}" edit does not take the first "}" of an
			// unrelated function.
			anchored := false
			for _, m := range pairs {
				anchored = anchored || substantial(current[m.f])
			}
			if !anchored {
				continue
			}
			for _, m := range pairs {
				if b.Written[m.b] && owner[m.f] == -1 {
					owner[m.f] = op.Key
				}
			}
		}
	}
	return owner
}

// pair is a block line matched to a file line.
type pair struct{ b, f int }

// match places block in file and returns the matched line pairs.
func match(block, file []int32, where map[int32][]int, owner []int, free func(i, f int) bool) []pair {
	offset, ok := bestOffset(block, where, owner)
	if !ok {
		return nil
	}
	lo := max(0, offset-windowSlack)
	hi := min(len(file), offset+len(block)+windowSlack)
	if lo >= hi {
		return nil
	}
	if len(block)*(hi-lo) > MaxLCSCells {
		var out []pair
		for i, id := range block {
			if f := offset + i; f >= 0 && f < len(file) && file[f] == id && free(i, f) {
				out = append(out, pair{i, f})
			}
		}
		return out
	}
	return lcs(block, file[lo:hi], func(i, j int) bool { return block[i] >= 0 && block[i] == file[lo+j] && free(i, lo+j) }, lo)
}

// bestOffset is the file offset (file line - block line) most block lines
// agree on. Ties go to the offset whose lines are least claimed, then to
// the first, so two calls that wrote the same short line land in turn.
func bestOffset(block []int32, where map[int32][]int, owner []int) (int, bool) {
	votes := map[int]int{}
	free := map[int]int{}
	for i, id := range block {
		if id < 0 {
			continue
		}
		for _, f := range where[id] {
			votes[f-i]++
			if owner[f] == -1 {
				free[f-i]++
			}
		}
	}
	best, bestVotes, bestFree := 0, 0, -1
	for off, v := range votes {
		fr := free[off]
		if v > bestVotes || (v == bestVotes && (fr > bestFree || (fr == bestFree && off < best))) {
			best, bestVotes, bestFree = off, v, fr
		}
	}
	return best, bestVotes > 0
}

// lcs aligns block with window (which starts at file line base; eq says
// whether block line i may match window line j) and returns the pairs of
// one longest common subsequence, preferring the diagonal.
func lcs(block, window []int32, eq func(i, j int) bool, base int) []pair {
	n, m := len(block), len(window)
	// dp[i][j] = LCS length of block[i:] and window[j:], flat.
	w := m + 1
	dp := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case eq(i, j):
				dp[i*w+j] = dp[(i+1)*w+j+1] + 1
			case dp[(i+1)*w+j] >= dp[i*w+j+1]:
				dp[i*w+j] = dp[(i+1)*w+j]
			default:
				dp[i*w+j] = dp[i*w+j+1]
			}
		}
	}
	var out []pair
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case eq(i, j) && dp[i*w+j] == dp[(i+1)*w+j+1]+1:
			out = append(out, pair{i, base + j})
			i++
			j++
		case dp[(i+1)*w+j] >= dp[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// substantial: a line with at least this much besides spaces and brackets
// identifies its place; shorter ones (blank, "}", "]", "end") do not.
func substantial(l string) bool {
	t := strings.Trim(l, " \t\r{}[]()<>;,")
	return len(t) >= 4
}
