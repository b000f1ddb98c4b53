// Package record makes SPE recordings: it loads a program into a machine
// with the timing model, programs the SPE unit as Linux's arm_spe_pmu
// driver does, follows every thread and process of the run, gives each
// sampled operation its call stack, and hands back what the sinks read
// (the AUX stream, the decoded samples, perf.data). simrun record only
// wires its flags into Options.
//
//	rec, err := record.Record(ctx, linux.Config{Args: []string{prog}, ...}, record.Options{Period: 4096})
//	prof, bin, err := rec.Profile()
//	pd, err := rec.PerfData(prof)
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"time"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/spe"
	"simrun/sim/timing"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
)

// Options is what one recording is asked to do; the zero value records
// with arm_spe//, period 4096, the neoverse-n1 model, 128 AUX pages, no
// callchains.
type Options struct {
	Event    string // perf event spec, arm_spe/TERMS/ ("": arm_spe//)
	Period   uint64 // sample period in operations (0: 4096)
	Model    string // CPU model: timing preset and SPE features ("": neoverse-n1)
	AuxPages int    // AUX area size in pages (0: 128)
	// NoDrain: perf never reads the AUX area while the program runs (it
	// fills up and truncates).
	NoDrain bool
	Regs    []string // NAME=VALUE register writes after the driver's
	// Callchain is the unwinding method for the samples' call stacks
	// (see unwind.ParseMethod), "truth" (the executed calls) or ""/"none";
	// Policy its switches.
	Callchain string
	Policy    unwind.Policy
	PAuth     bool // arm64: pointer authentication on
	// MaxStack caps each callchain (0: spe.DefaultMaxStack).
	MaxStack int
	// Progress, if not nil, gets a progress line (a terminal's stderr).
	Progress io.Writer
	// Notes, if not nil, gets one-line notes (the period as programmed).
	Notes io.Writer
	// Warnings gets one line per feature left out for a corrupt section
	// (even under --quiet); nil discards them.
	Warnings io.Writer
}

// Interrupted is the cause to cancel a recording's context with when a
// signal stops it (as Ctrl-C stops perf record): the program ends where
// it is, as if killed by the signal, and the recording is complete up to
// there. A context cancelled with any other cause stops it the same way,
// as SIGINT.
type Interrupted struct{ Signal syscall.Signal }

func (e Interrupted) Error() string { return "interrupted by " + linux.SignalName(int(e.Signal)) }

