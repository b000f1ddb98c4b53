package unwind

import (
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"simrun/sim/cpu"
	"simrun/sim/unwind/abi"
)

// The unwind checker: it runs a program and, before every instruction
// (or every Nth), unwinds with each selected method and compares the
// frames with the truth (Shadow).  Each check ends in one of:
//
//	agree       the same frames as the truth (up to the depth limit)
//	incomplete  the frames found are right, but the method stopped
//	            early because it had nothing it may use: no data for a
//	            pc, a topmost-only rule in an outer frame, an
//	            unsupported rule (these are "without coverage")
//	diverge     a wrong frame, frames past the outermost one, or a
//	            stop that claims the chain ended (RA undefined, return
//	            address 0) or that the frame is bad while the truth goes
//	            on: the data claimed coverage and was wrong

// CheckOptions configure a Checker.
type CheckOptions struct {
	Methods []Method
	Policy  Policy // zero MaxDepth: DefaultPolicy
	// Every checks every Nth instruction (0 or 1: all); the truth
	// follows every instruction regardless.
	Every         uint64
	SFrame        SFrameSource
	SFrameVersion uint8
	// Examples is how many divergences are kept per method in detail
	// (default 5).
	Examples int
	// Resolve, when set, names the object that maps each pc (a
	// dynamically linked program): the SFrame and eh_frame walks look
	// each frame up in that object's data (NewObjectsTracer).
	Resolve Resolver
	// Expect are known divergences (ParseExpectations): one they
	// explain counts as Expected, not as a divergence.
	Expect []*Expectation
	// Program, when set, describes the program of a machine the checker
	// meets that is not the first (another process of the run: a forked
	// one, or a program execve started; see Checker.Attach): its object
	// and, for a dynamically linked one, the resolver of its objects.
	// Without it, or when it fails, such a machine is checked as running
	// the first program.
	Program func(m *cpu.Machine) (*Object, Resolver, error)
}

// Outcome is the result of one check.
type Outcome uint8

const (
	Agree Outcome = iota
	Incomplete
	Diverge
)

// Divergence is one check that diverged, in detail.
type Divergence struct {
	Insn     uint64 // instructions retired before it
	Tid      uint64 // the thread it happened in
	PC       uint64
	Frame    int    // the first frame that differs (or is missing or extra)
	What     string // "wrong frame 2", "claims the outermost frame at frame 3", ...
	Expected []uint64
	Walk     Walk    // the method's walk, with Frames
	names    *Report // names its pcs (another program's; nil: the report's)
}

// MethodReport is one method's tally.
type MethodReport struct {
	Method  Method
	Source  string
	HasData bool
	Checked uint64
	Agree   uint64
	Diverge uint64
	// Incomplete counts checks without coverage; IncompleteBy splits
	// them by the stop, NoCoverageAt0 counts those already at frame 0.
	Incomplete    uint64
	IncompleteBy  [StopDepth + 1]uint64
	NoCoverageAt0 uint64
	// Frames is the number of frames compared with the truth.
	Frames uint64
	// DepthLimited counts agreeing checks cut by the depth limit.
	DepthLimited uint64
	Examples     []Divergence
	// ByPlace counts divergences by where they happen.
	ByPlace map[Place]uint64
	// Expected counts the divergences an expectation explained (they
	// are not in Diverge).
	Expected uint64
	// ByThread tallies the checks of each thread (in the order the
	// threads were first seen), ByObject those of each object by the one
	// that maps the checked pc (a dynamically linked program's only).
	ByThread []ThreadTally
	ByObject map[string]*Tally
}

// Tally counts checks by outcome.
type Tally struct {
	Checked, Agree, Diverge, Incomplete, Expected uint64
}

func (t *Tally) add(out Outcome, expected bool) {
	t.Checked++
	switch {
	case expected:
		t.Expected++
	case out == Agree:
		t.Agree++
	case out == Incomplete:
		t.Incomplete++
	default:
		t.Diverge++
	}
}

