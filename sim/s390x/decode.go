package s390x

// insnLen is the instruction length given its first byte: bits 0-1 of the
// opcode are 00 for 2 bytes, 01 or 10 for 4 and 11 for 6.
func insnLen(first byte) int { return [4]int{2, 4, 4, 6}[first>>6] }

// opByKey finds an op by its opcode key (first byte << 8 | extension).
var opByKey = func() map[uint16]op {
	m := make(map[uint16]op, len(opInfos))
	for i := range opInfos {
		m[opInfos[i].key] = opFirst + op(i)
	}
	return m
}()

// opcodeKey returns the opcode key of the instruction whose bits are
// left-aligned in w.
func opcodeKey(w uint64) uint16 {
	first := uint8(w >> 56)
	var ext uint8
	switch extKinds[first] {
	case ext8at8:
		ext = uint8(w >> 48)
	case ext4at12:
		ext = uint8(w>>48) & 15
	case ext8at40:
		ext = uint8(w >> 16)
	}
	return uint16(first)<<8 | uint16(ext)
}

// leftAligned packs the instruction bytes into a word with bit 0 of the
// instruction as the most significant bit.
func leftAligned(b []byte) uint64 {
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (56 - 8*i)
	}
	return w
}

// decode decodes the instruction at the start of b; len(b) must be at
// least insnLen(b[0]).
func decode(b []byte) inst {
	ln := insnLen(b[0])
	w := leftAligned(b[:ln])
	o, ok := opByKey[opcodeKey(w)]
	if !ok {
		return inst{op: opUndef, ln: uint8(ln)}
	}
	in := inst{op: o, ln: uint8(ln), r2: rNone, b: rNone}
	in.fields(w, o.info().format)
	in.refine()
	return in
}

// bitsAt returns n bits of w starting at instruction bit pos.
func bitsAt(w uint64, pos, n uint) uint64 { return w >> (64 - pos - n) & (1<<n - 1) }

func u4(w uint64, pos uint) uint8 { return uint8(bitsAt(w, pos, 4)) }

// addrReg is a base or index field: r0 there means "no register".
func addrReg(w uint64, pos uint) uint8 {
	if r := u4(w, pos); r != 0 {
		return r
	}
	return rNone
}

// vreg is a vector register field at pos (8, 12, 16 or 32) with its RXB bit.
func vreg(w uint64, pos uint) uint8 {
	bit := uint(3) // RXB bit 3 for the field at bit 32
	if pos < 32 {
		bit = (pos - 8) / 4 // bits 0-2 for the fields at 8, 12, 16
	}
	return u4(w, pos) | uint8(bitsAt(w, 36+bit, 1))<<4
}

func sext(v uint64, n uint) int64 { return int64(v<<(64-n)) >> (64 - n) }

// disp20 is the signed DH:DL displacement of RXY, RSY and SIY formats.
func disp20(w uint64) int64 { return sext(bitsAt(w, 32, 8)<<12|bitsAt(w, 20, 12), 20) }

