package arm64

import "math/bits"

// The A64 decoder: one 32-bit word into one inst. Dispatch follows the
// architecture's top-level encoding table on bits 28:25:
//
//	 31  28 27  25 24                               0
//	┌──────┬─┬───┬─────────────────────────────────────┐
//	│      │ │op0│                                     │
//	└──────┴─┴───┴─────────────────────────────────────┘
//	op0 = 100x data processing (immediate)   101x branches, exceptions, system
//	      x1x0 loads and stores              x101 data processing (register)
//	      x111 SIMD and floating point
//
// Anything not recognised becomes opUndef carrying the word; executing it
// faults (undefined, or unsupported when x/arch knows the encoding).

func field(w uint32, lo, n uint) uint32 { return (w >> lo) & (1<<n - 1) }

func sext(v uint64, n uint) uint64 { return uint64(int64(v<<(64-n)) >> (64 - n)) }

// Register field resolution (see inst.go).
func rReg(f uint32) uint8 { return uint8(f & 31) } // 31 reads xzr
func rSPr(f uint32) uint8 { // 31 is sp
	if f&31 == 31 {
		return rSP
	}
	return uint8(f & 31)
}
func wReg(f uint32) uint8 { // 31 discards
	if f&31 == 31 {
		return rSink
	}
	return uint8(f & 31)
}

func undef(w uint32) inst { return inst{op: opUndef, imm: uint64(w)} }

func decode(w uint32, pc uint64) inst {
	switch field(w, 25, 4) {
	case 0b1000, 0b1001:
		return decodeDPImm(w, pc)
	case 0b1010, 0b1011:
		return decodeBranch(w, pc)
	case 0b0100, 0b0110, 0b1100, 0b1110:
		return decodeLdSt(w, pc)
	case 0b0101, 0b1101:
		return decodeDPReg(w)
	case 0b0111, 0b1111:
		return decodeSIMDFP(w)
	}
	return undef(w)
}

// decodeBitMasks returns the wmask and tmask of a logical or bitfield
// immediate (the architecture's DecodeBitMasks), ok false if reserved.
func decodeBitMasks(n, imms, immr uint32, regSize uint, immediate bool) (wmask, tmask uint64, ok bool) {
	l := bits.Len32(n<<6|(^imms&0x3f)) - 1
	if l < 1 {
		return 0, 0, false
	}
	esize := uint(1) << l
	levels := uint32(esize - 1)
	if immediate && imms&levels == levels {
		return 0, 0, false
	}
	if esize > regSize {
		return 0, 0, false
	}
	s := imms & levels
	r := immr & levels
	d := (s - r) & levels
	welem := uint64(1)<<(s+1) - 1
	telem := uint64(1)<<(d+1) - 1
	if s+1 == 64 {
		welem = ^uint64(0)
	}
	if d+1 == 64 {
		telem = ^uint64(0)
	}
	emask := uint64(1)<<esize - 1
	if esize == 64 {
		emask = ^uint64(0)
	}
	// rotate welem right by r within esize
	if r != 0 {
		welem = ((welem >> r) | (welem << (esize - uint(r)))) & emask
	}
	wmask = replicate(welem, esize, regSize)
	tmask = replicate(telem, esize, regSize)
	return wmask, tmask, true
}

func replicate(v uint64, esize, total uint) uint64 {
	out := uint64(0)
	for i := uint(0); i < total; i += esize {
		out |= v << i
	}
	return out
}

