package arm64_test

import (
	"testing"

	"simrun/internal/runbench"
)

// BenchmarkRun runs every bundled arm64 program (family) and reports guest
// MIPS; intloop and fib get long runs: they are the register-only and the
// call-heavy speed figures (docs/speed.md, SPEED.md).
func BenchmarkRun(b *testing.B) {
	runbench.Programs(b, "arm64", longRuns)
}

// longRuns are the arguments of the long-running programs.
var longRuns = map[string][]string{"intloop": {"3000000"}, "fib": {"27"}}

// BenchmarkTiming is BenchmarkRun's long runs plain, with the timing
// model on, and with SPE sampling every 4096 operations (compare MIPS
// within one run).
func BenchmarkTiming(b *testing.B) {
	runbench.Timing(b, "aarch64-O2", longRuns)
}

// BenchmarkModel times the logged operations of the long runs with the
// timing model alone (ns per operation).
func BenchmarkModel(b *testing.B) {
	runbench.Models(b, "aarch64-O2", longRuns)
}

// BenchmarkCores runs the threaded worksplit timed on 1, 2 and 4
// simulated CPUs (--cpus) and plain on 1 and 4: the MIPS cost of several
// cores.
func BenchmarkCores(b *testing.B) {
	runbench.Cores(b, "aarch64-thr-O2")
}
