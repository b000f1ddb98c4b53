package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"simrun/sim/cpu"
	"simrun/sim/profile"
	"simrun/sim/spe"
)

const recordExamples = `simrun record -e arm_spe/ts_enable=1,load_filter=1/ -c 4096 -o perf.data programs/bin/aarch64-O2/listchase
simrun record -e 'arm_spe/ts_enable=1,min_latency=32/' -c 1024 programs/bin/aarch64-O2/sort
simrun record --cpu spe-max -e arm_spe/float_filter=1,float_filter_mask=1/ programs/bin/aarch64-O2/fpmath
simrun record --spe-reg PMSFCR=0x20003 -c 2048 programs/bin/aarch64-O2/vecsum
perf report -D -i perf.data; perf script -i perf.data; perf mem report -i perf.data
`

// speFeatures picks the SPE implementation of a CPU model: the timing
// presets and SPE presets share names; spe-max times like neoverse-v2.
func speFeatures(model string) (*cpu.CPUPreset, spe.Features, error) {
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
	p, err := cpu.PresetByName(tm)
	return p, f, err
}

func cmdRecord(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("record", "record [flags] PROG [ARGS...]", indent(recordExamples), stderr)
	event := fs.String("e", "arm_spe//", "perf `EVENT` of the arm_spe PMU with its terms (see simrun spe terms)")
	period := fs.Uint64("c", 4096, "sample `PERIOD` in operations (PMSIRR.INTERVAL; rounded down to a multiple of 256)")
	out := fs.String("o", "perf.data", "write the perf.data recording to `FILE`")
	auxOut := fs.String("aux", "", "also write the raw SPE byte stream (the AUX area contents) to `FILE`")
	model := fs.String("cpu", "neoverse-n1", "core and SPE model: neoverse-n1, neoverse-v2, spe-max")
	auxSize := fs.String("aux-pages", "128", "AUX area `SIZE`: 4 KiB pages, or bytes with a B/K/M/G suffix (the AUX part of perf's -m)")
	noDrain := fs.Bool("no-drain", false, "perf never reads the AUX area while the program runs (it fills up and truncates)")
	seed := fs.Uint64("seed", 1, "seed for AT_RANDOM, getrandom and SPE jitter")
	maxInsns := fs.Uint64("max-insns", 0, "stop with an error after `N` instructions")
	stats := fs.Bool("stats", false, "print run, timing and SPE PMU statistics to stderr")
	var regs multiFlag
	fs.Var(&regs, "spe-reg", "program an SPE register directly after the driver, `NAME=VALUE` (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "simrun record: no program given")
		fs.Usage()
		return errUsage
	}
	auxPages, note, err := spe.ParseAuxSize(*auxSize)
	if err != nil {
		return fmt.Errorf("--aux-pages: %w", err)
	}
	if note != "" {
		fmt.Fprintf(stderr, "simrun record: %s\n", note)
	}
	job := recordJob{Event: *event, Period: *period, Model: *model, AuxPages: auxPages, Drain: !*noDrain,
		Regs: regs, Cfg: cpu.Config{Args: fs.Args(), Stdin: stdin, Stdout: stdout, Stderr: stderr, Seed: *seed, MaxInsns: *maxInsns}}
	r, err := job.run()
	if err != nil {
		return err
	}
	m, u, d, data, exit := r.m, r.u, r.d, r.data, r.exit
	prog := fs.Arg(0)
	if err := writeRecording(*out, prog, fs.Args(), r); err != nil {
		return err
	}
	if *auxOut != "" {
		if err := writeAtomic(*auxOut, data); err != nil {
			return err
		}
	}
	if exit.Fault != nil {
		fmt.Fprintf(stderr, "simrun: %s: %v\n", prog, exit.Fault)
	}
	for _, e := range d.Errors {
		fmt.Fprintf(stderr, "simrun record: arm_spe_pmu: %s\n", e)
	}
	note = ""
	if r.truncated {
		note = ", AUX area full: recording truncated (use a larger --aux-pages)"
	}
	fmt.Fprintf(stderr, "[ simrun record: wrote %s: %d SPE records, %d bytes of SPE data, %d instructions%s ]\n",
		*out, u.Written, len(data), m.Insns, note)
	if *stats {
		printTimingStats(stderr, m.Timing)
		printSPEStats(stderr, u)
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
	Cfg      cpu.Config
}

// recording is what a recordJob produced.
type recording struct {
	m         *cpu.Machine
	u         *spe.Unit
	d         *spe.Driver
	feats     spe.Features
	preset    *cpu.CPUPreset
	cfg       *spe.Config
	exit      *cpu.Exit
	data      []byte // the AUX stream
	truncated bool
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
	cfg.Period = j.Period
	m, err := cpu.Load(j.Cfg.Args[0], j.Cfg)
	if err != nil {
		return nil, err
	}
	if err := m.EnableTiming(preset); err != nil {
		return nil, err
	}
	u, err := spe.NewUnit(feats, j.Cfg.Seed)
	if err != nil {
		return nil, err
	}
	u.ContextID = 1000 // the guest's pid
	d, err := spe.NewDriver(u, cfg, j.AuxPages, func() uint64 { return m.Timing.Nanos(m.Timing.Cycle()) })
	if err != nil {
		return nil, err
	}
	d.Drain = j.Drain
	for _, kv := range j.Regs {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--spe-reg %q: want NAME=VALUE", kv)
		}
		reg, err := spe.RegByName(name)
		if err != nil {
			return nil, fmt.Errorf("--spe-reg: %w", err)
		}
		v, err := parseUint(val)
		if err != nil {
			return nil, fmt.Errorf("--spe-reg %s: %w", name, err)
		}
		if err := u.Regs.SetChecked(reg, v); err != nil {
			return nil, fmt.Errorf("--spe-reg: %w", err)
		}
	}
	rec := spe.NewRecorder(m, u, d)
	exit, err := m.Run()
	if err != nil {
		return nil, err
	}
	rec.Finish()
	r := &recording{m: m, u: u, d: d, feats: feats, preset: preset, cfg: cfg, exit: exit}
	r.data, r.truncated = d.Data()
	return r, nil
}

