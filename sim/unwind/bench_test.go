package unwind_test

import (
	"os"
	"testing"

	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
	"simrun/sim/unwind"
)

// BenchmarkCheck runs `unwind check --every 1` (SFrame and eh_frame) on
// a call-heavy bundled program and reports frame checks per second and
// the cost per frame.
func BenchmarkCheck(b *testing.B) {
	for _, cfg := range []string{"aarch64-O2", "s390x-O2"} {
		b.Run(cfg, func(b *testing.B) {
			bin, err := programs.Find(cfg, "fib")
			if err != nil {
				b.Fatal(err)
			}
			data, err := os.ReadFile(bin.Path)
			if err != nil {
				b.Fatal(err)
			}
			obj, err := unwind.NewObject(bin.Path, data)
			if err != nil {
				b.Fatal(err)
			}
			var frames, insns uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, err := linux.New(bin.Path, data, linux.Config{Args: []string{bin.Path, "20"}})
				if err != nil {
					b.Fatal(err)
				}
				c, err := unwind.NewChecker(m, obj, unwind.CheckOptions{})
				if err != nil {
					b.Fatal(err)
				}
				r, err := c.Run()
				if err != nil {
					b.Fatal(err)
				}
				if r.Failed() {
					b.Fatal("divergence")
				}
				frames += r.FrameChecks()
				insns += r.Insns
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(frames)/s/1e6, "Mframes/s")
			b.ReportMetric(float64(insns)/s/1e6, "Minsns/s")
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(frames), "ns/frame")
		})
	}
}

// BenchmarkWalk is the cost of unwinding per frame: the stack of fib at
// 20 frames (a leaf call at the bottom of the recursion), walked again
// and again by each method.
func BenchmarkWalk(b *testing.B) {
	for _, cfg := range []string{"aarch64-O2", "s390x-O2"} {
		bin, err := programs.Find(cfg, "fib")
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(bin.Path)
		if err != nil {
			b.Fatal(err)
		}
		obj, err := unwind.NewObject(bin.Path, data)
		if err != nil {
			b.Fatal(err)
		}
		m, err := linux.New(bin.Path, data, linux.Config{})
		if err != nil {
			b.Fatal(err)
		}
		sh := unwind.NewShadow(obj.ABI.SP)
		m.Observer = func(m *cpu.Machine) error {
			if sh.Depth() < 19 {
				sh.Observe(m.Core)
			}
			return nil
		}
		for sh.Depth() < 19 {
			if _, err := m.RunFor(1); err != nil {
				b.Fatal(err)
			}
		}
		m.Observer = nil
		for _, meth := range unwind.Methods {
			tr, err := unwind.NewTracer(obj, unwind.Options{Method: meth})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(cfg+"/"+meth.String(), func(b *testing.B) {
				var w unwind.Walk
				regs := unwind.CoreRegs(m)
				tr.Walk(m.Mem, m.Core.PC(), regs, &w)
				frames := len(w.PCs)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tr.Walk(m.Mem, m.Core.PC(), regs, &w)
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(frames)
				b.ReportMetric(ns, "ns/frame")
				b.ReportMetric(float64(frames), "frames")
			})
		}
	}
}
