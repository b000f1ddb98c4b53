package arm64

// AdvSIMD decoding into opSimd instructions. The sub-operation sits in the
// low 16 bits of inst.imm and an immediate operand (shift, index, pattern
// selector) above it; inst.a is the element size (log2 bytes) and inst.b
// holds the flags below.
const (
	sfQ        = 1 << iota // 128-bit vector (else 64-bit, upper half zeroed)
	sfScalar               // scalar form: one element, rest of the register zeroed
	sfUnsigned             // unsigned variant
	sfPart2                // "2" variants: use/produce the upper half
	sfRound                // rounding variant
	sfAcc                  // accumulate into the destination
)

// Sub-operations.
const (
	_ = iota // 0: not an operation
	// three same, integer
	vAdd
	vSub
	vMul
	vMla
	vMls
	vAnd
	vBic
	vOrr
	vOrn
	vEor
	vBsl
	vBit
	vBif
	vCmgt
	vCmhi
	vCmge
	vCmhs
	vCmeq
	vCmtst
	vMax // signed unless sfUnsigned
	vMin
	vHadd
	vHsub
	vQadd
	vQsub
	vShl    // sshl/ushl (by register), sfRound for srshl/urshl
	vQshlR  // sqshl/uqshl by register
	vAbd    // sabd/uabd, sfAcc for saba/uaba
	vAddp   // addp
	vMaxp   //
	vMinp   //
	vQdmulh // sqdmulh, sfRound for sqrdmulh
	vPmul
	// three same, FP (a = 2 or 3)
	vFadd
	vFsub
	vFmul
	vFdiv
	vFmax
	vFmin
	vFmaxnm
	vFminnm
	vFmla
	vFmls
	vFcmeq
	vFcmge
	vFcmgt
	vFacge
	vFacgt
	vFaddp
	vFabd
	vFmulx
	vFmaxp
	vFminp
	vFmaxnmp
	vFminnmp
	vFrecps
	vFrsqrts
	// three different (a = source element size)
	vAddl
	vAddw
	vSubl
	vSubw
	vAddhn
	vSubhn
	vAbal
	vAbdl
	vMlal
	vMlsl
	vMull
	vPmull
	vQdmull
	vQdmlal
	vQdmlsl
	// two-register misc
	vRev64
	vRev32
	vRev16
	vAddlp // sfAcc for sadalp/uadalp
	vCls
	vClz
	vCnt
	vNot
	vRbit
	vCmgt0
	vCmge0
	vCmeq0
	vCmle0
	vCmlt0
	vAbs
	vNeg
	vXtn
	vQxtn  // sqxtn/uqxtn
	vQxtun // sqxtun
	vShll  // shll: shift by element size
	vQabs
	vQneg
	vSuqadd // suqadd/usqadd
	vFabs
	vFneg
	vFsqrt
	vFrint // imm = rounding mode
	vFcvti // fp to integer, imm = rounding mode
	vIcvtf // integer to fp
	vFcmgt0
	vFcmge0
	vFcmeq0
	vFcmle0
	vFcmlt0
	vFcvtn  // double->single / single->half narrowing
	vFcvtl  // widening
	vFcvtxn // round to odd
	vFrecpe
	vFrsqrte
	vFrecpx
	vUrecpe
	vUrsqrte
	// across lanes
	vAddv
	vAddlv
	vMaxv
	vMinv
	vFmaxv
	vFminv
	vFmaxnmv
	vFminnmv
	// copy
	vDupElem // imm = index
	vDupGen
	vInsGen  // imm = index
	vInsElem // imm = dst index | src index << 8
	vSmov
	vUmov
	// modified immediate: imm>>16 is not enough for 64 bits; ra:rm:rn hold
	// nothing, so the pattern is stored in simdImm (see execSIMD)
	vMovi
	vMvni
	vOrrImm
	vBicImm
	// shift by immediate (imm = shift)
	vShr // sshr/ushr, sfRound, sfAcc
	vSri
	vShlI
	vSli
	vQshlI  // sqshl/uqshl immediate
	vQshluI // sqshlu
	vShrn   // sfRound for rshrn
	vQshrn  // sqshrn/uqshrn, sfRound
	vQshrun // sqshrun, sfRound
	vShllI  // sshll/ushll
	vIcvtfFix
	vFcvtzFix
	// permute, extract, table
	vUzp1
	vUzp2
	vTrn1
	vTrn2
	vZip1
	vZip2
	vExt // imm = byte index
	vTbl // ra = number of table registers, sfAcc = tbx
	// by element (imm = index)
	vMulIdx
	vMlaIdx
	vMlsIdx
	vMullIdx
	vMlalIdx
	vMlslIdx
	vQdmulhIdx
	vQdmullIdx
	vQdmlalIdx
	vQdmlslIdx
	vFmulIdx
	vFmlaIdx
	vFmlsIdx
	vFmulxIdx
	// dot product (FEAT_DotProd): sdot/udot, vector and by element (imm = index)
	vDot
	vDotIdx
)