func decodeDPImm(w uint32, pc uint64) inst {
	sf := w>>31 == 1
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	switch field(w, 23, 3) {
	case 0b000, 0b001: // adr, adrp
		imm := sext(uint64(field(w, 5, 19)<<2|field(w, 29, 2)), 21)
		if w>>31 == 1 {
			return inst{op: opMovI, rd: wReg(rd), imm: (pc &^ 0xfff) + imm<<12}
		}
		return inst{op: opMovI, rd: wReg(rd), imm: pc + imm}
	case 0b010: // add/sub immediate
		imm := uint64(field(w, 10, 12))
		if field(w, 22, 1) == 1 {
			imm <<= 12
		}
		opS := field(w, 29, 2) // op:S
		o := [4]op{opAddXi, opAddsXi, opSubXi, opSubsXi}[opS]
		in := inst{op: map32(o, sf), rn: rSPr(rn), imm: imm}
		if opS&1 == 1 {
			in.rd = wReg(rd)
		} else {
			in.rd = rSPr(rd)
		}
		return in
	case 0b100: // logical immediate
		n := field(w, 22, 1)
		if !sf && n == 1 {
			return undef(w)
		}
		size := uint(32)
		if sf {
			size = 64
		}
		wmask, _, ok := decodeBitMasks(n, field(w, 10, 6), field(w, 16, 6), size, true)
		if !ok {
			return undef(w)
		}
		opc := field(w, 29, 2)
		in := inst{rn: rReg(rn), imm: wmask}
		switch opc {
		case 0:
			in.op = opAndXi
		case 1:
			in.op = opOrrXi
			if rn == 31 { // mov (bitmask immediate)
				return inst{op: opMovI, rd: rSPr(rd), imm: wmask}
			}
		case 2:
			in.op = opEorXi
		case 3:
			in.op = opAndsXi
		}
		if opc == 3 {
			in.rd = wReg(rd)
		} else {
			in.rd = rSPr(rd)
		}
		if !sf {
			in.op++ // W form
		}
		return in
	case 0b101: // move wide
		hw := field(w, 21, 2)
		if !sf && hw >= 2 {
			return undef(w)
		}
		imm := uint64(field(w, 5, 16)) << (16 * hw)
		switch field(w, 29, 2) {
		case 0: // movn
			imm = ^imm
			if !sf {
				imm = uint64(uint32(imm))
			}
			return inst{op: opMovI, rd: wReg(rd), imm: imm}
		case 2:
			return inst{op: opMovI, rd: wReg(rd), imm: imm}
		case 3:
			o := opMovKX
			if !sf {
				o = opMovKW
			}
			return inst{op: o, rd: wReg(rd), rn: rReg(rd), a: uint8(16 * hw), imm: imm}
		}
	case 0b110: // bitfield
		return decodeBitfield(w)
	case 0b111: // extract
		if field(w, 29, 2) != 0 || field(w, 21, 1) != 0 || field(w, 22, 1) != w>>31 {
			return undef(w)
		}
		lsb := field(w, 10, 6)
		if !sf && lsb >= 32 {
			return undef(w)
		}
		o := opExtrX
		if !sf {
			o = opExtrW
		}
		return inst{op: o, rd: wReg(rd), rn: rReg(rn), rm: rReg(field(w, 16, 5)), a: uint8(lsb)}
	}
	return undef(w)
}

// map32 turns an X-form add/sub immediate op into its W form.
func map32(o op, sf bool) op {
	if sf {
		return o
	}
	switch o {
	case opAddXi:
		return opAddWi
	case opSubXi:
		return opSubWi
	case opAddsXi:
		return opAddsWi
	case opSubsXi:
		return opSubsWi
	}
	return o
}

func mask(width uint32) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<width - 1
}

func decodeBitfield(w uint32) inst {
	sf := w>>31 == 1
	n := field(w, 22, 1)
	if (sf && n == 0) || (!sf && n == 1) {
		return undef(w)
	}
	size := uint32(32)
	if sf {
		size = 64
	}
	immr, imms := field(w, 16, 6), field(w, 10, 6)
	if !sf && (immr >= 32 || imms >= 32) {
		return undef(w)
	}
	rd, rn := wReg(field(w, 0, 5)), rReg(field(w, 5, 5))
	switch field(w, 29, 2) {
	case 0: // sbfm
		if imms == size-1 { // asr
			return inst{op: pick(sf, opAsrXi, opAsrWi), rd: rd, rn: rn, a: uint8(immr)}
		}
		if imms >= immr { // sbfx: bits [immr, imms]
			return inst{op: pick(sf, opSbfxX, opSbfxW), rd: rd, rn: rn, a: uint8(immr), b: uint8(imms - immr + 1)}
		}
		// sbfiz: bits [0, imms] placed at size-immr
		return inst{op: pick(sf, opSbfizX, opSbfizW), rd: rd, rn: rn, a: uint8(size - immr), b: uint8(imms + 1)}
	case 1: // bfm
		in := inst{rd: rd, rn: rn, ra: rReg(field(w, 0, 5)), b: uint8(size)}
		if imms >= immr {
			in.op, in.a, in.imm = opBfxil, uint8(immr), mask(imms-immr+1)
		} else {
			in.op, in.a, in.imm = opBfi, uint8(size-immr), mask(imms+1)
		}
		return in
	case 2: // ubfm
		if imms == size-1 {
			return inst{op: pick(sf, opLsrXi, opLsrWi), rd: rd, rn: rn, a: uint8(immr)}
		}
		if imms+1 == immr {
			return inst{op: pick(sf, opLslXi, opLslWi), rd: rd, rn: rn, a: uint8(size - immr)}
		}
		if imms >= immr {
			return inst{op: opUbfx, rd: rd, rn: rn, a: uint8(immr), imm: mask(imms - immr + 1)}
		}
		return inst{op: opUbfiz, rd: rd, rn: rn, a: uint8(size - immr), imm: mask(imms + 1)}
	}
	return undef(w)
}

