//go:build !unix

package embed

import "time"

// processCPU is unknown here; BenchmarkHistoryTexts then omits cpu-texts/s.
func processCPU() time.Duration { return 0 }