// ThreadTally is one thread's checks.
type ThreadTally struct {
	Tid uint64
	// Program is the file name of what the thread ran while these checks
	// were made, in a run of several programs ("" with one).
	Program string
	Tally
}

// Place is where a divergence happens: the function of frame 0 and the
// function whose unwind row stepped to the wrong or missing frame (their
// start addresses, or the pcs outside every function).
type Place struct{ Func, Row uint64 }

// PlaceCount is one entry of TopPlaces.
type PlaceCount struct {
	Place
	N uint64
}

// TopPlaces returns the n places with the most divergences, most first.
func (m *MethodReport) TopPlaces(n int) []PlaceCount {
	var out []PlaceCount
	for p, k := range m.ByPlace {
		out = append(out, PlaceCount{p, k})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		if out[i].Func != out[j].Func {
			return out[i].Func < out[j].Func
		}
		return out[i].Row < out[j].Row
	})
	return out[:min(n, len(out))]
}

// Report is the checker's result.
type Report struct {
	Program string
	Arch    string
	Policy  Policy
	Every   uint64
	Insns   uint64 // instructions retired
	Checked uint64 // instructions checked
	Exit    *cpu.Exit
	// Truth is the main thread's (the first thread's) truth; Threads
	// every thread's, the main one first.
	Truth   *Shadow
	Threads []ThreadShadow
	Methods []*MethodReport
	Syms    *Symbols
	// Expect are the expectations checked (CheckOptions.Expect), each
	// with the divergences it explained.
	Expect []*Expectation
	// objects names the pcs of a dynamically linked program's other
	// objects (nil for a static program).
	objects *objectSymbols
	abi     *abi.ABI
}

// Failed reports whether a method with unwind data diverged: the exit
// status of `simrun unwind check`.
func (r *Report) Failed() bool {
	for _, m := range r.Methods {
		if m.HasData && m.Diverge > 0 {
			return true
		}
	}
	return false
}

// FrameChecks is the number of frames compared, all methods together.
func (r *Report) FrameChecks() uint64 {
	var n uint64
	for _, m := range r.Methods {
		n += m.Frames
	}
	return n
}

// Checker drives the comparison.
type Checker struct {
	m       *cpu.Machine // the first machine
	threads *Threads
	tally   []int // index in each method's ByThread of the running thread
	report  *Report
	every   uint64
	keep    int
	n       uint64
	truth   []uint64
	walk    Walk
	prev    func(*cpu.Machine) error
	expect  []*Expectation
	opt     CheckOptions
	// cur is what the running machine is checked with; ctxs every
	// machine's, in the order they were first met (the first first).
	cur  *machineCheck
	ctxs map[*cpu.Machine]*machineCheck
	list []*machineCheck
	// stale: the running thread or machine changed since the tallies
	// were chosen (retally).
	stale bool
	// doneInsns counts the instructions of the machines Detach forgot.
	doneInsns uint64
}

// machineCheck is how one machine (one process's program) is checked:
// its tracers, registers, and the names of its pcs.
type machineCheck struct {
	m       *cpu.Machine
	obj     *Object
	resolve Resolver
	tracers []*Tracer
	ra      uint32 // DWARF number of the return-address register
	regs    Regs
	live    bool // regs is the core itself
	state   cpu.State
	names   *Report // the program, its symbols and objects (for names only)
	multi   bool    // a program other than the first's
}

