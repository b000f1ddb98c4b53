// Package sframe reads, writes, prints and searches SFrame stack trace
// sections (versions 1, 2 and 3, both byte orders), and translates DWARF
// CFI into SFrame the way GNU as does (gas.go).
//
// A section is a header, a table of function descriptors (FDEs) and the
// frame row entries (FREs) they point to:
//
//	┌──────────────────────┐ 0
//	│ preamble + header    │ 28 bytes + sfh_auxhdr_len
//	├──────────────────────┤ header end + sfh_fdeoff
//	│ FDEs                 │ V1 17, V2 20, V3 16 bytes each (V3: "FDE index")
//	├──────────────────────┤ header end + sfh_freoff
//	│ FRE sub-section      │ sfh_fre_len bytes; V3: each function's 5-byte
//	│                      │ FDE attribute, then its FREs
//	└──────────────────────┘ (zero padding may follow)
//
// Header (all versions):
//
//	off  size field                     off  size field
//	0x00  2   sfp_magic 0xdee2          0x08  4   sfh_num_fdes
//	0x02  1   sfp_version               0x0c  4   sfh_num_fres
//	0x03  1   sfp_flags                 0x10  4   sfh_fre_len
//	0x04  1   sfh_abi_arch              0x14  4   sfh_fdeoff
//	0x05  1   sfh_cfa_fixed_fp_offset   0x18  4   sfh_freoff
//	0x06  1   sfh_cfa_fixed_ra_offset
//	0x07  1   sfh_auxhdr_len
//
// The in-memory form (Section, FDE, FRE) is the same for every version
// and lossless: Encode(Decode(b)) gives b back for sections gas or ld
// wrote.  Rows are described by Rules (what each data word means), so
// the encoder, the decoder, the dumper and the unwinder share one
// vocabulary.
package sframe

import (
	"encoding/binary"
	"fmt"
)

// Format constants, with the names the specification uses.
const (
	SFRAME_MAGIC     = 0xdee2
	SFRAME_VERSION_1 = 1
	SFRAME_VERSION_2 = 2
	SFRAME_VERSION_3 = 3

	SFRAME_F_FDE_SORTED           = 0x1
	SFRAME_F_FRAME_POINTER        = 0x2 // V1, V2 only
	SFRAME_F_FDE_FUNC_START_PCREL = 0x4 // V2 (erratum), V3

	HeaderSize  = 28
	fdeSizeV1   = 17
	fdeSizeV2   = 20
	fdeSizeV3   = 16
	fdeAttrSize = 5

	// MaxDataWords is the most data words an FRE may carry (V3 FLEX: three
	// control word + offset pairs).
	MaxDataWords = 6
)

// validFlags are the flag bits each version defines.
var validFlags = [4]uint8{0, 0x3, 0x7, 0x5}

// FRE types (FDE info bits 0-3): the width of FRE start addresses.
const (
	SFRAME_FRE_TYPE_ADDR1 = 0
	SFRAME_FRE_TYPE_ADDR2 = 1
	SFRAME_FRE_TYPE_ADDR4 = 2
)

// PCType is the FDE's PC type (info bit 4).
type PCType uint8

const (
	PCInc  PCType = 0 // SFRAME_V3_FDE_PCTYPE_INC (V2 SFRAME_FDE_TYPE_PCINC)
	PCMask PCType = 1 // SFRAME_V3_FDE_PCTYPE_MASK (V2 SFRAME_FDE_TYPE_PCMASK)
)

// FDE types (V3 info2 bits 0-4).
const (
	SFRAME_FDE_TYPE_DEFAULT = 0
	SFRAME_FDE_TYPE_FLEX    = 1
)

// Data word sizes (FRE info bits 5-6).
const (
	SFRAME_FRE_DATAWORD_1B = 0
	SFRAME_FRE_DATAWORD_2B = 1
	SFRAME_FRE_DATAWORD_4B = 2
)

// s390x CFA offsets are stored as (offset - 160) / 8.
const (
	S390XCFAOffsetAdjustment = -160
	S390XCFAAlignment        = 8
)

// FDE info byte (V3 sfda_func_info, V1/V2 sfde_func_info):
//
//	   7      6      5        4        3        0
//	┌──────┬──────┬───────┬────────┬──────────┐
//	│signal│unused│ pauth │ pctype │ fre_type │
//	│ (V3) │      │ key B │ 1=MASK │ 0/1/2    │
//	└──────┴──────┴───────┴────────┴──────────┘
func funcInfo(f *FDE, freType uint8) uint8 {
	v := freType & 0xf
	v |= uint8(f.PCType&1) << 4
	if f.PAuthKeyB {
		v |= 1 << 5
	}
	if f.Signal {
		v |= 1 << 7
	}
	return v
}

// FRE info byte:
//
//	    7        6    5    4              1        0
//	┌─────────┬─────────┬─────────────────┬──────────┐
//	│mangled  │ dataword│ dataword_count  │ cfa base │
//	│RA (PAC) │ size    │ 0..15 (0 = RA   │ 0 FP     │
//	│         │ 0/1/2   │ undefined)      │ 1 SP     │
//	└─────────┴─────────┴─────────────────┴──────────┘
func freInfo(mangled bool, size, count, base uint8) uint8 {
	v := base&1 | (count&0xf)<<1 | (size&3)<<5
	if mangled {
		v |= 1 << 7
	}
	return v
}