// Model picks the timing preset and SPE implementation of a CPU model:
// the timing presets and SPE presets share names; spe-max times like
// neoverse-v2.
func Model(name string) (*timing.Preset, spe.Features, error) {
	f, ok := spe.Presets[name]
	if !ok {
		var names []string
		for n := range spe.Presets {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, f, fmt.Errorf("unknown CPU model %q for SPE (known: %s)", name, strings.Join(names, ", "))
	}
	tm := name
	if name == "spe-max" {
		tm = "neoverse-v2"
	}
	p, err := timing.PresetByName(tm)
	return p, f, err
}

// Recording is what Record produced: the run and its SPE data. Unit,
// Driver, AUX, Truncated and Callchains are CPU 0's (the only one
// without linux.Config.CPUs); CPUs holds every CPU's.
type Recording struct {
	Machine *cpu.Machine // the first process's
	Unit    *spe.Unit
	Driver  *spe.Driver
	CPUs    []*CPU
	Exit    *cpu.Exit // how the program ended (128+signal when Interrupted)
	// AUX is the SPE byte stream as perf read it from the AUX area;
	// Truncated: the area filled up and records were lost.
	AUX       []byte
	Truncated bool
	// Callchains[i] is the call stack of SPE record i, leaf first; nil:
	// each sample's callchain is its pc alone. ChainsCut counts those
	// cut at MaxStack frames.
	Callchains [][]uint64
	ChainsCut  int
	MaxStack   int
	// Stopped is why the recording stopped before the program ended (the
	// context's cause), nil when it ran to its end.
	Stopped error

	args   []string
	feats  spe.Features
	preset *timing.Preset
	cfg    *spe.Config
	regs   map[spe.Reg]uint64 // sampling controls as programmed before the run
	event  string             // the perf event as given
	seed   uint64
	// threads are the threads clone made (none: single-threaded).
	threads []profile.Thread
	// tasks are every process's and thread's side-band events (nil
	// without a Linux process).
	tasks *linux.TaskLog
	// images are the programs the run's processes ran, tags each SPE
	// record's (a run of several processes).
	images *images
	tags   []int
}

// Record loads and runs the program cfg names with the timing model and
// the SPE unit programmed as the Linux driver would. Cancelling ctx stops
// the program at an instruction boundary; the recording up to there is
// returned (Recording.Stopped says why).
func Record(ctx context.Context, cfg linux.Config, opt Options) (*Recording, error) {
	if opt.Event == "" {
		opt.Event = "arm_spe//"
	}
	if opt.Period == 0 {
		opt.Period = 4096
	}
	if opt.Model == "" {
		opt.Model = "neoverse-n1"
	}
	if opt.AuxPages == 0 {
		opt.AuxPages = 128
	}
	if opt.MaxStack <= 0 {
		opt.MaxStack = spe.DefaultMaxStack
	}
	if len(cfg.Args) == 0 {
		return nil, errors.New("record: no program given")
	}
	preset, feats, err := Model(opt.Model)
	if err != nil {
		return nil, err
	}
	scfg, err := spe.ParseEvent(opt.Event, &feats)
	if err != nil {
		return nil, err
	}
	var note string
	if scfg.Period, note, err = spe.SamplePeriod(opt.Period, &feats); err != nil {
		return nil, err
	}
	if note != "" && opt.Notes != nil {
		fmt.Fprintf(opt.Notes, "simrun record: %s\n", note)
	}
	m, err := linux.Load(cfg.Args[0], cfg)
	if err != nil {
		return nil, err
	}
	// One timing core, SPE unit, driver and recorder per simulated CPU
	// (--cpus): each unit samples the operations its core retires into
	// its own buffer, stamped by its core's clock, as Linux opens a
	// per-CPU event on each CPU (perf record -a).
	cores := []*timing.Model{}
	if n := max(cfg.CPUs, 1); n > 1 {
		if cores, err = timing.EnableCores(m, preset, n); err != nil {
			return nil, err
		}
	} else {
		t, err := timing.Enable(m, preset)
		if err != nil {
			return nil, err
		}
		cores = append(cores, t)
	}
	var cpus []*CPU
	for i, core := range cores {
		// Each unit its own jitter: CPU 0's seed is the run's, so one
		// CPU records as before.
		u, err := spe.NewUnit(feats, cfg.Seed+uint64(i))
		if err != nil {
			return nil, err
		}
		u.ContextID = profile.MainTid // the guest's pid, the main thread's tid
		d, err := spe.NewDriver(u, scfg, opt.AuxPages, func() uint64 { return core.Nanos(core.Cycle()) })
		if err != nil {
			return nil, err
		}
		d.Drain = !opt.NoDrain
		for _, kv := range opt.Regs {
			reg, v, err := spe.ParseRegWrite(kv)
			if err == nil {
				err = u.WriteReg(reg, v)
			}
			if err != nil {
				return nil, fmt.Errorf("--spe-reg: %w", err)
			}
		}
		cpus = append(cpus, &CPU{Unit: u, Driver: d, rec: &spe.Recorder{Unit: u, D: d, Timer: core, MaxStack: opt.MaxStack}})
	}
	u, d, rec := cpus[0].Unit, cpus[0].Driver, cpus[0].rec
	now := func() uint64 { return m.Timing.Nanos(m.Timing.Cycle()) }
	var threads *threadLog
	var tasks *linux.TaskLog
	if p := linux.Of(m); p != nil {
		threads = logThreads(p, cpus)
		tasks = linux.LogTasks(p, now)
	}
	programmed := map[spe.Reg]uint64{}
	for _, reg := range profile.SPERegisters(&feats) {
		programmed[reg] = u.Regs.Get(reg)
	}
	if opt.PAuth {
		if err := linux.EnablePAuth(m); err != nil {
			return nil, err
		}
	}
	var imgs *images
	if p := linux.Of(m); p != nil {
		imgs = trackImages(p)
		rec.Tag = imgs.tag
	}
	if err := attachCallchains(m, rec, &opt); err != nil {
		return nil, err
	}
	for _, c := range cpus[1:] {
		c.rec.Tag, c.rec.Chain = rec.Tag, rec.Chain
	}
	if len(cpus) == 1 {
		m.Consumers = append(m.Consumers, rec)
	} else {
		m.Consumers = append(m.Consumers, &perCPU{cpus: cpus})
	}
	var prog *progress
	if opt.Progress != nil {
		prog = &progress{w: opt.Progress, u: u, start: time.Now(), last: time.Now()}
		m.Consumers = append(m.Consumers, prog)
	}
	unwatch := context.AfterFunc(ctx, m.RequestStop)
	if ctx.Err() != nil {
		m.RequestStop() // AfterFunc's goroutine might come too late
	}
	exit, err := m.Run()
	unwatch()
	prog.done()
	stopped := errors.Is(err, cpu.ErrStopped)
	if err != nil && !stopped {
		return nil, err
	}
	cut := 0
	for _, c := range cpus {
		c.rec.Finish()
		c.AUX, c.Truncated = c.Driver.Data()
		c.Callchains, c.tags = c.rec.Callchains, c.rec.Tags
		cut += c.rec.Truncated
	}
	r := &Recording{Machine: m, Unit: u, Driver: d, Exit: exit, Callchains: rec.Callchains, ChainsCut: cut,
		MaxStack: rec.MaxStack, CPUs: cpus, args: slices.Clone(cfg.Args), feats: feats, preset: preset, cfg: scfg, regs: programmed,
		event: opt.Event, seed: cfg.Seed, threads: threads.list(), tasks: tasks, images: imgs, tags: rec.Tags}
	if stopped {
		// As a program perf record runs dies of the terminal's SIGINT.
		r.Stopped = context.Cause(ctx)
		if r.Stopped == nil {
			r.Stopped = errors.New("stopped on request")
		}
		sig := syscall.SIGINT
		var in Interrupted
		if errors.As(r.Stopped, &in) {
			sig = in.Signal
		}
		r.Exit = &cpu.Exit{Status: 128 + int(sig)}
	}
	r.AUX, r.Truncated = cpus[0].AUX, cpus[0].Truncated
	return r, nil
}

// CPU is what one simulated CPU's SPE unit recorded (Recording.CPUs, one
// per CPU of the run).
type CPU struct {
	Unit   *spe.Unit
	Driver *spe.Driver
	// AUX is the CPU's SPE byte stream; Truncated: its AUX area filled up.
	AUX       []byte
	Truncated bool
	// Callchains[i] is the call stack of the CPU's record i (nil: pcs
	// alone).
	Callchains [][]uint64
	tags       []int
	rec        *spe.Recorder
}

// perCPU hands each batch of retired operations to the recorder of the
// CPU that ran it: the core whose model times the machine now (the
// kernel moves a machine from core to core, timing.Model.OnCore). Ahead
// is asked before every run of the core, so it knows the CPU of the
// batch Want then sees.
type perCPU struct {
	cpus []*CPU
	cur  *spe.Recorder
}

func (p *perCPU) on(m *cpu.Machine) *spe.Recorder {
	if t, ok := m.Timing.(*timing.Model); ok && t.CoreIndex() < len(p.cpus) {
		return p.cpus[t.CoreIndex()].rec
	}
	return p.cpus[0].rec
}

func (p *perCPU) Ahead(m *cpu.Machine) uint64 {
	p.cur = p.on(m)
	return p.cur.Ahead(m)
}

func (p *perCPU) Before(m *cpu.Machine) { p.on(m).Before(m) }

func (p *perCPU) Want(b *cpu.Batch) []int { return p.cur.Want(b) }

func (p *perCPU) Retired(m *cpu.Machine, b *cpu.Batch, want []int, details []cpu.OpTiming) {
	p.on(m).Retired(m, b, want, details)
}

// StopNote is what a recording stopped early says of itself (its
// summary's fault; simrun record prints it). perf record marks nothing in
// the file when a signal ends it: the file is finished as usual and perf
// exits by the signal; the summary is simrun's one place to say why the
// recording ends where it does. "" when the program ran to its end.
func (r *Recording) StopNote() string {
	if r.Stopped == nil {
		return ""
	}
	return fmt.Sprintf("%v after %d instructions: recording truncated", r.Stopped, r.Machine.Insns)
}

// Insns is the instructions the run retired, every process's.
func (r *Recording) Insns() uint64 {
	if r.images == nil {
		return r.Machine.Insns
	}
	return r.images.total()
}

// attachCallchains gives rec the call stack of every sampled operation:
// the stack tracer's walk from the registers just before it, or the shadow
// call stack of the executed calls and returns.
func attachCallchains(m *cpu.Machine, rec *spe.Recorder, opt *Options) error {
	switch opt.Callchain {
	case "", "none":
		return nil
	case "truth":
		a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder)
		if err != nil {
			return err
		}
		mk := func() *unwind.Shadow {
			s := unwind.NewShadow(a.SP)
			// One frame past the cap, so the recorder sees which stacks
			// it cuts (and says so).
			s.ChainDepth = max(opt.MaxStack, spe.DefaultMaxStack) + 1
			return s
		}
		// One shadow stack per thread, a signal frame per handler.
		th := unwind.NewThreads(unwind.MainTid, mk(), mk)
		if p := linux.Of(m); p != nil {
			followTruth(p.System(), th, a)
		}
		m.Consumers = append(m.Consumers, &shadowConsumer{th})
		rec.Chain = func(m *cpu.Machine, buf []uint64) []uint64 { return th.Cur.Callchain(m.Core.PC(), buf) }
		return nil
	}
	method, err := unwind.ParseMethod(opt.Callchain)
	if err != nil {
		return err
	}
	tr, err := ProcessTracer(m, unwind.Options{Method: method, Policy: opt.Policy})
	if err != nil {
		if p := linux.Of(m); p != nil && p.Interp != nil && method.HasData() {
			return fmt.Errorf("--callchain %s: %w", opt.Callchain, err)
		}
		// A program's unwind tables that cannot be used cost the
		// callchains, not the recording (the error names the section).
		if opt.Warnings != nil {
			fmt.Fprintf(opt.Warnings, "simrun record: warning: --callchain %s: %v; samples are recorded without callchains\n", opt.Callchain, err)
		}
		return nil
	}
	rec.Chain = perMachine(m, tr.Callchain, method, opt.Policy)
	return nil
}

