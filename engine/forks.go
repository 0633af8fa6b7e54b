package engine

import (
	"context"
	"slices"
	"sync"
)

// forkCache holds a shard's session origins (index.Origins) between
// searches, like the vocabulary: one query per sync instead of one per
// search (the query scans every top-level session: 11 ms on the
// 1,000-session clone, too much for each search the plugin sends with
// excludeSession).
type forkCache struct {
	mu       sync.Mutex
	origin   map[string]string   // session -> origin key
	members  map[string][]string // origin key -> sessions
	syncedAt string
}

// forks lists the top-level sessions that share an origin with the family
// of session id (its forks, or what it was forked from), not its root.
func (sh *shard) forks(ctx context.Context, id string) ([]string, error) {
	root, ok, err := sh.ix.RootOf(ctx, id)
	if err != nil || !ok {
		return nil, err
	}
	c := &sh.forkc
	c.mu.Lock()
	defer c.mu.Unlock()
	synced, _ := sh.ix.Meta(ctx, "synced_at")
	if c.origin == nil || c.syncedAt != synced {
		origin, err := sh.ix.Origins(ctx)
		if err != nil {
			return nil, err
		}
		members := map[string][]string{}
		for s, o := range origin {
			members[o] = append(members[o], s)
		}
		c.origin, c.members, c.syncedAt = origin, members, synced
	}
	o, ok := c.origin[root]
	if !ok {
		return nil, nil
	}
	var out []string
	for _, s := range c.members[o] {
		if s != root {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}
