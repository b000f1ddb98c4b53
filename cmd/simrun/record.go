package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"simrun/sim/cpu"
	"simrun/sim/infile"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/spe"
	"simrun/sim/timing"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
)

const recordExamples = `simrun record -e arm_spe/ts_enable=1,load_filter=1/ -c 4096 -o perf.data programs/bin/aarch64-O2/listchase
simrun record --format perf,pprof,folded -c 1024 programs/bin/aarch64-O2/listchase
go tool pprof -top perf.pb.gz; flamegraph.pl perf.folded > flame.svg
simrun record --format folded=lat.folded --weight total -e arm_spe/min_latency=32/ -c 1024 programs/bin/aarch64-O2/sort
simrun record --format script,json -e arm_spe/event_filter=0x8/ -c 1024 programs/bin/aarch64-O2/listchase
simrun record --cpu spe-max -e arm_spe/float_filter=1,float_filter_mask=1/ programs/bin/aarch64-O2/fpmath
simrun record --spe-reg PMSFCR=0x20003 -c 2048 programs/bin/aarch64-O2/vecsum
simrun report -o report.html perf.data
perf report -D -i perf.data; perf script -i perf.data; perf mem report -i perf.data

Formats (--format, comma-separated or repeated; NAME=FILE picks the file):
  perf     perf.data with the SPE AUX data, for perf and simrun report (the -o FILE)
  pprof    gzipped profile.proto for go tool pprof (default FILE: -o with .pb.gz for .data)
  folded   folded stacks for flamegraph.pl and speedscope, weighted by --weight (.folded)
  script   one text block per sample: time, pc, symbol, op, addresses, latencies,
           data source, events, callchain (.script)
  json     JSON Lines: the run, then every field of every record
           (.jsonl; schema: sim/profile/simrun-samples.schema.json)

Outputs: a regular file is replaced whole (written beside it, then renamed;
a symbolic link is followed and kept); a FIFO or character device is written
in place. An output that is the program or another output is a usage error.

SIGINT, SIGTERM or SIGHUP (Ctrl-C) stops the program where it is and writes
every output from what was recorded, as perf record does: the files are
complete and read as usual; the exit status is 128+signal, and the summary
(simrun report, --format json) says "interrupted by SIGINT after N
instructions". A second signal ends simrun at once, writing nothing.

Exit status: the program's own (128+signal after a fault or an interrupt);
1 when simrun fails (bad program file, unwritable output: nothing is left
half-written); 2 for a usage error (unknown flag, term or format).
`

// speFeatures picks the SPE implementation of a CPU model: the timing
// presets and SPE presets share names; spe-max times like neoverse-v2.
func speFeatures(model string) (*timing.Preset, spe.Features, error) {
	f, ok := spe.Presets[model]
	if !ok {
		var names []string
		for n := range spe.Presets {
			names = append(names, n)
		}
		return nil, f, fmt.Errorf("unknown CPU model %q for SPE (known: %s)", model, strings.Join(sortedStrings(names), ", "))
	}
	tm := model
	if model == "spe-max" {
		tm = "neoverse-v2"
	}
	p, err := timing.PresetByName(tm)
	return p, f, err
}

// recordFormats are the outputs simrun record writes, and the file name
// each gets from -o when --format does not name one: -o's name with its
// .data suffix replaced.
var recordFormats = []struct{ name, ext string }{
	{"perf", ""}, {"pprof", ".pb.gz"}, {"folded", ".folded"}, {"script", ".script"}, {"json", ".jsonl"},
}

// output is one file simrun record writes.
type output struct {
	format string
	path   string
}

// parseFormats reads the --format values (each a comma-separated list of
// NAME or NAME=FILE) into outputs; perfPath is -o.
func parseFormats(values []string, perfPath string) ([]output, error) {
	if len(values) == 0 {
		values = []string{"perf"}
	}
	base := strings.TrimSuffix(perfPath, ".data")
	var outs []output
	seen := map[string]bool{}
	paths := map[string]string{}
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			name, file, named := strings.Cut(strings.TrimSpace(item), "=")
			ext, known := "", false
			var names []string
			for _, f := range recordFormats {
				names = append(names, f.name)
				if f.name == name {
					ext, known = f.ext, true
				}
			}
			switch {
			case !known:
				return nil, fmt.Errorf("--format: unknown format %q (known: %s)", name, strings.Join(names, ", "))
			case seen[name]:
				return nil, fmt.Errorf("--format: %s given twice", name)
			case named && file == "":
				return nil, fmt.Errorf("--format %s=: give a file name", name)
			case named && name == "perf":
				return nil, fmt.Errorf("--format perf=%s: the perf.data file is -o's", file)
			}
			seen[name] = true
			if !named {
				file = perfPath
				if name != "perf" {
					file = base + ext
				}
			}
			if other, ok := paths[filepath.Clean(file)]; ok {
				return nil, fmt.Errorf("--format: %s and %s would both write %s", other, name, file)
			}
			paths[filepath.Clean(file)] = name
			outs = append(outs, output{format: name, path: file})
		}
	}
	return outs, nil
}

