package cfi

import (
	"fmt"
	"sort"
)

// RuleKind says how to recover a register of the caller.
type RuleKind uint8

const (
	RuleUnspecified   RuleKind = iota // no rule (ABI default: usually same value)
	RuleUndefined                     // DW_CFA_undefined: cannot be recovered
	RuleSameValue                     // DW_CFA_same_value: unchanged
	RuleOffset                        // saved at CFA + Off
	RuleValOffset                     // the value is CFA + Off
	RuleRegister                      // held in register Reg
	RuleExpression                    // saved at the address Expr computes
	RuleValExpression                 // the value Expr computes
)

var ruleNames = [...]string{"unspecified", "undefined", "same value", "offset", "val_offset", "register", "expression", "val_expression"}

func (k RuleKind) String() string {
	if int(k) < len(ruleNames) {
		return ruleNames[k]
	}
	return fmt.Sprintf("rule(%d)", k)
}

// Rule is the recovery rule of one register.
type Rule struct {
	Kind RuleKind
	Reg  uint32
	Off  int64
	Expr []byte
}

// RegRule is a rule bound to its register.
type RegRule struct {
	Reg uint32
	Rule
}

// CFARule defines the canonical frame address: Reg + Off, or the value of
// Expr when Expr is not nil.
type CFARule struct {
	Reg  uint32
	Off  int64
	Expr []byte
}

// Row is one line of the table: the rules in force for pcs in [Loc, End).
type Row struct {
	Loc, End uint64
	CFA      CFARule
	Regs     []RegRule // sorted by register; only registers with a rule
	ArgsSize uint64    // DW_CFA_GNU_args_size
	// RASigned is true when DW_CFA_AARCH64_negate_ra_state has been seen
	// an odd number of times: the saved return address carries a PAC.
	RASigned bool
}

// Rule returns the rule of register reg (RuleUnspecified if none).
func (r *Row) Rule(reg uint32) Rule {
	i := sort.Search(len(r.Regs), func(i int) bool { return r.Regs[i].Reg >= reg })
	if i < len(r.Regs) && r.Regs[i].Reg == reg {
		return r.Regs[i].Rule
	}
	return Rule{}
}

type state struct {
	cfa      CFARule
	regs     []RegRule
	argsSize uint64
	raSigned bool
}

func (st *state) clone() state {
	c := *st
	c.regs = append([]RegRule(nil), st.regs...)
	return c
}

func (st *state) set(reg uint32, r Rule) {
	i := sort.Search(len(st.regs), func(i int) bool { return st.regs[i].Reg >= reg })
	if i < len(st.regs) && st.regs[i].Reg == reg {
		if r.Kind == RuleUnspecified {
			st.regs = append(st.regs[:i], st.regs[i+1:]...)
			return
		}
		st.regs[i].Rule = r
		return
	}
	if r.Kind == RuleUnspecified {
		return
	}
	st.regs = append(st.regs, RegRule{})
	copy(st.regs[i+1:], st.regs[i:])
	st.regs[i] = RegRule{Reg: reg, Rule: r}
}

func (st *state) get(reg uint32) Rule {
	i := sort.Search(len(st.regs), func(i int) bool { return st.regs[i].Reg >= reg })
	if i < len(st.regs) && st.regs[i].Reg == reg {
		return st.regs[i].Rule
	}
	return Rule{}
}

