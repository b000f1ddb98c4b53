package unwind

import (
	"fmt"
	"sort"

	"simrun/sim/cpu"
	"simrun/sim/elfsym"
	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/cfi"
	"simrun/sim/unwind/sframe"
)

// Method is an unwinding method.
type Method uint8

const (
	MethodSFrame  Method = iota + 1 // SFrame: the program's .sframe, or one emitted from .eh_frame
	MethodEHFrame                   // DWARF CFI rows from .eh_frame (or .debug_frame)
	MethodFP                        // frame chain: aarch64 x29 frame records, s390x back chain
)

// Methods lists the methods in report order.
var Methods = []Method{MethodSFrame, MethodEHFrame, MethodFP}

func (m Method) String() string {
	switch m {
	case MethodSFrame:
		return "sframe"
	case MethodEHFrame:
		return "eh_frame"
	case MethodFP:
		return "fp"
	}
	return fmt.Sprintf("method(%d)", m)
}

// HasData reports whether the method works from unwind data that claims
// to describe the code (SFrame, CFI), as opposed to the frame chain,
// which is a convention the code may or may not follow.
func (m Method) HasData() bool { return m == MethodSFrame || m == MethodEHFrame }

// ParseMethod reads a method name: sframe, eh_frame (or cfi, dwarf), fp
// (or backchain).
func ParseMethod(s string) (Method, error) {
	switch s {
	case "sframe":
		return MethodSFrame, nil
	case "eh_frame", "cfi", "dwarf":
		return MethodEHFrame, nil
	case "fp", "backchain", "back-chain":
		return MethodFP, nil
	}
	return 0, fmt.Errorf("unknown unwind method %q (sframe, eh_frame, fp)", s)
}

// SFrameSource says where the SFrame method's section comes from.
type SFrameSource uint8

const (
	SFrameAuto    SFrameSource = iota // the program's .sframe if it has one, else emitted from .eh_frame
	SFrameSection                     // the program's .sframe (an error if there is none)
	SFrameEmit                        // emitted from .eh_frame the way gas 2.46 (V3) or 2.45 (V2) would
)

// Options configure a Tracer.
type Options struct {
	Method Method
	Policy Policy // zero MaxDepth: DefaultPolicy
	SFrame SFrameSource
	// SFrameVersion is the version to emit (2 or 3; 0 means 3).
	SFrameVersion uint8
}

// rowSource is one method's data: the Row for a pc.
type rowSource interface {
	// row fills r for the frame at pc, looked up at addr (pc, or pc-1);
	// ok is false if the method has no data there.
	row(pc, addr uint64, topmost bool, r *Row) (ok bool)
	// where names the data row used for addr, for reports.
	where(addr uint64) string
}

// Tracer walks stacks of one program with one method.  It is not safe
// for concurrent use (Callchain reuses a scratch walk).
type Tracer struct {
	ABI    *abi.ABI
	Method Method
	Policy Policy
	Syms   *Symbols
	// Source says what data the method uses, e.g. "SFrame V3 emitted
	// from .eh_frame (29 FDEs, 56 FREs)".
	Source string

	src      rowSource
	fallback rowSource // frame chain for Policy.Gap == GapFP
	load     func(m *cpu.Memory, addr uint64) (uint64, bool)
	scratch  Walk
	// rows caches the data sources' answers by lookup address: walks at
	// consecutive instructions look the same return addresses up.
	rows *rowCache
	// maps, for a tracer over mapped objects, tells when mappings went
	// away (Resolver.MapsGen): the rows learned before (at rowsGen) go.
	maps    Resolver
	rowsGen uint64
}

const rowCacheSize = 1024 // a power of two

type rowCache [rowCacheSize]struct {
	addr uint64 // lookup address + 1 (0: empty)
	ok   bool
	row  Row
}

// lookup finds the row for addr through the cache.
func (t *Tracer) lookup(pc, addr uint64, topmost bool, r *Row) bool {
	c := t.rows
	if c == nil {
		return t.src.row(pc, addr, topmost, r)
	}
	e := &c[(addr^addr>>10)&(rowCacheSize-1)]
	if e.addr != addr+1 {
		e.ok = t.src.row(pc, addr, topmost, &e.row)
		e.addr = addr + 1
	}
	*r = e.row
	return e.ok
}

