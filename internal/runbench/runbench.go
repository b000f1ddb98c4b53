// Package runbench measures guest programs: Go benchmarks call Program,
// which runs a whole program per iteration (machine set-up outside the
// timer) and reports guest MIPS.
package runbench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/spe"
	"simrun/sim/timing"
)

// Program runs the ELF at path with args b.N times and reports "MIPS"
// (retired guest instructions per wall-clock microsecond) and "insns/op".
func Program(b *testing.B, path string, args ...string) {
	b.Helper()
	ProgramWith(b, Options{}, path, args...)
}

// Options select what runs beside the program.
type Options struct {
	Timing *timing.Preset             // time every instruction
	Setup  func(m *cpu.Machine) error // e.g. attach an SPE recorder
	// Collect starts each run from a collected heap: the garbage of the
	// machines before it (and of this one's set-up, e.g. an SPE unit's
	// AUX area) is not collected, concurrently, on its time. (A
	// collection per run makes short programs' benchmarks slow: Timing
	// sets it, where plain, timed and sampled runs are compared.)
	Collect bool
	// CPUs is the simulated CPUs (linux.Config.CPUs, timing.NewCores
	// with Timing; 0: one).
	CPUs int
}

// ProgramWith is Program with options.
func ProgramWith(b *testing.B, opt Options, path string, args ...string) {
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
		m := newMachine(b, path, data, opt.Timing, &out, args, opt.CPUs)
		if opt.Setup != nil {
			if err := opt.Setup(m); err != nil {
				b.Fatal(err)
			}
		}
		if opt.Collect {
			runtime.GC()
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

// newMachine loads the program for one run, timed with preset p unless
// p is nil.
func newMachine(b *testing.B, path string, data []byte, p *timing.Preset, out *bytes.Buffer, args []string, cpus int) *cpu.Machine {
	b.Helper()
	m, err := NewMachineCPUs(path, data, p, out, args, cpus)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// NewMachine loads the ELF image data (from path) with argv path+args,
// its standard output to out, timed with preset p unless p is nil.
func NewMachine(path string, data []byte, p *timing.Preset, out io.Writer, args []string) (*cpu.Machine, error) {
	return NewMachineCPUs(path, data, p, out, args, 1)
}

// NewMachineCPUs is NewMachine on cpus simulated CPUs (with p, as many
// timing cores).
func NewMachineCPUs(path string, data []byte, p *timing.Preset, out io.Writer, args []string, cpus int) (*cpu.Machine, error) {
	cpus = max(cpus, 1)
	m, err := linux.New(path, data, linux.Config{Args: append([]string{path}, args...), Stdout: out, CPUs: cpus})
	if err != nil {
		return nil, err
	}
	if p != nil {
		if _, err := timing.EnableCores(m, p, cpus); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Cores runs the multi-threaded worksplit of threadConfig (four
// threads, the same work whatever the CPUs) timed on 1, 2 and 4 CPUs
// (simrun run --cpus N --stats): the MIPS of N cores against one's is
// the cost of the cores (timing every operation one by one, a
// scheduling decision every linux.DefaultCoreStep instructions), and
// plain on 1 and 4 CPUs, the scheduler's cost alone.
func Cores(b *testing.B, threadConfig string) {
	p, err := timing.PresetByName(Preset)
	if err != nil {
		b.Fatal(err)
	}
	var path string
	for _, bin := range programs.ThreadBinaries("") {
		if bin.Config.Name == threadConfig && bin.Name == "worksplit" {
			path = bin.Path
		}
	}
	if path == "" {
		b.Fatalf("no worksplit built for %s", threadConfig)
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("timed/cpus%d", n), func(b *testing.B) { ProgramWith(b, Options{Timing: p, Collect: true, CPUs: n}, path) })
	}
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("plain/cpus%d", n), func(b *testing.B) { ProgramWith(b, Options{Collect: true, CPUs: n}, path) })
	}
}

// Preset is the CPU (and SPE) preset the benchmarks time with.
const Preset = "neoverse-n1"

// longPrograms are the programs Timing and Models measure.
var longPrograms = []string{"intloop", "fib", "listchase", "sort"}

// glibcTimed are the glibc programs Timing measures besides: qsort and
// bsearch through a comparison callback (short runs between calls and
// returns, 2.9 M instructions) and the allocator (90 M).
var glibcTimed = []string{"sortsearch", "malloc"}

// Timing runs the long-running programs of config (intloop, fib,
// listchase, sort; args gives their arguments) and glibcTimed of the same
// architecture, each plain, with the timing model on, and also with SPE
// sampling every 4096 operations: compare the MIPS within one run. Each
// run starts from a collected heap (Collect).
func Timing(b *testing.B, config string, args map[string][]string) {
	p, err := timing.PresetByName(Preset)
	if err != nil {
		b.Fatal(err)
	}
	var bins []programs.Binary
	for _, name := range longPrograms {
		bin, err := programs.Find(config, name)
		if err != nil {
			b.Fatal(err)
		}
		bins = append(bins, bin)
	}
	for _, bin := range programs.GlibcBinaries(bins[0].Config.Arch) {
		if slices.Contains(glibcTimed, bin.Name) {
			bins = append(bins, bin)
		}
	}
	for _, bin := range bins {
		name, a := bin.Name, args[bin.Name]
		if bin.Config.Glibc {
			name = "glibc-" + name
		}
		b.Run("plain/"+name, func(b *testing.B) { ProgramWith(b, Options{Collect: true}, bin.Path, a...) })
		b.Run("timed/"+name, func(b *testing.B) { ProgramWith(b, Options{Timing: p, Collect: true}, bin.Path, a...) })
		b.Run("spe4096/"+name, func(b *testing.B) {
			ProgramWith(b, Options{Timing: p, Setup: AttachSPE, Collect: true}, bin.Path, a...)
		})
	}
}

// AttachSPE programs an SPE unit of Preset as perf record -c 4096 would.
func AttachSPE(m *cpu.Machine) error {
	f := spe.Presets[Preset]
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

// Programs runs every bundled program of arch, freestanding and glibc,
// one sub-benchmark each; long gives the arguments of the programs that
// get long runs (the register-only and call-heavy figures).
func Programs(b *testing.B, arch string, long map[string][]string) {
	for _, bin := range append(programs.Binaries(arch), programs.GlibcBinaries(arch)...) {
		args := bin.Args
		if a, ok := long[bin.Name]; ok {
			args = a
		}
		b.Run(bin.Config.Name+"/"+bin.Name, func(b *testing.B) { Program(b, bin.Path, args...) })
	}
}

// Model measures the timing model alone: it logs the program's retired
// operations once, then times that log with a fresh, cold model per
// iteration (every summary is rebuilt) and reports nanoseconds per
// timed operation.
func Model(b *testing.B, path string, args ...string) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	p, err := timing.PresetByName(Preset)
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	m := newMachine(b, path, data, p, &out, args, 1)
	rec := &logRecorder{}
	m.Consumers = append(m.Consumers, rec)
	if _, err := m.Run(); err != nil {
		b.Fatal(err)
	}
	shift := timing.Of(m).PCShift
	gen := m.Mem.CodeGen
	var insns uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		t := timing.New(p)
		t.PCShift = shift
		gen++ // a code generation no summary was made under: all cold
		for _, batch := range rec.batches {
			batch.CodeGen = gen
		}
		b.StartTimer()
		for k, batch := range rec.batches {
			t.TimeBatch(batch, rec.next[k], nil, nil)
		}
		insns += t.Stats.Insns
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(insns), "ns/op-timed")
}

// logRecorder keeps a copy of the batches of retired operations (the
// first maxLogged operations).
type logRecorder struct {
	batches []*cpu.Batch
	next    []uint64
	n       int
}

const maxLogged = 1 << 24

func (r *logRecorder) Want(*cpu.Batch) []int { return nil }

func (r *logRecorder) Retired(m *cpu.Machine, b *cpu.Batch, _ []int, _ []cpu.OpTiming) {
	if r.n += b.Len(); r.n > maxLogged {
		return
	}
	r.batches = append(r.batches, b.Clone())
	r.next = append(r.next, m.Core.PC())
}

// Models runs Model on the long-running programs of config.
func Models(b *testing.B, config string, args map[string][]string) {
	for _, name := range longPrograms {
		bin, err := programs.Find(config, name)
		if err != nil {
			b.Fatal(err)
		}
		a := args[name]
		b.Run(name, func(b *testing.B) { Model(b, bin.Path, a...) })
	}
}
