package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"simrun/sim/cpu"
	"simrun/sim/infile"
	"simrun/sim/linux"
	"simrun/sim/record"
	"simrun/sim/unwind"
)

const unwindUsage = `Usage: simrun unwind <subcommand> [flags] ...

Subcommands:
  check      run a program and compare every unwinding method with the true call stack
  policies   list the --unwind-policy switches and which real unwinders behave each way

Run 'simrun unwind <subcommand> --help' for its flags.
`

const unwindCheckExamples = `simrun unwind check programs/bin/aarch64-O2/fib
simrun unwind check --every 100 --method all programs/bin/s390x-O2/leaffpr
simrun unwind check --unwind-policy topmost=ignore programs/bin/s390x-O2/fprra
simrun unwind check --pauth --unwind-policy pac=keep programs/bin/aarch64-O2/pacret
simrun unwind check --sframe-version 2 --method sframe programs/bin/s390x-O0/fib
`

func cmdUnwind(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, unwindUsage)
		return errUsage
	}
	switch args[0] {
	case "check":
		return cmdUnwindCheck(args[1:], stdin, stdout, stderr)
	case "policies":
		return writePolicies(stdout)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, unwindUsage)
		return nil
	}
	fmt.Fprintf(stderr, "simrun unwind: unknown subcommand %q\n\n%s", args[0], unwindUsage)
	return errUsage
}

// writePolicies lists the switches, one block each, wrapped to fit a
// terminal:
//
//	lookup=ra (default)
//	    look return addresses up as they are
//	    who: the kernel's SFrame unwinder (unwind_user), ...
func writePolicies(w io.Writer) error {
	var b strings.Builder
	for i, s := range unwind.PolicySwitches {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s.Key + "=" + s.Value)
		if s.Default {
			b.WriteString(" (default)")
		}
		b.WriteString("\n")
		wrap(&b, s.What, "    ", 78)
		wrap(&b, "who: "+s.Who, "    ", 78)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap writes text in lines of at most width columns, each indented.
func wrap(b *strings.Builder, text, indent string, width int) {
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
}

func cmdUnwindCheck(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("unwind check", "unwind check [flags] PROG [ARGS...]", indent(unwindCheckExamples), stderr)
	every := fs.Uint64("every", 1, "check every `N`th instruction (the truth follows every one)")
	methods := fs.String("method", "sframe,eh_frame", "comma-separated `METHODS` to check: sframe, eh_frame, fp (x29 chain / s390x back chain), or all")
	policyText := fs.String("unwind-policy", "default", "unwinder `SWITCHES` key=value,... (see 'simrun unwind policies'); the default is the kernel's rules")
	sframeFrom := fs.String("sframe", "auto", "SFrame data: auto (the program's .sframe, else emitted from .eh_frame), section, or emit")
	sframeVersion := fs.Int("sframe-version", 3, "SFrame `version` to emit: 3 (binutils 2.46) or 2 (2.45)")
	pauth := fs.Bool("pauth", false, "arm64: pointer authentication on (paciasp/autiasp/retaa... sign and authenticate); off, they are NOPs as in qemu with pauth=off")
	examples := fs.Int("examples", 5, "divergences shown in detail per method")
	maxInsns := fs.Uint64("max-insns", 0, "stop with an error after `N` instructions (0: no limit)")
	seed := fs.Uint64("seed", 1, "seed for AT_RANDOM, getrandom and the pointer authentication keys")
	stats := fs.Bool("stats", false, "print wall time, instructions and frame checks per second to stderr")
	expect := fs.String("expect", "", "known divergences in `FILE` (one per line: conditions method=, at=, row=, via=, entry=, pc=, cfa=, then \" -- \" and the reason): those it explains do not set the exit status")
	guest := addGuestFlags(fs)
	against := addAgainstFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "simrun unwind check: no program given")
		fs.Usage()
		return errUsage
	}
	usage := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "simrun unwind check: "+format+"\n", a...)
		return errUsage
	}
	var expectations []*unwind.Expectation
	if *expect != "" {
		f, err := os.Open(*expect)
		if err != nil {
			return fmt.Errorf("--expect: %w", err)
		}
		expectations, err = unwind.ParseExpectations(f, *expect)
		f.Close()
		if err != nil {
			return usage("--expect: %v", err)
		}
	}
	withGDB, err := against.on()
	if err != nil {
		return usage("%v", err)
	}
	policy, err := unwind.ParsePolicy(*policyText)
	if err != nil {
		return usage("--unwind-policy: %v", err)
	}
	var ms []unwind.Method
	if *methods == "all" {
		ms = unwind.Methods
	} else {
		for _, s := range strings.Split(*methods, ",") {
			m, err := unwind.ParseMethod(strings.TrimSpace(s))
			if err != nil {
				return usage("--method: %v", err)
			}
			ms = append(ms, m)
		}
	}
	var from unwind.SFrameSource
	switch *sframeFrom {
	case "auto":
		from = unwind.SFrameAuto
	case "section":
		from = unwind.SFrameSection
	case "emit":
		from = unwind.SFrameEmit
	default:
		return usage("--sframe %q: want auto, section or emit", *sframeFrom)
	}
	if *sframeVersion != 2 && *sframeVersion != 3 {
		return usage("--sframe-version %d: want 2 or 3", *sframeVersion)
	}
	prog := fs.Arg(0)
	data, err := infile.Read(prog, elfInput)
	if err != nil {
		return err
	}
	cfg := linux.Config{
		Args: fs.Args(), Stdin: stdin, Stdout: stderr, Stderr: stderr,
		Seed: *seed, MaxInsns: *maxInsns,
	}
	if err := guest.apply(&cfg, stderr); err != nil {
		return err
	}
	m, err := linux.New(prog, data, cfg)
	if err != nil {
		return err
	}
	if *pauth {
		if err := linux.EnablePAuth(m); err != nil {
			return err
		}
	}
	copt := unwind.CheckOptions{
		Expect:  expectations,
		Methods: ms, Policy: policy, Every: *every, SFrame: from,
		SFrameVersion: uint8(*sframeVersion), Examples: *examples,
	}
	start := time.Now()
	var r *unwind.Report
	var gr *gdbReport
	if withGDB {
		var c *unwind.Checker
		if c, err = newCheck(m, prog, data, copt); err == nil {
			r, gr, err = against.checkAgainstGDB(m, c, prog, stderr)
		}
	} else {
		r, err = checkMachine(m, prog, data, copt)
	}
	wall := time.Since(start)
	if err != nil {
		return err
	}
	if err := r.Write(stdout); err != nil {
		return err
	}
	if gr != nil {
		if err := gr.Write(stdout, *examples); err != nil {
			return err
		}
	}
	if *stats {
		fc := r.FrameChecks()
		fmt.Fprintf(stderr, "wall time: %.3f s\ninstructions: %d (%.2f M/s)\nframe checks: %d (%.2f M/s)\n",
			wall.Seconds(), r.Insns, float64(r.Insns)/wall.Seconds()/1e6, fc, float64(fc)/wall.Seconds()/1e6)
	}
	if r.Failed() || (gr != nil && gr.disagreements() > 0) {
		return exitError{1}
	}
	return nil
}

