package unwind

import (
	"encoding/binary"
	"fmt"
	"strings"

	"simrun/sim/cpu"
	"simrun/sim/unwind/abi"
)

// The stack tracer.  Every method (SFrame, .eh_frame, frame pointer /
// back chain) reduces what it knows about a pc to one Row, and one
// function (step) applies a Row to the current frame with the rules of the
// SFrame format specification's unwinding appendix (binutils
// libsframe/doc/sframe-spec.texi) as the Linux kernel's SFrame user
// unwinder applies them (the unwind_user SFrame patch series:
// kernel/unwind/sframe.c and user.c) — as relaxed or tightened by a
// Policy.  The architecture enters only
// as data: the abi.ABI's DWARF numbers, CFA and SP offsets, PAC mask and
// frame record layout.
//
// One step, from frame (pc, sp, fp, topmost):
//
//	row  = lookup(pc, or pc-1 when not topmost and the policy says ra-1)
//	CFA  = value(row.CFA)            SP/FP: the frame's; other registers:
//	                                 topmost only (unless policy ignores)
//	SP'  = CFA + abi.SPValOffset     must be > sp (>= in the topmost frame),
//	                                 8-byte aligned
//	RA   = value(row.RA)             "same": the RA register, topmost only;
//	                                 stripped when row.Mangled (aarch64 PAC)
//	FP'  = value(row.FP)             "same": unchanged
//	next frame = (RA, SP', FP', false)

// Regs gives the registers of the interrupted context by DWARF number.
// The arm64 and s390x cores (cpu.Core) implement it; StateRegs adapts a
// cpu.State.
type Regs interface {
	Reg(dwarf int) (uint64, bool)
}

// StateRegs reads DWARF registers out of a cpu.State snapshot.
type StateRegs struct {
	Layout *abi.RegLayout
	State  *cpu.State
}

// Reg implements Regs.
func (r StateRegs) Reg(n int) (uint64, bool) {
	i, vec, ok := r.Layout.Locate(n)
	switch {
	case !ok:
		return 0, false
	case !vec:
		if i >= len(r.State.GPR) {
			return 0, false
		}
		return r.State.GPR[i], true
	case i >= len(r.State.Vec):
		return 0, false
	case r.Layout.FPRHigh:
		return r.State.Vec[i][0], true
	}
	return r.State.Vec[i][1], true
}

// RuleKind says how the caller's RA or FP is recovered.
type RuleKind uint8

const (
	// RuleSame: unchanged.  For RA: still in the RA register (x30, r14),
	// which only the topmost frame can use; for FP: the frame's FP.
	RuleSame RuleKind = iota
	// RuleUndefined: cannot be recovered (FP unknown from here on).
	RuleUndefined
	// RuleAtCFA: saved in the stack slot at CFA+Off.
	RuleAtCFA
	// RuleValCFA: the value is CFA+Off (DWARF val_offset).
	RuleValCFA
	// RuleInReg: the value of register Reg plus Off; topmost only.
	RuleInReg
	// RuleAtReg: saved at Reg+Off; topmost only.
	RuleAtReg
	// RuleUnsupported: a DWARF expression (not evaluated).
	RuleUnsupported
)

// Rule recovers RA or FP.
type Rule struct {
	Kind RuleKind
	Reg  uint32
	Off  int64
}

func (r Rule) String() string {
	switch r.Kind {
	case RuleSame:
		return "same"
	case RuleUndefined:
		return "undefined"
	case RuleAtCFA:
		return fmt.Sprintf("*(cfa%+d)", r.Off)
	case RuleValCFA:
		return fmt.Sprintf("cfa%+d", r.Off)
	case RuleInReg:
		return fmt.Sprintf("r%d%+d", r.Reg, r.Off)
	case RuleAtReg:
		return fmt.Sprintf("*(r%d%+d)", r.Reg, r.Off)
	}
	return "expression"
}

// CFARule computes the CFA: (Deref ? *(Reg+Off) : Reg+Off) + Add.
type CFARule struct {
	Reg         uint32
	Off         int64
	Deref       bool
	Add         int64
	Unsupported bool // a DWARF expression
}

// Row is what a method knows about one pc.
type Row struct {
	CFA    CFARule
	RA, FP Rule
	// Mangled: the recovered RA carries a pointer authentication code.
	Mangled bool
	// Outermost: the return address is undefined; the walk ends here.
	Outermost bool
	// Fallback: the row came from the frame chain because the method had
	// no data for the pc (Policy.Gap == GapFP).
	Fallback bool
}

