package engine

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The engine refuses a query over MaxQueryBytes itself, before parsing
// it, so no door can bypass the commands' validation.
func TestSearchRefusesHugeQuery(t *testing.T) {
	e := openFixture(t, "v1")
	huge := strings.Repeat("x ", 25<<20)
	start := time.Now()
	_, err := e.Search(t.Context(), SearchParams{Query: huge})
	if !errors.Is(err, ErrQueryTooLong) || time.Since(start) > 100*time.Millisecond {
		t.Errorf("50 MiB query: %v after %v; want ErrQueryTooLong at once", err, time.Since(start))
	}
}
