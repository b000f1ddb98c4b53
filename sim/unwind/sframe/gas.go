package sframe

import (
	"debug/elf"
	"fmt"
	"math"
	"sort"

	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/cfi"
)

// This file translates DWARF CFI into SFrame following GNU as 2.46
// (gas/gen-sframe.c) rule for rule, so that the .eh_frame of a program
// built without --gsframe yields the section gas would have written.
// What gas saw as directives arrives here as call frame instructions:
// the CIE's initial instructions first (they are the FDE's first
// directives in gas), then the FDE's.  Where .eh_frame loses what gas
// knew, the nearest reading is used; see TranslateNotes in doc.go.

// Warning is a function left out of the section, in gas's words.
type Warning struct {
	PC  uint64 // the function's start (the FDE's pc_begin)
	Msg string // the part after "no SFrame FDE emitted; "
}

func (w Warning) String() string { return "no SFrame FDE emitted; " + w.Msg }

// TranslateOptions choose the output.
type TranslateOptions struct {
	ABI     *abi.ABI
	Version uint8 // 2 (binutils 2.45 rules) or 3 (binutils 2.46, the default)
	// SectionAddr is the address the .sframe section will have; FDE
	// starts are function addresses minus SectionAddr.
	SectionAddr uint64
	// Sort orders FDEs by address and sets SFRAME_F_FDE_SORTED, as ld
	// does when it links; gas (Sort false) keeps the input order.
	Sort bool
}

// FromCFI builds an SFrame section from every FDE of a CFI section.
// Functions gas would reject are left out with a Warning; errors are
// malformed CFI.
func FromCFI(sec *cfi.Section, opt TranslateOptions) (*Section, []Warning, error) {
	a := opt.ABI
	if a == nil {
		return nil, nil, fmt.Errorf("sframe: no ABI given")
	}
	if opt.Version == 0 {
		opt.Version = SFRAME_VERSION_3
	}
	if opt.Version != SFRAME_VERSION_2 && opt.Version != SFRAME_VERSION_3 {
		return nil, nil, fmt.Errorf("sframe: cannot emit version %d (2 or 3)", opt.Version)
	}
	out := &Section{
		Version: opt.Version,
		Flags:   SFRAME_F_FDE_FUNC_START_PCREL,
		ABI:     a.SFrameABI(),
		FixedRA: a.FixedRAOffset,
		Order:   a.Order,
	}
	var warns []Warning
	for _, f := range sec.FDEs {
		cieInsns, err := sec.CIEInsns(f.CIE)
		if err != nil {
			return nil, nil, err
		}
		insns, err := sec.FDEInsns(f)
		if err != nil {
			return nil, nil, err
		}
		if f.PCRange > 0xffffffff {
			return nil, nil, fmt.Errorf("%v offset %#x: FDE pc_range: %#x does not fit SFrame's 32-bit function size", sec.Kind, f.Offset, f.PCRange)
		}
		x := xlate{abi: a, version: opt.Version, fde: f}
		fde, msg := x.run(cieInsns, insns)
		if msg != "" {
			warns = append(warns, Warning{PC: f.PCBegin, Msg: msg})
			if !(f.CIE.SignalFrame && opt.Version == SFRAME_VERSION_3) {
				continue
			}
			// gas keeps a signal frame it cannot describe: an FDE
			// without rows, so unwinders know to stop there.
			fde = FDE{Size: uint32(f.PCRange), Signal: true}
		}
		fde.Start = int64(f.PCBegin - opt.SectionAddr)
		if err := Encodable(out, &fde, len(sec.FDEs)); err != nil {
			// Corrupt CFI that the translation let through (gas never
			// sees such input): leave the function out rather than write
			// a section the decoder refuses.
			warns = append(warns, Warning{PC: f.PCBegin, Msg: err.Error()})
			continue
		}
		out.FDEs = append(out.FDEs, fde)
	}
	if opt.Sort {
		sort.SliceStable(out.FDEs, func(i, j int) bool { return out.FDEs[i].Start < out.FDEs[j].Start })
		out.Flags |= SFRAME_F_FDE_SORTED
	}
	return out, warns, nil
}

// row is gas's scratch FRE (struct sframe_row_entry).
type row struct {
	pc       uint64
	cfaReg   uint32
	cfaSet   bool  // a CFA base register is in effect
	cfaOff   int64 // as stored: s390x (offset-160)/8
	cfaDeref bool
	ra, fp   Rule
	mangled  bool
	raUndef  bool
	modified bool // gas: !merge_candidate
}

type xlate struct {
	abi      *abi.ABI
	version  uint8
	fde      *cfi.FDE
	flex     bool
	rows     []row
	cur      *row
	remember []row
	inCIE    bool // translating the CIE's initial instructions
}

