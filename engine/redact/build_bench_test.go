package redact

import "testing"

// BenchmarkBuildBuiltin is what the first redaction of a process pays.
func BenchmarkBuildBuiltin(b *testing.B) {
	for i := 0; i < b.N; i++ {
		build(append(ownRules(), gitleaksRuleSet()...), true)
	}
}