func pick(sf bool, x, w op) op {
	if sf {
		return x
	}
	return w
}

func decodeDPReg(w uint32) inst {
	sf := w>>31 == 1
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	op1 := field(w, 28, 1)
	op2 := field(w, 21, 4)
	if op1 == 0 {
		if op2&8 == 0 { // logical (shifted register)
			return decodeLogicalReg(w)
		}
		shift := uint8(field(w, 22, 2))
		amt := uint8(field(w, 10, 6))
		opS := field(w, 29, 2)
		if op2&1 == 0 { // add/sub (shifted register)
			if shift == 3 || (!sf && amt >= 32) {
				return undef(w)
			}
			base := [4]op{opAddX, opAddsX, opSubX, opSubsX}[opS]
			if shift != shLSL {
				base = [4]op{opAddShX, opAddsShX, opSubShX, opSubsShX}[opS]
			}
			if !sf {
				base++
			}
			return inst{op: base, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm), a: amt, b: shift}
		}
		// add/sub (extended register)
		if field(w, 22, 2) != 0 {
			return undef(w)
		}
		imm3 := uint8(field(w, 10, 3))
		if imm3 > 4 {
			return undef(w)
		}
		option := uint8(field(w, 13, 3))
		base := [4]op{opAddExtX, opAddsExtX, opSubExtX, opSubsExtX}[opS]
		if !sf {
			base++
		}
		in := inst{op: base, rn: rSPr(rn), rm: rReg(rm), a: imm3, b: option}
		if opS&1 == 1 {
			in.rd = wReg(rd)
		} else {
			in.rd = rSPr(rd)
		}
		return in
	}
	switch {
	case op2 == 0b0000: // add/sub with carry
		if field(w, 10, 6) != 0 {
			return undef(w)
		}
		base := [4]op{opAdcX, opAdcsX, opSbcX, opSbcsX}[field(w, 29, 2)]
		if !sf {
			base++
		}
		return inst{op: base, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm)}
	case op2 == 0b0010: // conditional compare
		if field(w, 29, 1) != 1 || field(w, 10, 1) != 0 || field(w, 4, 1) != 0 {
			return undef(w)
		}
		base := opCcmnX
		if field(w, 30, 1) == 1 {
			base = opCcmpX
		}
		if !sf {
			base++
		}
		in := inst{op: base, rn: rReg(rn), rm: rReg(rm), a: uint8(field(w, 12, 4)), b: uint8(field(w, 0, 4))}
		if field(w, 11, 1) == 1 { // immediate form
			in.rm = 0xff
			in.imm = uint64(rm)
		}
		return in
	case op2 == 0b0100: // conditional select
		if field(w, 29, 1) != 0 || field(w, 11, 1) != 0 {
			return undef(w)
		}
		var base op
		switch field(w, 30, 1)<<1 | field(w, 10, 1) {
		case 0:
			base = opCselX
		case 1:
			base = opCsincX
		case 2:
			base = opCsinvX
		case 3:
			base = opCsnegX
		}
		if !sf {
			base++
		}
		return inst{op: base, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm), a: uint8(field(w, 12, 4))}
	case op2 == 0b0110:
		if field(w, 29, 1) != 0 {
			return undef(w)
		}
		if field(w, 30, 1) == 0 { // 2-source
			opc := field(w, 10, 6)
			var base op
			switch opc {
			case 0b000010:
				base = opUdivX
			case 0b000011:
				base = opSdivX
			case 0b001000:
				base = opLslvX
			case 0b001001:
				base = opLsrvX
			case 0b001010:
				base = opAsrvX
			case 0b001011:
				base = opRorvX
			case 0b010000, 0b010001, 0b010010, 0b010011, 0b010100, 0b010101, 0b010110, 0b010111:
				sz := opc & 3
				if (sz == 3) != sf {
					return undef(w)
				}
				return inst{op: opCrc32, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm), a: uint8(sz), b: uint8(opc >> 2 & 1)}
			default:
				return undef(w)
			}
			if !sf {
				base++
			}
			return inst{op: base, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm)}
		}
		// 1-source
		if rm != 0 {
			return undef(w)
		}
		var o op
		switch field(w, 10, 6) {
		case 0:
			o = pick(sf, opRbitX, opRbitW)
		case 1:
			o = pick(sf, opRev16X, opRev16W)
		case 2:
			o = pick(sf, opRev32X, opRevW)
		case 3:
			if !sf {
				return undef(w)
			}
			o = opRevX
		case 4:
			o = pick(sf, opClzX, opClzW)
		case 5:
			o = pick(sf, opClsX, opClsW)
		default:
			return undef(w)
		}
		return inst{op: o, rd: wReg(rd), rn: rReg(rn)}
	case op2&8 == 8: // 3-source
		if field(w, 29, 2) != 0 {
			return undef(w)
		}
		ra := rReg(field(w, 10, 5))
		in := inst{rd: wReg(rd), rn: rReg(rn), rm: rReg(rm), ra: ra}
		o0 := field(w, 15, 1)
		switch field(w, 21, 3)<<1 | o0 {
		case 0b0000:
			in.op = pick(sf, opMaddX, opMaddW)
		case 0b0001:
			in.op = pick(sf, opMsubX, opMsubW)
		case 0b0010:
			in.op = opSmaddl
		case 0b0011:
			in.op = opSmsubl
		case 0b0100:
			in.op = opSmulh
		case 0b1010:
			in.op = opUmaddl
		case 0b1011:
			in.op = opUmsubl
		case 0b1100:
			in.op = opUmulh
		default:
			return undef(w)
		}
		if !sf && in.op != opMaddW && in.op != opMsubW {
			return undef(w)
		}
		return in
	}
	return undef(w)
}