func (x *xlate) last() *row {
	if len(x.rows) == 0 {
		return nil
	}
	return &x.rows[len(x.rows)-1]
}

func (x *xlate) scratch() *row {
	if x.cur == nil {
		x.cur = &row{pc: x.fde.PCBegin}
	}
	return x.cur
}

// storeCFA converts a CFA offset to its stored form.
func (x *xlate) storeCFA(off int64) int64 {
	if x.abi.CFAScaled {
		return (off + S390XCFAOffsetAdjustment) / S390XCFAAlignment
	}
	return off
}

func (x *xlate) loadCFA(v int64) int64 {
	if x.abi.CFAScaled {
		return v*S390XCFAAlignment - S390XCFAOffsetAdjustment
	}
	return v
}

func fitsInt32(v int64) bool { return v >= -1<<31 && v <= 1<<31-1 }

// regName is gas's sframe_register_name: SP, FP, RA, or C's "(null)".
func (x *xlate) regName(r uint32) string {
	switch r {
	case x.abi.SP:
		return "SP"
	case x.abi.FP:
		return "FP"
	case x.abi.RA:
		return "RA"
	}
	return "(null)"
}

func (x *xlate) flexOK() bool { return x.version == SFRAME_VERSION_3 && x.abi.FlexFDE }

// run translates one function; msg is gas's warning when it is dropped.
func (x *xlate) run(cieInsns, insns []cfi.Insn) (FDE, string) {
	a := x.abi
	if ra := x.fde.CIE.RAColumn; ra != a.RA {
		return FDE{}, fmt.Sprintf("non-default RA register %d", ra)
	}
	if x.fde.PCRange > math.MaxUint32 {
		return FDE{}, fmt.Sprintf("function of %#x bytes: larger than an SFrame FDE can describe", x.fde.PCRange)
	}
	for k, list := range [][]cfi.Insn{cieInsns, insns} {
		x.inCIE = k == 0
		for i := range list {
			if msg := x.insn(&list[i]); msg != "" {
				return FDE{}, msg
			}
		}
	}
	if x.cur != nil {
		x.rows = append(x.rows, *x.cur)
		x.cur = nil
	}
	if len(x.rows) > 0xffff && x.version == SFRAME_VERSION_3 {
		return FDE{}, "Number of FREs exceeds UINT16_MAX"
	}
	if a.RATracked && !a.FPWithoutRA {
		for _, r := range x.rows {
			if r.ra.Kind != RuleCFA && r.fp.Kind == RuleCFA {
				return FDE{}, "FP without RA on stack"
			}
		}
	}
	f := FDE{
		Size:      uint32(x.fde.PCRange),
		PAuthKeyB: x.fde.CIE.BKey && a.PAuth,
		Signal:    x.fde.CIE.SignalFrame && x.version == SFRAME_VERSION_3,
		Flex:      x.flex,
	}
	for _, r := range x.rows {
		f.FREs = append(f.FREs, x.fre(&r))
	}
	return f, ""
}

func (x *xlate) fre(r *row) FRE {
	fre := FRE{Start: uint32(r.pc - x.fde.PCBegin)}
	if r.raUndef {
		fre.RAUndefined = true
		return fre
	}
	reg := r.cfaReg
	if !r.cfaSet {
		reg = x.abi.SP // gas writes an unset base as SP
	}
	fre.CFA = Rule{Kind: RuleReg, Reg: reg, Off: x.loadCFA(r.cfaOff), Deref: r.cfaDeref}
	fre.RA, fre.FP = r.ra, r.fp
	if fre.FP.Kind != RuleNone && fre.RA.Kind == RuleNone && (x.flex || x.abi.FPWithoutRA) {
		fre.RA = Rule{Kind: RulePadding}
	}
	fre.MangledRA = r.mangled
	return fre
}