func simd(sub int, rd, rn, rm uint32, es uint8, flags uint8, imm uint64) inst {
	return inst{op: opSimd, rd: uint8(rd), rn: uint8(rn), rm: uint8(rm), a: es, b: flags, imm: uint64(sub) | imm<<16}
}

func qflag(w uint32) uint8 { return uint8(field(w, 30, 1)) * sfQ }

func decodeAdvSIMD(w uint32) inst {
	if in, ok := decodeCrypto(w); ok {
		return in
	}
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	scalar := field(w, 28, 1) == 1 // 01x1 1110 forms
	if scalar && (w>>30) != 1 {
		return undef(w)
	}
	if !scalar && w>>31 != 0 {
		return undef(w)
	}
	u := field(w, 29, 1)
	flags := qflag(w)
	if scalar {
		flags = sfScalar
	}
	if u == 1 {
		flags |= sfUnsigned
	}
	size := uint8(field(w, 22, 2))
	switch field(w, 24, 5) {
	case 0b01110, 0b11110:
		if field(w, 21, 1) == 1 {
			switch {
			case field(w, 10, 1) == 1:
				return decodeThreeSame(w, flags)
			case field(w, 10, 2) == 0:
				if scalar { // sqdmlal, sqdmlsl, sqdmull (scalar)
					sub := map[uint32]int{9: vQdmlal, 11: vQdmlsl, 13: vQdmull}[field(w, 12, 4)]
					if sub == 0 || u == 1 || size == 0 || size == 3 {
						return undef(w)
					}
					return simd(sub, rd, rn, rm, size, sfScalar, 0)
				}
				return decodeThreeDiff(w, flags)
			case field(w, 17, 4) == 0b0000 && field(w, 10, 2) == 2:
				return decodeTwoMisc(w, flags)
			case field(w, 17, 4) == 0b1000 && field(w, 10, 2) == 2:
				if scalar {
					return decodePairwiseScalar(w, flags)
				}
				return decodeAcross(w, flags)
			}
			return undef(w)
		}
		if size == 0 && field(w, 15, 1) == 0 && field(w, 10, 1) == 1 {
			return decodeCopy(w, scalar)
		}
		// three same (extra) with opcode 0010: sdot/udot Vd.<2S|4S>,
		// Vn.<8B|16B>, Vm.<8B|16B> (Arm ARM C7.2: SDOT (vector))
		if !scalar && size == 2 && field(w, 15, 1) == 1 && field(w, 10, 5) == 0b00101 {
			return simd(vDot, rd, rn, rm, 2, flags, 0)
		}
		if scalar || field(w, 15, 1) != 0 {
			return undef(w)
		}
		if u == 0 && field(w, 10, 2) == 2 { // permute
			sub := [8]int{0, vUzp1, vTrn1, vZip1, 0, vUzp2, vTrn2, vZip2}[field(w, 12, 3)]
			if sub == 0 || (size == 3 && flags&sfQ == 0) {
				return undef(w)
			}
			return simd(sub, rd, rn, rm, size, flags&sfQ, 0)
		}
		if u == 0 && field(w, 10, 2) == 0 && size == 0 { // tbl, tbx
			in := simd(vTbl, rd, rn, rm, 0, flags&sfQ, 0)
			in.ra = uint8(field(w, 13, 2) + 1)
			if field(w, 12, 1) == 1 {
				in.b |= sfAcc
			}
			return in
		}
		if u == 1 && field(w, 10, 1) == 0 && size == 0 { // ext
			idx := field(w, 11, 4)
			if flags&sfQ == 0 && idx >= 8 {
				return undef(w)
			}
			return simd(vExt, rd, rn, rm, 0, flags&sfQ, uint64(idx))
		}
	case 0b01111, 0b11111:
		if field(w, 10, 1) == 0 {
			return decodeByElem(w, flags)
		}
		if field(w, 23, 1) != 0 {
			return undef(w)
		}
		if field(w, 19, 4) == 0 {
			if scalar {
				return undef(w)
			}
			return decodeModImm(w)
		}
		return decodeShiftImm(w, flags)
	}
	return undef(w)
}

