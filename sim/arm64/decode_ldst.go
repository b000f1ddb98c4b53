package arm64

// Load/store types (inst.a of opLdSt).
const (
	lsLdrB = iota // integer loads, zero-extended
	lsLdrH
	lsLdrW
	lsLdrX
	lsLdrSBW // sign-extended to 32 bits, upper half zero
	lsLdrSBX
	lsLdrSHW
	lsLdrSHX
	lsLdrSW
	lsStrB
	lsStrH
	lsStrW
	lsStrX
	lsLdrFB // SIMD&FP register loads: zero the rest of the register
	lsLdrFH
	lsLdrFS
	lsLdrFD
	lsLdrFQ
	lsStrFB
	lsStrFH
	lsStrFS
	lsStrFD
	lsStrFQ
	lsPrfm // prefetch: no effect
	numLSTypes
)

// lsType is what a load/store type is: its access size in bytes, whether
// it writes memory and whether its register is a SIMD&FP one.
type lsType struct {
	size      uint8
	store, fp bool
}

// lsTypes are the load/store types, keyed by type.
var lsTypes = [numLSTypes]lsType{
	lsLdrB: {size: 1}, lsLdrH: {size: 2}, lsLdrW: {size: 4}, lsLdrX: {size: 8},
	lsLdrSBW: {size: 1}, lsLdrSBX: {size: 1}, lsLdrSHW: {size: 2}, lsLdrSHX: {size: 2}, lsLdrSW: {size: 4},
	lsStrB: {size: 1, store: true}, lsStrH: {size: 2, store: true}, lsStrW: {size: 4, store: true}, lsStrX: {size: 8, store: true},
	lsLdrFB: {size: 1, fp: true}, lsLdrFH: {size: 2, fp: true}, lsLdrFS: {size: 4, fp: true},
	lsLdrFD: {size: 8, fp: true}, lsLdrFQ: {size: 16, fp: true},
	lsStrFB: {size: 1, store: true, fp: true}, lsStrFH: {size: 2, store: true, fp: true}, lsStrFS: {size: 4, store: true, fp: true},
	lsStrFD: {size: 8, store: true, fp: true}, lsStrFQ: {size: 16, store: true, fp: true},
	lsPrfm: {},
}

// lsSize is the access size in bytes of each type (lsTypes' sizes, in
// the form the executor indexes).
var lsSize = func() (s [numLSTypes]uint8) {
	for t, ty := range lsTypes {
		s[t] = ty.size
	}
	return s
}()

// Addressing modes (inst.b of opLdSt and opLdStP).
const (
	amOff  = iota // [rn, #imm]
	amPre         // [rn, #imm]!
	amPost        // [rn], #imm
	amReg         // [rn, rm, extend #shift]: imm = option<<8 | shift
)

// Pair types (inst.a of opLdStP).
const (
	lpLdW = iota
	lpLdX
	lpLdSW
	lpLdS
	lpLdD
	lpLdQ
	lpStW
	lpStX
	lpStS
	lpStD
	lpStQ
	numLPTypes
)

// lpType is what a pair type is: the bytes both registers transfer and
// whether it writes memory.
type lpType struct {
	size  uint8
	store bool
}

// lpTypes are the pair types, keyed by type.
var lpTypes = [numLPTypes]lpType{
	lpLdW: {size: 8}, lpLdX: {size: 16}, lpLdSW: {size: 8}, lpLdS: {size: 8}, lpLdD: {size: 16}, lpLdQ: {size: 32},
	lpStW: {size: 8, store: true}, lpStX: {size: 16, store: true}, lpStS: {size: 8, store: true},
	lpStD: {size: 16, store: true}, lpStQ: {size: 32, store: true},
}

// intType maps (size, opc) of the integer register forms to a type.
func intType(size, opc uint32) (int, bool) {
	switch opc {
	case 0:
		return [4]int{lsStrB, lsStrH, lsStrW, lsStrX}[size&3], true
	case 1:
		return [4]int{lsLdrB, lsLdrH, lsLdrW, lsLdrX}[size&3], true
	case 2:
		switch size {
		case 0:
			return lsLdrSBX, true
		case 1:
			return lsLdrSHX, true
		case 2:
			return lsLdrSW, true
		case 3:
			return lsPrfm, true
		}
	case 3:
		switch size {
		case 0:
			return lsLdrSBW, true
		case 1:
			return lsLdrSHW, true
		}
	}
	return 0, false
}

