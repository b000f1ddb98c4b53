package sframe

import (
	"encoding/binary"

	"simrun/sim/unwind/abi"
)

// FDE (V1: 17 bytes; V2: 20 bytes, sframe_func_desc_entry_v2):
//
//	0x00 i32 sfde_func_start_address   0x0c u32 sfde_func_num_fres
//	0x04 u32 sfde_func_size            0x10 u8  sfde_func_info
//	0x08 u32 sfde_func_start_fre_off   0x11 u8  sfde_func_rep_size (V2)
//	                                   0x12 u16 padding (V2)
//
// FDE index (V3, 16 bytes) and attribute (V3, 5 bytes, unaligned, at the
// start of the function's data in the FRE sub-section):
//
//	0x00 i64 sfdi_func_start_offset    0x00 u16 sfda_func_num_fres
//	0x08 u32 sfdi_func_size            0x02 u8  sfda_func_info
//	0x0c u32 sfdi_func_start_fre_off   0x03 u8  sfda_func_info2 (FDE type)
//	                                   0x04 u8  sfda_func_rep_size
//
// FRE: start address (1, 2 or 4 bytes by the FDE's FRE type), info byte,
// then dataword_count data words of 1, 2 or 4 bytes.

// Decode parses a .sframe section of any version in either byte order,
// checking what libsframe checks: magic, version, flag bits, ABI, the
// sub-section offsets and counts against the section size, FRE infos,
// FRE start addresses against the function size, the FRE total, and the
// order of FDEs when SFRAME_F_FDE_SORTED is set.  Errors name the byte
// offset and the field.
func Decode(b []byte) (*Section, error) {
	if len(b) < 2 {
		return nil, errorf(0, "sfp_magic", "section of %d bytes is too short for the preamble", len(b))
	}
	var order binary.ByteOrder
	switch {
	case binary.LittleEndian.Uint16(b) == SFRAME_MAGIC:
		order = binary.LittleEndian
	case binary.BigEndian.Uint16(b) == SFRAME_MAGIC:
		order = binary.BigEndian
	default:
		return nil, errorf(0, "sfp_magic", "bad magic %#02x %#02x (want 0xdee2 in either byte order)", b[0], b[1])
	}
	if len(b) < HeaderSize {
		return nil, errorf(len(b), "header", "truncated: %d of %d header bytes present", len(b), HeaderSize)
	}
	s := &Section{
		Version: b[2], Flags: b[3], ABI: b[4],
		FixedFP: int8(b[5]), FixedRA: int8(b[6]),
		Order: order,
	}
	if s.Version < SFRAME_VERSION_1 || s.Version > SFRAME_VERSION_3 {
		return nil, errorf(2, "sfp_version", "version %d is not supported (1, 2 and 3 are)", s.Version)
	}
	if bad := s.Flags &^ validFlags[s.Version]; bad != 0 {
		return nil, errorf(3, "sfp_flags", "flags %#x have bits %#x that version %d does not define", s.Flags, bad, s.Version)
	}
	a, err := abi.ForSFrame(s.ABI)
	if err != nil {
		return nil, errorf(4, "sfh_abi_arch", "%v", err)
	}
	if a.Order != order {
		return nil, errorf(4, "sfh_abi_arch", "ABI %s in a %v section", a.Name, order)
	}
	auxLen := int(b[7])
	hdrEnd := HeaderSize + auxLen
	if hdrEnd > len(b) {
		return nil, errorf(7, "sfh_auxhdr_len", "auxiliary header of %d bytes runs past the section end (%d bytes)", auxLen, len(b))
	}
	if auxLen != 0 {
		if order != binary.NativeEndian {
			return nil, errorf(7, "sfh_auxhdr_len", "cannot byte-swap a section with an auxiliary header (%d bytes)", auxLen)
		}
		s.Aux = append([]byte(nil), b[HeaderSize:hdrEnd]...)
	}
	numFDEs := uint64(order.Uint32(b[8:]))
	numFREs := uint64(order.Uint32(b[12:]))
	freLen := uint64(order.Uint32(b[16:]))
	fdeOff := uint64(order.Uint32(b[20:]))
	freOff := uint64(order.Uint32(b[24:]))
	size := uint64(len(b))
	if fdeOff > freOff {
		return nil, errorf(20, "sfh_fdeoff", "FDE sub-section offset %#x is after the FRE sub-section offset %#x", fdeOff, freOff)
	}
	fdeSize := uint64(fdeSizeV3)
	switch s.Version {
	case SFRAME_VERSION_1:
		fdeSize = fdeSizeV1
	case SFRAME_VERSION_2:
		fdeSize = fdeSizeV2
	}
	fdeStart := uint64(hdrEnd) + fdeOff
	fdeEnd := fdeStart + numFDEs*fdeSize
	if fdeEnd > size {
		return nil, errorf(8, "sfh_num_fdes", "%d FDEs of %d bytes from offset %#x overrun the section (%d bytes)", numFDEs, fdeSize, fdeStart, size)
	}
	freStart := uint64(hdrEnd) + freOff
	if fdeEnd > freStart {
		return nil, errorf(24, "sfh_freoff", "FRE sub-section at %#x overlaps the FDEs (which end at %#x)", freStart, fdeEnd)
	}
	freEnd := freStart + freLen
	if freEnd > size {
		return nil, errorf(16, "sfh_fre_len", "FRE sub-section of %d bytes from offset %#x overruns the section (%d bytes)", freLen, freStart, size)
	}
	for i := freEnd; i < size; i++ {
		if b[i] != 0 {
			return nil, errorf(int(i), "padding", "non-zero byte %#02x after the FRE sub-section (which ends at %#x)", b[i], freEnd)
		}
	}
	d := decoder{b: b, order: order, s: s, abi: a, freStart: int(freStart), freEnd: int(freEnd)}
	s.FDEs = make([]FDE, 0, min(numFDEs, 1<<16))
	total := uint64(0)
	for i := uint64(0); i < numFDEs; i++ {
		f, err := d.fde(int(fdeStart + i*fdeSize))
		if err != nil {
			return nil, err
		}
		total += uint64(len(f.FREs))
		s.FDEs = append(s.FDEs, f)
	}
	if total != numFREs {
		return nil, errorf(12, "sfh_num_fres", "header counts %d FREs but the FDEs hold %d", numFREs, total)
	}
	if s.Flags&SFRAME_F_FDE_SORTED != 0 {
		for i := 1; i < len(s.FDEs); i++ {
			if s.FDEs[i].Start < s.FDEs[i-1].Start {
				return nil, errorf(int(fdeStart+uint64(i)*fdeSize), "FDE start", "FDE %d starts at %#x, before FDE %d (%#x), but SFRAME_F_FDE_SORTED is set", i, s.FDEs[i].Start, i-1, s.FDEs[i-1].Start)
			}
		}
	}
	return s, nil
}