func decodeCopy(w uint32, scalar bool) inst {
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	imm5, imm4 := field(w, 16, 5), field(w, 11, 4)
	opb := field(w, 29, 1)
	q := qflag(w)
	if imm5&0xf == 0 {
		return undef(w)
	}
	es := uint8(0)
	for imm5>>es&1 == 0 {
		es++
	}
	idx := uint64(imm5 >> (es + 1))
	if scalar {
		if opb != 0 || imm4 != 0 {
			return undef(w)
		}
		return simd(vDupElem, rd, rn, 0, es, sfScalar, idx)
	}
	if opb == 1 {
		if q == 0 {
			return undef(w)
		}
		src := uint64(imm4 >> es)
		return simd(vInsElem, rd, rn, 0, es, sfQ, idx|src<<8)
	}
	switch imm4 {
	case 0:
		if es == 3 && q == 0 {
			return undef(w)
		}
		return simd(vDupElem, rd, rn, 0, es, q, idx)
	case 1:
		if es == 3 && q == 0 {
			return undef(w)
		}
		in := simd(vDupGen, rd, 0, 0, es, q, 0)
		in.rn = rReg(rn)
		return in
	case 3:
		if q == 0 {
			return undef(w)
		}
		in := simd(vInsGen, rd, 0, 0, es, sfQ, idx)
		in.rn = rReg(rn)
		return in
	case 5, 7:
		sub := vUmov
		if imm4 == 5 {
			sub = vSmov
			if es >= 2+uint8(q) || (q == 0 && es == 2) {
				return undef(w)
			}
		} else if (q == sfQ) != (es == 3) {
			return undef(w)
		}
		in := simd(sub, 0, rn, 0, es, q, idx)
		in.rd = wReg(rd)
		return in
	}
	return undef(w)
}

// advSIMDExpandImm expands the modified-immediate fields into 64 bits.
func advSIMDExpandImm(opb, cmode, imm8 uint32) (uint64, bool) {
	v := uint64(imm8)
	switch cmode >> 1 {
	case 0, 1, 2, 3:
		sh := 8 * (cmode >> 1)
		return replicate(v<<sh, 32, 64), true
	case 4, 5:
		sh := 8 * (cmode >> 1 & 1)
		return replicate(v<<sh, 16, 64), true
	case 6:
		if cmode&1 == 0 {
			return replicate(v<<8|0xff, 32, 64), true
		}
		return replicate(v<<16|0xffff, 32, 64), true
	case 7:
		switch {
		case cmode&1 == 0 && opb == 0:
			return replicate(v, 8, 64), true
		case cmode&1 == 0 && opb == 1:
			var r uint64
			for i := 0; i < 8; i++ {
				if imm8>>i&1 == 1 {
					r |= 0xff << (8 * i)
				}
			}
			return r, true
		case cmode&1 == 1 && opb == 0:
			return replicate(vfpExpandImm(imm8, 0), 32, 64), true
		default:
			return vfpExpandImm(imm8, 1), true
		}
	}
	return 0, false
}

func decodeModImm(w uint32) inst {
	rd := field(w, 0, 5)
	q := qflag(w)
	opb, cmode, o2 := field(w, 29, 1), field(w, 12, 4), field(w, 11, 1)
	imm8 := field(w, 16, 3)<<5 | field(w, 5, 5)
	if o2 == 1 {
		return undef(w) // fmov (half precision) needs FEAT_FP16
	}
	if cmode == 0b1111 && opb == 1 && q == 0 {
		return undef(w)
	}
	pat, ok := advSIMDExpandImm(opb, cmode, imm8)
	if !ok {
		return undef(w)
	}
	sub := vMovi
	switch {
	case cmode < 8 && cmode&1 == 1 || (cmode == 9 || cmode == 11):
		sub = vOrrImm
		if opb == 1 {
			sub = vBicImm
		}
	case cmode == 0b1110 || cmode == 0b1111:
		sub = vMovi
	case opb == 1:
		sub = vMvni
	}
	in := simd(sub, rd, 0, 0, 3, q, 0)
	// The 64-bit pattern does not fit next to the sub-op: keep the sub-op in
	// ra and the pattern in imm.
	in.ra = uint8(sub)
	in.imm = pat
	in.op = opSimdImm
	return in
}

