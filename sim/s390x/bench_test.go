package s390x_test

import (
	"testing"

	"simrun/internal/runbench"
)

// BenchmarkRun runs every bundled s390x program, the freestanding and the
// glibc ones, and reports guest MIPS; intloop and fib get long runs: they
// are the register-only and the call-heavy speed figures.
func BenchmarkRun(b *testing.B) {
	runbench.Programs(b, "s390x", longRuns)
}

// longRuns are the arguments of the long-running programs.
var longRuns = map[string][]string{"intloop": {"3000000"}, "fib": {"30"}}

// BenchmarkTiming is BenchmarkRun's long runs plain, with the timing
// model on, and with SPE sampling every 4096 operations (compare MIPS
// within one run).
func BenchmarkTiming(b *testing.B) {
	runbench.Timing(b, "s390x-O2", longRuns)
}

// BenchmarkModel times the logged operations of the long runs with the
// timing model alone (ns per operation).
func BenchmarkModel(b *testing.B) {
	runbench.Models(b, "s390x-O2", longRuns)
}

// BenchmarkCores runs the threaded worksplit timed on 1, 2 and 4
// simulated CPUs (--cpus) and plain on 1 and 4: the MIPS cost of several
// cores.
func BenchmarkCores(b *testing.B) {
	runbench.Cores(b, "s390x-thr-O2")
}
