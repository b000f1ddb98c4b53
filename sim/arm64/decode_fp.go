package arm64

// Scalar floating point (bits 28:24 = 11110 or 11111, bit 30 = 0):
//
//	 31 30 29 28   24 23  22 21 20                10 9  5 4  0
//	┌──┬──┬──┬───────┬──────┬──┬────────────────────┬────┬────┐
//	│sf│ 0│ S│ 11110 │ftype │ 1│ ...                │ Rn │ Rd │
//	└──┴──┴──┴───────┴──────┴──┴────────────────────┴────┴────┘
//	ftype: 00 single, 01 double, 11 half
//
// Rounding kinds for frint* and conversions.
const (
	rnEven = iota // to nearest, ties to even
	rnPos         // toward +inf
	rnNeg         // toward -inf
	rnZero        // toward zero
	rnAway        // to nearest, ties away from zero
	_
	rnExact // frintx: current mode, signal inexact
	rnCur   // frinti: current mode
)

func decodeSIMDFP(w uint32) inst {
	if field(w, 30, 1) == 0 && field(w, 28, 1) == 1 && field(w, 25, 2) == 0b11 && field(w, 29, 1) == 0 {
		// bits 28:25 = 1111 (checked by the caller's dispatch) and bit 24 selects 3-source.
		if field(w, 24, 1) == 1 {
			return decodeFP3(w)
		}
		return decodeFP(w)
	}
	return decodeAdvSIMD(w)
}

func ftypeOK(t uint32) bool { return t == 0 || t == 1 }

func decodeFP3(w uint32) inst {
	t := field(w, 22, 2)
	if w>>31 != 0 || !ftypeOK(t) {
		return undef(w)
	}
	o := [4]op{opFmadd, opFmsub, opFnmadd, opFnmsub}[field(w, 21, 1)<<1|field(w, 15, 1)]
	return inst{op: o, rd: uint8(field(w, 0, 5)), rn: uint8(field(w, 5, 5)), rm: uint8(field(w, 16, 5)), ra: uint8(field(w, 10, 5)), a: uint8(t)}
}