// Format renders the row with the ABI's register names.
func (r *Row) Format(a *abi.ABI) string {
	if r.Outermost {
		return "RA undefined (outermost frame)"
	}
	reg := func(n uint32) string { return regName(a, n) }
	var cfa string
	switch {
	case r.CFA.Unsupported:
		cfa = "expression"
	case r.CFA.Deref:
		cfa = fmt.Sprintf("*(%s%+d)", reg(r.CFA.Reg), r.CFA.Off)
	default:
		cfa = fmt.Sprintf("%s%+d", reg(r.CFA.Reg), r.CFA.Off)
	}
	if r.CFA.Add != 0 {
		cfa += fmt.Sprintf("%+d", r.CFA.Add)
	}
	rule := func(x Rule, same string) string {
		switch x.Kind {
		case RuleSame:
			return same
		case RuleInReg:
			return fmt.Sprintf("%s%+d", reg(x.Reg), x.Off)
		case RuleAtReg:
			return fmt.Sprintf("*(%s%+d)", reg(x.Reg), x.Off)
		}
		return x.String()
	}
	s := fmt.Sprintf("CFA=%s RA=%s FP=%s", cfa, rule(r.RA, reg(a.RA)), rule(r.FP, "same"))
	if r.Mangled {
		s += " (RA signed)"
	}
	if r.Fallback {
		s += " (" + a.Frame.Name + " fallback)"
	}
	return s
}

// regName names a DWARF register of the ABI: sp, fp, the ABI's usual
// spelling for the rest (x30, r14, f0, v8).
func regName(a *abi.ABI, n uint32) string {
	switch {
	case n == a.SP:
		return "sp"
	case n == a.FP:
		return "fp"
	}
	switch a.Name {
	case "aarch64", "aarch64_be":
		switch {
		case n <= 30:
			return fmt.Sprintf("x%d", n)
		case n >= 64 && n < 96:
			return fmt.Sprintf("v%d", n-64)
		}
	case "s390x":
		switch {
		case n < 16:
			return fmt.Sprintf("r%d", n)
		case n < 32:
			return fmt.Sprintf("f%d", a.Regs.FPR[n-16])
		}
	}
	return fmt.Sprintf("r%d", n)
}

// StopKind says why a walk ended.
type StopKind uint8

const (
	StopNone StopKind = iota
	// The end of the chain: an RA-undefined row (the outermost frame) or
	// a return address of 0.
	StopOutermost
	StopZeroRA
	// No data: the pc lies outside every FDE (a gap), or the method does
	// not apply.
	StopNoData
	// A rule that only the topmost frame may use (register-held RA or
	// FP, RA still in the link register, CFA from a register other than
	// SP/FP) met in an outer frame.
	StopTopmostOnly
	// A rule the tracer does not evaluate (DWARF expressions, RA = CFA+N).
	StopUnsupported
	// The frame is bad: an unreadable stack slot, a stack pointer that
	// does not move up, a misaligned one, FP below SP, an unknown FP
	// needed for the CFA.
	StopBadFrame
	// The depth limit (Policy.MaxDepth) was reached.
	StopDepth
)

var stopNames = [...]string{"", "outermost frame", "return address 0", "no unwind data",
	"topmost-only rule in an outer frame", "unsupported rule", "bad frame", "depth limit"}

func (k StopKind) String() string {
	if int(k) < len(stopNames) {
		return stopNames[k]
	}
	return fmt.Sprintf("stop(%d)", k)
}

// End reports whether the stop claims that the chain is complete.
func (k StopKind) End() bool { return k == StopOutermost || k == StopZeroRA }

// Declined reports whether the method stopped because it had nothing it
// may use (no data, topmost-only rule, unsupported rule): its frames up
// to there make no claim about the rest.
func (k StopKind) Declined() bool {
	return k == StopNoData || k == StopTopmostOnly || k == StopUnsupported
}

// Stop is why and where a walk ended.  It is built without allocating
// (walks run at every instruction); String formats the details.
type Stop struct {
	Kind  StopKind
	Frame int    // index of the frame whose step failed
	PC    uint64 // that frame's pc
	Cause Cause
	What  What   // which value the cause concerns
	Reg   uint32 // the register of CauseTopmostReg, CauseNoReg
	A, B  uint64 // addresses or values of the cause
}

