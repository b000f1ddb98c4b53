package s390x_test

import (
	"testing"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/runbench"
	"simrun/sim/spe"
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

// BenchmarkTiming is BenchmarkRun's long runs with the timing model on,
// then also with SPE sampling every 4096 operations (compare MIPS within
// one run).
func BenchmarkTiming(b *testing.B) {
	p, _ := cpu.PresetByName("neoverse-n1")
	for _, name := range []string{"intloop", "fib", "listchase", "sort"} {
		bin, err := programs.Find("s390x-O2", name)
		if err != nil {
			b.Fatal(err)
		}
		args := map[string][]string{"intloop": {"3000000"}, "fib": {"30"}}[name]
		b.Run("plain/"+name, func(b *testing.B) { runbench.Run(b, runbench.Options{}, bin.Path, args...) })
		b.Run("timed/"+name, func(b *testing.B) { runbench.Run(b, runbench.Options{Timing: p}, bin.Path, args...) })
		b.Run("spe4096/"+name, func(b *testing.B) {
			runbench.Run(b, runbench.Options{Timing: p, Setup: attachSPE}, bin.Path, args...)
		})
	}
}

// attachSPE programs a Neoverse-N1 SPE unit as perf record -c 4096 would.
func attachSPE(m *cpu.Machine) error {
	f := spe.Presets["neoverse-n1"]
	c, err := spe.ParseEvent("arm_spe/ts_enable=1/", &f)
	if err != nil {
		return err
	}
	c.Period = 4096
	u, err := spe.NewUnit(f, 1)
	if err != nil {
		return err
	}
	d, err := spe.NewDriver(u, c, 128, func() uint64 { return m.Timing.Nanos(m.Timing.Cycle()) })
	if err != nil {
		return err
	}
	spe.NewRecorder(m, u, d)
	return nil
}
