package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"simrun/sim/cpu"
	"simrun/sim/gdbstub"
	"simrun/sim/infile"
	"simrun/sim/linux"
	"simrun/sim/outfile"
	"simrun/sim/timing"
	"simrun/sim/trace"
)

const runExamples = `simrun run programs/bin/aarch64-O2/hello a b c
simrun run --stats --max-insns 1000000 programs/bin/aarch64-O2/fib 30
simrun run --trace programs/bin/aarch64-O0/hello | head
simrun run --trace-json trace.jsonl --trace-fp programs/bin/aarch64-O2/fpmath
`

func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("run", "run [flags] PROG [ARGS...]", indent(runExamples), stderr)
	maxInsns := fs.Uint64("max-insns", 0, "stop with an error after `N` instructions (0: no limit)")
	seed := fs.Uint64("seed", 1, "seed for AT_RANDOM and getrandom")
	strict := fs.Bool("strict", false, "fault on unsupported syscalls instead of returning -ENOSYS")
	stats := fs.Bool("stats", false, "print instruction count, MIPS and other statistics to stderr")
	traceText := fs.Bool("trace", false, "print every retired instruction (pc, disassembly, registers written) to stderr")
	traceJSON := fs.String("trace-json", "", "write a per-instruction register trace in qemu-trace's JSON Lines schema to `FILE`")
	traceFP := fs.Bool("trace-fp", false, "include SIMD&FP registers in --trace-json")
	gdbPort := fs.String("g", "", "wait for gdb on TCP 127.0.0.1:`PORT` before the first instruction, as qemu-user's -g (0: any free port; see docs/gdb.md)")
	gdbAt := fs.String("gdb", "", "wait for gdb on `ENDPOINT` (PORT, HOST:PORT or unix:PATH) before the first instruction")
	coreFile := fs.String("core", "", "if the program dies of a signal that dumps core (SIGSEGV, SIGABRT, ...), write an ELF core file to `FILE` for gdb (see docs/gdb.md)")
	tty := fs.Bool("tty", false, "standard streams on a terminal are terminals to the guest, its controlling terminal (job control; see docs/linux-abi.md)")
	pauth := fs.Bool("pauth", false, "arm64: pointer authentication on (paciasp/autiasp/retaa... sign and authenticate, keys from --seed); gdb then sees the PAC masks (docs/gdb.md)")
	cpuModel := fs.String("cpu", "", "time the run with core model `NAME` (neoverse-n1, neoverse-v2, slow-memory); --stats implies neoverse-n1")
	guest := addGuestFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "simrun run: no program given")
		fs.Usage()
		return errUsage
	}
	prog := fs.Arg(0)
	var guestOut bytes.Buffer
	out := stdout
	if *traceJSON != "" {
		out = io.MultiWriter(stdout, &guestOut)
	}
	cfg := linux.Config{
		Args:     fs.Args(),
		Stdin:    stdin,
		Stdout:   out,
		Stderr:   stderr,
		Seed:     *seed,
		MaxInsns: *maxInsns,
		Strict:   *strict,
		Terminal: *tty,
	}
	if err := guest.apply(&cfg, stderr); err != nil {
		return err
	}
	if err := infile.Check(prog, elfInput); err != nil {
		return err
	}
	// --trace-json is checked before the program runs and written whole
	// at its end (a FIFO or character device as it comes).
	var set *outfile.Set
	var files map[string]*outfile.File
	if *traceJSON != "" {
		var err error
		if set, files, err = openOutputs(nil, []input{{prog, "the program"}}, *traceJSON); err != nil {
			return outputError(stderr, "run", err)
		}
		defer set.Abort()
	}
	// --core is checked before the program runs too, and written only
	// if the program dumps core: otherwise FILE is left as it was.
	var coreSet *outfile.Set
	var coreOut *outfile.File
	if *coreFile != "" {
		ins := []input{{prog, "the program"}}
		if *traceJSON != "" {
			ins = append(ins, input{*traceJSON, "the --trace-json output"})
		}
		set, files, err := openOutputs(nil, ins, *coreFile)
		if err != nil {
			return outputError(stderr, "run", err)
		}
		defer set.Abort()
		coreSet, coreOut = set, files[*coreFile]
	}
	m, err := linux.Load(prog, cfg)
	if err != nil {
		return err
	}
	if *pauth {
		if err := linux.EnablePAuth(m); err != nil {
			return err
		}
	}
	if *cpuModel != "" || *stats {
		name := *cpuModel
		if name == "" {
			name = "neoverse-n1"
		}
		p, err := timing.PresetByName(name)
		if err != nil {
			return err
		}
		if _, err := timing.EnableCores(m, p, cfg.CPUs); err != nil {
			if *cpuModel != "" || !errors.Is(err, cpu.ErrNoTiming) {
				return err
			}
			fmt.Fprintf(stderr, "simrun: --stats: %v: cycles and cache statistics are not shown\n", err)
		}
	}
	var observers []func(*cpu.Machine) error
	var tt *trace.Text
	if *traceText {
		tt = trace.NewText(stderr, m)
		observers = append(observers, tt.Step)
	}
	var tj *trace.JSON
	if *traceJSON != "" {
		tj, err = trace.NewJSON(files[*traceJSON], m, prog, fs.Args(), *traceFP)
		if err != nil {
			return err
		}
		observers = append(observers, tj.Step)
	}
	switch len(observers) {
	case 1:
		m.Observer = observers[0]
	case 2:
		m.Observer = func(m *cpu.Machine) error {
			if err := observers[0](m); err != nil {
				return err
			}
			return observers[1](m)
		}
	}
	var stub *gdbstub.Stub
	if *gdbPort != "" || *gdbAt != "" {
		if stub, err = waitForGDB(m, *gdbPort, *gdbAt, stderr); err != nil {
			return err
		}
	}
	// The first SIGINT, SIGTERM or SIGHUP stops the program; the trace
	// is written up to there (see interrupt.go).
	defer interrupts.hold()()
	interrupts.setStop(func(syscall.Signal) { m.RequestStop() })
	start := time.Now()
	var exit *cpu.Exit
	if stub != nil {
		interrupts.setStop(func(syscall.Signal) { stub.Interrupt() })
		exit, err = stub.Serve()
		m.StopTiming()
	} else {
		exit, err = linux.Run(m)
	}
	wall := time.Since(start)
	// cur is the machine of the first process's program now: another
	// than m when it called execve (the old one ran the old program).
	cur := m
	if p := linux.Of(m); p != nil {
		cur = p.Machine
	}
	sig := interrupts.signal()
	if errors.Is(err, cpu.ErrStopped) {
		exit, err = &cpu.Exit{Status: 128 + int(sig)}, nil
		fmt.Fprintf(stderr, "simrun: %s: interrupted by %s after %d instructions\n", prog, linux.SignalName(int(sig)), cur.Insns)
	}
	if err != nil {
		return err
	}
	if tt != nil {
		if err := tt.Finish(exit); err != nil {
			return err
		}
	}
	if tj != nil {
		if err := tj.Finish(m, exit, guestOut.Bytes()); err != nil {
			return fmt.Errorf("writing %s: %w", *traceJSON, err)
		}
		if err := set.Commit(); err != nil {
			return err
		}
	}
	if p := linux.Of(m); exit.Fault != nil && p != nil && p.HostProgram() != "" {
		// It ran on the host: no guest state to explain or dump.
		fmt.Fprintf(stderr, "simrun: %s: %v\n", prog, exit.Fault.Err)
	} else if exit.Fault != nil {
		where, stack := explainFault(cur, exit.Fault)
		fmt.Fprintf(stderr, "simrun: %s: %v%s\n", prog, exit.Fault, where)
		for _, l := range stack {
			fmt.Fprintln(stderr, l)
		}
		if coreOut != nil && linux.CoreDumps(exit.Fault.Signal()) {
			if err := writeCore(m, exit.Fault, coreSet, coreOut); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "simrun: %s: core dumped to %s\n", prog, *coreFile)
		}
	}
	if *stats {
		st := cpu.Stats{Insns: cur.Insns, Syscalls: cur.Syscalls, Wall: wall}
		fmt.Fprintf(stderr, "instructions: %d\n", st.Insns)
		fmt.Fprintf(stderr, "syscalls: %d\n", st.Syscalls)
		if p := linux.Of(m); p != nil {
			ts := p.ThreadStats()
			fmt.Fprintf(stderr, "threads: %d\n", ts.Threads)
			fmt.Fprintf(stderr, "context switches: %d\n", ts.Switches)
			fmt.Fprintf(stderr, "signals delivered: %d\n", p.Delivered())
			if ts.Threads > 1 {
				for _, t := range ts.Insns {
					if p.CPUs() > 1 {
						fmt.Fprintf(stderr, "thread %d: %d instructions, CPU %d\n", t.Tid, t.Insns, t.CPU)
						continue
					}
					fmt.Fprintf(stderr, "thread %d: %d instructions\n", t.Tid, t.Insns)
				}
			}
			for _, q := range p.System().Stats() {
				fmt.Fprintf(stderr, "process %d: %s, %d instructions, %s\n", q.Pid, filepath.Base(q.Program), q.Insns, q.Status)
			}
		}
		fmt.Fprintf(stderr, "wall time: %.6f s\n", wall.Seconds())
		fmt.Fprintf(stderr, "MIPS: %.1f\n", st.MIPS())
		if m.Timing != nil {
			printTimingStats(stderr, timing.Of(m), m.Arch.Name)
			printCoreStats(stderr, timing.Of(m))
		}
	}
	if sig != 0 {
		return exitError{128 + int(sig)}
	}
	if exit.Status != 0 {
		return exitError{exit.Status}
	}
	return nil
}

