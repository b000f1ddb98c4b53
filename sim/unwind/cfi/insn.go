package cfi

import "fmt"

// Op is a call frame instruction opcode.  The three packed forms carry
// their operand in the low 6 bits of the byte:
//
//	  7 6 5         0
//	┌────┬───────────┐
//	│ 01 │ delta     │  DW_CFA_advance_loc
//	│ 10 │ register  │  DW_CFA_offset (+ ULEB128 factored offset)
//	│ 11 │ register  │  DW_CFA_restore
//	│ 00 │ opcode    │  everything else
//	└────┴───────────┘
type Op uint8

const (
	DW_CFA_nop                             Op = 0x00
	DW_CFA_set_loc                         Op = 0x01
	DW_CFA_advance_loc1                    Op = 0x02
	DW_CFA_advance_loc2                    Op = 0x03
	DW_CFA_advance_loc4                    Op = 0x04
	DW_CFA_offset_extended                 Op = 0x05
	DW_CFA_restore_extended                Op = 0x06
	DW_CFA_undefined                       Op = 0x07
	DW_CFA_same_value                      Op = 0x08
	DW_CFA_register                        Op = 0x09
	DW_CFA_remember_state                  Op = 0x0a
	DW_CFA_restore_state                   Op = 0x0b
	DW_CFA_def_cfa                         Op = 0x0c
	DW_CFA_def_cfa_register                Op = 0x0d
	DW_CFA_def_cfa_offset                  Op = 0x0e
	DW_CFA_def_cfa_expression              Op = 0x0f
	DW_CFA_expression                      Op = 0x10
	DW_CFA_offset_extended_sf              Op = 0x11
	DW_CFA_def_cfa_sf                      Op = 0x12
	DW_CFA_def_cfa_offset_sf               Op = 0x13
	DW_CFA_val_offset                      Op = 0x14
	DW_CFA_val_offset_sf                   Op = 0x15
	DW_CFA_val_expression                  Op = 0x16
	DW_CFA_MIPS_advance_loc8               Op = 0x1d
	DW_CFA_AARCH64_negate_ra_state_with_pc Op = 0x2c
	DW_CFA_GNU_window_save                 Op = 0x2d // also DW_CFA_AARCH64_negate_ra_state
	DW_CFA_GNU_args_size                   Op = 0x2e
	DW_CFA_GNU_negative_offset_extended    Op = 0x2f
	DW_CFA_advance_loc                     Op = 0x40
	DW_CFA_offset                          Op = 0x80
	DW_CFA_restore                         Op = 0xc0
)

var opNames = map[Op]string{
	DW_CFA_nop: "DW_CFA_nop", DW_CFA_set_loc: "DW_CFA_set_loc",
	DW_CFA_advance_loc1: "DW_CFA_advance_loc1", DW_CFA_advance_loc2: "DW_CFA_advance_loc2",
	DW_CFA_advance_loc4: "DW_CFA_advance_loc4", DW_CFA_offset_extended: "DW_CFA_offset_extended",
	DW_CFA_restore_extended: "DW_CFA_restore_extended", DW_CFA_undefined: "DW_CFA_undefined",
	DW_CFA_same_value: "DW_CFA_same_value", DW_CFA_register: "DW_CFA_register",
	DW_CFA_remember_state: "DW_CFA_remember_state", DW_CFA_restore_state: "DW_CFA_restore_state",
	DW_CFA_def_cfa: "DW_CFA_def_cfa", DW_CFA_def_cfa_register: "DW_CFA_def_cfa_register",
	DW_CFA_def_cfa_offset: "DW_CFA_def_cfa_offset", DW_CFA_def_cfa_expression: "DW_CFA_def_cfa_expression",
	DW_CFA_expression: "DW_CFA_expression", DW_CFA_offset_extended_sf: "DW_CFA_offset_extended_sf",
	DW_CFA_def_cfa_sf: "DW_CFA_def_cfa_sf", DW_CFA_def_cfa_offset_sf: "DW_CFA_def_cfa_offset_sf",
	DW_CFA_val_offset: "DW_CFA_val_offset", DW_CFA_val_offset_sf: "DW_CFA_val_offset_sf",
	DW_CFA_val_expression: "DW_CFA_val_expression", DW_CFA_MIPS_advance_loc8: "DW_CFA_MIPS_advance_loc8",
	DW_CFA_AARCH64_negate_ra_state_with_pc: "DW_CFA_AARCH64_negate_ra_state_with_pc",
	DW_CFA_GNU_window_save:                 "DW_CFA_GNU_window_save",
	DW_CFA_GNU_args_size:                   "DW_CFA_GNU_args_size",
	DW_CFA_GNU_negative_offset_extended:    "DW_CFA_GNU_negative_offset_extended",
	DW_CFA_advance_loc:                     "DW_CFA_advance_loc", DW_CFA_offset: "DW_CFA_offset",
	DW_CFA_restore: "DW_CFA_restore",
}