func decodeFP(w uint32) inst {
	sf := w >> 31
	t := field(w, 22, 2)
	rd, rn, rm := field(w, 0, 5), field(w, 5, 5), field(w, 16, 5)
	if field(w, 21, 1) == 0 { // conversion between FP and fixed point
		rmode, opc := field(w, 19, 2), field(w, 16, 3)
		scale := field(w, 10, 6)
		fbits := 64 - scale
		if !ftypeOK(t) || (sf == 0 && scale < 32) {
			return undef(w)
		}
		switch {
		case rmode == 0 && (opc == 2 || opc == 3): // scvtf, ucvtf
			return inst{op: opIntToFcvt, rd: uint8(rd), rn: rReg(rn), a: uint8(t), b: uint8(3-opc) | uint8(sf)<<1, imm: uint64(fbits)}
		case rmode == 3 && (opc == 0 || opc == 1): // fcvtzs, fcvtzu
			return inst{op: opFcvtToInt, rd: wReg(rd), rn: uint8(rn), a: uint8(t), b: rnZero | uint8(1-opc)<<3 | uint8(sf)<<4, imm: uint64(fbits)}
		}
		return undef(w)
	}
	op3 := field(w, 10, 6)
	if sf != 0 && op3 != 0 { // M: only the integer conversions use bit 31
		return undef(w)
	}
	switch {
	case op3 == 0: // conversion between FP and integer
		rmode, opc := field(w, 19, 2), field(w, 16, 3)
		switch {
		case opc <= 1 || opc == 4 || opc == 5: // fcvt[nsapmz][su]
			if !ftypeOK(t) {
				return undef(w)
			}
			var r uint8
			switch {
			case opc >= 4:
				if rmode != 0 {
					return undef(w)
				}
				r = rnAway
			default:
				r = [4]uint8{rnEven, rnPos, rnNeg, rnZero}[rmode]
			}
			signed := uint8(1 - opc&1)
			return inst{op: opFcvtToInt, rd: wReg(rd), rn: uint8(rn), a: uint8(t), b: r | signed<<3 | uint8(sf)<<4}
		case (opc == 2 || opc == 3) && rmode == 0: // scvtf, ucvtf
			if !ftypeOK(t) {
				return undef(w)
			}
			return inst{op: opIntToFcvt, rd: uint8(rd), rn: rReg(rn), a: uint8(t), b: uint8(3-opc) | uint8(sf)<<1}
		case opc == 6 || opc == 7: // fmov
			toGP := opc == 6
			var kind uint8
			switch {
			case rmode == 0 && sf == 0 && t == 0:
				kind = 0
			case rmode == 0 && sf == 1 && t == 1:
				kind = 1
			case rmode == 1 && sf == 1 && t == 2:
				kind = 2
			default:
				return undef(w) // half-precision moves need FEAT_FP16
			}
			if toGP {
				return inst{op: opFmovToGP, rd: wReg(rd), rn: uint8(rn), b: kind}
			}
			return inst{op: opFmovFromGP, rd: uint8(rd), rn: rReg(rn), b: kind}
		}
		return undef(w)
	case op3&0x1f == 0x10: // 1 source
		opc := field(w, 15, 6)
		if t == 2 || (t == 3 && !(opc == 4 || opc == 5)) {
			return undef(w) // half precision: conversions only
		}
		in := inst{rd: uint8(rd), rn: uint8(rn), a: uint8(t)}
		switch {
		case opc == 0:
			in.op = opFmovReg
		case opc == 1:
			in.op = opFabs
		case opc == 2:
			in.op = opFneg
		case opc == 3:
			in.op = opFsqrt
		case opc >= 4 && opc <= 7: // fcvt to opc&3
			dst := opc & 3
			if dst == 2 || dst == t {
				return undef(w)
			}
			in.op, in.b = opFcvt, uint8(dst)
		case opc >= 8 && opc <= 15 && opc != 13:
			in.op = opFrint
			in.b = [8]uint8{rnEven, rnPos, rnNeg, rnZero, rnAway, 0, rnExact, rnCur}[opc-8]
		default:
			return undef(w)
		}
		return in
	case op3&0xf == 0x8: // compare
		if !ftypeOK(t) || field(w, 14, 2) != 0 || field(w, 0, 3) != 0 {
			return undef(w)
		}
		opc2 := field(w, 3, 2) // bit 4: E, bit 3: compare with zero
		return inst{op: opFcmp, rn: uint8(rn), rm: uint8(rm), a: uint8(t), b: uint8(opc2>>1) | uint8(opc2&1)<<1}
	case op3&0x7 == 0x4: // immediate
		if !ftypeOK(t) || field(w, 5, 5) != 0 {
			return undef(w)
		}
		return inst{op: opFmovI, rd: uint8(rd), a: uint8(t), imm: vfpExpandImm(field(w, 13, 8), t)}
	case op3&3 == 1: // conditional compare
		if !ftypeOK(t) {
			return undef(w)
		}
		return inst{op: opFccmp, rn: uint8(rn), rm: uint8(rm), a: uint8(t), ra: uint8(field(w, 12, 4)), b: uint8(field(w, 4, 1)), imm: uint64(field(w, 0, 4))}
	case op3&3 == 2: // 2 source
		opc := field(w, 12, 4)
		if !ftypeOK(t) || opc > 8 {
			return undef(w)
		}
		o := [9]op{opFmul, opFdiv, opFadd, opFsub, opFmax, opFmin, opFmaxnm, opFminnm, opFnmul}[opc]
		return inst{op: o, rd: uint8(rd), rn: uint8(rn), rm: uint8(rm), a: uint8(t)}
	case op3&3 == 3: // conditional select
		if !ftypeOK(t) {
			return undef(w)
		}
		return inst{op: opFcsel, rd: uint8(rd), rn: uint8(rn), rm: uint8(rm), a: uint8(t), b: uint8(field(w, 12, 4))}
	}
	return undef(w)
}

// vfpExpandImm expands the 8-bit FP immediate of fmov into the bits of a
// single (t = 0) or double (t = 1).
func vfpExpandImm(imm8 uint32, t uint32) uint64 {
	sign := uint64(imm8 >> 7)
	b6 := uint64(imm8>>6) & 1
	low6 := uint64(imm8 & 0x3f)
	if t == 0 {
		exp := (1-b6)<<7 | b6*0x7c | low6>>4 // NOT(b6):Replicate(b6,5):imm8<5:4>
		return sign<<31 | exp<<23 | (low6&0xf)<<19
	}
	exp := (1-b6)<<10 | b6*0xff<<2 | low6>>4
	return sign<<63 | exp<<52 | (low6&0xf)<<48
}
