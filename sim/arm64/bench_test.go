package arm64_test

import (
	"testing"

	"simrun/programs"
	"simrun/sim/runbench"
)

// BenchmarkRun runs every bundled arm64 program (family) and reports guest
// MIPS; intloop and fib get long runs: they are the register-only and the
// call-heavy speed figures in the README.
func BenchmarkRun(b *testing.B) {
	long := map[string][]string{"intloop": {"3000000"}, "fib": {"27"}}
	for _, bin := range append(programs.Binaries("arm64"), programs.GlibcBinaries("arm64")...) {
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
	runbench.Timing(b, "aarch64-O2", map[string][]string{"intloop": {"3000000"}, "fib": {"27"}})
}