func decodeShiftImm(w uint32, flags uint8) inst {
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	immh, immb := field(w, 19, 4), field(w, 16, 3)
	opc := field(w, 11, 5)
	u := flags&sfUnsigned != 0
	scalar := flags&sfScalar != 0
	es := uint8(3)
	for immh>>es&1 == 0 {
		es--
	}
	esize := uint32(8) << es
	immhb := immh<<3 | immb
	right := 2*esize - immhb // shift amount for right shifts
	left := immhb - esize
	if es == 3 && flags&sfQ == 0 && !scalar && opc != 0b10000 && opc != 0b10001 && opc != 0b10010 && opc != 0b10011 && opc != 0b10100 {
		return undef(w)
	}
	mk := func(sub int, f uint8, sh uint32) inst { return simd(sub, rd, rn, 0, es, flags|f, uint64(sh)) }
	if scalar { // scalar forms: shifts and inserts on 64-bit only; saturating,
		// narrowing and conversions at their own sizes
		switch opc {
		case 0b00000, 0b00010, 0b00100, 0b00110, 0b01000, 0b01010:
			if es != 3 {
				return undef(w)
			}
		case 0b10100:
			return undef(w)
		}
	}
	switch opc {
	case 0b00000:
		return mk(vShr, 0, right)
	case 0b00010:
		return mk(vShr, sfAcc, right)
	case 0b00100:
		return mk(vShr, sfRound, right)
	case 0b00110:
		return mk(vShr, sfRound|sfAcc, right)
	case 0b01000:
		if u {
			return mk(vSri, 0, right)
		}
	case 0b01010:
		if u {
			return mk(vSli, 0, left)
		}
		return mk(vShlI, 0, left)
	case 0b01100:
		if u {
			return mk(vQshluI, 0, left)
		}
	case 0b01110:
		return mk(vQshlI, 0, left)
	case 0b10000, 0b10001, 0b10010, 0b10011: // narrowing: es is the destination size
		if es == 3 {
			return undef(w)
		}
		var f uint8
		if opc&1 == 1 {
			f = sfRound
		}
		if !scalar && flags&sfQ != 0 {
			f |= sfPart2
		}
		base := flags &^ sfQ
		switch {
		case opc <= 0b10001 && !u:
			if scalar {
				return undef(w)
			}
			return simd(vShrn, rd, rn, 0, es, base|f, uint64(right))
		case opc <= 0b10001 && u:
			return simd(vQshrun, rd, rn, 0, es, (base|f)&^sfUnsigned, uint64(right))
		default:
			return simd(vQshrn, rd, rn, 0, es, base|f, uint64(right))
		}
	case 0b10100: // sshll/ushll: es is the source size
		if es == 3 || scalar {
			return undef(w)
		}
		f := uint8(0)
		if flags&sfQ != 0 {
			f = sfPart2
		}
		return simd(vShllI, rd, rn, 0, es, flags&^sfQ|f, uint64(left))
	case 0b11100: // scvtf/ucvtf (fixed point)
		if es < 2 {
			return undef(w)
		}
		return mk(vIcvtfFix, 0, right)
	case 0b11111:
		if es < 2 {
			return undef(w)
		}
		return mk(vFcvtzFix, 0, right)
	}
	return undef(w)
}