func (x *xlate) insn(in *cfi.Insn) string {
	a := x.abi
	switch in.Op {
	case cfi.DW_CFA_advance_loc, cfi.DW_CFA_advance_loc1, cfi.DW_CFA_advance_loc2,
		cfi.DW_CFA_advance_loc4, cfi.DW_CFA_MIPS_advance_loc8, cfi.DW_CFA_set_loc:
		cur := x.fde.PCBegin
		if x.cur != nil {
			cur = x.cur.pc
		}
		pc := cur + uint64(in.Off)
		if in.Op == cfi.DW_CFA_set_loc {
			pc = in.Addr
		}
		if in.Off == 0 && in.Op != cfi.DW_CFA_set_loc {
			return "" // gas emits no advance for a zero delta
		}
		// What gas never writes, but a corrupt .eh_frame may hold (the
		// FREs would be out of order or out of reach).
		switch {
		case x.inCIE:
			return "location change in the CIE's initial instructions"
		case pc < cur:
			return fmt.Sprintf("%s moves the location back from %#x to %#x", in.Op, cur, pc)
		case pc-x.fde.PCBegin > math.MaxUint32:
			return fmt.Sprintf("%s moves the location %#x bytes past the function start", in.Op, pc-x.fde.PCBegin)
		}
		switch {
		case x.cur == nil:
			x.cur = &row{}
		case x.cur.modified:
			x.rows = append(x.rows, *x.cur)
			next := *x.cur
			next.modified = false
			x.cur = &next
		}
		x.cur.pc = pc
	case cfi.DW_CFA_def_cfa, cfi.DW_CFA_def_cfa_sf:
		cur := x.scratch()
		if !fitsInt32(x.storeCFA(in.Off)) {
			return ".cfi_def_cfa with unsupported offset value"
		}
		if in.Reg != a.SP && in.Reg != a.FP {
			if !x.flexOK() || in.Reg > 31 {
				return fmt.Sprintf("non-SP/FP register %d in .cfi_def_cfa", in.Reg)
			}
			x.flex = true
		}
		cur.cfaReg, cur.cfaSet = in.Reg, true
		cur.cfaOff = x.storeCFA(in.Off)
		cur.cfaDeref = false
		cur.modified = true
	case cfi.DW_CFA_def_cfa_register:
		cur := x.scratch()
		if in.Reg != a.SP && in.Reg != a.FP {
			if !x.flexOK() {
				return fmt.Sprintf("non-SP/FP register %d in .cfi_def_cfa_register", in.Reg)
			}
			x.flex = true
		}
		cur.cfaReg, cur.cfaSet = in.Reg, true
		if last := x.last(); last != nil {
			// gas takes the offset of the last row it emitted, not the
			// current one (see doc.go).
			cur.cfaOff = last.cfaOff
		}
		cur.cfaDeref = false
		cur.modified = true
	case cfi.DW_CFA_def_cfa_offset, cfi.DW_CFA_def_cfa_offset_sf:
		cur := x.scratch()
		if !cur.cfaSet || (cur.cfaReg != a.SP && cur.cfaReg != a.FP) {
			return ".cfi_def_cfa_offset without CFA base register in effect"
		}
		if !fitsInt32(x.storeCFA(in.Off)) {
			return ".cfi_def_cfa_offset with unsupported offset value"
		}
		cur.cfaOff = x.storeCFA(in.Off)
		cur.modified = true
	case cfi.DW_CFA_offset, cfi.DW_CFA_offset_extended, cfi.DW_CFA_offset_extended_sf,
		cfi.DW_CFA_GNU_negative_offset_extended:
		cur := x.scratch()
		slot := Rule{Kind: RuleCFA, Off: in.Off, Deref: true}
		switch {
		case in.Reg == a.RA && !a.RATracked:
			if in.Off == int64(a.FixedRAOffset) {
				cur.ra = Rule{} // back at its fixed place
			} else if x.flexOK() {
				x.flex = true
				cur.ra = slot
			} else {
				return fmt.Sprintf("%s register %d in .cfi_offset", x.regName(in.Reg), in.Reg)
			}
			cur.modified = true
		case in.Reg == a.FP:
			cur.fp = slot
			cur.modified = true
		case in.Reg == a.RA:
			cur.ra = slot
			cur.raUndef = false
			cur.modified = true
		}
	case cfi.DW_CFA_val_offset, cfi.DW_CFA_val_offset_sf:
		spDefault := int64(0)
		if a.CFAScaled {
			spDefault = a.SPValOffset
		}
		if in.Reg == a.FP || (a.RATracked && in.Reg == a.RA) || (in.Reg == a.SP && in.Off != spDefault) {
			return fmt.Sprintf(".cfi_val_offset with %s reg %d", x.regName(in.Reg), in.Reg)
		}
	case cfi.DW_CFA_register:
		cur := x.scratch()
		r1 := in.Reg
		if r1 != a.FP && r1 != a.RA && r1 != a.SP {
			return ""
		}
		inReg := Rule{Kind: RuleReg, Reg: in.Reg2}
		switch {
		case r1 == a.SP && a.CFAScaled:
			// s390x: SP saved in a register is implied by the CFA.
		case x.flexOK() && r1 != a.SP:
			x.flex = true
			if r1 == a.FP {
				cur.fp = inReg
			} else {
				cur.ra = inReg
				cur.raUndef = false
			}
			cur.modified = true
		case x.version == SFRAME_VERSION_2 && a.CFAScaled && r1 != a.SP:
			// binutils 2.45: the register number goes in the offset.
			if r1 == a.FP {
				cur.fp = inReg
			} else {
				cur.ra = inReg
				cur.raUndef = false
			}
			cur.modified = true
		default:
			return fmt.Sprintf("%s register %d in .cfi_register", x.regName(r1), r1)
		}
	case cfi.DW_CFA_remember_state:
		if x.cur == nil {
			return ".cfi_remember_state without prior SFrame FRE state"
		}
		x.remember = append(x.remember, *x.cur)
	case cfi.DW_CFA_restore_state:
		if len(x.remember) == 0 {
			return ".cfi_restore_state without .cfi_remember_state"
		}
		cur := x.scratch()
		st := x.remember[len(x.remember)-1]
		x.remember = x.remember[:len(x.remember)-1]
		st.pc = cur.pc
		st.modified = true
		*cur = st
	case cfi.DW_CFA_restore, cfi.DW_CFA_restore_extended:
		cur := x.scratch()
		cie := cur
		if len(x.rows) > 0 {
			cie = &x.rows[0]
		}
		switch {
		case in.Reg == a.FP:
			cur.fp = cie.fp
			cur.modified = true
		case a.RATracked && in.Reg == a.RA:
			cur.ra = cie.ra
			cur.raUndef = cie.raUndef
			cur.modified = true
		}
	case cfi.DW_CFA_undefined:
		cur := x.scratch()
		switch {
		case in.Reg == a.FP || in.Reg == a.SP || (in.Reg == a.RA && x.version == SFRAME_VERSION_2):
			return fmt.Sprintf("%s reg %d in .cfi_undefined", x.regName(in.Reg), in.Reg)
		case in.Reg == a.RA:
			cur.raUndef = true
			cur.modified = true
		}
	case cfi.DW_CFA_same_value:
		cur := x.scratch()
		switch {
		case a.RATracked && in.Reg == a.RA:
			cur.ra = Rule{}
			cur.raUndef = false
			cur.modified = true
		case in.Reg == a.FP:
			cur.fp = Rule{}
			cur.modified = true
		}
	case cfi.DW_CFA_GNU_window_save:
		if !a.PAuth {
			return ".cfi_window_save"
		}
		cur := x.scratch()
		cur.mangled = !cur.mangled
		cur.modified = true
	case cfi.DW_CFA_AARCH64_negate_ra_state_with_pc:
		return ".cfi_negate_ra_state_with_pc"
	case cfi.DW_CFA_nop:
	case cfi.DW_CFA_GNU_args_size:
		cur := x.scratch()
		if in.Off == 0 || (cur.cfaSet && cur.cfaReg == a.FP) {
			return ""
		}
		return escapeWarning(in.Op)
	case cfi.DW_CFA_def_cfa_expression:
		return x.cfaExpression(in)
	case cfi.DW_CFA_expression:
		return x.expression(in)
	default:
		// DW_CFA_val_expression and anything else gas only sees through
		// .cfi_escape.
		return escapeWarning(in.Op)
	}
	return ""
}