type decoder struct {
	b                []byte
	order            binary.ByteOrder
	s                *Section
	abi              *abi.ABI
	freStart, freEnd int
}

func (d *decoder) fde(pos int) (FDE, error) {
	b, o := d.b, d.order
	var f FDE
	var info, info2 uint8
	var numFREs uint64
	var freOff uint64
	var startField int64
	switch d.s.Version {
	case SFRAME_VERSION_3:
		startField = int64(o.Uint64(b[pos:]))
		f.Size = o.Uint32(b[pos+8:])
		freOff = uint64(o.Uint32(b[pos+12:]))
	default:
		startField = int64(int32(o.Uint32(b[pos:])))
		f.Size = o.Uint32(b[pos+4:])
		freOff = uint64(o.Uint32(b[pos+8:]))
		numFREs = uint64(o.Uint32(b[pos+12:]))
		info = b[pos+16]
		if d.s.Version == SFRAME_VERSION_2 {
			f.RepSize = b[pos+17]
		}
	}
	if d.s.Flags&SFRAME_F_FDE_FUNC_START_PCREL != 0 {
		f.Start = int64(pos) + startField
	} else {
		f.Start = startField
	}
	offField := pos + 12
	if d.s.Version != SFRAME_VERSION_3 {
		offField = pos + 8
	}
	p := uint64(d.freStart) + freOff
	if freOff >= uint64(d.freEnd-d.freStart) && !(freOff == uint64(d.freEnd-d.freStart) && d.s.Version != SFRAME_VERSION_3 && numFREs == 0) {
		return f, errorf(offField, "FDE start_fre_off", "FRE offset %#x is outside the FRE sub-section (%d bytes)", freOff, d.freEnd-d.freStart)
	}
	if d.s.Version == SFRAME_VERSION_3 {
		if p+fdeAttrSize > uint64(d.freEnd) {
			return f, errorf(int(p), "FDE attribute", "truncated: %d of %d bytes before the end of the FRE sub-section", uint64(d.freEnd)-p, fdeAttrSize)
		}
		numFREs = uint64(o.Uint16(b[p:]))
		info = b[p+2]
		info2 = b[p+3]
		f.RepSize = b[p+4]
		p += fdeAttrSize
	}
	infoPos := pos + 16
	if d.s.Version == SFRAME_VERSION_3 {
		infoPos = int(p) - 3
	}
	freType := info & 0xf
	if freType > SFRAME_FRE_TYPE_ADDR4 {
		return f, errorf(infoPos, "FDE info", "FRE type %d is not defined (info %#02x)", freType, info)
	}
	f.PCType = PCType(info >> 4 & 1)
	f.PAuthKeyB = info>>5&1 != 0
	if d.s.Version == SFRAME_VERSION_3 {
		f.Signal = info>>7 != 0
		switch info2 & 0x1f {
		case SFRAME_FDE_TYPE_DEFAULT:
		case SFRAME_FDE_TYPE_FLEX:
			f.Flex = true
		default:
			return f, errorf(infoPos+1, "FDE info2", "FDE type %d is not defined", info2&0x1f)
		}
	}
	if numFREs > uint64(d.freEnd)-p {
		return f, errorf(offField+4, "FDE num_fres", "%d FREs cannot fit in the %d bytes left in the FRE sub-section", numFREs, uint64(d.freEnd)-p)
	}
	addrSize := [3]int{1, 2, 4}[freType]
	f.FREs = make([]FRE, 0, numFREs)
	for i := uint64(0); i < numFREs; i++ {
		fre, next, err := d.fre(int(p), addrSize, &f)
		if err != nil {
			return f, err
		}
		if n := len(f.FREs); n > 0 && fre.Start < f.FREs[n-1].Start {
			return f, errorf(int(p), "FRE start address", "%#x is before the previous FRE's %#x", fre.Start, f.FREs[n-1].Start)
		}
		f.FREs = append(f.FREs, fre)
		p = uint64(next)
	}
	return f, nil
}

