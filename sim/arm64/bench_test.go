package arm64_test

import (
	"testing"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/runbench"
)

// BenchmarkRun runs every bundled arm64 program (family) and reports guest
// MIPS; intloop and fib get long runs: they are the register-only and the
// call-heavy speed figures in the README.
func BenchmarkRun(b *testing.B) {
	long := map[string][]string{"intloop": {"3000000"}, "fib": {"27"}}
	for _, bin := range programs.Binaries("arm64") {
		args := bin.Args
		if a, ok := long[bin.Name]; ok {
			args = a
		}
		b.Run(bin.Config.Name+"/"+bin.Name, func(b *testing.B) {
			runbench.Program(b, bin.Path, args...)
		})
	}
}

// BenchmarkTiming is BenchmarkRun's long runs with the timing model on
// (compare MIPS within one run: the model may cost at most 40%).
func BenchmarkTiming(b *testing.B) {
	p, _ := cpu.PresetByName("neoverse-n1")
	for _, name := range []string{"intloop", "fib", "listchase", "sort"} {
		bin, err := programs.Find("aarch64-O2", name)
		if err != nil {
			b.Fatal(err)
		}
		args := map[string][]string{"intloop": {"3000000"}, "fib": {"27"}}[name]
		b.Run("plain/"+name, func(b *testing.B) { runbench.Run(b, runbench.Options{}, bin.Path, args...) })
		b.Run("timed/"+name, func(b *testing.B) { runbench.Run(b, runbench.Options{Timing: p}, bin.Path, args...) })
	}
}