// rowAt finds the row a walk uses at frame pc (topmost: frame 0), looked
// up where the walk looks it up (pc-1 in an outer frame under the policy's
// lookup=ra-1); false where the method has no data.
func (t *Tracer) rowAt(pc uint64, topmost bool, r *Row) bool {
	addr := pc
	if !topmost && t.Policy.RAMinus1 {
		addr--
	}
	return t.lookup(pc, addr, topmost, r)
}

// NewTracer prepares a tracer for the program in o.
func NewTracer(o *Object, opt Options) (*Tracer, error) {
	if opt.Policy.MaxDepth == 0 {
		opt.Policy = DefaultPolicy()
	}
	syms, err := ReadSymbols(o)
	if err != nil {
		return nil, err
	}
	t := &Tracer{ABI: o.ABI, Method: opt.Method, Policy: opt.Policy, Syms: syms, load: loader(o.ABI.Order)}
	switch opt.Method {
	case MethodSFrame:
		src, desc, err := newSFrameSource(o, opt.SFrame, opt.SFrameVersion)
		if err != nil {
			return nil, err
		}
		t.src, t.Source = src, desc
	case MethodEHFrame:
		src, desc, err := newCFISource(o)
		if err != nil {
			return nil, err
		}
		t.src, t.Source = src, desc
	case MethodFP:
		if o.ABI.Frame.Name == "" {
			return nil, fmt.Errorf("%s: no frame chain convention for %s", o.Path, o.ABI.Name)
		}
		t.src = &chainSource{abi: o.ABI, syms: syms}
		t.Source = "frame chain: " + o.ABI.Frame.Name
	default:
		return nil, fmt.Errorf("unwind: no method %v", opt.Method)
	}
	if opt.Policy.Gap == GapFP && opt.Method != MethodFP && o.ABI.Frame.Name != "" {
		t.fallback = &chainSource{abi: o.ABI, syms: syms}
	}
	if opt.Method.HasData() {
		t.rows = new(rowCache)
	}
	return t, nil
}

// NewTracerFor builds a tracer from data already at hand (tests, tools):
// an SFrame section laid out at secAddr, for the ABI a.
func NewTracerFor(a *abi.ABI, s *sframe.Section, secAddr uint64, syms *Symbols, p Policy) (*Tracer, error) {
	if p.MaxDepth == 0 {
		p = DefaultPolicy()
	}
	if syms == nil {
		syms = &Symbols{}
	}
	src, err := sframeSourceOf(a, s, secAddr)
	if err != nil {
		return nil, err
	}
	t := &Tracer{ABI: a, Method: MethodSFrame, Policy: p, Syms: syms, load: loader(a.Order), src: src,
		Source: fmt.Sprintf("SFrame V%d (%d FDEs, %d FREs)", s.Version, len(s.FDEs), s.NumFREs())}
	if p.Gap == GapFP && a.Frame.Name != "" {
		t.fallback = &chainSource{abi: a, syms: syms}
	}
	t.rows = new(rowCache)
	return t, nil
}

// NewChainTracer builds a frame-chain tracer for the ABI a.
func NewChainTracer(a *abi.ABI, syms *Symbols, p Policy) *Tracer {
	if p.MaxDepth == 0 {
		p = DefaultPolicy()
	}
	if syms == nil {
		syms = &Symbols{}
	}
	return &Tracer{ABI: a, Method: MethodFP, Policy: p, Syms: syms, load: loader(a.Order),
		src: &chainSource{abi: a, syms: syms}, Source: "frame chain: " + a.Frame.Name}
}

// Walk unwinds the stack of the context (pc, regs) with memory mem into
// w, reusing w's slices.  It never panics on bad memory or data: the walk
// stops and w.Stop says why.
func (t *Tracer) Walk(mem *cpu.Memory, pc uint64, regs Regs, w *Walk) {
	t.walk(mem, pc, regs, w, false)
}

// WalkDetail is Walk that also records every frame's SP, CFA and row in
// w.Frames.
func (t *Tracer) WalkDetail(mem *cpu.Memory, pc uint64, regs Regs, w *Walk) {
	t.walk(mem, pc, regs, w, true)
}