// fpType maps (size, opc) of the SIMD&FP register forms to a type.
func fpType(size, opc uint32) (int, bool) {
	switch {
	case opc&2 == 0:
		t := [4]int{lsStrFB, lsStrFH, lsStrFS, lsStrFD}[size&3]
		if opc == 1 {
			t = [4]int{lsLdrFB, lsLdrFH, lsLdrFS, lsLdrFD}[size&3]
		}
		return t, true
	case size == 0:
		if opc == 3 {
			return lsLdrFQ, true
		}
		return lsStrFQ, true
	}
	return 0, false
}

func lsScale(t int) uint {
	switch lsSize[t] {
	case 2:
		return 1
	case 4:
		return 2
	case 8:
		return 3
	case 16:
		return 4
	}
	return 0
}

func decodeLdSt(w uint32, pc uint64) inst {
	v := field(w, 26, 1)
	rt, rn := field(w, 0, 5), field(w, 5, 5)
	switch field(w, 27, 3) {
	case 0b001:
		if v == 1 {
			if w>>31 != 0 {
				return undef(w)
			}
			return decodeSIMDLdSt(w)
		}
		if field(w, 24, 2) != 0 {
			return undef(w)
		}
		return decodeExclusive(w)
	case 0b011:
		if field(w, 24, 2) == 0 { // load literal
			target := pc + sext(uint64(field(w, 5, 19))<<2, 21)
			opc := field(w, 30, 2)
			var t int
			if v == 0 {
				switch opc {
				case 0:
					t = lsLdrW
				case 1:
					t = lsLdrX
				case 2:
					t = lsLdrSW
				case 3:
					t = lsPrfm
				}
			} else {
				if opc == 3 {
					return undef(w)
				}
				t = [3]int{lsLdrFS, lsLdrFD, lsLdrFQ}[opc]
			}
			return ldstInst(t, amOff, rt, rZR, target)
		}
		if field(w, 24, 2) == 1 && v == 0 && field(w, 21, 1) == 0 && field(w, 10, 2) == 0 { // ldapur/stlur
			size, opc := field(w, 30, 2), field(w, 22, 2)
			t, ok := intType(size, opc)
			if !ok || t == lsPrfm {
				return undef(w)
			}
			return ldstInst(t, amOff, rt, rSPr(rn), sext(uint64(field(w, 12, 9)), 9))
		}
		return undef(w)
	case 0b101:
		return decodePair(w)
	case 0b111:
		size, opc := field(w, 30, 2), field(w, 22, 2)
		var t int
		var ok bool
		if v == 0 {
			t, ok = intType(size, opc)
		} else {
			t, ok = fpType(size, opc)
		}
		if field(w, 24, 1) == 1 { // unsigned scaled offset
			if !ok {
				return undef(w)
			}
			return ldstInst(t, amOff, rt, rSPr(rn), uint64(field(w, 10, 12))<<lsScale(t))
		}
		if field(w, 21, 1) == 0 {
			if !ok {
				return undef(w)
			}
			imm := sext(uint64(field(w, 12, 9)), 9)
			switch field(w, 10, 2) {
			case 0, 2: // unscaled (ldur) and unprivileged (ldtr: same at EL0)
				if field(w, 10, 2) == 2 && (v == 1 || t == lsPrfm) {
					return undef(w)
				}
				return ldstInst(t, amOff, rt, rSPr(rn), imm)
			case 1, 3:
				// writeback into the transfer register is CONSTRAINED
				// UNPREDICTABLE (Arm ARM pseudocode Unpredictable_WBOVERLAPLD,
				// Unpredictable_WBOVERLAPST): simrun (like binutils) takes
				// Constraint_UNDEF
				if t == lsPrfm || (rn == rt && rn != 31 && v == 0) {
					return undef(w)
				}
				mode := uint8(amPost)
				if field(w, 10, 2) == 3 {
					mode = amPre
				}
				return ldstInst(t, mode, rt, rSPr(rn), imm)
			}
		}
		switch field(w, 10, 2) {
		case 0:
			if v == 1 {
				return undef(w)
			}
			return decodeAtomic(w)
		case 2: // register offset
			if !ok {
				return undef(w)
			}
			option := field(w, 13, 3)
			if option&2 == 0 {
				return undef(w)
			}
			sh := uint(0)
			if field(w, 12, 1) == 1 {
				sh = lsScale(t)
			}
			in := ldstInst(t, amReg, rt, rSPr(rn), uint64(option)<<8|uint64(sh))
			in.rm = rReg(field(w, 16, 5))
			return in
		}
		return undef(w) // ldraa/ldrab need FEAT_PAuth
	}
	return undef(w)
}

