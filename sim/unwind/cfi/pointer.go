package cfi

import "fmt"

// Encoding is a DW_EH_PE pointer encoding byte: the value format in the
// low nibble, how it is applied in bits 4-6, and bit 7 for an indirect
// pointer.
//
//	  7     6   4 3      0
//	┌────┬───────┬────────┐
//	│ind.│ apply │ format │   0xff = omitted
//	└────┴───────┴────────┘
//	format: 0 absptr 1 uleb128 2 udata2 3 udata4 4 udata8
//	        9 sleb128 a sdata2 b sdata4 c sdata8
//	apply:  0 absolute 1 pcrel 2 textrel 3 datarel 4 funcrel 5 aligned
type Encoding uint8

const (
	PEAbsptr   Encoding = 0x00
	PEUleb128  Encoding = 0x01
	PEUdata2   Encoding = 0x02
	PEUdata4   Encoding = 0x03
	PEUdata8   Encoding = 0x04
	PESleb128  Encoding = 0x09
	PESdata2   Encoding = 0x0a
	PESdata4   Encoding = 0x0b
	PESdata8   Encoding = 0x0c
	PEPCRel    Encoding = 0x10
	PETextRel  Encoding = 0x20
	PEDataRel  Encoding = 0x30
	PEFuncRel  Encoding = 0x40
	PEAligned  Encoding = 0x50
	PEIndirect Encoding = 0x80
	PEOmit     Encoding = 0xff
)

func (e Encoding) valid() bool {
	if e == PEOmit {
		return true
	}
	switch e & 0x0f {
	case PEAbsptr, PEUleb128, PEUdata2, PEUdata4, PEUdata8, PESleb128, PESdata2, PESdata4, PESdata8:
	default:
		return false
	}
	return (e&0x70)>>4 <= 5
}

func (e Encoding) String() string { return fmt.Sprintf("%#x", uint8(e)) }

// pointer reads a pointer of encoding e; funcBase is the base of
// DW_EH_PE_funcrel values (the FDE's pc_begin).
func (s *Section) pointer(r *reader, e Encoding, field string, funcBase uint64) uint64 {
	return s.pointerSized(r, e, field, funcBase, s.AddrSize)
}

func (s *Section) pointerSized(r *reader, e Encoding, field string, funcBase uint64, addrSize int) uint64 {
	if r.err != nil {
		return 0
	}
	if e == PEOmit {
		return 0
	}
	if !e.valid() {
		r.fail(field, "bad pointer encoding %#x", uint8(e))
		return 0
	}
	start := r.pos
	if e&0x70 == PEAligned {
		for (s.Addr+uint64(r.pos))%uint64(addrSize) != 0 && r.err == nil {
			r.u8(field + " (alignment padding)")
		}
	}
	var v uint64
	switch e & 0x0f {
	case PEAbsptr:
		if addrSize == 4 {
			v = uint64(r.u32(field))
		} else {
			v = r.u64(field)
		}
	case PEUleb128:
		v = r.uleb(field)
	case PEUdata2:
		v = uint64(r.u16(field))
	case PEUdata4:
		v = uint64(r.u32(field))
	case PEUdata8:
		v = r.u64(field)
	case PESleb128:
		v = uint64(r.sleb(field))
	case PESdata2:
		v = uint64(int64(int16(r.u16(field))))
	case PESdata4:
		v = uint64(int64(int32(r.u32(field))))
	case PESdata8:
		v = r.u64(field)
	}
	if r.err != nil {
		return 0
	}
	switch e & 0x70 {
	case PEPCRel:
		v += s.Addr + uint64(start)
	case PETextRel:
		if s.TextBase == 0 {
			r.pos = start
			r.fail(field, "text-relative pointer (encoding %#x) but no text base is known", uint8(e))
			return 0
		}
		v += s.TextBase
	case PEDataRel:
		if s.DataBase == 0 {
			r.pos = start
			r.fail(field, "data-relative pointer (encoding %#x) but no data base is known", uint8(e))
			return 0
		}
		v += s.DataBase
	case PEFuncRel:
		v += funcBase
	}
	if addrSize == 4 {
		v &= 0xffffffff
	}
	return v
}