func decodeThreeSame(w uint32, flags uint8) inst {
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	size := uint8(field(w, 22, 2))
	opc := field(w, 11, 5)
	u := flags&sfUnsigned != 0
	scalar := flags&sfScalar != 0
	q := flags&sfQ != 0
	if opc >= 0b11000 { // FP: size<1> = a, size<0> = sz
		a := size >> 1
		es := 2 + size&1
		if es == 3 && !q && !scalar {
			return undef(w)
		}
		var sub int
		switch opc<<2 | uint32(b2u(u))<<1 | uint32(a) {
		case 0b11000_0_0:
			sub = vFmaxnm
		case 0b11000_0_1:
			sub = vFminnm
		case 0b11001_0_0:
			sub = vFmla
		case 0b11001_0_1:
			sub = vFmls
		case 0b11010_0_0:
			sub = vFadd
		case 0b11010_0_1:
			sub = vFsub
		case 0b11011_0_0:
			sub = vFmulx
		case 0b11100_0_0:
			sub = vFcmeq
		case 0b11110_0_0:
			sub = vFmax
		case 0b11110_0_1:
			sub = vFmin
		case 0b11111_0_0:
			sub = vFrecps
		case 0b11111_0_1:
			sub = vFrsqrts
		case 0b11000_1_0:
			sub = vFmaxnmp
		case 0b11000_1_1:
			sub = vFminnmp
		case 0b11010_1_0:
			sub = vFaddp
		case 0b11010_1_1:
			sub = vFabd
		case 0b11011_1_0:
			sub = vFmul
		case 0b11100_1_0:
			sub = vFcmge
		case 0b11100_1_1:
			sub = vFcmgt
		case 0b11101_1_0:
			sub = vFacge
		case 0b11101_1_1:
			sub = vFacgt
		case 0b11110_1_0:
			sub = vFmaxp
		case 0b11110_1_1:
			sub = vFminp
		case 0b11111_1_0:
			sub = vFdiv
		}
		if sub == 0 {
			return undef(w)
		}
		if scalar {
			switch sub {
			case vFabd, vFmulx, vFcmeq, vFcmge, vFcmgt, vFacge, vFacgt, vFrecps, vFrsqrts:
			default:
				return undef(w)
			}
		}
		return simd(sub, rd, rn, rm, es, flags, 0)
	}
	var sub int
	var f uint8
	switch opc {
	case 0b00000:
		sub = vHadd
	case 0b00001:
		sub = vQadd
	case 0b00010:
		sub, f = vHadd, sfRound
	case 0b00011:
		if scalar {
			return undef(w)
		}
		if !u {
			sub = [4]int{vAnd, vBic, vOrr, vOrn}[size]
		} else {
			sub = [4]int{vEor, vBsl, vBit, vBif}[size]
		}
		return simd(sub, rd, rn, rm, 0, flags, 0)
	case 0b00100:
		sub = vHsub
	case 0b00101:
		sub = vQsub
	case 0b00110:
		sub = pickInt(u, vCmhi, vCmgt)
	case 0b00111:
		sub = pickInt(u, vCmhs, vCmge)
	case 0b01000:
		sub = vShl
	case 0b01001:
		sub = vQshlR
	case 0b01010:
		sub, f = vShl, sfRound
	case 0b01011:
		sub, f = vQshlR, sfRound
	case 0b01100:
		sub = vMax
	case 0b01101:
		sub = vMin
	case 0b01110:
		sub = vAbd
	case 0b01111:
		sub, f = vAbd, sfAcc
	case 0b10000:
		sub = pickInt(u, vSub, vAdd)
	case 0b10001:
		sub = pickInt(u, vCmeq, vCmtst)
	case 0b10010:
		sub = pickInt(u, vMls, vMla)
	case 0b10011:
		sub = pickInt(u, vPmul, vMul)
		if u && size != 0 {
			return undef(w)
		}
	case 0b10100:
		sub = vMaxp
	case 0b10101:
		sub = vMinp
	case 0b10110:
		sub = vQdmulh
		if u {
			f = sfRound
		}
		if size == 0 || size == 3 {
			return undef(w)
		}
		return simd(sub, rd, rn, rm, size, flags&^sfUnsigned|f, 0)
	case 0b10111:
		if u {
			return undef(w)
		}
		sub = vAddp
	}
	if sub == 0 {
		return undef(w)
	}
	if size == 3 && !q && !scalar {
		return undef(w)
	}
	if scalar {
		switch sub {
		case vQadd, vQsub, vQshlR:
		case vAdd, vSub, vCmgt, vCmhi, vCmge, vCmhs, vCmeq, vCmtst, vShl:
			if size != 3 {
				return undef(w)
			}
		default:
			return undef(w)
		}
	}
	switch sub {
	case vMul, vMla, vMls, vMaxp, vMinp, vMax, vMin, vHadd, vHsub, vAbd:
		if size == 3 {
			return undef(w)
		}
	}
	return simd(sub, rd, rn, rm, size, flags|f, 0)
}

func pickInt(u bool, ifU, ifS int) int {
	if u {
		return ifU
	}
	return ifS
}

func decodeThreeDiff(w uint32, flags uint8) inst {
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	size := uint8(field(w, 22, 2))
	opc := field(w, 12, 4)
	u := flags&sfUnsigned != 0
	f := flags &^ sfQ
	if flags&sfQ != 0 {
		f |= sfPart2
	}
	if size == 3 && opc != 0b1110 {
		return undef(w)
	}
	var sub int
	switch opc {
	case 0:
		sub = vAddl
	case 1:
		sub = vAddw
	case 2:
		sub = vSubl
	case 3:
		sub = vSubw
	case 4:
		sub = vAddhn
	case 5:
		sub, f = vAbal, f|sfAcc
	case 6:
		sub = vSubhn
	case 7:
		sub = vAbdl
	case 8:
		sub = vMlal
	case 9:
		sub = vQdmlal
	case 10:
		sub = vMlsl
	case 11:
		sub = vQdmlsl
	case 12:
		sub = vMull
	case 13:
		sub = vQdmull
	case 14:
		sub = vPmull
		if u || (size != 0 && size != 3) {
			return undef(w)
		}
		if size == 3 { // the 64-bit form belongs to the AES extension
			return simd(vPmull64, rd, rn, rm, 3, f, 0)
		}
	}
	if sub == vAddhn || sub == vSubhn {
		if u {
			f = f&^sfUnsigned | sfRound
		}
	}
	if (sub == vQdmlal || sub == vQdmlsl || sub == vQdmull) && (u || size == 0) {
		return undef(w)
	}
	if sub == 0 {
		return undef(w)
	}
	return simd(sub, rd, rn, rm, size, f, 0)
}