func (t *Tracer) walk(mem *cpu.Memory, pc uint64, regs Regs, w *Walk, detail bool) {
	if t.maps != nil {
		if g := t.maps.MapsGen(); g != t.rowsGen {
			clear(t.rows[:])
			t.rowsGen = g
		}
	}
	w.PCs = w.PCs[:0]
	w.Frames = w.Frames[:0]
	w.Stop = Stop{}
	s := stepper{abi: t.ABI, policy: &t.Policy, mem: mem, regs: regs, load: t.load}
	sp, ok := regs.Reg(int(t.ABI.SP))
	if !ok {
		w.PCs = append(w.PCs, pc)
		w.Stop = Stop{Kind: StopUnsupported, PC: pc, Cause: CauseNoSP}
		return
	}
	fp, fpOK := regs.Reg(int(t.ABI.FP))
	f := frame{pc: pc, sp: sp, fp: fp, fpKnown: fpOK, topmost: true}
	row := &w.row // not a local: the sources' interface calls would move it to the heap
	var next frame
	for i := 0; ; i++ {
		w.PCs = append(w.PCs, f.pc)
		if len(w.PCs) >= t.Policy.MaxDepth {
			w.Stop = Stop{Kind: StopDepth, Frame: i, PC: f.pc}
			if detail {
				w.Frames = append(w.Frames, Frame{PC: f.pc, SP: f.sp})
			}
			return
		}
		if t.Policy.SignalFrames {
			if sf := t.signalFrame(mem, f.pc); sf != nil {
				ok := s.signalStep(sf, &f, &next, &w.Stop)
				if detail {
					w.Frames = append(w.Frames, Frame{PC: f.pc, SP: f.sp, CFA: f.sp, Where: "signal frame"})
				}
				if !ok {
					w.Stop.Frame, w.Stop.PC = i, f.pc
					return
				}
				f = next
				continue
			}
		}
		addr := f.pc
		if !f.topmost && t.Policy.RAMinus1 {
			addr--
		}
		src := t.src
		if !t.lookup(f.pc, addr, f.topmost, row) {
			if t.fallback == nil || !t.fallback.row(f.pc, addr, f.topmost, row) {
				w.Stop = Stop{Kind: StopNoData, Frame: i, PC: f.pc, Cause: CauseNoData, A: addr}
				if detail {
					w.Frames = append(w.Frames, Frame{PC: f.pc, SP: f.sp, RowAt: addr})
				}
				return
			}
			row.Fallback = true
			src = t.fallback
		}
		ok := s.step(&f, row, &next, &w.Stop)
		if detail {
			fr := Frame{PC: f.pc, SP: f.sp, Row: *row, RowOK: true, RowAt: addr, Where: src.where(addr)}
			if ok || w.Stop.Kind == StopZeroRA {
				fr.CFA = next.sp - uint64(t.ABI.SPValOffset)
			}
			w.Frames = append(w.Frames, fr)
		}
		if !ok {
			w.Stop.Frame, w.Stop.PC = i, f.pc
			return
		}
		f = next
	}
}

// Callchain unwinds the machine's current context (the instruction about
// to execute) and appends the frames' pcs to buf: pc first, then the
// return addresses, outermost last.  It reads registers through the core
// (cheap on both cores) and guest memory directly, so it can run from a
// per-instruction observer or at a sampled operation while the core is
// stopped there.
func (t *Tracer) Callchain(m *cpu.Machine, buf []uint64) []uint64 {
	w := &t.scratch
	w.PCs = buf
	t.Walk(m.Mem, m.Core.PC(), CoreRegs(m), w)
	buf, w.PCs = w.PCs, nil
	return buf
}

// CoreRegs returns the live registers of the machine's core: the core
// itself when it reads DWARF registers (arm64, s390x), else a snapshot.
func CoreRegs(m *cpu.Machine) Regs {
	if r, ok := m.Core.(Regs); ok {
		return r
	}
	a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder)
	if err != nil {
		return noRegs{}
	}
	st := &cpu.State{}
	m.Core.State(st)
	return StateRegs{Layout: &a.Regs, State: st}
}

type noRegs struct{}

func (noRegs) Reg(int) (uint64, bool) { return 0, false }

// ---- SFrame ----

type sframeSource struct {
	abi     *abi.ABI
	sec     *sframe.Section
	idx     *sframe.Index
	secAddr uint64
}