// NewChecker prepares a check of machine m running the program o and
// installs itself as m's observer (after any observer already there).
func NewChecker(m *cpu.Machine, o *Object, opt CheckOptions) (*Checker, error) {
	if opt.Policy.MaxDepth == 0 {
		opt.Policy = DefaultPolicy()
	}
	if opt.Every == 0 {
		opt.Every = 1
	}
	if opt.Examples == 0 {
		opt.Examples = 5
	}
	if len(opt.Methods) == 0 {
		opt.Methods = []Method{MethodSFrame, MethodEHFrame}
	}
	mk := func() *Shadow {
		s := NewShadow(o.ABI.SP)
		// compare looks at MaxDepth frames and whether there are more.
		s.ChainDepth = opt.Policy.MaxDepth + 1
		return s
	}
	first := mk()
	c := &Checker{m: m, threads: NewThreads(MainTid, first, mk), every: opt.Every, keep: opt.Examples, prev: m.Observer, expect: opt.Expect,
		opt: opt, ctxs: map[*cpu.Machine]*machineCheck{}}
	c.report = &Report{Program: o.Path, Arch: o.ABI.Name, Policy: opt.Policy, Every: opt.Every, Truth: first, abi: o.ABI, Expect: opt.Expect}
	mc, err := c.newMachineCheck(m, o, opt.Resolve)
	if err != nil {
		return nil, err
	}
	c.report.Syms, c.report.objects = mc.names.Syms, mc.names.objects
	mc.names = c.report
	for _, t := range mc.tracers {
		c.report.Methods = append(c.report.Methods, &MethodReport{Method: t.Method, Source: t.Source, HasData: t.Method.HasData(),
			ByThread: []ThreadTally{{Tid: MainTid}}})
		c.tally = append(c.tally, 0)
	}
	c.cur = mc
	m.Observer = c.observe
	return c, nil
}

// newMachineCheck prepares the checks of machine m running program o
// (with resolve for a dynamically linked one).
func (c *Checker) newMachineCheck(m *cpu.Machine, o *Object, resolve Resolver) (*machineCheck, error) {
	if resolve == nil {
		// A static program's tracers and names serve every machine
		// that runs it (a forked copy): made once.
		for _, f := range c.list {
			if f.obj == o && f.resolve == nil {
				mc := &machineCheck{m: m, obj: o, tracers: f.tracers, ra: f.ra, names: f.names}
				mc.setRegs(m, o.ABI)
				c.ctxs[m] = mc
				c.list = append(c.list, mc)
				m.Observer = c.observe
				return mc, nil
			}
		}
	}
	opt := c.opt
	syms, err := ReadSymbols(o)
	if err != nil {
		return nil, err
	}
	if m.Image != nil {
		syms = syms.Rebased(m.Image.Bias) // the report names run-time pcs
	}
	mc := &machineCheck{m: m, obj: o, resolve: resolve, ra: o.ABI.RA, names: &Report{Program: o.Path, Syms: syms, abi: o.ABI}}
	if resolve != nil {
		mc.names.objects = newObjectSymbols(resolve)
	}
	for _, meth := range opt.Methods {
		topt := Options{Method: meth, Policy: opt.Policy, SFrame: opt.SFrame, SFrameVersion: opt.SFrameVersion}
		var t *Tracer
		if resolve != nil && meth.HasData() {
			t, err = NewObjectsTracer(o.ABI, resolve, topt)
		} else {
			t, err = NewTracer(o, topt)
		}
		if err != nil {
			return nil, err
		}
		mc.tracers = append(mc.tracers, t)
	}
	mc.setRegs(m, o.ABI)
	c.ctxs[m] = mc
	c.list = append(c.list, mc)
	m.Observer = c.observe
	return mc, nil
}

// setRegs reads the registers from m's core (itself, when it can).
func (mc *machineCheck) setRegs(m *cpu.Machine, a *abi.ABI) {
	if r, ok := m.Core.(Regs); ok {
		mc.regs, mc.live = r, true
	} else {
		mc.regs = StateRegs{Layout: &a.Regs, State: &mc.state}
	}
}

// Attach makes the checker check machine m too: another process's of the
// same run (CheckOptions.Program describes its program). The truth
// follows it through the thread events the kernel gives (SwitchThread,
// Fork, Exec).
func (c *Checker) Attach(m *cpu.Machine) { m.Observer = c.observe }

// Detach tells the checker that machine m runs no more (its process
// ended, or execve replaced it): it keeps only its instruction count, so
// a run of many short-lived processes holds no machine.
func (c *Checker) Detach(m *cpu.Machine) {
	mc, ok := c.ctxs[m]
	if !ok || mc == c.list[0] {
		return
	}
	c.doneInsns += m.Insns
	delete(c.ctxs, m)
	c.list = slices.DeleteFunc(c.list, func(x *machineCheck) bool { return x == mc })
}

