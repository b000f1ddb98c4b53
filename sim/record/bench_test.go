package record

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// BenchmarkRecord: simrun record with SFrame callchains of the same
// program built static (programs/glibc) and dynamic (programs/dynamic:
// ld.so, lazy binding, libc.so.6 through a sysroot), per architecture.
// The figure is guest MIPS: the dynamic run retires more instructions
// (ld.so's relocation), so time per instruction is what compares; each
// object's unwind tables are built once, when first sampled.
func BenchmarkRecord(b *testing.B) {
	for _, c := range []struct{ arch, static, dynamic string }{
		{"arm64", "aarch64-glibc-O2", "aarch64-dyn-O2"},
		{"s390x", "s390x-glibc-O2", "s390x-dyn-O2"},
	} {
		for _, kind := range []string{"static", "dynamic"} {
			dir := filepath.Join("..", "..", "programs", "glibc", "bin", c.static)
			if kind == "dynamic" {
				dir = filepath.Join("..", "..", "programs", "dynamic", "bin", c.dynamic)
				if _, err := os.Stat(linux.DefaultSysroot(cpu.ArchByName(c.arch))); err != nil {
					continue // no cross libc to load it with
				}
			}
			prog := filepath.Join(dir, "sortsearch")
			b.Run(kind+"/"+c.arch, func(b *testing.B) {
				var insns uint64
				for b.Loop() {
					r, err := Record(context.Background(), linux.Config{Args: []string{prog}, Stdin: strings.NewReader(""),
						Stdout: io.Discard, Stderr: io.Discard, Seed: 1}, Options{Period: 1024, Callchain: "sframe"})
					if err != nil {
						b.Fatal(err)
					}
					insns += r.Insns()
				}
				b.ReportMetric(float64(insns)/b.Elapsed().Seconds()/1e6, "MIPS")
			})
		}
	}
}

// BenchmarkRecordCores: simrun record (SFrame callchains, an SPE unit
// per CPU) of arm64 worksplit, four threads doing the same work, on 1, 2
// and 4 CPUs: guest MIPS, against one CPU's, is what the cores cost a
// recording (linux.DefaultCoreStep scheduling, the coherence directory,
// one unit and recorder per CPU).
func BenchmarkRecordCores(b *testing.B) {
	var prog string
	for _, bin := range programs.ThreadBinaries("arm64") {
		if bin.Config.Name == "aarch64-thr-O2" && bin.Name == "worksplit" {
			prog = bin.Path
		}
	}
	if prog == "" {
		b.Fatal("no arm64 worksplit")
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("cpus%d", n), func(b *testing.B) {
			var insns uint64
			for b.Loop() {
				r, err := Record(context.Background(), linux.Config{Args: []string{prog}, Stdin: strings.NewReader(""),
					Stdout: io.Discard, Stderr: io.Discard, Seed: 1, CPUs: n}, Options{Period: 1024, Callchain: "sframe"})
				if err != nil {
					b.Fatal(err)
				}
				insns += r.Insns()
			}
			b.ReportMetric(float64(insns)/b.Elapsed().Seconds()/1e6, "MIPS")
		})
	}
}