func decodeTwoMisc(w uint32, flags uint8) inst {
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	size := uint8(field(w, 22, 2))
	opc := field(w, 12, 5)
	u := flags&sfUnsigned != 0
	scalar := flags&sfScalar != 0
	q := flags&sfQ != 0
	mk := func(sub int, es uint8, f uint8, imm uint64) inst { return simd(sub, rd, rn, 0, es, flags|f, imm) }
	fpES := 2 + size&1
	fpOK := scalar || q || fpES == 2
	if opc >= 0b01100 && opc != 0b10010 && opc != 0b10011 && opc != 0b10100 { // FP forms (and a few integer ones in the same rows)
		hi := size >> 1
		if (opc == 0b10110 || opc == 0b10111) && hi != 0 {
			return undef(w)
		}
		switch {
		case opc == 0b10110: // fcvtn / fcvtxn
			if scalar && (!u || size&1 == 0) {
				return undef(w)
			}
			if u {
				if size&1 == 0 {
					return undef(w)
				}
				return mk(vFcvtxn, 2, partFlag(q), 0)
			}
			return simd(vFcvtn, rd, rn, 0, 1+size&1, flags&^sfQ|partFlag(q), 0)
		case opc == 0b10111 && !u && !scalar: // fcvtl: a = destination size
			return simd(vFcvtl, rd, rn, 0, 2+size&1, flags&^sfQ|partFlag(q), 0)
		}
		if !fpOK {
			return undef(w)
		}
		key := opc<<2 | uint32(b2u(u))<<1 | uint32(hi)
		if scalar && (opc == 0b11000 || opc == 0b11001) { // frint*: vector only
			return undef(w)
		}
		switch key {
		case 0b11000_0_0:
			return mk(vFrint, fpES, 0, rnEven)
		case 0b11000_0_1:
			return mk(vFrint, fpES, 0, rnPos)
		case 0b11001_0_0:
			return mk(vFrint, fpES, 0, rnNeg)
		case 0b11001_0_1:
			return mk(vFrint, fpES, 0, rnZero)
		case 0b11000_1_0:
			return mk(vFrint, fpES, 0, rnAway)
		case 0b11001_1_0:
			return mk(vFrint, fpES, 0, rnExact)
		case 0b11001_1_1:
			return mk(vFrint, fpES, 0, rnCur)
		case 0b11010_0_0, 0b11010_1_0:
			return mk(vFcvti, fpES, 0, rnEven)
		case 0b11010_0_1, 0b11010_1_1:
			return mk(vFcvti, fpES, 0, rnPos)
		case 0b11011_0_0, 0b11011_1_0:
			return mk(vFcvti, fpES, 0, rnNeg)
		case 0b11011_0_1, 0b11011_1_1:
			return mk(vFcvti, fpES, 0, rnZero)
		case 0b11100_0_0, 0b11100_1_0:
			return mk(vFcvti, fpES, 0, rnAway)
		case 0b11101_0_0, 0b11101_1_0:
			return mk(vIcvtf, fpES, 0, 0)
		case 0b11100_0_1:
			if size&1 == 1 || scalar {
				return undef(w)
			}
			return mk(vUrecpe, 2, 0, 0)
		case 0b11100_1_1:
			if size&1 == 1 || scalar {
				return undef(w)
			}
			return mk(vUrsqrte, 2, 0, 0)
		case 0b11101_0_1:
			return mk(vFrecpe, fpES, 0, 0)
		case 0b11101_1_1:
			return mk(vFrsqrte, fpES, 0, 0)
		case 0b11111_0_1:
			if !scalar {
				return undef(w)
			}
			return mk(vFrecpx, fpES, 0, 0)
		case 0b01100_0_1:
			return mk(vFcmgt0, fpES, 0, 0)
		case 0b01101_0_1:
			return mk(vFcmeq0, fpES, 0, 0)
		case 0b01110_0_1:
			return mk(vFcmlt0, fpES, 0, 0)
		case 0b01100_1_1:
			return mk(vFcmge0, fpES, 0, 0)
		case 0b01101_1_1:
			return mk(vFcmle0, fpES, 0, 0)
		case 0b01111_0_1:
			if scalar {
				return undef(w)
			}
			return mk(vFabs, fpES, 0, 0)
		case 0b01111_1_1:
			if scalar {
				return undef(w)
			}
			return mk(vFneg, fpES, 0, 0)
		case 0b11111_1_1:
			if scalar {
				return undef(w)
			}
			return mk(vFsqrt, fpES, 0, 0)
		}
		return undef(w)
	}
	if size == 3 && !q && !scalar && opc != 0b10010 && opc != 0b10011 && opc != 0b10100 {
		return undef(w)
	}
	switch {
	case opc == 0b00000 && !u && !scalar:
		if size == 3 {
			return undef(w)
		}
		return mk(vRev64, size, 0, 0)
	case opc == 0b00000 && u && !scalar:
		if size >= 2 {
			return undef(w)
		}
		return mk(vRev32, size, 0, 0)
	case opc == 0b00001 && !u && !scalar:
		if size != 0 {
			return undef(w)
		}
		return mk(vRev16, size, 0, 0)
	case opc == 0b00010 && !scalar:
		if size == 3 {
			return undef(w)
		}
		return mk(vAddlp, size, 0, 0)
	case opc == 0b00110 && !scalar:
		if size == 3 {
			return undef(w)
		}
		return mk(vAddlp, size, sfAcc, 0)
	case opc == 0b00011:
		return mk(vSuqadd, size, 0, 0)
	case opc == 0b00100 && !scalar:
		if size == 3 {
			return undef(w)
		}
		return mk(pickInt(u, vClz, vCls), size, 0, 0)
	case opc == 0b00101 && !scalar:
		switch {
		case !u && size == 0:
			return mk(vCnt, 0, 0, 0)
		case u && size == 0:
			return mk(vNot, 0, 0, 0)
		case u && size == 1:
			return mk(vRbit, 0, 0, 0)
		}
	case opc == 0b00111:
		return mk(pickInt(u, vQneg, vQabs), size, 0, 0)
	case opc == 0b01000:
		if scalar && size != 3 {
			return undef(w)
		}
		return mk(pickInt(u, vCmge0, vCmgt0), size, 0, 0)
	case opc == 0b01001:
		if scalar && size != 3 {
			return undef(w)
		}
		return mk(pickInt(u, vCmle0, vCmeq0), size, 0, 0)
	case opc == 0b01010 && !u:
		if scalar && size != 3 {
			return undef(w)
		}
		return mk(vCmlt0, size, 0, 0)
	case opc == 0b01011:
		if scalar && size != 3 {
			return undef(w)
		}
		return mk(pickInt(u, vNeg, vAbs), size, 0, 0)
	case opc == 0b10010 && !u: // xtn: a = destination size
		if size == 3 || scalar {
			return undef(w)
		}
		return simd(vXtn, rd, rn, 0, size, flags&^sfQ|partFlag(q), 0)
	case opc == 0b10010 && u: // sqxtun
		if size == 3 {
			return undef(w)
		}
		return simd(vQxtun, rd, rn, 0, size, flags&^(sfQ|sfUnsigned)|partFlag(q), 0)
	case opc == 0b10100: // sqxtn / uqxtn
		if size == 3 {
			return undef(w)
		}
		return simd(vQxtn, rd, rn, 0, size, flags&^sfQ|partFlag(q), 0)
	case opc == 0b10011 && u && !scalar: // shll: a = source size
		if size == 3 {
			return undef(w)
		}
		return simd(vShll, rd, rn, 0, size, flags&^sfQ|partFlag(q), 0)
	}
	return undef(w)
}