func printSPEStats(w io.Writer, u *spe.Unit) {
	p := u.PMU
	fmt.Fprintf(w, "SPE %v: SAMPLE_POP %d, SAMPLE_FEED %d, SAMPLE_FILTRATE %d, SAMPLE_COLLISION %d, SAMPLE_BUFFER_FULL %d\n",
		u.F.Version, p.SamplePop, p.SampleFeed, p.SampleFiltrate, p.SampleCollision, p.SampleBufferFull)
	fmt.Fprintf(w, "SPE feed: BR %d, LD %d, ST %d, FP %d, SIMD %d, OP %d, EVENT %d, LAT %d, DS %d\n",
		p.FeedBr, p.FeedLd, p.FeedSt, p.FeedFP, p.FeedSIMD, p.FeedOp, p.FeedEvent, p.FeedLat, p.FeedDS)
}

// writeRecording writes the perf.data file: the program's mappings, the
// AUX chunks as perf record copied them, and the event description.
func writeRecording(path, prog string, argv []string, r *recording) error {
	m, d, p, c := r.m, r.d, r.preset, r.cfg
	abs, err := filepath.Abs(prog)
	if err != nil {
		return err
	}
	pd := &profile.PerfData{MIDR: p.MIDR, CPUDesc: p.Desc, Cmdline: append([]string{"simrun", "record"}, argv...),
		Period: c.Period, PID: 1000, Comm: filepath.Base(prog), End: m.Timing.Nanos(m.Timing.Cycle())}
	pd.Config[0], pd.Config[1], pd.Config[2], pd.Config[3], pd.Config[4] = c.ConfigWords()
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
	for _, e := range d.Events {
		pd.Chunks = append(pd.Chunks, profile.AuxChunk{Offset: e.Offset, Data: e.Data, Flags: e.Flags, Time: e.Cycle})
	}
	return pd.WriteFile(path)
}

// writeAtomic writes data to path through a temporary file.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
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
	switch args[0] {
	case "dump":
		if len(args) != 2 {
			fmt.Fprint(stderr, speUsage)
			return errUsage
		}
		data, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		chunks := [][]byte{data}
		if bytes.HasPrefix(data, []byte("PERFILE2")) {
			if chunks, err = profile.ReadAuxtrace(data); err != nil {
				return fmt.Errorf("%s: %w", args[1], err)
			}
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
		fmt.Fprintln(stdout, strings.Join(spe.TermNames(), "\n"))
		return nil
	}
	fmt.Fprintf(stderr, "simrun spe: unknown command %q\n\n%s", args[0], speUsage)
	return errUsage
}