// FLEX FDE control word (an unsigned data word before each offset):
//
//	 N        3   2      1        0
//	┌──────────┬──────┬────────┬───────┐
//	│ regnum   │unused│ deref  │ reg_p │   0 = no rule / RA padding
//	└──────────┴──────┴────────┴───────┘
//	reg_p 1: base is DWARF register regnum; 0: base is the CFA.
func ctrlWord(r Rule) uint64 {
	var v uint64
	if r.Kind == RuleReg {
		v = uint64(r.Reg)<<3 | 1
	}
	if r.Deref {
		v |= 2
	}
	return v
}

// RuleKind says what a data word (or control word + offset pair)
// describes.
type RuleKind uint8

const (
	// RuleNone: no word; the value is unchanged (FP) or still in the
	// return address register (RA).  Dump "u" (x86-64 RA: "f").
	RuleNone RuleKind = iota
	// RulePadding: an RA word of 0 that keeps FP at its index (s390x,
	// FLEX): RA not saved.  Dump "U".
	RulePadding
	// RuleCFA: CFA + Off, or the word at CFA + Off when Deref (a stack
	// slot; the only kind DEFAULT FDEs have for RA and FP).  Dump "c-8".
	RuleCFA
	// RuleReg: register Reg + Off, or the word there when Deref.  The CFA
	// rule is always RuleReg.  Dump "sp+16", "r16+0", "(fp-8)"; V2 s390x
	// "r16" (register number encoded in the offset as (reg<<1)|1).
	RuleReg
)

// Rule describes one of CFA, RA and FP in a row.
type Rule struct {
	Kind  RuleKind
	Reg   uint32 // RuleReg: DWARF register
	Off   int64  // byte offset (s390x CFA offsets decoded)
	Deref bool
}

func (r Rule) String() string {
	switch r.Kind {
	case RuleNone:
		return "none"
	case RulePadding:
		return "padding"
	case RuleCFA:
		if r.Deref {
			return fmt.Sprintf("*(cfa%+d)", r.Off)
		}
		return fmt.Sprintf("cfa%+d", r.Off)
	}
	if r.Deref {
		return fmt.Sprintf("*(r%d%+d)", r.Reg, r.Off)
	}
	return fmt.Sprintf("r%d%+d", r.Reg, r.Off)
}

// FRE is one frame row entry.
type FRE struct {
	// Start is the offset from the function start (PC type INC) or within
	// the repeated block (MASK) where the row begins.
	Start uint32
	// RAUndefined marks an outermost frame (no data words).
	RAUndefined bool
	// MangledRA is set when the return address carries a pointer
	// authentication code (aarch64 "[s]").
	MangledRA bool
	CFA       Rule
	RA, FP    Rule
}

func (f FRE) String() string {
	if f.RAUndefined {
		return fmt.Sprintf("%#x: RA undefined", f.Start)
	}
	s := fmt.Sprintf("%#x: CFA=%v RA=%v FP=%v", f.Start, f.CFA, f.RA, f.FP)
	if f.MangledRA {
		s += " mangled"
	}
	return s
}

// FDE is one function descriptor with its rows.
type FDE struct {
	// Start is the function's start address relative to the start of the
	// .sframe section (add the section address for the real one).
	Start   int64
	Size    uint32
	PCType  PCType
	RepSize uint8 // MASK: size of the repeated block
	// PAuthKeyB: aarch64 return addresses are signed with the B key.
	PAuthKeyB bool
	// Signal: a signal trampoline (V3).
	Signal bool
	// Flex: a V3 flexible FDE (control word + offset per entity).
	Flex bool
	FREs []FRE
}

// Section is a decoded (or to be encoded) .sframe section.
type Section struct {
	Version uint8
	Flags   uint8
	ABI     uint8 // sfh_abi_arch
	FixedFP int8  // sfh_cfa_fixed_fp_offset
	FixedRA int8  // sfh_cfa_fixed_ra_offset
	Aux     []byte
	Order   binary.ByteOrder
	FDEs    []FDE
}

// NumFREs returns the number of FREs of all FDEs.
func (s *Section) NumFREs() int {
	n := 0
	for i := range s.FDEs {
		n += len(s.FDEs[i].FREs)
	}
	return n
}

// freType returns the FRE type gas and libsframe choose for a function
// size: the narrowest start-address width that holds every offset.
func freType(size uint32) uint8 {
	switch {
	case size <= 0xff:
		return SFRAME_FRE_TYPE_ADDR1
	case size <= 0xffff:
		return SFRAME_FRE_TYPE_ADDR2
	}
	return SFRAME_FRE_TYPE_ADDR4
}

// Error is a problem at a byte offset of a section.
type Error struct {
	Offset int
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("offset %#x: %s: %s", e.Offset, e.Field, e.Msg)
}

func errorf(off int, field, format string, args ...any) error {
	return &Error{Offset: off, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// FDESize is the size of one FDE (V3: FDE index entry) of a version.
func FDESize(version uint8) int {
	switch version {
	case SFRAME_VERSION_1:
		return fdeSizeV1
	case SFRAME_VERSION_2:
		return fdeSizeV2
	}
	return fdeSizeV3
}