// fields files the operand fields of format f as inst.go describes.
func (in *inst) fields(w uint64, f uint8) {
	switch f {
	case fmtE:
	case fmtI:
		in.imm = int64(bitsAt(w, 8, 8))
	case fmtRR:
		in.r1, in.r2 = u4(w, 8), u4(w, 12)
	case fmtRRm:
		in.m, in.r2 = u4(w, 8), u4(w, 12)
	case fmtRRE:
		in.r1, in.r2 = u4(w, 24), u4(w, 28)
	case fmtRRFa:
		in.r1, in.r2, in.r3, in.m = u4(w, 24), u4(w, 28), u4(w, 16), u4(w, 20)
	case fmtRRFc:
		in.r1, in.r2, in.m = u4(w, 24), u4(w, 28), u4(w, 16)
	case fmtRRFe:
		in.r1, in.r2, in.m, in.r3 = u4(w, 24), u4(w, 28), u4(w, 16), u4(w, 20)
	case fmtRRD:
		in.r1, in.r3, in.r2 = u4(w, 16), u4(w, 24), u4(w, 28)
	case fmtRX, fmtRXE:
		in.r1, in.r2, in.b, in.imm = u4(w, 8), addrReg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12))
	case fmtRXm:
		in.m, in.r2, in.b, in.imm = u4(w, 8), addrReg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12))
	case fmtRXEm:
		in.r1, in.r2, in.b, in.imm, in.m = u4(w, 8), addrReg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	case fmtRXF:
		in.r3, in.r2, in.b, in.imm, in.r1 = u4(w, 8), addrReg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	case fmtRXY:
		in.r1, in.r2, in.b, in.imm = u4(w, 8), addrReg(w, 12), addrReg(w, 16), disp20(w)
	case fmtRXYm:
		in.m, in.r2, in.b, in.imm = u4(w, 8), addrReg(w, 12), addrReg(w, 16), disp20(w)
	case fmtRS:
		in.r1, in.r3, in.b, in.imm = u4(w, 8), u4(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12))
	case fmtRSm:
		in.r1, in.m, in.b, in.imm = u4(w, 8), u4(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12))
	case fmtRSY:
		in.r1, in.r3, in.b, in.imm = u4(w, 8), u4(w, 12), addrReg(w, 16), disp20(w)
	case fmtRSYm:
		in.r1, in.m, in.b, in.imm = u4(w, 8), u4(w, 12), addrReg(w, 16), disp20(w)
	case fmtRSI, fmtRIEe:
		in.r1, in.r3, in.imm = u4(w, 8), u4(w, 12), 2*sext(bitsAt(w, 16, 16), 16)
	case fmtRI:
		in.r1, in.imm = u4(w, 8), sext(bitsAt(w, 16, 16), 16)
	case fmtRIrel:
		in.r1, in.imm = u4(w, 8), 2*sext(bitsAt(w, 16, 16), 16)
	case fmtRIm:
		in.m, in.imm = u4(w, 8), 2*sext(bitsAt(w, 16, 16), 16)
	case fmtRIL:
		in.r1, in.imm = u4(w, 8), sext(bitsAt(w, 16, 32), 32)
	case fmtRILrel:
		in.r1, in.imm = u4(w, 8), 2*sext(bitsAt(w, 16, 32), 32)
	case fmtRILm:
		in.m, in.imm = u4(w, 8), 2*sext(bitsAt(w, 16, 32), 32)
	case fmtRIEb:
		in.r1, in.r2, in.imm, in.m = u4(w, 8), u4(w, 12), 2*sext(bitsAt(w, 16, 16), 16), u4(w, 32)
	case fmtRIEc:
		in.r1, in.m, in.imm, in.r2 = u4(w, 8), u4(w, 12), 2*sext(bitsAt(w, 16, 16), 16), uint8(bitsAt(w, 32, 8))
	case fmtRIEd:
		in.r1, in.r3, in.imm = u4(w, 8), u4(w, 12), sext(bitsAt(w, 16, 16), 16)
	case fmtRIEf:
		in.r1, in.r2 = u4(w, 8), u4(w, 12)
		i3, i4, i5 := uint8(bitsAt(w, 16, 8)), uint8(bitsAt(w, 24, 8)), uint8(bitsAt(w, 32, 8))
		in.r3 = i5 & 63
		in.imm = int64(rotMask(i3&63, i4&63))
		in.m = i3&0x80 | i4&0x80>>1 // test-only (rnsbg..), zero-remaining (risbg)
	case fmtRIEg:
		in.r1, in.m, in.imm = u4(w, 8), u4(w, 12), sext(bitsAt(w, 16, 16), 16)
	case fmtRRS:
		in.r1, in.r2, in.b, in.imm, in.m = u4(w, 8), u4(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	case fmtRIS:
		in.r1, in.m, in.b, in.imm, in.r2 = u4(w, 8), u4(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), uint8(bitsAt(w, 32, 8))
	case fmtSI:
		in.m, in.b, in.imm = uint8(bitsAt(w, 8, 8)), addrReg(w, 16), int64(bitsAt(w, 20, 12))
	case fmtSIY:
		in.m, in.b, in.imm = uint8(bitsAt(w, 8, 8)), addrReg(w, 16), disp20(w)
	case fmtS:
		in.b, in.imm = addrReg(w, 16), int64(bitsAt(w, 20, 12))
	case fmtSIL:
		in.b, in.imm = addrReg(w, 16), sext(bitsAt(w, 32, 16), 16)<<16|int64(bitsAt(w, 20, 12))
	case fmtSSa:
		in.m, in.b, in.r2 = uint8(bitsAt(w, 8, 8)), addrReg(w, 16), addrReg(w, 32)
		in.imm = int64(bitsAt(w, 36, 12)<<16 | bitsAt(w, 20, 12))
	case fmtVRX:
		in.r1, in.r2, in.b, in.imm, in.m = vreg(w, 8), addrReg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	case fmtVRRa:
		in.r1, in.r2, in.m, in.r3, in.b = vreg(w, 8), vreg(w, 12), u4(w, 32), u4(w, 28), u4(w, 24)
	case fmtVRRb:
		in.r1, in.r2, in.r3, in.m, in.b = vreg(w, 8), vreg(w, 12), vreg(w, 16), u4(w, 32), u4(w, 24)
	case fmtVRRc:
		in.r1, in.r2, in.r3, in.m, in.b, in.imm = vreg(w, 8), vreg(w, 12), vreg(w, 16), u4(w, 32), u4(w, 28), int64(u4(w, 24))
	case fmtVRRd:
		in.r1, in.r2, in.r3, in.b, in.m, in.imm = vreg(w, 8), vreg(w, 12), vreg(w, 16), vreg(w, 32), u4(w, 20), int64(u4(w, 24))
	case fmtVRRe:
		in.r1, in.r2, in.r3, in.b, in.m, in.imm = vreg(w, 8), vreg(w, 12), vreg(w, 16), vreg(w, 32), u4(w, 28), int64(u4(w, 20))
	case fmtVRRf:
		in.r1, in.r2, in.r3 = vreg(w, 8), u4(w, 12), u4(w, 16)
	case fmtVRIa:
		in.r1, in.imm, in.m = vreg(w, 8), sext(bitsAt(w, 16, 16), 16), u4(w, 32)
	case fmtVRIb:
		in.r1, in.r2, in.r3, in.m = vreg(w, 8), uint8(bitsAt(w, 16, 8)), uint8(bitsAt(w, 24, 8)), u4(w, 32)
	case fmtVRIc:
		in.r1, in.r3, in.imm, in.m = vreg(w, 8), vreg(w, 12), int64(bitsAt(w, 16, 16)), u4(w, 32)
	case fmtVRId:
		in.r1, in.r2, in.r3, in.imm, in.m = vreg(w, 8), vreg(w, 12), vreg(w, 16), int64(bitsAt(w, 24, 8)), u4(w, 32)
	case fmtVRIe:
		in.r1, in.r2, in.imm, in.m, in.b = vreg(w, 8), vreg(w, 12), int64(bitsAt(w, 16, 12)), u4(w, 32), u4(w, 28)
	case fmtVRSa:
		in.r1, in.r3, in.b, in.imm, in.m = vreg(w, 8), vreg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	case fmtVRSb:
		in.r1, in.r3, in.b, in.imm, in.m = vreg(w, 8), u4(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	case fmtVRSc:
		in.r1, in.r3, in.b, in.imm, in.m = u4(w, 8), vreg(w, 12), addrReg(w, 16), int64(bitsAt(w, 20, 12)), u4(w, 32)
	}
}