func newSFrameSource(o *Object, from SFrameSource, version uint8) (*sframeSource, string, error) {
	if version == 0 {
		version = 3
	}
	if from != SFrameEmit {
		s, addr, ok, err := o.SFrame(".sframe")
		if err != nil {
			return nil, "", err
		}
		if ok {
			if s.Flags&sframe.SFRAME_F_FDE_SORTED == 0 {
				s.Sort() // ld sorts; gas output is searched after sorting it here
			}
			src, err := sframeSourceOf(o.ABI, s, addr)
			return src, fmt.Sprintf("the program's .sframe (V%d, %d FDEs, %d FREs)", s.Version, len(s.FDEs), s.NumFREs()), err
		}
		if from == SFrameSection {
			return nil, "", fmt.Errorf("%s: no .sframe section", o.Path)
		}
	}
	e, err := o.EmitSFrame(version, 0)
	if err != nil {
		return nil, "", err
	}
	src, err := sframeSourceOf(o.ABI, e.Section, e.Addr)
	desc := fmt.Sprintf("SFrame V%d emitted from .eh_frame (%d FDEs, %d FREs", version, len(e.Section.FDEs), e.Section.NumFREs())
	if n := len(e.Warnings); n > 0 {
		desc += fmt.Sprintf("; %d functions dropped", n)
	}
	return src, desc + ")", err
}

func sframeSourceOf(a *abi.ABI, s *sframe.Section, secAddr uint64) (*sframeSource, error) {
	idx, err := sframe.NewIndex(s)
	if err != nil {
		return nil, err
	}
	return &sframeSource{abi: a, sec: s, idx: idx, secAddr: secAddr}, nil
}

func (x *sframeSource) row(pc, addr uint64, topmost bool, r *Row) bool {
	_, fre, err := x.idx.Find(int64(addr - x.secAddr))
	if err != nil {
		return false
	}
	*r = Row{}
	if fre.RAUndefined {
		r.Outermost = true
		return true
	}
	r.Mangled = fre.MangledRA
	c := fre.CFA
	switch c.Kind {
	case sframe.RuleReg:
		r.CFA = CFARule{Reg: c.Reg, Off: c.Off, Deref: c.Deref}
	default: // a FLEX CFA relative to itself: not meaningful
		r.CFA = CFARule{Unsupported: true}
	}
	r.RA = x.rule(fre.RA)
	if r.RA.Kind == RuleSame && x.sec.FixedRA != 0 {
		r.RA = Rule{Kind: RuleAtCFA, Off: int64(x.sec.FixedRA)}
	}
	r.FP = x.rule(fre.FP)
	return true
}

// rule maps an SFrame RA/FP rule to the tracer's, as the kernel reads
// them: no word or padding = unchanged; a CFA-based slot; a register
// (topmost only); a control word 0 with offset 0 = unchanged; CFA+N
// without a dereference is not implemented (as in the kernel).
func (x *sframeSource) rule(s sframe.Rule) Rule {
	switch s.Kind {
	case sframe.RuleNone, sframe.RulePadding:
		return Rule{Kind: RuleSame}
	case sframe.RuleCFA:
		switch {
		case s.Deref:
			return Rule{Kind: RuleAtCFA, Off: s.Off}
		case s.Off == 0:
			return Rule{Kind: RuleSame}
		}
		return Rule{Kind: RuleUnsupported, Off: s.Off}
	}
	if s.Deref {
		return Rule{Kind: RuleAtReg, Reg: s.Reg, Off: s.Off}
	}
	return Rule{Kind: RuleInReg, Reg: s.Reg, Off: s.Off}
}

func (x *sframeSource) where(addr uint64) string {
	fde, fre, err := x.idx.Find(int64(addr - x.secAddr))
	if err != nil {
		return err.Error()
	}
	start := uint64(fde.Start) + x.secAddr
	return fmt.Sprintf("SFrame FDE pc %#x size %d, FRE %#x: %s", start, fde.Size, start+uint64(fre.Start), fre)
}

// ---- DWARF CFI ----

type cfiRow struct {
	lo, hi uint64
	fde    uint64 // the FDE's start, for reports
	row    Row
	text   string
}

type cfiSource struct {
	starts []uint64
	rows   []cfiRow
}