func (o Op) String() string {
	if n, ok := opNames[o]; ok {
		return n
	}
	return fmt.Sprintf("DW_CFA_%#x", uint8(o))
}

// Insn is one decoded call frame instruction.  Factored operands are
// multiplied out: Off is in bytes.
type Insn struct {
	Pos  int    // section offset of the opcode byte
	Op   Op     // the packed forms are reported as 0x40, 0x80, 0xc0
	Reg  uint32 // register operand
	Reg2 uint32 // DW_CFA_register: the register that holds the value
	Off  int64  // byte offset; for the advance forms the pc delta
	Addr uint64 // DW_CFA_set_loc: the new location
	Expr []byte // DWARF expression of the *_expression forms
}

// IsAdvance reports whether the instruction moves the location.
func (in *Insn) IsAdvance() bool {
	switch in.Op {
	case DW_CFA_advance_loc, DW_CFA_advance_loc1, DW_CFA_advance_loc2, DW_CFA_advance_loc4,
		DW_CFA_MIPS_advance_loc8, DW_CFA_set_loc:
		return true
	}
	return false
}

// CIEInsns decodes the CIE's initial instructions.
func (s *Section) CIEInsns(c *CIE) ([]Insn, error) {
	return s.decode(c.Initial, c.initialPos, c, nil)
}

// FDEInsns decodes the FDE's instructions (without the CIE's).
func (s *Section) FDEInsns(f *FDE) ([]Insn, error) {
	return s.decode(f.Insns, f.insnPos, f.CIE, f)
}