func cmdRecord(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("record", "record [flags] PROG [ARGS...]", indent(recordExamples), stderr)
	guest := addGuestFlags(fs)
	event := fs.String("e", "arm_spe//", "perf `EVENT` of the arm_spe PMU with its terms (see simrun spe terms)")
	period := fs.Uint64("c", 4096, "sample `PERIOD` in operations (PMSIRR.INTERVAL: a multiple of 256 from the model's minimum to 0xffffff00; else adjusted, with a note)")
	out := fs.String("o", "perf.data", "write the perf.data recording to `FILE` (other formats are named after it)")
	var formats multiFlag
	fs.Var(&formats, "format", "what to write: `LIST` of perf, pprof, folded, script, json, each NAME or NAME=FILE (default perf; repeatable)")
	weight := fs.String("weight", "samples", "what folded stacks count: `W` = samples, or the sum of the total, issue or xlat latency (cycles)")
	foldedThreads := fs.String("folded-threads", "auto", "root each folded stack at its thread, COMM-TID: `WHEN` = auto (when the program ran more than one thread), on or off")
	quiet := fs.Bool("quiet", false, "print nothing but errors and the program's own output (no progress, no summary line)")
	auxOut := fs.String("aux", "", "also write the raw SPE byte stream (the AUX area contents) to `FILE`")
	model := fs.String("cpu", "neoverse-n1", "core and SPE model: neoverse-n1, neoverse-v2, spe-max")
	auxSize := fs.String("aux-pages", "128", "AUX area `SIZE`: 4 KiB pages, or bytes with a B/K/M/G suffix (the AUX part of perf's -m)")
	noDrain := fs.Bool("no-drain", false, "perf never reads the AUX area while the program runs (it fills up and truncates)")
	seed := fs.Uint64("seed", 1, "seed for AT_RANDOM, getrandom and SPE jitter")
	maxInsns := fs.Uint64("max-insns", 0, "stop with an error after `N` instructions")
	stats := fs.Bool("stats", false, "print run, timing and SPE PMU statistics to stderr")
	var regs multiFlag
	fs.Var(&regs, "spe-reg", "program an SPE register directly after the driver, `NAME=VALUE` (repeatable)")
	callchain := fs.String("callchain", "sframe", "the call stack each sample gets: `METHOD` = sframe, eh_frame, fp, truth (the executed calls) or none")
	policyText := fs.String("unwind-policy", "default", "unwinder `SWITCHES` for the callchains (see 'simrun unwind policies')")
	pauth := fs.Bool("pauth", false, "arm64: pointer authentication on (paciasp signs return addresses)")
	maxStack := fs.Int("max-stack", spe.DefaultMaxStack, "keep at most `N` frames of each callchain, the innermost (Linux's kernel.perf_event_max_stack)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "simrun record: no program given")
		fs.Usage()
		return errUsage
	}
	outs, err := parseFormats(formats, *out)
	if err != nil {
		fmt.Fprintf(stderr, "simrun record: %v\n", err)
		return errUsage
	}
	// A bad event (syntax, term, value, feature) is a usage error, as a
	// bad flag is: status 2.
	if _, feats, err := speFeatures(*model); err == nil {
		if _, err := spe.ParseEvent(*event, &feats); err != nil {
			fmt.Fprintf(stderr, "simrun: %v\n", err)
			return errUsage
		}
	}
	w, err := profile.ParseWeight(*weight)
	if err != nil {
		fmt.Fprintf(stderr, "simrun record: --weight: %v\n", err)
		return errUsage
	}
	switch *foldedThreads {
	case "auto", "on", "off":
	default:
		fmt.Fprintf(stderr, "simrun record: --folded-threads %q: want auto, on or off\n", *foldedThreads)
		return errUsage
	}
	policy, err := unwind.ParsePolicy(*policyText)
	if err != nil {
		fmt.Fprintf(stderr, "simrun record: --unwind-policy: %v\n", err)
		return errUsage
	}
	if *callchain != "none" && *callchain != "truth" {
		if _, err := unwind.ParseMethod(*callchain); err != nil {
			fmt.Fprintf(stderr, "simrun record: --callchain: %v (or truth, none)\n", err)
			return errUsage
		}
	}
	if *maxStack < 1 || *maxStack > profile.MaxCallchainFrames {
		fmt.Fprintf(stderr, "simrun record: --max-stack %d: want 1 to %d (frames that fit one perf record)\n", *maxStack, profile.MaxCallchainFrames)
		return errUsage
	}
	auxPages, note, err := spe.ParseAuxSize(*auxSize)
	if err != nil {
		return fmt.Errorf("--aux-pages: %w", err)
	}
	if note != "" && !*quiet {
		fmt.Fprintf(stderr, "simrun record: %s\n", note)
	}
	// Every output is checked before the program runs (not an input, not
	// another output, its directory writable); they are written at the
	// end and committed together: a failure leaves nothing half-written.
	if err := infile.Check(fs.Arg(0), elfInput); err != nil {
		return err
	}
	var paths []string
	for _, o := range outs {
		paths = append(paths, o.path)
	}
	if *auxOut != "" {
		paths = append(paths, *auxOut)
	}
	set, files, err := openOutputs(nil, []input{{fs.Arg(0), "the program"}}, paths...)
	if err != nil {
		return outputError(stderr, "record", err)
	}
	defer set.Abort()
	// The first SIGINT, SIGTERM or SIGHUP stops the program; what was
	// recorded is written (see interrupt.go).
	defer interrupts.hold()()
	job := recordJob{Event: *event, Period: *period, Model: *model, AuxPages: auxPages, Drain: !*noDrain,
		Regs: regs, Callchain: *callchain, Policy: policy, PAuth: *pauth, Cfg: linux.Config{Args: fs.Args(), Stdin: stdin, Stdout: stdout, Stderr: stderr, Seed: *seed, MaxInsns: *maxInsns}}
	if err := guest.apply(&job.Cfg, stderr); err != nil {
		return err
	}
	if !*quiet && isTerminal(stderr) {
		job.Progress = stderr
	}
	job.MaxStack = *maxStack
	if !*quiet {
		job.Notes = stderr
	}
	job.Warnings = stderr
	r, err := job.run()
	if err != nil {
		return err
	}
	m, u, d, data, exit := r.m, r.u, r.d, r.data, r.exit
	prog := fs.Arg(0)
	rec, bin, err := r.recording(fs.Args())
	if err != nil {
		return err
	}
	for _, w := range bin.Warnings {
		fmt.Fprintf(stderr, "simrun record: warning: %s\n", w)
	}
	for _, o := range outs {
		f := files[o.path]
		switch o.format {
		case "perf":
			var pd *profile.PerfData
			if pd, err = perfData(prog, fs.Args(), r, rec); err == nil {
				_, err = pd.WriteTo(f)
			}
		case "pprof":
			err = profile.WritePprof(f, rec, bin)
		case "folded":
			comm := ""
			if *foldedThreads == "on" || *foldedThreads == "auto" && profile.Threaded(rec.Samples) {
				comm = rec.Summary.Comm
			}
			err = profile.WriteFoldedThreads(f, rec.Samples, w, comm)
		case "script":
			err = profile.WriteScript(f, rec)
		case "json":
			err = profile.WriteJSON(f, rec)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", o.path, err)
		}
	}
	if *auxOut != "" {
		if _, err := files[*auxOut].Write(data); err != nil {
			return fmt.Errorf("%s: %w", *auxOut, err)
		}
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if exit.Fault != nil {
		where, stack := explainFault(r.m, exit.Fault)
		fmt.Fprintf(stderr, "simrun: %s: %v%s\n", prog, exit.Fault, where)
		for _, l := range stack {
			fmt.Fprintln(stderr, l)
		}
	}
	for _, e := range d.Errors {
		fmt.Fprintf(stderr, "simrun record: arm_spe_pmu: %s\n", e)
	}
	if r.chainsCut > 0 && !*quiet {
		fmt.Fprintf(stderr, "simrun record: %d callchains were deeper than --max-stack %d: kept their %d innermost frames\n", r.chainsCut, *maxStack, *maxStack)
	}
	note = ""
	if r.truncated {
		note = ", AUX area full: recording truncated (use a larger --aux-pages)"
	}
	if r.interrupted != 0 {
		note += fmt.Sprintf(", %s", r.interruptNote())
	}
	if !*quiet {
		var names []string
		for _, o := range outs {
			names = append(names, o.path)
		}
		fmt.Fprintf(stderr, "[ simrun record: wrote %s: %d SPE records, %d bytes of SPE data, %d instructions%s ]\n",
			strings.Join(names, ", "), u.Written, len(data), r.insns(), note)
	}
	if *stats {
		printTimingStats(stderr, timing.Of(m), m.Arch.Name)
		printSPEStats(stderr, u)
	}
	if sig := interrupts.signal(); sig != 0 {
		return exitError{128 + int(sig)}
	}
	if exit.Status != 0 {
		return exitError{exit.Status}
	}
	return nil
}

// recordJob is one SPE recording: what simrun record was asked to do.
type recordJob struct {
	Event    string // perf event spec, arm_spe/TERMS/
	Period   uint64
	Model    string   // CPU model (timing preset and SPE features)
	AuxPages int      // AUX area size in pages
	Drain    bool     // perf reads the AUX area while the program runs
	Regs     []string // NAME=VALUE register writes after the driver's
	Cfg      linux.Config
	// Progress, if not nil, gets a progress line (a terminal's stderr).
	Progress io.Writer
	// Callchain is the unwinding method for the samples' call stacks
	// (see unwind.ParseMethod), "truth" or "none"; Policy its switches.
	Callchain string
	Policy    unwind.Policy
	PAuth     bool
	// MaxStack caps each callchain (0: spe.DefaultMaxStack).
	MaxStack int
	// Notes, if not nil, gets one-line notes (the period as programmed).
	Notes io.Writer
	// Warnings gets one line per feature left out for a corrupt section
	// (even under --quiet); nil discards them.
	Warnings io.Writer
}

// recording is what a recordJob produced.
type recording struct {
	m         *cpu.Machine
	u         *spe.Unit
	d         *spe.Driver
	feats     spe.Features
	preset    *timing.Preset
	cfg       *spe.Config
	exit      *cpu.Exit
	data      []byte // the AUX stream
	truncated bool
	regs      map[spe.Reg]uint64 // sampling controls as programmed before the run
	event     string             // the perf event as given
	seed      uint64
	// callchains[i] is the call stack of SPE record i, leaf first (the
	// stack tracer's); nil: each sample's callchain is its pc alone.
	callchains [][]uint64
	chainsCut  int // callchains cut at MaxStack frames
	maxStack   int
	// interrupted is the signal that stopped the program (0: it ran to
	// its end).
	interrupted syscall.Signal
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

// threadLog follows the guest's threads for the recording: the SPE unit's
// CONTEXTIDR_EL1 is the running thread's id, as Linux with
// CONFIG_PID_IN_CONTEXTIDR writes it at each context switch (so each
// record's CONTEXT packet names its thread, and perf's SPE decoder
// attributes the sample to it); each thread's creation and exit times go
// into perf.data as the FORK and EXIT records Linux writes for the
// threads of a task perf follows.
type threadLog struct {
	m       *cpu.Machine
	threads []profile.Thread
}

func logThreads(p *linux.Process, u *spe.Unit) *threadLog {
	l := &threadLog{m: p.Machine}
	followContext(p.System(), u)
	p.AddThreadHook(func(e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ThreadCreated:
			l.threads = append(l.threads, profile.Thread{Tid: uint32(e.Tid), Parent: uint32(e.Prev), Start: l.now()})
		case linux.ThreadGone:
			for i := range l.threads {
				if l.threads[i].Tid == uint32(e.Tid) {
					l.threads[i].End = l.now()
				}
			}
		}
	})
	return l
}

func (l *threadLog) now() uint64 { return l.m.Timing.Nanos(l.m.Timing.Cycle()) }

func (l *threadLog) list() []profile.Thread {
	if l == nil {
		return nil
	}
	return l.threads
}

// run loads and runs the program with the timing model and the SPE unit
// programmed as the Linux driver would.
func (j *recordJob) run() (*recording, error) {
	preset, feats, err := speFeatures(j.Model)
	if err != nil {
		return nil, err
	}
	cfg, err := spe.ParseEvent(j.Event, &feats)
	if err != nil {
		return nil, err
	}
	var note string
	if cfg.Period, note, err = spe.SamplePeriod(j.Period, &feats); err != nil {
		return nil, err
	}
	if note != "" && j.Notes != nil {
		fmt.Fprintf(j.Notes, "simrun record: %s\n", note)
	}
	m, err := linux.Load(j.Cfg.Args[0], j.Cfg)
	if err != nil {
		return nil, err
	}
	if _, err := timing.Enable(m, preset); err != nil {
		return nil, err
	}
	u, err := spe.NewUnit(feats, j.Cfg.Seed)
	if err != nil {
		return nil, err
	}
	u.ContextID = 1000 // the guest's pid, the main thread's tid
	var threads *threadLog
	var tasks *linux.TaskLog
	if p := linux.Of(m); p != nil {
		threads = logThreads(p, u)
		tasks = linux.LogTasks(p, func() uint64 { return m.Timing.Nanos(m.Timing.Cycle()) })
	}
	d, err := spe.NewDriver(u, cfg, j.AuxPages, func() uint64 { return m.Timing.Nanos(m.Timing.Cycle()) })
	if err != nil {
		return nil, err
	}
	d.Drain = j.Drain
	for _, kv := range j.Regs {
		reg, v, err := spe.ParseRegWrite(kv)
		if err == nil {
			err = u.WriteReg(reg, v)
		}
		if err != nil {
			return nil, fmt.Errorf("--spe-reg: %w", err)
		}
	}
	programmed := map[spe.Reg]uint64{}
	for _, reg := range profile.SPERegisters(&feats) {
		programmed[reg] = u.Regs.Get(reg)
	}
	if j.PAuth {
		if err := enablePAuth(m); err != nil {
			return nil, err
		}
	}
	rec := spe.NewRecorder(m, u, d)
	if rec.MaxStack = j.MaxStack; rec.MaxStack <= 0 {
		rec.MaxStack = spe.DefaultMaxStack
	}
	var imgs *images
	if p := linux.Of(m); p != nil {
		imgs = trackImages(p)
		rec.Tag = imgs.tag
	}
	if err := j.attachCallchains(m, rec); err != nil {
		return nil, err
	}
	var prog *progress
	if j.Progress != nil {
		prog = &progress{w: j.Progress, u: u, start: time.Now(), last: time.Now()}
		m.Consumers = append(m.Consumers, prog)
	}
	interrupts.setStop(m.RequestStop)
	exit, err := m.Run()
	prog.done()
	stopped := errors.Is(err, cpu.ErrStopped)
	if err != nil && !stopped {
		return nil, err
	}
	rec.Finish()
	r := &recording{m: m, u: u, d: d, feats: feats, preset: preset, cfg: cfg, exit: exit, regs: programmed,
		event: j.Event, seed: j.Cfg.Seed, callchains: rec.Callchains, chainsCut: rec.Truncated, maxStack: rec.MaxStack,
		threads: threads.list(), tasks: tasks, images: imgs, tags: rec.Tags}
	if stopped {
		// As a program perf record runs dies of the terminal's SIGINT.
		r.interrupted = interrupts.signal()
		r.exit = &cpu.Exit{Status: 128 + int(r.interrupted)}
	}
	r.data, r.truncated = d.Data()
	return r, nil
}

// attachCallchains gives rec the call stack of every sampled operation:
// the stack tracer's walk from the registers just before it, or the shadow
// call stack of the executed calls and returns.
func (j *recordJob) attachCallchains(m *cpu.Machine, rec *spe.Recorder) error {
	switch j.Callchain {
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
			s.ChainDepth = max(j.MaxStack, spe.DefaultMaxStack) + 1
			return s
		}
		// One shadow stack per thread, a signal frame per handler.
		th := unwind.NewThreads(unwind.MainTid, mk(), mk)
		if p := linux.Of(m); p != nil {
			followTruth(p.System(), th, a.RA)
		}
		m.Consumers = append(m.Consumers, &shadowConsumer{th})
		rec.Chain = func(m *cpu.Machine, buf []uint64) []uint64 { return th.Cur.Callchain(m.Core.PC(), buf) }
		return nil
	}
	method, err := unwind.ParseMethod(j.Callchain)
	if err != nil {
		return err
	}
	if p := linux.Of(m); p != nil && p.Interp != nil && method.HasData() {
		// Dynamically linked: each frame is looked up in the object
		// that maps its pc.
		a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder)
		if err != nil {
			return err
		}
		tr, err := unwind.NewObjectsTracer(a, codeResolver(p), unwind.Options{Method: method, Policy: j.Policy})
		if err != nil {
			return fmt.Errorf("--callchain %s: %w", j.Callchain, err)
		}
		rec.Chain = perMachine(m, tr.Callchain, method, j.Policy)
		return nil
	}
	data, err := os.ReadFile(j.Cfg.Args[0])
	if err != nil {
		return err
	}
	// Unwind tables that cannot be used cost the callchains, not the
	// recording (the error names the section).
	obj, err := unwind.NewObject(j.Cfg.Args[0], data)
	var tr *unwind.Tracer
	if err == nil {
		tr, err = unwind.NewTracer(obj, unwind.Options{Method: method, Policy: j.Policy})
	}
	if err != nil {
		if j.Warnings == nil {
			return nil
		}
		fmt.Fprintf(j.Warnings, "simrun record: warning: --callchain %s: %v; samples are recorded without callchains\n", j.Callchain, err)
		return nil
	}
	rec.Chain = perMachine(m, tr.Callchain, method, j.Policy)
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
// instructions, speed, records written and buffer fills.  It sees every
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