func (d *decoder) fre(p, addrSize int, f *FDE) (FRE, int, error) {
	b, o := d.b, d.order
	var fre FRE
	if p+addrSize+1 > d.freEnd {
		return fre, 0, errorf(p, "FRE", "truncated: needs %d bytes, %d left in the FRE sub-section", addrSize+1, d.freEnd-p)
	}
	switch addrSize {
	case 1:
		fre.Start = uint32(b[p])
	case 2:
		fre.Start = uint32(o.Uint16(b[p:]))
	default:
		fre.Start = o.Uint32(b[p:])
	}
	if fre.Start > f.Size {
		return fre, 0, errorf(p, "FRE start address", "%#x is past the function size %#x", fre.Start, f.Size)
	}
	p += addrSize
	info := b[p]
	p++
	count := int(info >> 1 & 0xf)
	sizeCode := info >> 5 & 3
	if sizeCode > SFRAME_FRE_DATAWORD_4B {
		return fre, 0, errorf(p-1, "FRE info", "data word size code 3 is not defined (info %#02x)", info)
	}
	if count > MaxDataWords {
		return fre, 0, errorf(p-1, "FRE info", "%d data words (at most %d)", count, MaxDataWords)
	}
	wsize := 1 << sizeCode
	if p+count*wsize > d.freEnd {
		return fre, 0, errorf(p, "FRE data words", "%d words of %d bytes run past the FRE sub-section end at %#x", count, wsize, d.freEnd)
	}
	words := make([]int64, count)
	raw := make([]uint64, count)
	for i := range words {
		switch wsize {
		case 1:
			raw[i] = uint64(b[p])
			words[i] = int64(int8(b[p]))
		case 2:
			raw[i] = uint64(o.Uint16(b[p:]))
			words[i] = int64(int16(o.Uint16(b[p:])))
		default:
			raw[i] = uint64(o.Uint32(b[p:]))
			words[i] = int64(int32(o.Uint32(b[p:])))
		}
		p += wsize
	}
	infoPos := p - count*wsize - 1
	if count == 0 {
		fre.RAUndefined = true
		return fre, p, nil
	}
	fre.MangledRA = info>>7 != 0
	a := d.abi
	cfaOff := func(v int64) int64 {
		if a.CFAScaled {
			return v*S390XCFAAlignment - S390XCFAOffsetAdjustment
		}
		return v
	}
	if f.Flex {
		ctrl := func(w uint64, off int64) Rule {
			r := Rule{Kind: RuleCFA, Reg: uint32(w >> 3), Off: off, Deref: w&2 != 0}
			if w&1 != 0 {
				r.Kind = RuleReg
			}
			return r
		}
		if count < 2 {
			return fre, 0, errorf(infoPos, "FRE info", "a flexible FDE's FRE needs at least the CFA pair (2 data words), has %d", count)
		}
		fre.CFA = ctrl(raw[0], cfaOff(words[1]))
		i := 2
		if i < count {
			if raw[i] == 0 {
				fre.RA = Rule{Kind: RulePadding}
				i++
			} else {
				if i+1 >= count {
					return fre, 0, errorf(infoPos, "FRE info", "RA control word without its offset (%d data words)", count)
				}
				fre.RA = ctrl(raw[i], words[i+1])
				i += 2
			}
		}
		if i < count {
			if i+2 != count {
				return fre, 0, errorf(infoPos, "FRE info", "%d data words do not form CFA, RA and FP pairs", count)
			}
			fre.FP = ctrl(raw[i], words[i+1])
		}
		return fre, p, nil
	}
	base := a.FP
	if info&1 != 0 {
		base = a.SP
	}
	fre.CFA = Rule{Kind: RuleReg, Reg: base, Off: cfaOff(words[0])}
	slot := func(w int64) Rule {
		if d.s.Version == SFRAME_VERSION_2 && a.CFAScaled && w&1 != 0 {
			return Rule{Kind: RuleReg, Reg: uint32(w >> 1)}
		}
		return Rule{Kind: RuleCFA, Off: w, Deref: true}
	}
	if d.s.FixedRA != 0 {
		if count > 2 {
			return fre, 0, errorf(infoPos, "FRE info", "%d data words; with a fixed RA offset at most 2 (CFA, FP)", count)
		}
		if count == 2 {
			fre.FP = slot(words[1])
		}
		return fre, p, nil
	}
	if count > 3 {
		return fre, 0, errorf(infoPos, "FRE info", "%d data words; a default FDE has at most 3 (CFA, RA, FP)", count)
	}
	if count >= 2 {
		if words[1] == 0 {
			fre.RA = Rule{Kind: RulePadding}
		} else {
			fre.RA = slot(words[1])
		}
	}
	if count == 3 {
		fre.FP = slot(words[2])
	}
	return fre, p, nil
}