// ldstInst builds a single-register load/store, choosing a hot form when
// there is one.
func ldstInst(t int, mode uint8, rt uint32, rn uint8, imm uint64) inst {
	in := inst{op: opLdSt, a: uint8(t), b: mode, rn: rn, imm: imm}
	switch {
	case lsTypes[t].fp:
		in.rd = uint8(rt) // vector register number
	case lsTypes[t].store:
		in.rd = rReg(rt) // stores read xzr
	default:
		in.rd = wReg(rt)
	}
	if mode == amOff {
		switch t {
		case lsLdrX:
			in.op = opLdrXo
		case lsLdrW:
			in.op = opLdrWo
		case lsLdrB:
			in.op = opLdrBo
		case lsStrX:
			in.op = opStrXo
		case lsStrW:
			in.op = opStrWo
		case lsStrB:
			in.op = opStrBo
		}
	}
	return in
}

func decodePair(w uint32) inst {
	opc, v, l := field(w, 30, 2), field(w, 26, 1), field(w, 22, 1)
	mode := field(w, 23, 2)
	var t int
	var scale uint
	switch {
	case v == 0 && opc == 0:
		t, scale = lpStW, 2
	case v == 0 && opc == 2:
		t, scale = lpStX, 3
	case v == 0 && opc == 1 && l == 1:
		t, scale = lpLdSW, 2
	case v == 1 && opc < 3:
		t, scale = [3]int{lpStS, lpStD, lpStQ}[opc], 2+uint(opc)
	default:
		return undef(w)
	}
	if l == 1 && t != lpLdSW {
		switch t {
		case lpStW:
			t = lpLdW
		case lpStX:
			t = lpLdX
		case lpStS:
			t = lpLdS
		case lpStD:
			t = lpLdD
		case lpStQ:
			t = lpLdQ
		}
	}
	var am uint8
	switch mode {
	case 0, 2: // no-allocate and signed offset
		am = amOff
		if mode == 0 && t == lpLdSW {
			return undef(w)
		}
	case 1:
		am = amPost
	case 3:
		am = amPre
	}
	imm := sext(uint64(field(w, 15, 7)), 7) << scale
	rt, rt2 := field(w, 0, 5), field(w, 10, 5)
	// CONSTRAINED UNPREDICTABLE cases simrun (like binutils) treats as
	// undefined (Constraint_UNDEF): a load pair into one register
	// (Unpredictable_LDPOVERLAP), writeback into a transfer register
	// (Unpredictable_WBOVERLAPLD, Unpredictable_WBOVERLAPST).
	rnf := field(w, 5, 5)
	if (l == 1 && rt == rt2) || (am != amOff && v == 0 && rnf != 31 && (rnf == rt || rnf == rt2)) {
		return undef(w)
	}
	in := inst{op: opLdStP, a: uint8(t), b: am, rn: rSPr(field(w, 5, 5)), imm: imm}
	switch {
	case v == 1:
		in.rd, in.ra = uint8(rt), uint8(rt2)
	case l == 1:
		in.rd, in.ra = wReg(rt), wReg(rt2)
	default:
		in.rd, in.ra = rReg(rt), rReg(rt2)
	}
	if t == lpLdX {
		switch am {
		case amOff:
			in.op = opLdpXo
		case amPre:
			in.op = opLdpXpre
		case amPost:
			in.op = opLdpXpost
		}
	}
	if t == lpStX {
		switch am {
		case amOff:
			in.op = opStpXo
		case amPre:
			in.op = opStpXpre
		case amPost:
			in.op = opStpXpost
		}
	}
	return in
}

