package s390x_test

import (
	"testing"

	"simrun/programs"
	"simrun/sim/runbench"
)

// BenchmarkRun runs every bundled s390x program, the freestanding and the
// glibc ones, and reports guest MIPS; intloop and fib get long runs: they
// are the register-only and the call-heavy speed figures.
func BenchmarkRun(b *testing.B) {
	long := map[string][]string{"intloop": {"3000000"}, "fib": {"30"}}
	for _, bin := range append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...) {
		args := bin.Args
		if a, ok := long[bin.Name]; ok {
			args = a
		}
		b.Run(bin.Config.Name+"/"+bin.Name, func(b *testing.B) {
			runbench.Program(b, bin.Path, args...)
		})
	}
}

// BenchmarkTiming is BenchmarkRun's long runs plain, with the timing
// model on, and with SPE sampling every 4096 operations (compare MIPS
// within one run).
func BenchmarkTiming(b *testing.B) {
	runbench.Timing(b, "s390x-O2", map[string][]string{"intloop": {"3000000"}, "fib": {"30"}})
}
