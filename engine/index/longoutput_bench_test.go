package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recallhq/recall/engine/model"
	"github.com/recallhq/recall/engine/redact"
)

// logText is n bytes of a build log: timestamps, levels, paths, numbers
// and identifiers, the mix long tool outputs are made of.
func logText(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "2024-03-14T09:%02d:%02d.%03dZ INFO build step %04d: compiled src/module_%04d.js in %dms (cache miss, %d deps) handler=ProcessOrderBatch retries=%d\n",
			i/60%60, i%60, i%1000, i, i, 10+i%7, i%5, i%3)
	}
	return b.String()[:n]
}

// BenchmarkIndexLongOutput indexes one session of 16 tool calls whose
// outputs are each n bytes, through the Writer with the redactor on, as a
// sync does; it reports source MB/s and the index file's size per source
// byte. It chose OutputCap: what a cap costs is what one part that long
// costs to index.
func BenchmarkIndexLongOutput(b *testing.B) {
	red, err := redact.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dK", n>>10), func(b *testing.B) {
			if n > OutputCap {
				b.Skipf("over OutputCap (%d): the part would be cut", OutputCap)
			}
			out := logText(n)
			const parts = 16
			var size int64
			for i := 0; b.Loop(); i++ {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				os.Mkdir(dir, 0o700)
				ix := openIndex(b, filepath.Join(dir, "i.db"))
				ix.SetRedactor(red)
				ctx := context.Background()
				w, err := ix.BeginWrite(ctx)
				if err != nil {
					b.Fatal(err)
				}
				s := model.Session{ID: "ses_long", Title: "long outputs", Directory: "/w", Created: 1}
				var c SessionCounts
				for k := 0; k < parts; k++ {
					m := model.Message{ID: fmt.Sprintf("msg_%03d", k), SessionID: s.ID, Role: "assistant", Created: int64(k + 1), Parts: []model.Part{
						{ID: fmt.Sprintf("prt_%03d", k), Type: "tool", Kind: model.KindTool, Tool: "bash", Status: "completed",
							Input: `{"command":"make build"}`, Output: fmt.Sprintf("run %d\n", k) + out},
					}}
					if err := w.PutMessage(ctx, &s, s.ID, k, &m, &c); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.PutSession(ctx, &s, SessionMeta{RootID: s.ID, Now: 1}, c); err != nil {
					b.Fatal(err)
				}
				if err := w.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				ix.Close()
				size = 0
				for _, suf := range []string{"", "-wal"} {
					if st, err := os.Stat(filepath.Join(dir, "i.db"+suf)); err == nil {
						size += st.Size()
					}
				}
			}
			b.SetBytes(int64(parts * n))
			b.ReportMetric(float64(size)/float64(parts*n), "index-bytes/source-byte")
		})
	}
}