// recording builds what the sinks read: the samples decoded from the AUX
// stream and symbolized with the program, and the run's summary.
func (r *recording) recording(argv []string) (*profile.Recording, *profile.Binary, error) {
	m, u, d := r.m, r.u, r.d
	bin, err := profile.OpenBinary(m.Image.Path, m.Image.Bias)
	if err != nil {
		return nil, nil, err
	}
	var objects []profile.ObjectMap
	if p := linux.Of(m); p != nil {
		objects = objectMaps(p)
		bin.Shared = openObjects(objects)
	}
	var samples []profile.Sample
	if r.multiProcess() {
		samples, err = profile.DecodeTagged(r.data, bin, r.images.profileImages(), r.tags, r.callchains)
	} else {
		samples, err = profile.Decode(r.data, bin, r.callchains)
	}
	if err != nil {
		return nil, nil, err
	}
	abs, err := filepath.Abs(m.Image.Path)
	if err != nil {
		return nil, nil, err
	}
	st := timing.Of(m).Stats
	p := u.PMU
	s := profile.Summary{Program: abs, Args: append([]string{}, argv...), Arch: m.Arch.Name, Bias: profile.Hex(m.Image.Bias),
		Comm: filepath.Base(m.Image.Path), PID: 1000, Seed: r.seed, ExitStatus: r.exit.Status,
		CPU: profile.CPUModel{Model: r.preset.Name, Desc: r.preset.Desc, MHz: r.preset.MHz, MIDR: profile.Hex(r.preset.MIDR)},
		SPE: profile.SPESetup{Version: u.Features.Version.String(), Event: r.event, Period: r.cfg.Period,
			Words: profile.DescribeSPE(&r.feats, r.regs)},
		Instructions: r.insns(), Cycles: st.Cycles, Nanos: m.Timing.Nanos(m.Timing.Cycle()),
		Timing: profile.Timing{L1DAccess: st.L1DAccess, L1DRefill: st.L1DRefill, L2Access: st.L2Access, L2Refill: st.L2Refill,
			LLCAccess: st.LLCAccess, LLCMiss: st.LLCMiss, TLBAccess: st.TLBAccess, TLBWalk: st.TLBWalk,
			Branches: st.Branches, Mispredicts: st.Mispredicts, NotTaken: st.NotTaken, StallCycles: st.StallCycles},
		Objects: objects,
		PMU: profile.SPEPMU{SamplePop: p.SamplePop, SampleFeed: p.SampleFeed, SampleFiltrate: p.SampleFiltrate,
			SampleCollision: p.SampleCollision, SampleBufferFull: p.SampleBufferFull, FeedBr: p.FeedBr, FeedLd: p.FeedLd,
			FeedSt: p.FeedSt, FeedFP: p.FeedFP, FeedSIMD: p.FeedSIMD, FeedOp: p.FeedOp, FeedEvent: p.FeedEvent,
			FeedLat: p.FeedLat, FeedDS: p.FeedDS},
		Buffer: profile.Buffers{Records: u.Written, Bytes: len(r.data), AuxPages: int(d.Size / cpu.PageSize),
			Truncated: r.truncated, Errors: append([]string{}, d.Errors...), Events: []profile.AuxRecord{}},
	}
	if r.exit.Fault != nil {
		s.Fault = r.exit.Fault.Error()
	}
	if r.interrupted != 0 {
		s.Fault = r.interruptNote()
	}
	for _, reg := range profile.SPERegisters(&r.feats) {
		s.SPE.Registers = append(s.SPE.Registers, profile.RegValue{Name: spe.Info(reg).Name, Value: profile.Hex(r.regs[reg]),
			Explain: spe.Explain(&r.feats, reg, r.regs[reg])})
	}
	for _, e := range d.Events {
		flags := []string{}
		for _, f := range []struct {
			bit  uint64
			name string
		}{{spe.AuxTruncated, "truncated"}, {spe.AuxPartial, "partial"}, {spe.AuxCollision, "collision"}} {
			if e.Flags&f.bit != 0 {
				flags = append(flags, f.name)
			}
		}
		s.Buffer.Events = append(s.Buffer.Events, profile.AuxRecord{Offset: e.Offset, Size: e.Size, Flags: flags, Time: e.Cycle})
	}
	return &profile.Recording{Summary: s, Samples: samples}, bin, nil
}