func partFlag(q bool) uint8 {
	if q {
		return sfPart2
	}
	return 0
}

func decodeAcross(w uint32, flags uint8) inst {
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	size := uint8(field(w, 22, 2))
	opc := field(w, 12, 5)
	u := flags&sfUnsigned != 0
	q := flags&sfQ != 0
	if opc == 0b01100 || opc == 0b01111 { // FP: 4S only
		if !u || !q || size&1 != 0 {
			return undef(w)
		}
		sub := vFmaxnmv
		switch {
		case opc == 0b01100 && size>>1 == 1:
			sub = vFminnmv
		case opc == 0b01111 && size>>1 == 0:
			sub = vFmaxv
		case opc == 0b01111:
			sub = vFminv
		}
		return simd(sub, rd, rn, 0, 2, flags, 0)
	}
	if size == 3 || (size == 2 && !q) {
		return undef(w)
	}
	var sub int
	switch opc {
	case 0b00011:
		sub = vAddlv
	case 0b01010:
		sub = vMaxv
	case 0b11010:
		sub = vMinv
	case 0b11011:
		if u {
			return undef(w)
		}
		sub = vAddv
	default:
		return undef(w)
	}
	return simd(sub, rd, rn, 0, size, flags, 0)
}

func decodePairwiseScalar(w uint32, flags uint8) inst {
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	size := uint8(field(w, 22, 2))
	opc := field(w, 12, 5)
	u := flags&sfUnsigned != 0
	switch {
	case !u && opc == 0b11011 && size == 3: // addp d
		return simd(vAddp, rd, rn, rn, 3, sfScalar, 0)
	case u && opc == 0b01101 && size>>1 == 0:
		return simd(vFaddp, rd, rn, rn, 2+size&1, sfScalar, 0)
	case u && opc == 0b01100:
		return simd(pickInt(size>>1 == 1, vFminnmp, vFmaxnmp), rd, rn, rn, 2+size&1, sfScalar, 0)
	case u && opc == 0b01111:
		return simd(pickInt(size>>1 == 1, vFminp, vFmaxp), rd, rn, rn, 2+size&1, sfScalar, 0)
	}
	return undef(w)
}

