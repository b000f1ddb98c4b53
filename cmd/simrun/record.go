package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"

	"simrun/sim/infile"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/record"
	"simrun/sim/spe"
	"simrun/sim/timing"
	"simrun/sim/unwind"
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
	if _, feats, err := record.Model(*model); err == nil {
		if _, err := spe.ParseEvent(*event, &feats); err != nil {
			fmt.Fprintf(stderr, "simrun: %v\n", err)
			return errUsage
		}
		// -c 0 is refused here: record.Options reads a zero period as
		// its default.
		if _, _, err := spe.SamplePeriod(*period, &feats); err != nil {
			return err
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
	opt := record.Options{Event: *event, Period: *period, Model: *model, AuxPages: auxPages, NoDrain: *noDrain,
		Regs: regs, Callchain: *callchain, Policy: policy, PAuth: *pauth, MaxStack: *maxStack, Warnings: stderr}
	cfg := linux.Config{Args: fs.Args(), Stdin: stdin, Stdout: stdout, Stderr: stderr, Seed: *seed, MaxInsns: *maxInsns}
	if err := guest.apply(&cfg, stderr); err != nil {
		return err
	}
	if !*quiet && isTerminal(stderr) {
		opt.Progress = stderr
	}
	if !*quiet {
		opt.Notes = stderr
	}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	interrupts.setStop(func(sig syscall.Signal) { stop(record.Interrupted{Signal: sig}) })
	r, err := record.Record(ctx, cfg, opt)
	if err != nil {
		return err
	}
	m, u, d, data, exit := r.Machine, r.Unit, r.Driver, r.AUX, r.Exit
	prog := fs.Arg(0)
	rec, bin, err := r.Profile()
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
			if pd, err = r.PerfData(rec); err == nil {
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
		where, stack := explainFault(m, exit.Fault)
		fmt.Fprintf(stderr, "simrun: %s: %v%s\n", prog, exit.Fault, where)
		for _, l := range stack {
			fmt.Fprintln(stderr, l)
		}
	}
	for _, e := range d.Errors {
		fmt.Fprintf(stderr, "simrun record: arm_spe_pmu: %s\n", e)
	}
	if r.ChainsCut > 0 && !*quiet {
		fmt.Fprintf(stderr, "simrun record: %d callchains were deeper than --max-stack %d: kept their %d innermost frames\n", r.ChainsCut, *maxStack, *maxStack)
	}
	note = ""
	if r.Truncated {
		note = ", AUX area full: recording truncated (use a larger --aux-pages)"
	}
	if r.Stopped != nil {
		note += ", " + r.StopNote()
	}
	if !*quiet {
		var names []string
		for _, o := range outs {
			names = append(names, o.path)
		}
		fmt.Fprintf(stderr, "[ simrun record: wrote %s: %d SPE records, %d bytes of SPE data, %d instructions%s ]\n",
			strings.Join(names, ", "), u.Written, len(data), r.Insns(), note)
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

func printSPEStats(w io.Writer, u *spe.Unit) {
	p := u.PMU
	fmt.Fprintf(w, "SPE %v: SAMPLE_POP %d, SAMPLE_FEED %d, SAMPLE_FILTRATE %d, SAMPLE_COLLISION %d, SAMPLE_BUFFER_FULL %d\n",
		u.Features.Version, p.SamplePop, p.SampleFeed, p.SampleFiltrate, p.SampleCollision, p.SampleBufferFull)
	fmt.Fprintf(w, "SPE feed: BR %d, LD %d, ST %d, FP %d, SIMD %d, OP %d, EVENT %d, LAT %d, DS %d\n",
		p.FeedBr, p.FeedLd, p.FeedSt, p.FeedFP, p.FeedSIMD, p.FeedOp, p.FeedEvent, p.FeedLat, p.FeedDS)
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