func newCFISource(o *Object) (*cfiSource, string, error) {
	sec, err := o.CFI()
	if err != nil {
		return nil, "", err
	}
	if sec == nil {
		return nil, "", fmt.Errorf("%s: no .eh_frame or .debug_frame section", o.Path)
	}
	x, skipped := cfiSourceOf(o.ABI, sec)
	desc := fmt.Sprintf("%s (%d FDEs, %d rows", sec.Kind, len(sec.FDEs), len(x.rows))
	if skipped > 0 {
		desc += fmt.Sprintf("; %d FDEs unreadable", skipped)
	}
	return x, desc + ")", nil
}

func cfiSourceOf(a *abi.ABI, sec *cfi.Section) (*cfiSource, int) {
	x := &cfiSource{}
	skipped := 0
	for _, f := range sec.FDEs {
		rows, err := sec.Rows(f)
		if err != nil {
			skipped++
			continue
		}
		for i := range rows {
			cr := &rows[i]
			x.rows = append(x.rows, cfiRow{lo: cr.Loc, hi: cr.End, fde: f.PCBegin, row: cfiToRow(a, f.CIE, cr), text: cfiRowText(cr)})
		}
	}
	sort.SliceStable(x.rows, func(i, j int) bool { return x.rows[i].lo < x.rows[j].lo })
	x.starts = make([]uint64, len(x.rows))
	for i := range x.rows {
		x.starts[i] = x.rows[i].lo
	}
	return x, skipped
}

// cfiToRow reads a CFI row the way a DWARF unwinder does for the three
// values the tracer follows (CFA, RA column, FP); SP is CFA +
// SPValOffset as everywhere.
func cfiToRow(a *abi.ABI, c *cfi.CIE, cr *cfi.Row) Row {
	var r Row
	if cr.CFA.Expr != nil {
		r.CFA = CFARule{Unsupported: true}
	} else {
		r.CFA = CFARule{Reg: cr.CFA.Reg, Off: cr.CFA.Off}
	}
	r.Mangled = cr.RASigned
	ra := cr.Rule(c.RAColumn)
	switch ra.Kind {
	case cfi.RuleUndefined:
		r.Outermost = true
	case cfi.RuleUnspecified, cfi.RuleSameValue:
		r.RA = Rule{Kind: RuleSame}
		if c.RAColumn != a.RA {
			r.RA = Rule{Kind: RuleInReg, Reg: c.RAColumn}
		}
	default:
		r.RA = cfiRule(ra)
	}
	fp := cr.Rule(a.FP)
	switch fp.Kind {
	case cfi.RuleUnspecified, cfi.RuleSameValue:
		r.FP = Rule{Kind: RuleSame}
	case cfi.RuleUndefined:
		r.FP = Rule{Kind: RuleUndefined}
	default:
		r.FP = cfiRule(fp)
	}
	return r
}

func cfiRule(r cfi.Rule) Rule {
	switch r.Kind {
	case cfi.RuleOffset:
		return Rule{Kind: RuleAtCFA, Off: r.Off}
	case cfi.RuleValOffset:
		return Rule{Kind: RuleValCFA, Off: r.Off}
	case cfi.RuleRegister:
		return Rule{Kind: RuleInReg, Reg: r.Reg}
	}
	return Rule{Kind: RuleUnsupported}
}

func cfiRowText(cr *cfi.Row) string {
	s := fmt.Sprintf("CFA=r%d%+d", cr.CFA.Reg, cr.CFA.Off)
	if cr.CFA.Expr != nil {
		s = "CFA=expr"
	}
	for _, r := range cr.Regs {
		switch r.Kind {
		case cfi.RuleOffset:
			s += fmt.Sprintf(" r%d=*(cfa%+d)", r.Reg, r.Off)
		case cfi.RuleValOffset:
			s += fmt.Sprintf(" r%d=cfa%+d", r.Reg, r.Off)
		case cfi.RuleRegister:
			s += fmt.Sprintf(" r%d=r%d", r.Reg, r.Rule.Reg)
		default:
			s += fmt.Sprintf(" r%d=%s", r.Reg, r.Kind)
		}
	}
	if cr.RASigned {
		s += " RA-signed"
	}
	return s
}