func escapeWarning(op cfi.Op) string {
	return fmt.Sprintf(".cfi_escape with op (%#x)", uint8(op))
}

const (
	dwOpBreg6 = 0x76
	dwOpDeref = 0x06
)

// cfaExpression handles DW_CFA_def_cfa_expression as gas handles it in a
// .cfi_escape: only x86-64's DRAP form *(rbp + off) is understood.
func (x *xlate) cfaExpression(in *cfi.Insn) string {
	e := in.Expr
	if len(e) != 3 || x.abi.Machine != x86Machine || !x.flexOK() ||
		e[0] != dwOpBreg6 || e[2] != dwOpDeref || e[1]&0x80 != 0 {
		return escapeWarning(in.Op)
	}
	off, _ := cfi.SLEB128(e[1:2])
	cur := x.scratch()
	x.flex = true
	cur.cfaReg, cur.cfaSet = x.abi.FP, true
	cur.cfaOff = x.storeCFA(off)
	cur.cfaDeref = true
	cur.modified = true
	return ""
}

// expression handles DW_CFA_expression REG, {DW_OP_bregN off} as gas
// handles it in a .cfi_escape.
func (x *xlate) expression(in *cfi.Insn) string {
	a := x.abi
	e := in.Expr
	if in.Reg >= 0x80 || len(e) != 2 || e[1]&0x80 != 0 {
		return escapeWarning(in.Op)
	}
	off, _ := cfi.SLEB128(e[1:2])
	cur := x.scratch()
	if a.Machine == x86Machine && x.flexOK() && in.Reg == a.FP && e[0] == dwOpBreg6 {
		x.flex = true
		cur.fp = Rule{Kind: RuleReg, Reg: a.FP, Off: off, Deref: true}
		cur.modified = true
		return ""
	}
	if in.Reg == a.SP || in.Reg == a.FP || (a.RATracked && in.Reg == a.RA) || (cur.cfaSet && in.Reg == cur.cfaReg) {
		return fmt.Sprintf(".cfi_escape DW_CFA_expression with %s reg %d", x.regName(in.Reg), in.Reg)
	}
	return ""
}

const x86Machine = elf.EM_X86_64