// enter makes m the machine being checked, preparing its checks the
// first time.
func (c *Checker) enter(m *cpu.Machine) {
	if mc, ok := c.ctxs[m]; ok {
		c.cur = mc
		c.stale = true
		return
	}
	var mc *machineCheck
	if c.opt.Program != nil {
		if o, res, err := c.opt.Program(m); err == nil {
			mc, _ = c.newMachineCheck(m, o, res)
		}
	}
	if mc == nil { // checked as the first program (its tracers read m's registers)
		f := c.list[0]
		mc = &machineCheck{m: m, tracers: f.tracers, ra: f.ra, names: f.names}
		mc.setRegs(m, c.report.abi)
		c.ctxs[m] = mc
		c.list = append(c.list, mc)
	}
	mc.multi = true
	if f := c.list[0]; !f.multi {
		// From now on each thread's tallies name its program: the
		// first program's threads so far ran it.
		f.multi = true
		for _, r := range c.report.Methods {
			for k := range r.ByThread {
				r.ByThread[k].Program = filepath.Base(f.names.Program)
			}
		}
	}
	c.cur = mc
	c.stale = true
}

// MainTid is the id of a program's first thread (simrun's guest pid).
const MainTid = 1000

// Shadow returns the truth the checker keeps of the running thread.
func (c *Checker) Shadow() *Shadow { return c.threads.Cur }

// Threads returns the truth of every thread.
func (c *Checker) Threads() *Threads { return c.threads }

// SwitchThread tells the checker that the core now runs thread tid, and
// that the thread that ran before stopped at prevPC (the kernel's context
// switch): the truth and the per-thread tallies follow it.
func (c *Checker) SwitchThread(tid, prevPC uint64) {
	if tid == c.threads.Tid {
		return
	}
	c.threads.Switch(tid, prevPC)
	c.stale = true // the tallies follow at the next check (the machine may change first)
}

// retally points the per-thread tallies at the running thread's (and, in
// a run of several programs, its program's).
func (c *Checker) retally() {
	tid, prog := c.threads.Tid, ""
	if c.cur.multi {
		prog = filepath.Base(c.cur.names.Program)
	}
	for i, r := range c.report.Methods {
		k := 0
		for k < len(r.ByThread) && (r.ByThread[k].Tid != tid || r.ByThread[k].Program != prog) {
			k++
		}
		if k == len(r.ByThread) {
			r.ByThread = append(r.ByThread, ThreadTally{Tid: tid, Program: prog})
		}
		c.tally[i] = k
	}
}

// Fork tells the checker that the running thread forked process tid (its
// only thread): the child's truth is a copy of the caller's, or empty when
// the child has a stack of its own (Threads.Fork).
func (c *Checker) Fork(tid uint64, program string, ownStack bool) {
	c.threads.Fork(tid, tid, program, ownStack)
}

// Exec tells the checker that execve started thread tid afresh on a new
// program, run by machine m (attached: Attach).
func (c *Checker) Exec(tid uint64, program string, m *cpu.Machine) {
	sp := uint32(c.report.abi.SP)
	if a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder); err == nil {
		sp = a.SP
	}
	c.threads.Exec(tid, program, sp)
}

// Signal tells the checker that the running thread, interrupted at pc
// with stack pointer sp, entered a signal handler (the core holds the
// handler's entry state): the truth gets a signal frame (Shadow.Signal).
func (c *Checker) Signal(pc, sp uint64) { c.SignalOn(c.cur.m, pc, sp) }

// SignalOn is Signal on machine m (the running process's, which the
// checker may not have seen run yet; its architecture names the
// return-address register).
func (c *Checker) SignalOn(m *cpu.Machine, pc, sp uint64) {
	ra := c.cur.ra
	if a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder); err == nil {
		ra = a.RA
	}
	c.threads.Signal(m.Core, pc, sp, ra)
}