func (x *cfiSource) find(addr uint64) *cfiRow {
	i := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > addr }) - 1
	if i < 0 || addr >= x.rows[i].hi {
		return nil
	}
	return &x.rows[i]
}

func (x *cfiSource) row(pc, addr uint64, topmost bool, r *Row) bool {
	cr := x.find(addr)
	if cr == nil {
		return false
	}
	*r = cr.row
	return true
}

func (x *cfiSource) where(addr uint64) string {
	cr := x.find(addr)
	if cr == nil {
		return fmt.Sprintf("no CFI row for %#x", addr)
	}
	return fmt.Sprintf("CFI FDE pc %#x, row %#x-%#x: %s", cr.fde, cr.lo, cr.hi, cr.text)
}

// ---- frame chain ----

type chainSource struct {
	abi   *abi.ABI
	syms  *Symbols
	entry bool // the last row was the function-entry one (for where)
}

func (x *chainSource) row(pc, addr uint64, topmost bool, r *Row) bool {
	c := &x.abi.Frame
	x.entry = topmost && x.syms.IsStart(pc)
	if x.entry {
		// At a function's first instruction the callee has not built
		// its record yet (the kernel's unwind_user_at_function_start).
		*r = Row{CFA: CFARule{Reg: x.abi.SP, Off: c.EntryCFA}}
		return true
	}
	*r = Row{CFA: CFARule{Reg: c.Base, Off: c.Off, Deref: c.Deref, Add: c.Add},
		RA: Rule{Kind: RuleAtCFA, Off: c.RAOff}, Mangled: x.abi.PAuth}
	if c.FPSaved {
		r.FP = Rule{Kind: RuleAtCFA, Off: c.FPOff}
	} else {
		r.FP = Rule{Kind: RuleUndefined}
	}
	return true
}

func (x *chainSource) where(addr uint64) string {
	if x.entry {
		return "function entry: no " + x.abi.Frame.Name + " record yet, RA in " + regName(x.abi, x.abi.RA)
	}
	return x.abi.Frame.Name + " record"
}

// ---- symbols ----

// Symbols are a program's function symbols, for names in reports and the
// frame chain's function-entry rule.
type Symbols struct {
	syms elfsym.Table
}

// ReadSymbols reads the function symbols of o by sim/elfsym's rule (a
// stripped file's from its separate debug file when there is one, else
// from .dynsym: a stripped shared object keeps the functions it
// exports). A file without symbols, or with a corrupt table, gives none:
// the walk goes on and names are addresses.
func ReadSymbols(o *Object) (*Symbols, error) {
	t, err := elfsym.ReadFile(o.ELF, o.Path)
	if err != nil {
		return &Symbols{}, nil
	}
	return &Symbols{syms: t}, nil
}

// Rebased returns the symbols moved by bias (a PIE's load address).
func (s *Symbols) Rebased(bias uint64) *Symbols {
	if s == nil || bias == 0 {
		return s
	}
	return &Symbols{syms: s.syms.Rebased(bias)}
}

// NewSymbols indexes function symbols whose sizes are final.
func NewSymbols(s []cpu.Symbol) *Symbols {
	return &Symbols{syms: elfsym.New(s)}
}

func (s *Symbols) lookup(pc uint64) *cpu.Symbol {
	if s == nil {
		return nil
	}
	f, _ := s.syms.Lookup(pc)
	return f
}

// Name is "func+0xoff" for pc, or "?" outside every function.
func (s *Symbols) Name(pc uint64) string {
	f := s.lookup(pc)
	if f == nil {
		return "?"
	}
	if pc == f.Addr {
		return f.Name
	}
	return fmt.Sprintf("%s+%#x", f.Name, pc-f.Addr)
}

// Func returns the function containing pc ("" if none) and its start.
func (s *Symbols) Func(pc uint64) (string, uint64) {
	f := s.lookup(pc)
	if f == nil {
		return "", 0
	}
	return f.Name, f.Addr
}

// Addr returns the address of the named function.
func (s *Symbols) Addr(name string) (uint64, bool) {
	if s == nil {
		return 0, false
	}
	return s.syms.Addr(name)
}

// IsStart reports whether pc is a function's first instruction.
func (s *Symbols) IsStart(pc uint64) bool {
	f := s.lookup(pc)
	return f != nil && f.Addr == pc
}