func (s *Section) decode(b []byte, pos int, c *CIE, f *FDE) ([]Insn, error) {
	r := reader{sec: s.Kind.String(), b: s.Data, pos: pos, end: pos + len(b), order: s.Order}
	if pos+len(b) > len(s.Data) || pos < 0 {
		return nil, &Error{Section: r.sec, Offset: pos, Field: "instructions", Msg: "outside the section"}
	}
	var out []Insn
	reg := func(field string) uint32 {
		v := r.uleb(field)
		if v > 0xffff && r.err == nil {
			r.fail(field, "register %d is out of range", v)
		}
		return uint32(v)
	}
	factor := func(v int64) int64 { return v * c.DataAlign }
	for r.pos < r.end && r.err == nil {
		in := Insn{Pos: r.pos}
		b := r.u8("call frame instruction")
		switch b >> 6 {
		case 1:
			in.Op = DW_CFA_advance_loc
			in.Off = int64(uint64(b&0x3f) * c.CodeAlign)
		case 2:
			in.Op = DW_CFA_offset
			in.Reg = uint32(b & 0x3f)
			in.Off = factor(int64(r.uleb("DW_CFA_offset offset")))
		case 3:
			in.Op = DW_CFA_restore
			in.Reg = uint32(b & 0x3f)
		default:
			in.Op = Op(b)
			switch in.Op {
			case DW_CFA_nop, DW_CFA_remember_state, DW_CFA_restore_state,
				DW_CFA_GNU_window_save, DW_CFA_AARCH64_negate_ra_state_with_pc:
			case DW_CFA_set_loc:
				var base uint64
				if f != nil {
					base = f.PCBegin
				}
				enc := c.FDEEncoding
				if s.Kind == DebugFrame {
					enc = PEAbsptr
				}
				in.Addr = s.pointerSized(&r, enc, "DW_CFA_set_loc address", base, int(c.AddrSize))
			case DW_CFA_advance_loc1:
				in.Off = int64(uint64(r.u8("DW_CFA_advance_loc1 delta")) * c.CodeAlign)
			case DW_CFA_advance_loc2:
				in.Off = int64(uint64(r.u16("DW_CFA_advance_loc2 delta")) * c.CodeAlign)
			case DW_CFA_advance_loc4:
				in.Off = int64(uint64(r.u32("DW_CFA_advance_loc4 delta")) * c.CodeAlign)
			case DW_CFA_MIPS_advance_loc8:
				in.Off = int64(r.u64("DW_CFA_MIPS_advance_loc8 delta") * c.CodeAlign)
			case DW_CFA_offset_extended:
				in.Reg = reg("DW_CFA_offset_extended register")
				in.Off = factor(int64(r.uleb("DW_CFA_offset_extended offset")))
			case DW_CFA_restore_extended, DW_CFA_undefined, DW_CFA_same_value, DW_CFA_def_cfa_register:
				in.Reg = reg(in.Op.String() + " register")
			case DW_CFA_register:
				in.Reg = reg("DW_CFA_register register")
				in.Reg2 = reg("DW_CFA_register second register")
			case DW_CFA_def_cfa:
				in.Reg = reg("DW_CFA_def_cfa register")
				in.Off = int64(r.uleb("DW_CFA_def_cfa offset"))
			case DW_CFA_def_cfa_offset:
				in.Off = int64(r.uleb("DW_CFA_def_cfa_offset offset"))
			case DW_CFA_def_cfa_expression:
				in.Expr = r.bytes(r.uleb("DW_CFA_def_cfa_expression length"), "DW_CFA_def_cfa_expression block")
			case DW_CFA_expression, DW_CFA_val_expression:
				in.Reg = reg(in.Op.String() + " register")
				in.Expr = r.bytes(r.uleb(in.Op.String()+" length"), in.Op.String()+" block")
			case DW_CFA_offset_extended_sf:
				in.Reg = reg("DW_CFA_offset_extended_sf register")
				in.Off = factor(r.sleb("DW_CFA_offset_extended_sf offset"))
			case DW_CFA_def_cfa_sf:
				in.Reg = reg("DW_CFA_def_cfa_sf register")
				in.Off = factor(r.sleb("DW_CFA_def_cfa_sf offset"))
			case DW_CFA_def_cfa_offset_sf:
				in.Off = factor(r.sleb("DW_CFA_def_cfa_offset_sf offset"))
			case DW_CFA_val_offset:
				in.Reg = reg("DW_CFA_val_offset register")
				in.Off = factor(int64(r.uleb("DW_CFA_val_offset offset")))
			case DW_CFA_val_offset_sf:
				in.Reg = reg("DW_CFA_val_offset_sf register")
				in.Off = factor(r.sleb("DW_CFA_val_offset_sf offset"))
			case DW_CFA_GNU_args_size:
				in.Off = int64(r.uleb("DW_CFA_GNU_args_size size"))
			case DW_CFA_GNU_negative_offset_extended:
				in.Reg = reg("DW_CFA_GNU_negative_offset_extended register")
				in.Off = -factor(int64(r.uleb("DW_CFA_GNU_negative_offset_extended offset")))
			default:
				r.pos--
				r.fail("call frame instruction", "unknown opcode %#x", b)
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, in)
	}
	return out, nil
}