// SigReturn tells the checker that the running thread returned from a
// signal handler by rt_sigreturn.
func (c *Checker) SigReturn() { c.threads.SigReturn() }

func (c *Checker) observe(m *cpu.Machine) error {
	if c.prev != nil {
		if err := c.prev(m); err != nil {
			return err
		}
	}
	if m != c.cur.m {
		c.enter(m)
	}
	c.threads.Cur.Observe(m.Core)
	c.n++
	if (c.n-1)%c.every != 0 {
		return nil
	}
	c.check(m.Core.PC())
	return nil
}

func (c *Checker) check(pc uint64) {
	if c.stale {
		c.stale = false
		c.retally()
	}
	mc := c.cur
	m := mc.m
	if !mc.live {
		m.Core.State(&mc.state)
	}
	c.report.Checked++
	c.truth = c.threads.Cur.Callchain(pc, c.truth[:0])
	for i, t := range mc.tracers {
		r := c.report.Methods[i]
		t.Walk(m.Mem, pc, mc.regs, &c.walk)
		out, k, what, depthCut := compare(c.truth, &c.walk, t.Policy.MaxDepth)
		r.Checked++
		r.Frames += uint64(min(len(c.truth), t.Policy.MaxDepth))
		expected := out == Diverge && c.expected(r.Method, k, t)
		r.ByThread[c.tally[i]].add(out, expected)
		if mc.names.objects != nil || mc.multi {
			obj := mc.names.object(pc)
			if r.ByObject == nil {
				r.ByObject = map[string]*Tally{}
			}
			if r.ByObject[obj] == nil {
				r.ByObject[obj] = &Tally{}
			}
			r.ByObject[obj].add(out, expected)
		}
		switch out {
		case Agree:
			r.Agree++
			if depthCut {
				r.DepthLimited++
			}
		case Incomplete:
			r.Incomplete++
			r.IncompleteBy[c.walk.Stop.Kind]++
			if c.walk.Stop.Frame == 0 {
				r.NoCoverageAt0++
			}
		case Diverge:
			if expected {
				r.Expected++
				continue
			}
			r.Diverge++
			c.place(r, k)
			if len(r.Examples) < c.keep {
				d := Divergence{Insn: m.Insns, Tid: c.threads.Tid, PC: pc, Frame: k, What: what, Expected: append([]uint64(nil), c.truth...)}
				if mc.multi {
					d.names = mc.names
				}
				t.WalkDetail(m.Mem, pc, mc.regs, &d.Walk)
				r.Examples = append(r.Examples, d)
			}
		}
	}
}

// expected reports whether an expectation explains a divergence of
// method m (tracer t, whose walk is c.walk) at frame k of the current
// truth, counting it there.
func (c *Checker) expected(m Method, k int, t *Tracer) bool {
	mc := c.cur
	env := matchEnv{name: mc.names.funcName, linkName: mc.linkName}
	if img := mc.m.Image; img != nil {
		env.entry = img.Entry
	}
	env.cfaReg = func(i int) (string, string, bool) {
		var row Row
		if i >= len(c.walk.PCs) || !t.rowAt(c.walk.PCs[i], i == 0, &row) || row.Outermost || row.CFA.Unsupported {
			return "", "", false
		}
		return regName(t.ABI, row.CFA.Reg), fmt.Sprintf("r%d", row.CFA.Reg), true
	}
	for _, e := range c.expect {
		if e.matches(m, c.truth, k, &env) {
			e.Matched++
			return true
		}
	}
	return false
}

// linkName names pc as OBJECT+0xADDRESS, the address the object that maps
// it was linked at ("" when unknown): Expectation's pc= condition.
func (mc *machineCheck) linkName(pc uint64) string {
	if mc.names.objects != nil {
		return mc.names.objects.linkName(pc)
	}
	if mc.obj == nil || mc.obj.ELF == nil {
		return ""
	}
	addr := pc
	if img := mc.m.Image; img != nil {
		addr -= img.Bias
	}
	for _, p := range mc.obj.ELF.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr-p.Vaddr < p.Memsz {
			return fmt.Sprintf("%s+%#x", filepath.Base(mc.obj.Path), addr)
		}
	}
	return ""
}