// checkMachine runs m, loaded from prog (data), under an unwind.Checker:
// each frame is looked up in the object that maps it, every process and
// thread has its own truth.
func checkMachine(m *cpu.Machine, prog string, data []byte, copt unwind.CheckOptions) (*unwind.Report, error) {
	c, err := newCheck(m, prog, data, copt)
	if err != nil {
		return nil, err
	}
	return c.Run()
}

// newCheck is checkMachine's checker, not run yet.
func newCheck(m *cpu.Machine, prog string, data []byte, copt unwind.CheckOptions) (*unwind.Checker, error) {
	obj, err := unwind.NewObject(prog, data)
	if err != nil {
		return nil, err
	}
	if p := linux.Of(m); p != nil && p.Interp != nil {
		copt.Resolve = record.CodeResolver(p) // each frame in the object that maps it
	}
	copt.Program = programOf()
	c, err := unwind.NewChecker(m, obj, copt)
	if err != nil {
		return nil, err
	}
	if p := linux.Of(m); p != nil {
		followThreads(p, c)
	}
	return c, nil
}

// followThreads makes the checker's truth follow the kernel: one shadow
// stack per thread of every process, a signal frame per handler entered,
// a forked process's copied from its parent's caller, execve's afresh;
// and the checks follow every process's machine.
func followThreads(p *linux.Process, c *unwind.Checker) {
	p.System().AddHook(func(q *linux.Process, e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ThreadSwitched, linux.ProcessSwitched:
			c.SwitchThread(e.Tid, e.PC)
		case linux.SignalEntered:
			c.SignalOn(q.Machine, e.PC, e.SP)
		case linux.SignalReturned:
			c.SigReturn()
		case linux.ProcessForked:
			c.Attach(q.Machine)
			c.Fork(e.Tid, q.Comm(), e.SP != 0)
		case linux.ProcessExeced:
			c.Attach(q.Machine)
			c.Exec(e.Tid, q.Comm(), q.Machine)
		case linux.ProcessExited:
			c.Detach(q.Machine)
		}
	})
}

// programOf describes the program a process's machine runs, for the
// checks of a run of several processes (unwind.CheckOptions.Program):
// files are read once.
func programOf() func(m *cpu.Machine) (*unwind.Object, unwind.Resolver, error) {
	objs := map[string]*unwind.Object{}
	return func(m *cpu.Machine) (*unwind.Object, unwind.Resolver, error) {
		q := linux.Of(m)
		if q == nil || m.Image == nil {
			return nil, nil, errors.New("not a Linux process")
		}
		path := m.Image.Path
		o, ok := objs[path]
		if !ok {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, nil, err
			}
			if o, err = unwind.NewObject(path, data); err != nil {
				return nil, nil, err
			}
			objs[path] = o
		}
		var res unwind.Resolver
		if q.Interp != nil {
			res = record.CodeResolver(q)
		}
		return o, res, nil
	}
}