// rotMask is the mask of bits start..end (numbered 0 = most significant,
// wrapping around from 63 to 0) that risbg and its relatives select.
func rotMask(start, end uint8) uint64 {
	lo := ^uint64(0) >> start      // bits start..63
	hi := ^uint64(0) << (63 - end) // bits 0..end
	if start <= end {
		return lo & hi
	}
	return lo | hi
}

// Specification-exception reasons (opSpec's imm).
const (
	specOddPair = iota
	specElement
	specRounding
	specAlign
	specFPPair
)

var specReasons = [...]string{
	specOddPair:  "register pair operand must be even",
	specElement:  "invalid element size or index",
	specRounding: "invalid rounding mode",
	specAlign:    "interlocked operand is not aligned to its size",
	specFPPair:   "extended floating-point operand must be a register pair (0, 1, 4, 5, 8, 9, 12, 13)",
}

func (in *inst) spec(reason int64) { in.op, in.imm = opSpec, reason }

// refine checks operand fields the architecture constrains and replaces
// branches whose outcome the fields decide by cheaper forms.
func (in *inst) refine() {
	switch in.op {
	case opBRC, opBRCL:
		switch in.m {
		case 15:
			in.op = opJ
		case 0:
			in.op = opNop
		}
	case opBCR:
		switch {
		case in.m == 0 || in.r2 == 0:
			in.op = opNop
		case in.m == 15:
			in.op = opBR
		}
	case opBC:
		if in.m == 0 {
			in.op = opNop
		}
	case opPFD, opPFDRL:
		in.op = opNop
	case opM, opMR, opMFY, opML, opMLR, opMLG, opMLGR, opD, opDR, opDL, opDLR, opDLG, opDLGR,
		opDSG, opDSGR, opDSGF, opDSGFR, opSLDL, opSRDL, opSLDA, opSRDA, opFLOGR, opMG, opMGRK:
		if in.r1&1 != 0 {
			in.spec(specOddPair)
		}
	case opMVCL, opCLCL:
		if in.r1&1 != 0 || in.r2&1 != 0 {
			in.spec(specOddPair)
		}
	case opMVCLE, opMVCLU, opCLCLE, opCLCLU:
		if in.r1&1 != 0 || in.r3&1 != 0 {
			in.spec(specOddPair)
		}
	case opCDFBRA, opCDGBRA, opCEFBRA, opCEGBRA, opCDLFBR, opCDLGBR, opCELFBR, opCELGBR,
		opCFDBRA, opCGDBRA, opCFEBRA, opCGEBRA, opCLFDBR, opCLGDBR, opCLFEBR, opCLGEBR,
		opFIDBRA, opFIEBRA, opLEDBRA:
		if !validRounding(in.m) {
			in.spec(specRounding)
		}
	default:
		if isFX(in.op) {
			in.refineFX()
		}
		if in.op >= opVL && in.op < opEnd && !in.validVector() {
			in.spec(specElement)
		}
	}
}

// validRounding reports whether m is a BFP rounding-mode field: 0 (the
// FPC's mode), 1 (nearest, ties away), 3 (prepare for shorter precision)
// or 4-7 (nearest even, zero, +inf, -inf).
func validRounding(m uint8) bool { return m != 2 && m <= 7 }