// FuncName is the name of the function holding pc (the program's, else
// another object's), without an offset; "?" when no symbol holds it.
func (r *Report) FuncName(pc uint64) string { return r.funcName(pc) }

// funcName is the name of the function holding pc without an offset,
// or, for code without a symbol, the report's name of pc.
func (r *Report) funcName(pc uint64) string {
	if name, start := r.fn(pc); start != 0 && name != "" {
		return name
	}
	return r.name(pc)
}

// fn is the function holding pc (the program's, else another object's)
// and its start.
func (r *Report) fn(pc uint64) (string, uint64) {
	if name, start := r.Syms.Func(pc); start != 0 || r.objects == nil {
		return name, start
	}
	return r.objects.fn(pc)
}

// object names the object that maps pc: the file name of the program's
// own or of another object's mapping, or "?".
func (r *Report) object(pc uint64) string {
	if r.objects != nil {
		if s := r.objects.span(pc); s != nil {
			return filepath.Base(s.path)
		}
	}
	if _, start := r.Syms.Func(pc); start != 0 || r.objects == nil {
		return filepath.Base(r.Program)
	}
	return "?"
}

// Name names pc as the report does: function+offset in the program or
// another object, else "?".
func (r *Report) Name(pc uint64) string { return r.name(pc) }

// name names pc for the report: the program's function, else another
// object's, else "?".
func (r *Report) name(pc uint64) string {
	if n := r.Syms.Name(pc); n != "?" || r.objects == nil {
		return n
	}
	return r.objects.name(pc)
}

// place counts a divergence at frame k of the current walk by its Place.
func (c *Checker) place(r *MethodReport, k int) {
	fn := func(pc uint64) uint64 {
		if _, start := c.cur.names.fn(pc); start != 0 {
			return start
		}
		return pc
	}
	p := Place{Func: fn(c.truth[0])}
	if k > 0 && k-1 < len(c.truth) {
		p.Row = fn(c.truth[k-1])
	}
	if r.ByPlace == nil {
		r.ByPlace = map[Place]uint64{}
	}
	r.ByPlace[p]++
}

// compare classifies a walk against the true frames.
func compare(truth []uint64, w *Walk, maxDepth int) (out Outcome, frame int, what string, depthCut bool) {
	if len(truth) > maxDepth {
		truth, depthCut = truth[:maxDepth], true
	}
	got := w.PCs
	n := min(len(truth), len(got))
	for i := 0; i < n; i++ {
		if truth[i] != got[i] {
			return Diverge, i, fmt.Sprintf("wrong frame %d", i), false
		}
	}
	switch {
	case len(got) == len(truth):
		return Agree, 0, "", depthCut
	case len(got) > len(truth):
		return Diverge, len(truth), fmt.Sprintf("%d frames past the outermost", len(got)-len(truth)), false
	case w.Stop.Kind.Declined():
		return Incomplete, len(got), "", false
	}
	return Diverge, len(got), fmt.Sprintf("stopped after %d of %d frames: %s", len(got), len(truth), w.Stop.Kind), false
}

// Run runs the machine to its end and returns the report.
func (c *Checker) Run() (*Report, error) {
	exit, err := c.m.Run()
	if err != nil {
		return nil, err
	}
	return c.Finish(exit), nil
}

// Finish completes the report of a run that something else drove to its
// end (a gdb stub's Serve) with how it ended.
func (c *Checker) Finish(exit *cpu.Exit) *Report {
	c.report.Exit = exit
	c.report.Insns = c.doneInsns
	for _, mc := range c.list {
		c.report.Insns += mc.m.Insns
	}
	c.report.Threads = c.threads.All()
	if f := c.list[0]; f.multi {
		for i := range c.report.Threads {
			if c.report.Threads[i].Program == "" {
				c.report.Threads[i].Program = filepath.Base(f.names.Program)
			}
		}
	}
	return c.report
}