func decodeByElem(w uint32, flags uint8) inst {
	rd, rn := field(w, 0, 5), field(w, 5, 5)
	size := uint8(field(w, 22, 2))
	l, m, h := field(w, 21, 1), field(w, 20, 1), field(w, 11, 1)
	rm4 := field(w, 16, 4)
	opc := field(w, 12, 4)
	u := flags&sfUnsigned != 0
	scalar := flags&sfScalar != 0
	q := flags&sfQ != 0
	fp := false
	var sub int
	var f uint8
	switch {
	case opc == 0b0001 && !u:
		sub, fp = vFmlaIdx, true
	case opc == 0b0101 && !u:
		sub, fp = vFmlsIdx, true
	case opc == 0b1001 && !u:
		sub, fp = vFmulIdx, true
	case opc == 0b1001 && u:
		sub, fp = vFmulxIdx, true
	case opc == 0b1000 && !u:
		sub = vMulIdx
	case opc == 0b0000 && u:
		sub = vMlaIdx
	case opc == 0b0100 && u:
		sub = vMlsIdx
	case opc == 0b1010:
		sub = vMullIdx
	case opc == 0b0010:
		sub = vMlalIdx
	case opc == 0b0110:
		sub = vMlslIdx
	case opc == 0b1100 && !u:
		sub = vQdmulhIdx
	case opc == 0b1101 && !u:
		sub, f = vQdmulhIdx, sfRound
	case opc == 0b1011 && !u:
		sub = vQdmullIdx
	case opc == 0b0011 && !u:
		sub = vQdmlalIdx
	case opc == 0b0111 && !u:
		sub = vQdmlslIdx
	case opc == 0b1110 && size == 2 && !scalar:
		// sdot/udot Vd.<2S|4S>, Vn.<8B|16B>, Vm.4B[H:L] (Arm ARM C7.2:
		// SDOT (by element)): M is Rm's high bit
		return simd(vDotIdx, rd, rn, m<<4|rm4, 2, flags, uint64(h<<1|l))
	default:
		return undef(w)
	}
	var es uint8
	var idx, rm uint32
	if fp {
		if size>>1 == 0 {
			return undef(w) // half precision
		}
		es = 2 + size&1
		if es == 2 {
			idx, rm = h<<1|l, m<<4|rm4
		} else {
			if l == 1 || (!q && !scalar) {
				return undef(w)
			}
			idx, rm = h, m<<4|rm4
		}
	} else {
		es = size
		switch size {
		case 1:
			idx, rm = h<<2|l<<1|m, rm4
		case 2:
			idx, rm = h<<1|l, m<<4|rm4
		default:
			return undef(w)
		}
	}
	if scalar && !fp && sub != vQdmulhIdx && sub != vQdmullIdx && sub != vQdmlalIdx && sub != vQdmlslIdx {
		return undef(w)
	}
	switch sub {
	case vMullIdx, vMlalIdx, vMlslIdx, vQdmullIdx, vQdmlalIdx, vQdmlslIdx:
		if !scalar {
			f |= partFlag(q)
			flags &^= sfQ
		}
	case vQdmulhIdx:
		flags &^= sfUnsigned
	}
	return simd(sub, rd, rn, rm, es, flags|f, uint64(idx))
}