// decodeExclusive covers load/store exclusive, load-acquire/store-release
// and compare-and-swap (bits 29:24 = 001000).
//
//	 31 30 29    24 23 22 21 20  16 15 14  10 9  5 4  0
//	┌─────┬────────┬──┬─┬──┬──────┬──┬──────┬────┬────┐
//	│size │001000  │o2│L│o1│  Rs  │o0│ Rt2  │ Rn │ Rt │
//	└─────┴────────┴──┴─┴──┴──────┴──┴──────┴────┴────┘
func decodeExclusive(w uint32) inst {
	size := field(w, 30, 2)
	o2, l, o1, o0 := field(w, 23, 1), field(w, 22, 1), field(w, 21, 1), field(w, 15, 1)
	rs, rt2, rn, rt := field(w, 16, 5), field(w, 10, 5), rSPr(field(w, 5, 5)), field(w, 0, 5)
	rnf := field(w, 5, 5)
	// Fields the architecture requires to be all ones, and the CONSTRAINED
	// UNPREDICTABLE register overlaps (Arm ARM pseudocode
	// Unpredictable_DATAOVERLAP and Unpredictable_BASEOVERLAP for the status
	// register, Unpredictable_LDPOVERLAP for ldxp), are undefined here
	// (Constraint_UNDEF, as in binutils).
	ones := func(fs ...uint32) bool {
		for _, f := range fs {
			if f != 31 {
				return false
			}
		}
		return true
	}
	switch {
	case o2 == 0 && o1 == 0 && l == 1 && !ones(rs, rt2),
		o2 == 0 && o1 == 0 && l == 0 && (!ones(rt2) || rs == rt || (rs == rnf && rnf != 31)),
		o2 == 0 && o1 == 1 && size >= 2 && l == 1 && (!ones(rs) || rt == rt2),
		o2 == 0 && o1 == 1 && size >= 2 && l == 0 && (rs == rt || rs == rt2 || (rs == rnf && rnf != 31)),
		o2 == 1 && o1 == 0 && !ones(rs, rt2):
		return undef(w)
	}
	switch {
	case o2 == 0 && o1 == 0: // ldxr/ldaxr, stxr/stlxr
		if l == 1 {
			return inst{op: opLdxr, rd: wReg(rt), rn: rn, a: uint8(size), b: uint8(o0)}
		}
		return inst{op: opStxr, rd: rReg(rt), rm: wReg(rs), rn: rn, a: uint8(size), b: uint8(o0)}
	case o2 == 0 && o1 == 1:
		if size >= 2 { // ldxp/stxp
			if l == 1 {
				return inst{op: opLdxp, rd: wReg(rt), ra: wReg(rt2), rn: rn, a: uint8(size), b: uint8(o0)}
			}
			return inst{op: opStxp, rd: rReg(rt), ra: rReg(rt2), rm: wReg(rs), rn: rn, a: uint8(size), b: uint8(o0)}
		}
		if rt2 != 31 || rs&1 == 1 || rt&1 == 1 { // casp
			return undef(w)
		}
		return inst{op: opCasp, rd: uint8(rt), rm: uint8(rs), rn: rn, a: uint8(size + 2), b: uint8(l<<1 | o0)}
	case o2 == 1 && o1 == 0: // ldar/stlr (and the LORegion forms, same at EL0)
		if l == 1 {
			return inst{op: opLdar, rd: wReg(rt), rn: rn, a: uint8(size)}
		}
		return inst{op: opStlr, rd: rReg(rt), rn: rn, a: uint8(size)}
	case o2 == 1 && o1 == 1: // cas, casa, casl, casal
		if rt2 != 31 {
			return undef(w)
		}
		return inst{op: opCas, rd: rReg(rt), rm: uint8(rs), rn: rn, a: uint8(size), b: uint8(l<<1 | o0)}
	}
	return undef(w)
}

// Atomic memory operations (inst.b of opAtom).
const (
	atomAdd = iota
	atomClr
	atomEor
	atomSet
	atomSmax
	atomSmin
	atomUmax
	atomUmin
)

func decodeAtomic(w uint32) inst {
	size := field(w, 30, 2)
	a, r := field(w, 23, 1), field(w, 22, 1)
	rs, o3, opc := field(w, 16, 5), field(w, 15, 1), field(w, 12, 3)
	rn, rt := rSPr(field(w, 5, 5)), field(w, 0, 5)
	flags := uint8(a<<1 | r)
	switch {
	case o3 == 0:
		return inst{op: opAtom, rd: wReg(rt), rm: rReg(rs), rn: rn, a: uint8(size), b: uint8(opc) | flags<<4}
	case o3 == 1 && opc == 0:
		return inst{op: opSwp, rd: wReg(rt), rm: rReg(rs), rn: rn, a: uint8(size), b: flags << 4}
	case o3 == 1 && opc == 4 && a == 1 && r == 0 && rs == 31: // ldapr
		return inst{op: opLdar, rd: wReg(rt), rn: rn, a: uint8(size)}
	}
	return undef(w)
}