// Rows executes the CIE's initial instructions and then the FDE's and
// returns the resulting table, one row per distinct location.
func (s *Section) Rows(f *FDE) ([]Row, error) {
	cieInsns, err := s.CIEInsns(f.CIE)
	if err != nil {
		return nil, err
	}
	fdeInsns, err := s.FDEInsns(f)
	if err != nil {
		return nil, err
	}
	fail := func(in Insn, format string, args ...any) error {
		return &Error{Section: s.Kind.String(), Offset: in.Pos, Field: in.Op.String(), Msg: fmt.Sprintf(format, args...)}
	}
	var st state
	var initial state
	var stack []state
	loc := f.PCBegin
	var rows []Row
	emit := func(next uint64) {
		if next == loc {
			return
		}
		c := st.clone()
		rows = append(rows, Row{Loc: loc, End: next, CFA: c.cfa, Regs: c.regs, ArgsSize: c.argsSize, RASigned: c.raSigned})
	}
	exec := func(in Insn, inCIE bool) error {
		switch in.Op {
		case DW_CFA_nop:
		case DW_CFA_advance_loc, DW_CFA_advance_loc1, DW_CFA_advance_loc2, DW_CFA_advance_loc4, DW_CFA_MIPS_advance_loc8, DW_CFA_set_loc:
			if inCIE {
				return fail(in, "location change in a CIE's initial instructions")
			}
			next := loc + uint64(in.Off)
			if in.Op == DW_CFA_set_loc {
				if in.Addr < loc {
					return fail(in, "moves the location back from %#x to %#x", loc, in.Addr)
				}
				next = in.Addr
			}
			emit(next)
			loc = next
		case DW_CFA_def_cfa, DW_CFA_def_cfa_sf:
			st.cfa = CFARule{Reg: in.Reg, Off: in.Off}
		case DW_CFA_def_cfa_register:
			if st.cfa.Expr != nil {
				return fail(in, "CFA is defined by an expression")
			}
			st.cfa.Reg = in.Reg
		case DW_CFA_def_cfa_offset, DW_CFA_def_cfa_offset_sf:
			if st.cfa.Expr != nil {
				return fail(in, "CFA is defined by an expression")
			}
			st.cfa.Off = in.Off
		case DW_CFA_def_cfa_expression:
			st.cfa = CFARule{Expr: in.Expr}
		case DW_CFA_undefined:
			st.set(in.Reg, Rule{Kind: RuleUndefined})
		case DW_CFA_same_value:
			st.set(in.Reg, Rule{Kind: RuleSameValue})
		case DW_CFA_offset, DW_CFA_offset_extended, DW_CFA_offset_extended_sf, DW_CFA_GNU_negative_offset_extended:
			st.set(in.Reg, Rule{Kind: RuleOffset, Off: in.Off})
		case DW_CFA_val_offset, DW_CFA_val_offset_sf:
			st.set(in.Reg, Rule{Kind: RuleValOffset, Off: in.Off})
		case DW_CFA_register:
			st.set(in.Reg, Rule{Kind: RuleRegister, Reg: in.Reg2})
		case DW_CFA_expression:
			st.set(in.Reg, Rule{Kind: RuleExpression, Expr: in.Expr})
		case DW_CFA_val_expression:
			st.set(in.Reg, Rule{Kind: RuleValExpression, Expr: in.Expr})
		case DW_CFA_restore, DW_CFA_restore_extended:
			if inCIE {
				return fail(in, "restore in a CIE's initial instructions")
			}
			st.set(in.Reg, initial.get(in.Reg))
		case DW_CFA_remember_state:
			stack = append(stack, st.clone())
		case DW_CFA_restore_state:
			if len(stack) == 0 {
				return fail(in, "no state remembered")
			}
			// The location is not part of the saved state; args size and
			// the RA signing state are (as libgcc does).
			st = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case DW_CFA_GNU_args_size:
			st.argsSize = uint64(in.Off)
		case DW_CFA_GNU_window_save:
			st.raSigned = !st.raSigned
		case DW_CFA_AARCH64_negate_ra_state_with_pc:
			st.raSigned = !st.raSigned
		default:
			return fail(in, "not supported")
		}
		return nil
	}
	for _, in := range cieInsns {
		if err := exec(in, true); err != nil {
			return nil, err
		}
	}
	initial = st.clone()
	for _, in := range fdeInsns {
		if err := exec(in, false); err != nil {
			return nil, err
		}
	}
	end := f.PCEnd()
	if loc > end {
		return nil, &Error{Section: s.Kind.String(), Offset: f.Offset, Field: "FDE instructions", Msg: fmt.Sprintf("location %#x is past the function end %#x", loc, end)}
	}
	if loc < end || len(rows) == 0 {
		c := st.clone()
		rows = append(rows, Row{Loc: loc, End: end, CFA: c.cfa, Regs: c.regs, ArgsSize: c.argsSize, RASigned: c.raSigned})
	}
	return rows, nil
}