// waitForGDB listens where -g or --gdb says, tells stderr, and waits for
// gdb's connection.
func waitForGDB(m *cpu.Machine, port, at string, stderr io.Writer) (*gdbstub.Stub, error) {
	if port != "" && at != "" {
		return nil, fmt.Errorf("-g and --gdb both given: choose one")
	}
	spec := at
	if port != "" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, fmt.Errorf("-g %s: want a TCP port number (or --gdb HOST:PORT, --gdb unix:PATH)", port)
		}
		spec = port
	}
	p := linux.Of(m)
	if p == nil {
		return nil, fmt.Errorf("gdb: the program is not a Linux process")
	}
	l, err := gdbstub.Listen(spec)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	fmt.Fprintf(stderr, "simrun: waiting for gdb on %s (target remote %s)\n", l.Addr(), gdbstub.Describe(l))
	conn, peer, err := l.Accept()
	if err != nil {
		return nil, fmt.Errorf("gdb: %w", err)
	}
	fmt.Fprintf(stderr, "simrun: gdb connected from %s\n", peer)
	return gdbstub.New(p, conn, stderr)
}

type multiFlag []string

func (f *multiFlag) String() string     { return fmt.Sprint([]string(*f)) }
func (f *multiFlag) Set(v string) error { *f = append(*f, v); return nil }