// Cause details a Stop.
type Cause uint8

const (
	CauseNone       Cause = iota
	CauseNoData           // A = the address looked up
	CauseRead             // cannot read the What slot at A
	CauseFPUnknown        // What needs FP, which is unknown
	CauseTopmostReg       // What is in register Reg, outer frame
	CauseNoReg            // the core does not expose register Reg
	CauseExpression       // What is a DWARF expression / unsupported rule
	CauseFPBelowSP        // FP A below SP B
	CauseSPNotAbove       // caller's SP A not above SP B
	CauseSPAlign          // caller's SP A misaligned
	CauseNoSP             // no stack pointer in the context
)

// What names the value a cause concerns.
type What uint8

const (
	WhatCFA What = iota
	WhatRA
	WhatFP
)

func (w What) String() string {
	return [...]string{"CFA", "RA", "FP"}[w]
}

// Why describes the cause in words.
func (s Stop) Why(a *abi.ABI) string {
	switch s.Cause {
	case CauseNoData:
		return fmt.Sprintf("no unwind data for %#x", s.A)
	case CauseRead:
		return fmt.Sprintf("cannot read the %s slot at %#x", s.What, s.A)
	case CauseFPUnknown:
		return fmt.Sprintf("%s needs FP, which is unknown here", s.What)
	case CauseTopmostReg:
		name := fmt.Sprintf("register %d", s.Reg)
		if a != nil {
			name = regName(a, s.Reg)
		}
		return fmt.Sprintf("%s in %s, usable in the topmost frame only", s.What, name)
	case CauseNoReg:
		return fmt.Sprintf("%s in register %d, which the core does not expose", s.What, s.Reg)
	case CauseExpression:
		return fmt.Sprintf("the %s rule is not supported (DWARF expression or CFA+offset value)", s.What)
	case CauseFPBelowSP:
		return fmt.Sprintf("FP %#x is below SP %#x", s.A, s.B)
	case CauseSPNotAbove:
		return fmt.Sprintf("caller's SP %#x is not above SP %#x", s.A, s.B)
	case CauseSPAlign:
		return fmt.Sprintf("caller's SP %#x is not 8-byte aligned", s.A)
	case CauseNoSP:
		return "no stack pointer"
	}
	return ""
}

// Format is the stop in words, registers named by a (may be nil).
func (s Stop) Format(a *abi.ABI) string {
	if why := s.Why(a); why != "" {
		return fmt.Sprintf("%s at frame %d (pc %#x): %s", s.Kind, s.Frame, s.PC, why)
	}
	return fmt.Sprintf("%s at frame %d (pc %#x)", s.Kind, s.Frame, s.PC)
}

func (s Stop) String() string { return s.Format(nil) }

// frame is the walker's state.
type frame struct {
	pc, sp, fp uint64
	fpKnown    bool
	topmost    bool
}

// stepper holds what step needs besides the frame.
type stepper struct {
	abi    *abi.ABI
	policy *Policy
	mem    *cpu.Memory
	regs   Regs
	load   func(m *cpu.Memory, addr uint64) (uint64, bool)
}

func loader(order binary.ByteOrder) func(m *cpu.Memory, addr uint64) (uint64, bool) {
	if order == binary.BigEndian {
		return (*cpu.Memory).Load64BE
	}
	return (*cpu.Memory).Load64LE
}

// word reads the 8-byte stack slot at addr.
func (s *stepper) word(addr uint64, what What, st *Stop) (uint64, bool) {
	v, ok := s.load(s.mem, addr)
	if !ok {
		*st = Stop{Kind: StopBadFrame, Cause: CauseRead, What: what, A: addr}
	}
	return v, ok
}

// reg reads a register of the interrupted context, allowed only in the
// topmost frame unless the policy ignores that rule.
func (s *stepper) reg(f *frame, n uint32, what What, st *Stop) (uint64, bool) {
	switch n {
	case s.abi.SP:
		return f.sp, true
	case s.abi.FP:
		if !f.fpKnown {
			*st = Stop{Kind: StopBadFrame, Cause: CauseFPUnknown, What: what}
			return 0, false
		}
		return f.fp, true
	}
	if !f.topmost && !s.policy.IgnoreTopmost {
		*st = Stop{Kind: StopTopmostOnly, Cause: CauseTopmostReg, What: what, Reg: n}
		return 0, false
	}
	v, ok := s.regs.Reg(int(n))
	if !ok {
		*st = Stop{Kind: StopUnsupported, Cause: CauseNoReg, What: what, Reg: n}
	}
	return v, ok
}