func decodeLogicalReg(w uint32) inst {
	sf := w>>31 == 1
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	shift := uint8(field(w, 22, 2))
	amt := uint8(field(w, 10, 6))
	if !sf && amt >= 32 {
		return undef(w)
	}
	kind := field(w, 29, 2)<<1 | field(w, 21, 1) // opc:N
	// mov (orr with xzr, no shift)
	if kind == 0b010 && rn == 31 && amt == 0 {
		return inst{op: pick(sf, opMovX, opMovW), rd: wReg(rd), rm: rReg(rm)}
	}
	if shift != shLSL {
		o := pick(sf, opLogShX, opLogShW)
		return inst{op: o, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm), a: amt, b: shift, imm: uint64(kind)}
	}
	base := [8]op{opAndX, opBicX, opOrrX, opOrnX, opEorX, opEonX, opAndsX, opBicsX}[kind]
	if !sf {
		base++
	}
	return inst{op: base, rd: wReg(rd), rn: rReg(rn), rm: rReg(rm), a: amt}
}

func decodeBranch(w uint32, pc uint64) inst {
	switch {
	case field(w, 26, 5) == 0b00101: // b, bl
		target := pc + sext(uint64(field(w, 0, 26))<<2, 28)
		if w>>31 == 1 {
			return inst{op: opBL, imm: target}
		}
		return inst{op: opB, imm: target}
	case field(w, 25, 7) == 0b0101010: // b.cond
		if field(w, 24, 1) != 0 || field(w, 4, 1) != 0 {
			return undef(w)
		}
		return inst{op: opBcond, a: uint8(field(w, 0, 4)), imm: pc + sext(uint64(field(w, 5, 19))<<2, 21)}
	case field(w, 25, 6) == 0b011010: // cbz, cbnz
		sf := w>>31 == 1
		o := pick(sf, opCbzX, opCbzW)
		if field(w, 24, 1) == 1 {
			o = pick(sf, opCbnzX, opCbnzW)
		}
		return inst{op: o, rn: rReg(field(w, 0, 5)), imm: pc + sext(uint64(field(w, 5, 19))<<2, 21)}
	case field(w, 25, 6) == 0b011011: // tbz, tbnz
		bit := field(w, 31, 1)<<5 | field(w, 19, 5)
		o := opTbz
		if field(w, 24, 1) == 1 {
			o = opTbnz
		}
		return inst{op: o, rn: rReg(field(w, 0, 5)), a: uint8(bit), imm: pc + sext(uint64(field(w, 5, 14))<<2, 16)}
	case field(w, 24, 8) == 0b11010100: // exception generation
		opc, ll, op2 := field(w, 21, 3), field(w, 0, 2), field(w, 2, 3)
		if op2 != 0 {
			return undef(w)
		}
		switch {
		case opc == 0 && ll == 1:
			return inst{op: opSvc, imm: uint64(field(w, 5, 16))}
		case opc == 1 && ll == 0:
			return inst{op: opBrk, imm: uint64(field(w, 5, 16))}
		}
		return undef(w) // hvc, smc, hlt, dcps: not at EL0
	case field(w, 22, 10) == 0b1101010100: // system
		return decodeSystem(w)
	case field(w, 25, 7) == 0b1101011: // unconditional branch (register)
		opc, op2, op3, op4 := field(w, 21, 4), field(w, 16, 5), field(w, 10, 6), field(w, 0, 5)
		if op2 != 31 || op3 != 0 || op4 != 0 {
			return undef(w) // includes the pointer-authenticating forms (no FEAT_PAuth)
		}
		rn := rReg(field(w, 5, 5))
		switch opc {
		case 0:
			return inst{op: opBr, rn: rn}
		case 1:
			return inst{op: opBlr, rn: rn}
		case 2:
			return inst{op: opRet, rn: rn}
		}
		return undef(w)
	}
	return undef(w)
}

