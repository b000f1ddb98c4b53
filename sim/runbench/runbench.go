// Package runbench measures guest programs: Go benchmarks call Program,
// which runs a whole program per iteration (machine set-up outside the
// timer) and reports guest MIPS.
package runbench

import (
	"bytes"
	"os"
	"testing"

	"simrun/sim/cpu"
)

// Program runs the ELF at path with args b.N times and reports "MIPS"
// (retired guest instructions per wall-clock microsecond) and "insns/op".
func Program(b *testing.B, path string, args ...string) {
	b.Helper()
	Run(b, Options{}, path, args...)
}

// Options select what runs beside the program.
type Options struct {
	Timing *cpu.CPUPreset             // time every instruction
	Setup  func(m *cpu.Machine) error // e.g. attach an SPE recorder
}

// Run is Program with options.
func Run(b *testing.B, opt Options, path string, args ...string) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var insns uint64
	var out bytes.Buffer
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		out.Reset()
		m, err := cpu.New(path, data, cpu.Config{Args: append([]string{path}, args...), Stdout: &out})
		if err != nil {
			b.Fatal(err)
		}
		if opt.Timing != nil {
			if err := m.EnableTiming(opt.Timing); err != nil {
				b.Fatal(err)
			}
		}
		if opt.Setup != nil {
			if err := opt.Setup(m); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		exit, err := m.Run()
		if err != nil {
			b.Fatal(err)
		}
		if exit.Fault != nil {
			b.Fatal(exit.Fault)
		}
		insns += m.Insns
	}
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(insns)/s/1e6, "MIPS")
	}
	b.ReportMetric(float64(insns)/float64(b.N), "insns/op")
}