// value applies an RA or FP rule.
func (s *stepper) value(f *frame, r Rule, cfa uint64, what What, st *Stop) (uint64, bool) {
	switch r.Kind {
	case RuleAtCFA:
		return s.word(cfa+uint64(r.Off), what, st)
	case RuleValCFA:
		return cfa + uint64(r.Off), true
	case RuleInReg:
		v, ok := s.reg(f, r.Reg, what, st)
		return v + uint64(r.Off), ok
	case RuleAtReg:
		v, ok := s.reg(f, r.Reg, what, st)
		if !ok {
			return 0, false
		}
		return s.word(v+uint64(r.Off), what, st)
	}
	*st = Stop{Kind: StopUnsupported, Cause: CauseExpression, What: what}
	return 0, false
}

// step applies row to f, giving the caller's frame; on failure it fills
// st and returns false (st.Kind StopZeroRA comes with the next frame).
func (s *stepper) step(f *frame, row *Row, next *frame, st *Stop) bool {
	if row.Outermost {
		*st = Stop{Kind: StopOutermost}
		return false
	}
	if row.CFA.Unsupported {
		*st = Stop{Kind: StopUnsupported, Cause: CauseExpression, What: WhatCFA}
		return false
	}
	// An outer frame whose row needs the interrupted context's registers
	// (RA not saved yet, RA or FP in a register, CFA from another
	// register) stops here, before anything is computed from them.
	if !f.topmost && !s.policy.IgnoreTopmost {
		switch {
		case row.RA.Kind == RuleSame:
			*st = Stop{Kind: StopTopmostOnly, Cause: CauseTopmostReg, What: WhatRA, Reg: s.abi.RA}
			return false
		case row.RA.Kind == RuleInReg || row.RA.Kind == RuleAtReg:
			*st = Stop{Kind: StopTopmostOnly, Cause: CauseTopmostReg, What: WhatRA, Reg: row.RA.Reg}
			return false
		case row.CFA.Reg != s.abi.SP && row.CFA.Reg != s.abi.FP:
			*st = Stop{Kind: StopTopmostOnly, Cause: CauseTopmostReg, What: WhatCFA, Reg: row.CFA.Reg}
			return false
		case row.FP.Kind == RuleInReg || row.FP.Kind == RuleAtReg:
			*st = Stop{Kind: StopTopmostOnly, Cause: CauseTopmostReg, What: WhatFP, Reg: row.FP.Reg}
			return false
		}
	}
	base, ok := s.reg(f, row.CFA.Reg, WhatCFA, st)
	if !ok {
		return false
	}
	if row.CFA.Reg == s.abi.FP && base < f.sp {
		*st = Stop{Kind: StopBadFrame, Cause: CauseFPBelowSP, A: base, B: f.sp}
		return false
	}
	cfa := base + uint64(row.CFA.Off)
	if row.CFA.Deref {
		if cfa, ok = s.word(cfa, WhatCFA, st); !ok {
			return false
		}
	}
	cfa += uint64(row.CFA.Add)
	sp := cfa + uint64(s.abi.SPValOffset)
	// The stack must move towards the caller: strictly, except that the
	// topmost frame may not have moved SP yet (arm64, s390x: SP at entry
	// equals SP at the call site).  Without the topmost-only rules an
	// unwinder cannot tell, and accepts an unchanged SP in every frame.
	if sp < f.sp || sp == f.sp && !f.topmost && !s.policy.IgnoreTopmost {
		*st = Stop{Kind: StopBadFrame, Cause: CauseSPNotAbove, A: sp, B: f.sp}
		return false
	}
	if sp&7 != 0 {
		*st = Stop{Kind: StopBadFrame, Cause: CauseSPAlign, A: sp}
		return false
	}
	var ra uint64
	switch row.RA.Kind {
	case RuleSame:
		ra, ok = s.reg(f, s.abi.RA, WhatRA, st)
	case RuleUndefined:
		*st = Stop{Kind: StopOutermost}
		ok = false
	default:
		ra, ok = s.value(f, row.RA, cfa, WhatRA, st)
	}
	if !ok {
		return false
	}
	if row.Mangled && !s.policy.KeepPAC {
		ra = s.abi.StripPAC(ra)
	}
	*next = frame{pc: ra, sp: sp, fp: f.fp, fpKnown: f.fpKnown}
	switch row.FP.Kind {
	case RuleSame:
	case RuleUndefined:
		next.fp, next.fpKnown = 0, false
	default:
		if next.fp, ok = s.value(f, row.FP, cfa, WhatFP, st); !ok {
			return false
		}
		next.fpKnown = true
	}
	if ra == 0 {
		*st = Stop{Kind: StopZeroRA}
		return false
	}
	return true
}