func printTimingStats(w io.Writer, t *timing.Model, arch string) {
	s := t.Stats
	if t.NumCores() > 1 {
		s = timing.Total(t.Cores()) // (cycles: the busiest core's)
	}
	pct := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	guest := ""
	if arch != "arm64" {
		guest = "; the " + arch + " guest is timed on it"
	}
	fmt.Fprintf(w, "cpu model: %s (%s, %d MHz%s)\n", t.Preset.Name, t.Preset.Desc, t.Preset.MHz, guest)
	if n := t.NumCores(); n > 1 {
		fmt.Fprintf(w, "cores: %d (cycles: the busiest core's; the other counts: all cores')\n", n)
	}
	fmt.Fprintf(w, "cycles: %d\n", s.Cycles)
	if s.Cycles > 0 {
		fmt.Fprintf(w, "IPC: %.3f\n", float64(s.Insns)/float64(s.Cycles))
	}
	fmt.Fprintf(w, "issue stall cycles: %d\n", s.StallCycles)
	fmt.Fprintf(w, "L1D accesses: %d, refills: %d (%.2f%%)\n", s.L1DAccess, s.L1DRefill, pct(s.L1DRefill, s.L1DAccess))
	fmt.Fprintf(w, "L2 accesses: %d, refills: %d (%.2f%%)\n", s.L2Access, s.L2Refill, pct(s.L2Refill, s.L2Access))
	fmt.Fprintf(w, "LLC accesses: %d, misses: %d (%.2f%%)\n", s.LLCAccess, s.LLCMiss, pct(s.LLCMiss, s.LLCAccess))
	fmt.Fprintf(w, "DTLB accesses: %d, walks: %d (%.2f%%)\n", s.TLBAccess, s.TLBWalk, pct(s.TLBWalk, s.TLBAccess))
	fmt.Fprintf(w, "branches: %d, mispredicted: %d (%.2f%%), not taken: %d\n", s.Branches, s.Mispredicts, pct(s.Mispredicts, s.Branches), s.NotTaken)
}

// printCoreStats prints, for a model of several cores, each core's
// cycles, instructions and IPC, and the coherence traffic it met.
func printCoreStats(w io.Writer, t *timing.Model) {
	cores := t.Cores()
	if len(cores) < 2 {
		return
	}
	for _, c := range cores {
		s := c.Stats
		ipc := 0.0
		if s.Cycles > 0 {
			ipc = float64(s.Insns) / float64(s.Cycles)
		}
		fmt.Fprintf(w, "core %d: %d cycles, %d instructions, IPC %.3f, peer-core hits %d, upgrades %d\n", c.CoreIndex(), s.Cycles, s.Insns, ipc, s.PeerHits, s.Upgrades)
	}
}

// writeCore writes the core file of a process that died of f.
func writeCore(m *cpu.Machine, f *cpu.Fault, set *outfile.Set, out *outfile.File) error {
	p := linux.Of(m)
	if p == nil {
		return fmt.Errorf("--core: the run has no Linux process")
	}
	if err := p.WriteCore(out, f); err != nil {
		return fmt.Errorf("--core %s: %w", out.Path, err)
	}
	return set.Commit()
}