// shadowConsumer keeps the true call stack of the running thread from
// every retired operation (a batch is one thread's: the kernel switches
// threads between batches).
type shadowConsumer struct{ th *unwind.Threads }

func (s *shadowConsumer) Want(*cpu.Batch) []int { return nil }

func (s *shadowConsumer) Retired(m *cpu.Machine, b *cpu.Batch, _ []int, _ []cpu.OpTiming) {
	ops := b.Ops()
	for i := range ops {
		next := m.Core.PC()
		if i+1 < len(ops) {
			next = ops[i+1].PC
		}
		s.th.Cur.StepRetired(&ops[i], next)
	}
}

// progress is the line simrun record keeps up to date on a terminal:
// instructions, speed, records written and buffer fills. It sees every
// batch of retired operations and wants none timed in detail, so the
// recording is the same with and without it.
type progress struct {
	w           io.Writer
	u           *spe.Unit
	insns       uint64
	start, last time.Time
	shown       bool
}

const progressEvery = 250 * time.Millisecond

func (p *progress) Want(b *cpu.Batch) []int {
	p.insns += uint64(b.Len())
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.show(now)
	}
	return nil
}

func (p *progress) Retired(*cpu.Machine, *cpu.Batch, []int, []cpu.OpTiming) {}

func (p *progress) show(now time.Time) {
	mips := float64(p.insns) / now.Sub(p.start).Seconds() / 1e6
	fmt.Fprintf(p.w, "\r\x1b[K[ simrun record: %d instructions, %.1f MIPS, %d samples, %d buffer fills ]",
		p.insns, mips, p.u.Written, p.u.PMU.SampleBufferFull)
	p.shown = true
}

// done clears the progress line.
func (p *progress) done() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