func printSPEStats(w io.Writer, u *spe.Unit) {
	p := u.PMU
	fmt.Fprintf(w, "SPE %v: SAMPLE_POP %d, SAMPLE_FEED %d, SAMPLE_FILTRATE %d, SAMPLE_COLLISION %d, SAMPLE_BUFFER_FULL %d\n",
		u.Features.Version, p.SamplePop, p.SampleFeed, p.SampleFiltrate, p.SampleCollision, p.SampleBufferFull)
	fmt.Fprintf(w, "SPE feed: BR %d, LD %d, ST %d, FP %d, SIMD %d, OP %d, EVENT %d, LAT %d, DS %d\n",
		p.FeedBr, p.FeedLd, p.FeedSt, p.FeedFP, p.FeedSIMD, p.FeedOp, p.FeedEvent, p.FeedLat, p.FeedDS)
}

// perfData is the perf.data file of a recording: the program's mappings,
// the AUX chunks as perf record copied them, the event description, and
// simrun's own section (the run's summary) for simrun report.
func perfData(prog string, argv []string, r *recording, rec *profile.Recording) (*profile.PerfData, error) {
	sum := &rec.Summary
	m, d, p, c := r.m, r.d, r.preset, r.cfg
	abs, err := filepath.Abs(prog)
	if err != nil {
		return nil, err
	}
	desc := p.Desc
	if m.Arch.Name != "arm64" {
		desc = m.Arch.Name + " guest timed on a " + p.Desc
	}
	pd := &profile.PerfData{MIDR: p.MIDR, CPUDesc: desc, Cmdline: append([]string{"simrun", "record"}, argv...),
		Period: c.Period, PID: 1000, Comm: filepath.Base(prog), End: m.Timing.Nanos(m.Timing.Cycle()), Arch: m.Arch.UnameMachine}
	pd.Config[0], pd.Config[1], pd.Config[2], pd.Config[3], pd.Config[4] = c.ConfigWords()
	pd.ExcludeUser, pd.IncludeKernel = c.ExcludeUser, c.IncludeKernel
	for _, s := range m.Image.Segments {
		start := s.Vaddr &^ cpu.PageMask
		var prot uint32
		if s.Perm&cpu.PermR != 0 {
			prot |= 1
		}
		if s.Perm&cpu.PermW != 0 {
			prot |= 2
		}
		if s.Perm&cpu.PermX != 0 {
			prot |= 4
		}
		pd.Maps = append(pd.Maps, profile.Map{Start: start, Len: (s.Vaddr + s.Memsz) - start,
			Pgoff: s.Offset &^ cpu.PageMask, Prot: prot, Filename: abs})
	}
	// The interpreter and the shared objects it mapped: perf attributes
	// their samples to file and offset (and symbolizes them when the
	// file is where the path says).
	if p := linux.Of(m); p != nil {
		for _, c := range p.CodeMaps() {
			pd.Maps = append(pd.Maps, profile.Map{Start: c.Start, Len: c.Len, Pgoff: c.Pgoff, Prot: c.Prot, Filename: c.Path})
		}
	}
	if r.multiProcess() {
		pd.Side = sideRecords(r.tasks, c.TSEnable)
	}
	for _, t := range r.threads {
		if !c.TSEnable {
			// Without timestamps every SPE record decodes at time 0:
			// perf must know the thread before then, or it makes a
			// comm-less one from the CONTEXT packet (as perf's
			// arm-spe decoder does for a tid it has not seen).
			t.Start = 0
		}
		pd.Threads = append(pd.Threads, t)
	}
	for _, e := range d.Events {
		pd.Chunks = append(pd.Chunks, profile.AuxChunk{Offset: e.Offset, Data: e.Data, Flags: e.Flags, Time: e.Cycle})
	}
	if r.callchains != nil {
		// The stacks go beside the AUX data as samples of the dummy event,
		// so perf script shows them.
		pids := r.pids()
		for _, s := range rec.Samples {
			pd.Samples = append(pd.Samples, profile.Callchain{IP: s.PC, Time: s.Time, Stack: s.Callchain, Tid: s.Context, Pid: pids[s.Context]})
		}
		pd.MaxStack = uint16(min(r.maxStack, 0xffff))
	}
	if pd.Simrun, err = profile.EncodeSection(sum, r.callchains); err != nil {
		return nil, err
	}
	return pd, nil
}