// Write prints the report.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	every := "every instruction"
	if r.Every > 1 {
		every = fmt.Sprintf("every %d instructions", r.Every)
	}
	fmt.Fprintf(&b, "unwind check: %s (%s), %s, policy %s\n", r.Program, r.Arch, every, r.Policy)
	status := "exit status ?"
	if r.Exit != nil {
		status = fmt.Sprintf("exit status %d", r.Exit.Status)
		if r.Exit.Fault != nil {
			status += " (" + r.Exit.Fault.Error() + ")"
		}
	}
	fmt.Fprintf(&b, "program: %d instructions, %d checked, %s\n", r.Insns, r.Checked, status)
	t := r.Truth
	if len(r.Threads) > 1 {
		all := (&Threads{all: r.Threads}).Totals()
		t = &all
	}
	fmt.Fprintf(&b, "truth: %d calls, %d returns, max depth %d, %d mismatched returns", t.Calls, t.Returns, t.MaxDepth+1, t.Mismatched)
	if t.Abandoned > 0 {
		fmt.Fprintf(&b, ", %d frames of calls that never returned dropped", t.Abandoned)
	}
	if t.Overflowed > 0 {
		limit := t.Limit
		if limit <= 0 {
			limit = MaxShadowDepth
		}
		fmt.Fprintf(&b, ", %d outermost frames dropped past the limit of %d (the truth is cut there)", t.Overflowed, limit)
	}
	if t.Signals > 0 {
		fmt.Fprintf(&b, ", %d signal frames, %d popped by rt_sigreturn", t.Signals, t.SigReturns)
	}
	b.WriteString("\n")
	if len(r.Threads) > 1 {
		for _, th := range r.Threads {
			prog := ""
			if th.Program != "" {
				prog = " (" + th.Program + ")"
			}
			fmt.Fprintf(&b, "  thread %d%s: %d calls, %d returns, max depth %d, %d mismatched returns\n",
				th.Tid, prog, th.Calls, th.Returns, th.MaxDepth+1, th.Mismatched)
		}
	}
	for _, m := range t.Mismatches {
		fmt.Fprintf(&b, "  mismatched: %s (%s -> %s)\n", m, r.name(m.PC), r.name(m.Target))
	}
	fmt.Fprintf(&b, "\n%-9s %12s %12s %10s %12s %14s\n", "method", "checked", "agree", "diverge", "no-coverage", "frames")
	for _, m := range r.Methods {
		note := ""
		if !m.HasData {
			note = "  (no unwind data: does not set the exit status)"
		}
		fmt.Fprintf(&b, "%-9s %12d %12d %10d %12d %14d%s\n", m.Method, m.Checked, m.Agree, m.Diverge, m.Incomplete, m.Frames, note)
	}
	for _, m := range r.Methods {
		fmt.Fprintf(&b, "\n%s: %s\n", m.Method, m.Source)
		if m.Checked > 0 {
			fmt.Fprintf(&b, "  agree %.4f%%, coverage %.4f%% of checks", 100*float64(m.Agree)/float64(m.Checked),
				100*float64(m.Checked-m.Incomplete)/float64(m.Checked))
			if m.DepthLimited > 0 {
				fmt.Fprintf(&b, ", %d agreeing checks cut at depth %d", m.DepthLimited, r.Policy.MaxDepth)
			}
			b.WriteString("\n")
		}
		for k, n := range m.IncompleteBy {
			if n > 0 {
				fmt.Fprintf(&b, "  no coverage: %d checks stopped by %s\n", n, StopKind(k))
			}
		}
		if m.NoCoverageAt0 > 0 {
			fmt.Fprintf(&b, "  no coverage at frame 0: %d checks\n", m.NoCoverageAt0)
		}
		if m.Expected > 0 {
			fmt.Fprintf(&b, "  expected divergences (--expect): %d, not counted above\n", m.Expected)
		}
		if len(m.ByThread) > 1 {
			b.WriteString("  by thread:\n")
			for _, th := range m.ByThread {
				what := fmt.Sprintf("tid %d", th.Tid)
				if th.Program != "" {
					what += " " + th.Program
				}
				writeTally(&b, what, &th.Tally)
			}
		}
		if len(m.ByObject) > 1 {
			b.WriteString("  by object (the one mapping the checked pc):\n")
			objs := make([]string, 0, len(m.ByObject))
			for o := range m.ByObject {
				objs = append(objs, o)
			}
			sort.Strings(objs)
			for _, o := range objs {
				writeTally(&b, o, m.ByObject[o])
			}
		}
		if top := m.TopPlaces(8); len(top) > 0 {
			b.WriteString("  divergences by place (frame 0 function; function whose row stepped to the wrong frame):\n")
			for _, p := range top {
				fmt.Fprintf(&b, "    %10d  %s; %s\n", p.N, r.name(p.Func), r.name(p.Row))
			}
			if n := len(m.ByPlace) - len(top); n > 0 {
				fmt.Fprintf(&b, "    ... %d more places\n", n)
			}
		}
		for i, d := range m.Examples {
			r.writeDivergence(&b, i+1, m, &d)
		}
		if m.Diverge > uint64(len(m.Examples)) {
			fmt.Fprintf(&b, "  ... %d more divergences\n", m.Diverge-uint64(len(m.Examples)))
		}
	}
	if len(r.Expect) > 0 {
		b.WriteString("\nexpectations (--expect):\n")
		for _, e := range r.Expect {
			fmt.Fprintf(&b, "  line %d: %d divergences: %s\n", e.Line, e.Matched, e.Reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTally writes one line of a by-thread or by-object breakdown.
func writeTally(b *strings.Builder, what string, t *Tally) {
	fmt.Fprintf(b, "    %-24s %10d checked %10d agree %8d diverge %8d no-coverage", what, t.Checked, t.Agree, t.Diverge, t.Incomplete)
	if t.Expected > 0 {
		fmt.Fprintf(b, " %8d expected", t.Expected)
	}
	b.WriteString("\n")
}

func (r *Report) writeDivergence(b *strings.Builder, n int, m *MethodReport, d *Divergence) {
	names := r
	if d.names != nil {
		names = d.names
	}
	where := fmt.Sprintf("instruction %d", d.Insn)
	if len(r.Threads) > 1 {
		where += fmt.Sprintf(", thread %d", d.Tid)
	}
	fmt.Fprintf(b, "  divergence %d: pc %#x %s (%s): %s\n", n, d.PC, names.name(d.PC), where, d.What)
	fmt.Fprintf(b, "    %-5s %-36s %-36s %s\n", "frame", "expected (truth)", "found ("+m.Method.String()+")", "row used to step to the next frame")
	rows := max(len(d.Expected), len(d.Walk.PCs))
	if limit := max(len(d.Expected), d.Frame+1) + 2; rows > limit {
		rows = limit
	}
	for i := 0; i < rows; i++ {
		exp, got := "-", "-"
		if i < len(d.Expected) {
			exp = fmt.Sprintf("%#x %s", d.Expected[i], names.name(d.Expected[i]))
		}
		if i < len(d.Walk.PCs) {
			got = fmt.Sprintf("%#x %s", d.Walk.PCs[i], names.name(d.Walk.PCs[i]))
		}
		mark := " "
		if i == d.Frame {
			mark = ">"
		}
		row := ""
		if i < len(d.Walk.Frames) {
			f := &d.Walk.Frames[i]
			if f.RowOK {
				row = f.Where
				if f.RowAt != f.PC {
					row = fmt.Sprintf("looked up at %#x: %s", f.RowAt, row)
				}
			}
		}
		fmt.Fprintf(b, "   %s%-5d %-36s %-36s %s\n", mark, i, exp, got, row)
	}
	if more := len(d.Walk.PCs) - rows; more > 0 {
		fmt.Fprintf(b, "    ... %d more frames found\n", more)
	}
	fmt.Fprintf(b, "    walk ended: %s\n", d.Walk.Stop.Format(r.abi))
}