// Frame is one frame of a walk in detail.
type Frame struct {
	PC, SP, CFA uint64
	// Row is the rule the method used to step from this frame to the
	// next (none for the last frame); RowAt is the pc it was looked up
	// at and Where names the data (FDE and row).
	Row   Row
	RowOK bool
	RowAt uint64
	Where string
}

// Walk is the result of one stack walk.
type Walk struct {
	PCs  []uint64 // frame 0 is the pc the walk started at
	Stop Stop
	// Frames is filled only by detailed walks (Tracer.WalkDetail).
	Frames []Frame

	row Row // scratch
}

// Text lists the walk's frames, one a line, with symbols.
func (w *Walk) Text(syms *Symbols) string {
	var b strings.Builder
	for i, pc := range w.PCs {
		fmt.Fprintf(&b, "#%-2d %#x %s\n", i, pc, syms.Name(pc))
	}
	fmt.Fprintf(&b, "(%s)\n", w.Stop.Format(nil))
	return b.String()
}

// signalFrame returns the kind of signal frame whose trampoline code is
// at pc (abi.SignalFrame), or nil.
func (t *Tracer) signalFrame(mem *cpu.Memory, pc uint64) *abi.SignalFrame {
	for i := range t.ABI.Signals {
		sf := &t.ABI.Signals[i]
		match := len(sf.Code) > 0
		for j, b := range sf.Code {
			if v, ok := mem.Load8(pc + uint64(j)); !ok || v != b {
				match = false
				break
			}
		}
		if match {
			return sf
		}
	}
	return nil
}

// signalStep steps from a frame at a signal trampoline to the context
// the signal interrupted, saved in the frame at the trampoline's SP: its
// pc, SP and FP, and its registers for the rules only a topmost frame
// may use, which that context is.
func (s *stepper) signalStep(sf *abi.SignalFrame, f, next *frame, st *Stop) bool {
	base := f.sp
	regs := &savedRegs{s: s, sf: sf, base: base}
	pc, ok := s.word(base+uint64(sf.PC), WhatRA, st)
	if !ok {
		return false
	}
	spAt := base + uint64(sf.GPR) + 8*uint64(s.abi.SP)
	if sf.SPAt != 0 {
		spAt = base + uint64(sf.SPAt)
	}
	sp, ok := s.word(spAt, WhatCFA, st)
	if !ok {
		return false
	}
	fp, ok := s.word(base+uint64(sf.GPR)+8*uint64(s.abi.FP), WhatFP, st)
	if !ok {
		return false
	}
	s.regs = regs
	*next = frame{pc: pc, sp: sp, fp: fp, fpKnown: true, topmost: true}
	return true
}

// savedRegs reads the registers of a context saved in a signal frame.
type savedRegs struct {
	s    *stepper
	sf   *abi.SignalFrame
	base uint64
}

// Reg implements Regs.
func (r *savedRegs) Reg(n int) (uint64, bool) {
	i, vec, ok := r.s.abi.Regs.Locate(n)
	switch {
	case !ok:
		return 0, false
	case !vec && i < r.sf.GPRs:
		return r.s.load(r.s.mem, r.base+uint64(r.sf.GPR)+8*uint64(i))
	case !vec && n == int(r.s.abi.SP) && r.sf.SPAt != 0:
		return r.s.load(r.s.mem, r.base+uint64(r.sf.SPAt))
	case vec && r.sf.FPR != 0:
		return r.s.load(r.s.mem, r.base+uint64(r.sf.FPR)+8*uint64(i))
	}
	return 0, false
}