const speUsage = `Usage: simrun spe <command> [arguments]

Commands:
  dump FILE              print the SPE packets of a perf.data file (or a raw AUX
                         byte stream) exactly as perf report -D does
  explain NAME=VALUE...  describe each field of SPE register values
  terms                  list the arm_spe event terms simrun accepts

Flags:
  --cpu MODEL            SPE implementation for explain (neoverse-n1, neoverse-v2, spe-max)

Examples:
  simrun spe dump perf.data
  simrun spe explain PMSFCR=0x20002 PMSIRR=0x1001
  simrun spe explain --cpu spe-max PMSIDR
`

func cmdSPE(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, speUsage)
		return errUsage
	}
	if isHelp(args[0]) || args[0] == "help" {
		fmt.Fprint(stdout, speUsage)
		return nil
	}
	if len(args) > 1 && isHelp(args[1]) {
		fmt.Fprint(stdout, speUsage)
		return nil
	}
	switch args[0] {
	case "dump":
		if len(args) != 2 {
			fmt.Fprint(stderr, speUsage)
			return errUsage
		}
		data, err := infile.Read(args[1], speInput)
		if err != nil {
			return err
		}
		chunks := [][]byte{data}
		if bytes.HasPrefix(data, []byte("PERFILE2")) {
			if chunks, err = profile.ReadAuxtrace(data); err != nil {
				return fmt.Errorf("%s: %w", args[1], err)
			}
		} else if _, err := spe.DecodePacket(data); len(data) > 0 && err != nil {
			// A raw AUX stream starts with a packet (or padding); a text
			// or other file would dump as one "Bad packet!" per byte.
			return fmt.Errorf("%s: neither a perf.data file (no PERFILE2 magic) nor an SPE byte stream (byte 0x%02x at offset 0 starts no SPE packet)", args[1], data[0])
		}
		for _, c := range chunks {
			if err := spe.Dump(stdout, c); err != nil {
				return err
			}
		}
		return nil
	case "explain":
		fs := newFlags("spe explain", "spe explain [--cpu MODEL] NAME=VALUE...", "", stderr)
		model := fs.String("cpu", "neoverse-n1", "SPE implementation")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		f, ok := spe.Presets[*model]
		if !ok {
			return fmt.Errorf("unknown CPU model %q", *model)
		}
		if fs.NArg() == 0 {
			return fmt.Errorf("spe explain: give NAME=VALUE (or NAME for an ID register)")
		}
		for _, kv := range fs.Args() {
			name, val, hasVal := strings.Cut(kv, "=")
			reg, err := spe.RegByName(name)
			if err != nil {
				return err
			}
			var v uint64
			switch {
			case hasVal:
				if v, err = parseUint(val); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			case reg == spe.PMSIDR:
				v = f.PMSIDR()
			case reg == spe.PMBIDR:
				v = f.PMBIDR()
			default:
				return fmt.Errorf("%s: give a value (NAME=VALUE)", name)
			}
			fmt.Fprint(stdout, spe.Explain(&f, reg, v))
		}
		return nil
	case "terms":
		if len(args) != 1 {
			fmt.Fprint(stderr, speUsage)
			return errUsage
		}
		fmt.Fprintln(stdout, strings.Join(spe.TermNames(), "\n"))
		return nil
	}
	fmt.Fprintf(stderr, "simrun spe: unknown command %q\n\n%s", args[0], speUsage)
	return errUsage
}