// System registers reachable from EL0 (mrs/msr), by op0:op1:CRn:CRm:op2.
const (
	sysNZCV    = 1 + iota
	sysFPCR    //
	sysFPSR    //
	sysTPIDR   //
	sysTPIDRRO //
	sysCNTVCT  //
	sysCNTFRQ  //
	sysDCZID   //
	sysCTR     //
	sysMIDR    // Linux emulates reads of the ID registers for EL0
	sysMPIDR   //
	sysREVIDR  //
	sysIDAA64  // ID_AA64*: imm = encoding
	sysCNTPCT  //
)

func sysRegID(enc uint32) (id uint8, ok bool) {
	switch enc {
	case 0b11_011_0100_0010_000:
		return sysNZCV, true
	case 0b11_011_0100_0100_000:
		return sysFPCR, true
	case 0b11_011_0100_0100_001:
		return sysFPSR, true
	case 0b11_011_1101_0000_010:
		return sysTPIDR, true
	case 0b11_011_1101_0000_011:
		return sysTPIDRRO, true
	case 0b11_011_1110_0000_010:
		return sysCNTVCT, true
	case 0b11_011_1110_0000_001:
		return sysCNTPCT, true
	case 0b11_011_1110_0000_000:
		return sysCNTFRQ, true
	case 0b11_011_0000_0000_111:
		return sysDCZID, true
	case 0b11_011_0000_0000_001:
		return sysCTR, true
	case 0b11_000_0000_0000_000:
		return sysMIDR, true
	case 0b11_000_0000_0000_101:
		return sysMPIDR, true
	case 0b11_000_0000_0000_110:
		return sysREVIDR, true
	}
	// ID_AA64xxx_EL1: op0=3 op1=0 CRn=0 CRm=4..7
	if enc>>7 == 0b11_000_0000 && field(enc, 3, 4) >= 4 && field(enc, 3, 4) <= 7 {
		return sysIDAA64, true
	}
	return 0, false
}

func decodeSystem(w uint32) inst {
	l := field(w, 21, 1)
	op0 := field(w, 19, 2)
	op1, crn, crm, op2 := field(w, 16, 3), field(w, 12, 4), field(w, 8, 4), field(w, 5, 3)
	rt := field(w, 0, 5)
	switch {
	case l == 0 && op0 == 0 && crn == 2 && op1 == 3 && rt == 31: // hints (nop, yield, pac*, bti, ...)
		return inst{op: opNop}
	case l == 0 && op0 == 0 && crn == 3 && op1 == 3 && rt == 31: // barriers
		switch op2 {
		case 2:
			return inst{op: opClrex}
		case 4, 5, 6:
			return inst{op: opNop} // dsb, dmb, isb (code changes are caught on write)
		}
		return undef(w)
	case op0 == 1 && l == 0: // sys: cache maintenance
		switch {
		case op1 == 3 && crn == 7 && crm == 4 && op2 == 1: // dc zva
			return inst{op: opDcZva, rn: rReg(rt)}
		case op1 == 3 && crn == 7 && (crm == 11 || crm == 10 || crm == 14 || crm == 12 || crm == 13) && op2 == 1, // dc cvau, cvac, civac, cvap, cvadp
			op1 == 3 && crn == 7 && crm == 5 && op2 == 1: // ic ivau
			return inst{op: opSysNop, rn: rReg(rt)}
		}
		return undef(w)
	case op0 >= 2:
		enc := op0<<14 | op1<<11 | crn<<7 | crm<<3 | op2
		id, ok := sysRegID(enc)
		if !ok {
			return undef(w)
		}
		if l == 1 {
			return inst{op: opMrs, rd: wReg(rt), a: id, imm: uint64(enc)}
		}
		switch id {
		case sysNZCV, sysFPCR, sysFPSR, sysTPIDR:
			return inst{op: opMsr, rn: rReg(rt), a: id, imm: uint64(enc)}
		}
		return undef(w)
	}
	return undef(w)
}
