package arm64

import (
	"fmt"
	"math"
	"math/bits"

	"simrun/sim/cpu"
	"simrun/sim/ieee"
)

// AdvSIMD execution on 128-bit values held as {bits 63:0, bits 127:64}.

type vec = [2]uint64

func lane(v vec, es uint8, i int) uint64 {
	bit := uint(i) << (3 + es)
	w := v[(bit>>6)&1]
	if es == 3 {
		return w
	}
	return w >> (bit & 63) & (1<<(8<<es) - 1)
}

func setLane(v *vec, es uint8, i int, x uint64) {
	bit := uint(i) << (3 + es)
	p := &v[(bit>>6)&1]
	if es == 3 {
		*p = x
		return
	}
	m := uint64(1)<<(8<<es) - 1
	sh := bit & 63
	*p = *p&^(m<<sh) | (x&m)<<sh
}

func sx(x uint64, es uint8) int64 {
	sh := 64 - (8 << es)
	return int64(x<<sh) >> sh
}

func emask(es uint8) uint64 { return sizeMask(es) }

// lanes is the number of elements of size es an instruction works on.
func lanes(in *inst, es uint8) int {
	if in.b&sfScalar != 0 {
		return 1
	}
	if in.b&sfQ != 0 {
		return 16 >> es
	}
	return 8 >> es
}

// sat clamps a wide result to es bits, signed or unsigned, and notes
// saturation in FPSR.QC.
func (c *Core) satS(v int64, es uint8) uint64 {
	hi := int64(1)<<(8<<es-1) - 1
	lo := -hi - 1
	switch {
	case v > hi:
		c.fpsr |= 1 << 27
		return uint64(hi) & emask(es)
	case v < lo:
		c.fpsr |= 1 << 27
		return uint64(lo) & emask(es)
	}
	return uint64(v) & emask(es)
}

func (c *Core) satU(v int64, es uint8) uint64 {
	hi := int64(emask(es))
	switch {
	case es == 3 && v < 0:
		c.fpsr |= 1 << 27
		return 0
	case es < 3 && v > hi:
		c.fpsr |= 1 << 27
		return uint64(hi)
	case v < 0:
		c.fpsr |= 1 << 27
		return 0
	}
	return uint64(v)
}

func (c *Core) qc() { c.fpsr |= 1 << 27 }

// Saturating add/sub of es-bit lanes (64-bit lanes need care).
func (c *Core) qaddsub(x, y uint64, es uint8, unsigned, sub bool) uint64 {
	if es < 3 {
		if unsigned {
			if sub {
				return c.satU(int64(x)-int64(y), es)
			}
			return c.satU(int64(x)+int64(y), es)
		}
		if sub {
			return c.satS(sx(x, es)-sx(y, es), es)
		}
		return c.satS(sx(x, es)+sx(y, es), es)
	}
	if unsigned {
		if sub {
			r, b := bits.Sub64(x, y, 0)
			if b != 0 {
				c.qc()
				return 0
			}
			return r
		}
		r, carry := bits.Add64(x, y, 0)
		if carry != 0 {
			c.qc()
			return ^uint64(0)
		}
		return r
	}
	a, b := int64(x), int64(y)
	var r int64
	var ovf bool
	if sub {
		r = a - b
		ovf = (a^b)&(a^r) < 0
	} else {
		r = a + b
		ovf = (a^r)&(b^r) < 0
	}
	if ovf {
		c.qc()
		if a < 0 {
			return 1 << 63
		}
		return 1<<63 - 1
	}
	return uint64(r)
}

// shiftReg is sshl/ushl/srshl/urshl and the saturating forms: shift by the
// signed low byte of s.
func (c *Core) shiftReg(x, s uint64, es uint8, unsigned, round, saturate bool) uint64 {
	esize := int(8 << es)
	sh := int(int8(s))
	if sh >= 0 {
		if !saturate {
			if sh >= esize {
				return 0
			}
			return (x << uint(sh)) & emask(es)
		}
		return c.qshl(x, uint(sh), es, unsigned, unsigned)
	}
	sh = -sh
	return shiftRight(x, uint(sh), es, unsigned, round)
}

// shiftRight shifts an es-bit lane right by sh (which may reach esize),
// arithmetic unless unsigned, optionally rounding.
func shiftRight(x uint64, sh uint, es uint8, unsigned, round bool) uint64 {
	esize := uint(8 << es)
	var r, rb uint64
	if unsigned {
		if sh > esize {
			return 0
		}
		if sh == esize {
			r = 0
		} else {
			r = x >> sh
		}
		if round && sh > 0 {
			rb = (x >> (sh - 1)) & 1
		}
	} else {
		v := sx(x, es)
		if sh >= esize {
			r = uint64(v >> (esize - 1))
		} else {
			r = uint64(v >> sh)
		}
		if round && sh > 0 {
			if sh-1 >= esize {
				rb = uint64(v>>63) & 1 // bit sh-1 of the sign-extended value
			} else {
				rb = uint64(v>>(sh-1)) & 1
			}
		}
	}
	return (r + rb) & emask(es)
}

// qshl is a saturating left shift; srcUnsigned says how x is read and
// dstUnsigned the range of the result (sqshlu reads signed, writes unsigned).
func (c *Core) qshl(x uint64, sh uint, es uint8, srcUnsigned, dstUnsigned bool) uint64 {
	esize := uint(8 << es)
	if srcUnsigned {
		if x == 0 {
			return 0
		}
		if sh >= esize || bits.LeadingZeros64(x)-int(64-esize) < int(sh) {
			c.qc()
			return emask(es)
		}
		return x << sh
	}
	v := sx(x, es)
	if dstUnsigned && v < 0 {
		c.qc()
		return 0
	}
	if v == 0 {
		return 0
	}
	// Signed: representable if the shifted value fits.
	limitBits := esize - 1
	if dstUnsigned {
		limitBits = esize
	}
	mag := uint64(v)
	if v < 0 {
		mag = ^uint64(v)
	}
	if sh >= esize || uint(bits.Len64(mag))+sh > limitBits {
		c.qc()
		if v < 0 {
			return (1 << (esize - 1)) & emask(es)
		}
		if dstUnsigned {
			return emask(es)
		}
		return (1<<(esize-1) - 1) & emask(es)
	}
	return uint64(v<<sh) & emask(es)
}

func polyMul8(a, b uint64) uint64 {
	var r uint64
	for i := 0; i < 8; i++ {
		if b>>i&1 == 1 {
			r ^= a << i
		}
	}
	return r
}

func (c *Core) qdmulh(x, y uint64, es uint8, round bool) uint64 {
	a, b := sx(x, es), sx(y, es)
	esize := uint(8 << es)
	if a == b && a == -(1<<(esize-1)) {
		c.qc()
		return (1<<(esize-1) - 1) & emask(es)
	}
	p := 2 * a * b // fits: |a*b| < 2^62 for 32-bit lanes except the case above
	if round {
		p += 1 << (esize - 1)
	}
	return uint64(p>>esize) & emask(es)
}

// qdmull returns the saturated 2*a*b at twice the element size.
func (c *Core) qdmull(x, y uint64, es uint8) int64 {
	a, b := sx(x, es), sx(y, es)
	if es == 2 && a == b && a == math.MinInt32 {
		c.qc()
		return math.MaxInt64
	}
	if es == 1 && a == b && a == math.MinInt16 {
		c.qc()
		return math.MaxInt32
	}
	return 2 * a * b
}

func (c *Core) fcmpNoFZ(kind int, t uint8, x, y uint64) uint64 {
	c.compareFlags(t, x, y, kind != vFcmeq && kind != vFcmeq0) // the ordered compares signal
	if isNaN(t, x) || isNaN(t, y) {
		return 0
	}
	var a, b float64
	if t == 1 {
		a, b = f64(x), f64(y)
	} else {
		a, b = float64(f32(x)), float64(f32(y))
	}
	var r bool
	switch kind {
	case vFcmeq, vFcmeq0:
		r = a == b
	case vFcmge, vFcmge0:
		r = a >= b
	case vFcmgt, vFcmgt0:
		r = a > b
	case vFcmle0:
		r = a <= b
	case vFcmlt0:
		r = a < b
	case vFacge:
		r = math.Abs(a) >= math.Abs(b)
	case vFacgt:
		r = math.Abs(a) > math.Abs(b)
	}
	if r {
		return ^uint64(0)
	}
	return 0
}

// fpStep computes frecps (2 - a*b) and frsqrts ((3 - a*b) / 2), fused.
func (c *Core) fpStepNoFZ(t uint8, a, b uint64, rsqrt bool) uint64 {
	a ^= signBit(t) // the step computes c - a*b as c + (-a)*b, negating first
	if r, ok := c.processNaNs(t, a, b); ok {
		return r
	}
	var infZero bool
	if t == 1 {
		x, y := f64(a), f64(b)
		infZero = (math.IsInf(x, 0) && y == 0) || (x == 0 && math.IsInf(y, 0))
	} else {
		x, y := f32(a), f32(b)
		infZero = (isInf32(x) && y == 0) || (x == 0 && isInf32(y))
	}
	if infZero {
		if rsqrt {
			return fpConst(t, 1.5)
		}
		return fpConst(t, 2)
	}
	if rsqrt {
		// (3 - a*b)/2 rounds once, and 3 - a*b may lie beyond the
		// largest finite value when its half does not: halve the
		// constant and an operand whose half is exact instead.
		if h, ok := halve(t, b); ok {
			return c.fpFMA(t, fpConst(t, 1.5), a, h, false, false)
		}
		if h, ok := halve(t, a); ok {
			return c.fpFMA(t, fpConst(t, 1.5), h, b, false, false)
		}
		// both tiny: 3 - a*b is about 3, and halving it is exact
		r := c.fpFMA(t, fpConst(t, 3), a, b, false, false)
		if t == 1 {
			return b64(f64(r) / 2)
		}
		return b32(f32(r) / 2)
	}
	return c.fpFMA(t, fpConst(t, 2), a, b, false, false)
}

// halve returns v/2 when that is exact (v is not a NaN): infinite, or at
// least twice the smallest normal magnitude.
func halve(t uint8, v uint64) (uint64, bool) {
	if t == 1 {
		x := f64(v)
		return b64(x / 2), math.Abs(x) >= 0x1p-1021
	}
	x := f32(v)
	return b32(x / 2), math.Abs(float64(x)) >= 0x1p-125
}

func fpConst(t uint8, v float64) uint64 {
	if t == 1 {
		return b64(v)
	}
	return b32(float32(v))
}

// fpReduce reduces lanes [0, n) with op in the architecture's tree order.
func (c *Core) fpReduce(kind uint8, t uint8, a vec, es uint8, lo, n int) uint64 {
	if n == 1 {
		return lane(a, es, lo)
	}
	h := n / 2
	return c.fpBinary(kind, t, c.fpReduce(kind, t, a, es, lo, h), c.fpReduce(kind, t, a, es, lo+h, h))
}

// execSIMD runs one opSimd instruction.
func (c *Core) execSIMD(in *inst, pc uint64) *cpu.Fault {
	sub := int(in.imm & 0xffff)
	imm := in.imm >> 16
	es := in.a
	fl := in.b
	uns := fl&sfUnsigned != 0
	round := fl&sfRound != 0
	acc := fl&sfAcc != 0
	p2 := fl&sfPart2 != 0
	a, b, d := c.v[in.rn&31], c.v[in.rm&31], c.v[in.rd&31] // rd/rn may name a GPR (umov, dup)
	n := lanes(in, es)
	t := es - 2 // FP precision for FP lanes
	var r vec
	ext := func(x uint64, e uint8) uint64 { // extend by signedness
		if uns {
			return x
		}
		return uint64(sx(x, e))
	}
	// narrow-source index base for "2" variants
	half := 0
	if p2 {
		half = 8 >> es
	}
	switch sub {
	case vAdd, vSub, vMul, vMla, vMls, vCmgt, vCmhi, vCmge, vCmhs, vCmeq, vCmtst, vMax, vMin,
		vHadd, vHsub, vQadd, vQsub, vShl, vQshlR, vAbd, vPmul, vQdmulh:
		for i := 0; i < n; i++ {
			x, y := lane(a, es, i), lane(b, es, i)
			var z uint64
			switch sub {
			case vAdd:
				z = x + y
			case vSub:
				z = x - y
			case vMul:
				z = x * y
			case vMla:
				z = lane(d, es, i) + x*y
			case vMls:
				z = lane(d, es, i) - x*y
			case vCmgt:
				z = boolMask(sx(x, es) > sx(y, es))
			case vCmhi:
				z = boolMask(x > y)
			case vCmge:
				z = boolMask(sx(x, es) >= sx(y, es))
			case vCmhs:
				z = boolMask(x >= y)
			case vCmeq:
				z = boolMask(x == y)
			case vCmtst:
				z = boolMask(x&y != 0)
			case vMax:
				z = y
				if (uns && x > y) || (!uns && sx(x, es) > sx(y, es)) {
					z = x
				}
			case vMin:
				z = y
				if (uns && x < y) || (!uns && sx(x, es) < sx(y, es)) {
					z = x
				}
			case vHadd, vHsub:
				ex, ey := int64(x), int64(y)
				if !uns {
					ex, ey = sx(x, es), sx(y, es)
				}
				if sub == vHadd {
					s := ex + ey
					if round {
						s++
					}
					z = uint64(s >> 1)
				} else {
					z = uint64((ex - ey) >> 1)
				}
			case vQadd:
				z = c.qaddsub(x, y, es, uns, false)
			case vQsub:
				z = c.qaddsub(x, y, es, uns, true)
			case vShl:
				z = c.shiftReg(x, y, es, uns, round, false)
			case vQshlR:
				z = c.shiftReg(x, y, es, uns, round, true)
			case vAbd:
				if uns {
					if x > y {
						z = x - y
					} else {
						z = y - x
					}
				} else {
					dv := sx(x, es) - sx(y, es)
					if dv < 0 {
						dv = -dv
					}
					z = uint64(dv)
				}
				if acc {
					z += lane(d, es, i)
				}
			case vPmul:
				z = polyMul8(x, y)
			case vQdmulh:
				z = c.qdmulh(x, y, es, round)
			}
			setLane(&r, es, i, z)
		}
	case vAnd:
		r = vec{a[0] & b[0], a[1] & b[1]}
	case vBic:
		r = vec{a[0] &^ b[0], a[1] &^ b[1]}
	case vOrr:
		r = vec{a[0] | b[0], a[1] | b[1]}
	case vOrn:
		r = vec{a[0] | ^b[0], a[1] | ^b[1]}
	case vEor:
		r = vec{a[0] ^ b[0], a[1] ^ b[1]}
	case vBsl:
		r = vec{b[0] ^ ((a[0] ^ b[0]) & d[0]), b[1] ^ ((a[1] ^ b[1]) & d[1])}
	case vBit:
		r = vec{d[0] ^ ((a[0] ^ d[0]) & b[0]), d[1] ^ ((a[1] ^ d[1]) & b[1])}
	case vBif:
		r = vec{d[0] ^ ((a[0] ^ d[0]) &^ b[0]), d[1] ^ ((a[1] ^ d[1]) &^ b[1])}

	case vAddp, vMaxp, vMinp, vFaddp, vFmaxp, vFminp, vFmaxnmp, vFminnmp:
		if fl&sfScalar != 0 {
			x, y := lane(a, es, 0), lane(a, es, 1)
			setLane(&r, es, 0, c.pairOp(sub, es, uns, x, y))
			break
		}
		n = lanes(in, es)
		for i := 0; i < n; i++ {
			src := a
			j := 2 * i
			if j >= n {
				src, j = b, j-n
			}
			setLane(&r, es, i, c.pairOp(sub, es, uns, lane(src, es, j), lane(src, es, j+1)))
		}
	case vFadd, vFsub, vFmul, vFdiv, vFmax, vFmin, vFmaxnm, vFminnm, vFabd, vFmulx:
		kind := [...]uint8{vFadd: fAdd, vFsub: fSub, vFmul: fMul, vFdiv: fDiv, vFmax: fMax, vFmin: fMin,
			vFmaxnm: fMaxnm, vFminnm: fMinnm, vFabd: fAbd, vFmulx: fMulx}[sub]
		for i := 0; i < n; i++ {
			z := c.fpBinary(kind, t, lane(a, es, i), lane(b, es, i))
			if kind == fAbd && isNaN(t, z) {
				// fabd is FPAbs(FPSub()): the sign of a NaN result is cleared
				z &^= signBit(t)
			}
			setLane(&r, es, i, z)
		}
	case vFmla, vFmls:
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			if sub == vFmls {
				x ^= signBit(t)
			}
			setLane(&r, es, i, c.fpFMA(t, lane(d, es, i), x, lane(b, es, i), false, false))
		}
	case vFcmeq, vFcmge, vFcmgt, vFacge, vFacgt:
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.fcmp(sub, t, lane(a, es, i), lane(b, es, i)))
		}
	case vFcmeq0, vFcmge0, vFcmgt0, vFcmle0, vFcmlt0:
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.fcmp(sub, t, lane(a, es, i), 0))
		}
	case vFrecps, vFrsqrts:
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.fpStep(t, lane(a, es, i), lane(b, es, i), sub == vFrsqrts))
		}
	case vAddl, vSubl, vAbdl, vAbal, vMull, vMlal, vMlsl, vPmull:
		we := es + 1
		wn := 8 >> es // wide lanes
		for i := 0; i < wn; i++ {
			x, y := ext(lane(a, es, half+i), es), ext(lane(b, es, half+i), es)
			var z uint64
			switch sub {
			case vAddl:
				z = x + y
			case vSubl:
				z = x - y
			case vAbdl, vAbal:
				if uns {
					z = max(x, y) - min(x, y)
				} else {
					z = uint64(max(int64(x), int64(y)) - min(int64(x), int64(y)))
				}
				if sub == vAbal {
					z += lane(d, we, i)
				}
			case vMull:
				z = x * y
			case vMlal:
				z = lane(d, we, i) + x*y
			case vMlsl:
				z = lane(d, we, i) - x*y
			case vPmull:
				z = polyMul8(lane(a, es, half+i), lane(b, es, half+i))
			}
			setLane(&r, we, i, z)
		}
	case vAddw, vSubw:
		we := es + 1
		wn := 8 >> es
		for i := 0; i < wn; i++ {
			x, y := lane(a, we, i), ext(lane(b, es, half+i), es)
			if sub == vAddw {
				setLane(&r, we, i, x+y)
			} else {
				setLane(&r, we, i, x-y)
			}
		}
	case vAddhn, vSubhn:
		we := es + 1
		nn := 8 >> es
		if p2 {
			r[0] = d[0]
		}
		for i := 0; i < nn; i++ {
			x, y := lane(a, we, i), lane(b, we, i)
			z := x + y
			if sub == vSubhn {
				z = x - y
			}
			if round {
				z += 1 << (8<<es - 1)
			}
			setLane(&r, es, half+i, z>>(8<<es))
		}
	case vQdmull, vQdmlal, vQdmlsl:
		we := es + 1
		wn := 8 >> es
		if fl&sfScalar != 0 {
			wn = 1
		}
		for i := 0; i < wn; i++ {
			p := c.qdmull(lane(a, es, half+i), lane(b, es, half+i), es)
			c.wideAccumulate(&r, d, sub, we, i, p)
		}
	case vRev64, vRev32, vRev16:
		span := uint8(3) // container log2 bytes
		switch sub {
		case vRev32:
			span = 2
		case vRev16:
			span = 1
		}
		per := 1 << (span - es) // elements per container
		for i := 0; i < n; i++ {
			base := i &^ (per - 1)
			setLane(&r, es, base+(per-1-(i-base)), lane(a, es, i))
		}
	case vAddlp:
		we := es + 1
		wn := n / 2
		for i := 0; i < wn; i++ {
			z := ext(lane(a, es, 2*i), es) + ext(lane(a, es, 2*i+1), es)
			if acc {
				z += lane(d, we, i)
			}
			setLane(&r, we, i, z)
		}
	case vCls, vClz, vCnt, vNot, vRbit, vCmgt0, vCmge0, vCmeq0, vCmle0, vCmlt0, vAbs, vNeg, vQabs, vQneg:
		esize := 8 << es
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			v := sx(x, es)
			var z uint64
			switch sub {
			case vCls:
				z = uint64(bits.LeadingZeros64(uint64(v^(v>>63))) - 1 - (64 - esize))
			case vClz:
				z = uint64(bits.LeadingZeros64(x) - (64 - esize))
			case vCnt:
				z = uint64(bits.OnesCount64(x))
			case vNot:
				z = ^x
			case vRbit:
				z = uint64(bits.Reverse8(uint8(x)))
			case vCmgt0:
				z = boolMask(v > 0)
			case vCmge0:
				z = boolMask(v >= 0)
			case vCmeq0:
				z = boolMask(v == 0)
			case vCmle0:
				z = boolMask(v <= 0)
			case vCmlt0:
				z = boolMask(v < 0)
			case vAbs:
				if v < 0 {
					v = -v
				}
				z = uint64(v)
			case vNeg:
				z = uint64(-v)
			case vQabs, vQneg:
				if sub == vQneg || v < 0 {
					if v == math.MinInt64 {
						c.qc()
						z = math.MaxInt64
						break
					}
					v = -v
				}
				z = c.satS(v, es)
			}
			setLane(&r, es, i, z)
		}
	case vSuqadd:
		for i := 0; i < n; i++ {
			x, acc := lane(a, es, i), lane(d, es, i)
			var z uint64
			if !uns { // suqadd: signed acc + unsigned x
				z = c.addSignedUnsigned(acc, x, es)
			} else { // usqadd: unsigned acc + signed x
				z = c.addUnsignedSigned(acc, x, es)
			}
			setLane(&r, es, i, z)
		}
	case vXtn, vQxtn, vQxtun, vShrn, vQshrn, vQshrun:
		// a = destination size; source lanes are twice as wide. The shift
		// forms shift first, then narrow as xtn/sqxtn/sqxtun do.
		se := es + 1
		nn := 8 >> es
		if fl&sfScalar != 0 {
			nn = 1
		}
		if p2 {
			r[0] = d[0]
		}
		for i := 0; i < nn; i++ {
			x := lane(a, se, i)
			switch sub {
			case vShrn:
				x = shiftRight(x, uint(imm), se, true, round)
			case vQshrn:
				x = shiftRight(x, uint(imm), se, uns, round)
			case vQshrun:
				x = shiftRight(x, uint(imm), se, false, round)
			}
			var z uint64
			switch {
			case sub == vXtn || sub == vShrn:
				z = x
			case sub == vQxtun || sub == vQshrun:
				z = c.satU(sx(x, se), es)
			case uns:
				z = x
				if x > emask(es) {
					c.qc()
					z = emask(es)
				}
			default:
				z = c.satS(sx(x, se), es)
			}
			setLane(&r, es, half+i, z)
		}
	case vShll, vShllI:
		// a = source size
		we := es + 1
		wn := 8 >> es
		sh := uint(8 << es)
		if sub == vShllI {
			sh = uint(imm)
		}
		for i := 0; i < wn; i++ {
			x := lane(a, es, half+i)
			if sub == vShllI {
				x = ext(x, es)
			}
			setLane(&r, we, i, x<<sh)
		}
	case vFabs, vFneg:
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			if sub == vFabs {
				x &^= signBit(t)
			} else {
				x ^= signBit(t)
			}
			setLane(&r, es, i, x)
		}
	case vFsqrt:
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.fpSqrt(t, lane(a, es, i)))
		}
	case vFrint:
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.fpRoundInt(t, lane(a, es, i), roundMode(uint8(imm)), imm == rnExact))
		}
	case vFcvti, vFcvtzFix:
		mode, fbits := uint8(imm), uint(0)
		if sub == vFcvtzFix {
			mode, fbits = rnZero, uint(imm)
		}
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.fpToInt(t, lane(a, es, i), mode, !uns, uint(8<<es), fbits))
		}
	case vIcvtf, vIcvtfFix:
		fbits := uint(0)
		if sub == vIcvtfFix {
			fbits = uint(imm)
		}
		for i := 0; i < n; i++ {
			setLane(&r, es, i, c.intToFP(t, ext(lane(a, es, i), es), !uns, fbits))
		}
	case vFrecpx:
		setLane(&r, es, 0, c.fpRecpx(t, lane(a, es, 0)))
	case vFrecpe, vFrsqrte, vUrecpe, vUrsqrte:
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			var z uint64
			switch sub {
			case vFrecpe:
				z = c.fpRecipEstimate(t, x)
			case vFrsqrte:
				z = c.fpRSqrtEstimate(t, x)
			case vUrecpe:
				z = urecpe(x)
			case vUrsqrte:
				z = ursqrte(x)
			}
			setLane(&r, es, i, z)
		}
	case vFcvtn, vFcvtxn:
		// a = destination size (1 half, 2 single); source is twice as wide
		se := es + 1
		nn := 8 >> es
		if fl&sfScalar != 0 {
			nn = 1
		}
		if p2 {
			r[0] = d[0]
		}
		for i := 0; i < nn; i++ {
			x := lane(a, se, i)
			var z uint64
			if sub == vFcvtxn {
				z = c.fcvtRoundOdd(x)
			} else {
				z = c.fpConvert(precOf(se), precOf(es), x)
			}
			setLane(&r, es, half+i, z)
		}
	case vFcvtl:
		// a = destination size (2 single, 3 double)
		se := es - 1
		wn := 16 >> es // destination lanes = source lanes in one half
		half = 0
		if p2 {
			half = wn
		}
		for i := 0; i < wn; i++ {
			x := lane(a, se, half+i)
			setLane(&r, es, i, c.fpConvert(precOf(se), precOf(es), x))
		}
	case vAddv, vAddlv, vMaxv, vMinv:
		var z uint64
		switch sub {
		case vAddv:
			for i := 0; i < n; i++ {
				z += lane(a, es, i)
			}
			setLane(&r, es, 0, z)
		case vAddlv:
			for i := 0; i < n; i++ {
				z += ext(lane(a, es, i), es)
			}
			setLane(&r, es+1, 0, z)
		default:
			z = lane(a, es, 0)
			for i := 1; i < n; i++ {
				x := lane(a, es, i)
				var better bool
				if uns {
					better = (sub == vMaxv && x > z) || (sub == vMinv && x < z)
				} else {
					better = (sub == vMaxv && sx(x, es) > sx(z, es)) || (sub == vMinv && sx(x, es) < sx(z, es))
				}
				if better {
					z = x
				}
			}
			setLane(&r, es, 0, z)
		}
	case vFmaxv, vFminv, vFmaxnmv, vFminnmv:
		kind := [...]uint8{vFmaxv: fMax, vFminv: fMin, vFmaxnmv: fMaxnm, vFminnmv: fMinnm}[sub]
		setLane(&r, es, 0, c.fpReduce(kind, t, a, es, 0, n))
	case vDupElem:
		x := lane(a, es, int(imm))
		for i := 0; i < n; i++ {
			setLane(&r, es, i, x)
		}
	case vDupGen:
		x := c.x[in.rn]
		for i := 0; i < n; i++ {
			setLane(&r, es, i, x)
		}
	case vInsGen:
		r = d
		setLane(&r, es, int(imm), c.x[in.rn])
	case vInsElem:
		r = d
		setLane(&r, es, int(imm&0xff), lane(a, es, int(imm>>8)))
	case vSmov:
		v := uint64(sx(lane(a, es, int(imm)), es))
		if fl&sfQ == 0 {
			v = uint64(uint32(v))
		}
		c.x[in.rd] = v
		return nil
	case vUmov:
		c.x[in.rd] = lane(a, es, int(imm))
		return nil
	case vShr, vSri, vShlI, vSli, vQshlI, vQshluI:
		sh := uint(imm)
		esize := uint(8 << es)
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			var z uint64
			switch sub {
			case vShr:
				z = shiftRight(x, sh, es, uns, round)
				if acc {
					z += lane(d, es, i)
				}
			case vSri:
				if sh == esize {
					z = lane(d, es, i)
				} else {
					m := emask(es) >> sh
					z = lane(d, es, i)&^m | x>>sh
				}
			case vShlI:
				z = x << sh
			case vSli:
				m := emask(es) << sh
				z = lane(d, es, i)&^m | x<<sh
			case vQshlI:
				z = c.qshl(x, sh, es, uns, uns)
			case vQshluI:
				z = c.qshl(x, sh, es, false, true)
			}
			setLane(&r, es, i, z)
		}
	case vUzp1, vUzp2, vTrn1, vTrn2, vZip1, vZip2:
		for i := 0; i < n; i++ {
			var z uint64
			switch sub {
			case vUzp1, vUzp2:
				j := 2 * i
				if sub == vUzp2 {
					j++
				}
				if j < n {
					z = lane(a, es, j)
				} else {
					z = lane(b, es, j-n)
				}
			case vTrn1, vTrn2:
				j := i &^ 1
				if sub == vTrn2 {
					j++
				}
				if i&1 == 0 {
					z = lane(a, es, j)
				} else {
					z = lane(b, es, j)
				}
			case vZip1, vZip2:
				j := i / 2
				if sub == vZip2 {
					j += n / 2
				}
				if i&1 == 0 {
					z = lane(a, es, j)
				} else {
					z = lane(b, es, j)
				}
			}
			setLane(&r, es, i, z)
		}
	case vExt:
		nb := lanes(in, 0)
		for i := 0; i < nb; i++ {
			j := int(imm) + i
			var z uint64
			if j < nb {
				z = lane(a, 0, j)
			} else {
				z = lane(b, 0, j-nb)
			}
			setLane(&r, 0, i, z)
		}
	case vTbl:
		nb := lanes(in, 0)
		for i := 0; i < nb; i++ {
			idx := int(lane(b, 0, i))
			var z uint64
			if idx < 16*int(in.ra) {
				z = lane(c.v[(int(in.rn)+idx/16)&31], 0, idx%16)
			} else if acc {
				z = lane(d, 0, i)
			}
			setLane(&r, 0, i, z)
		}
	case vMulIdx, vMlaIdx, vMlsIdx, vQdmulhIdx:
		e := lane(b, es, int(imm))
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			var z uint64
			switch sub {
			case vMulIdx:
				z = x * e
			case vMlaIdx:
				z = lane(d, es, i) + x*e
			case vMlsIdx:
				z = lane(d, es, i) - x*e
			case vQdmulhIdx:
				z = c.qdmulh(x, e, es, round)
			}
			setLane(&r, es, i, z)
		}
	case vDot, vDotIdx:
		// each 32-bit lane accumulates the four products of its bytes of
		// Vn and of Vm's same lane (vector) or lane imm (by element),
		// modulo 2^32
		for i := 0; i < n; i++ {
			j := i
			if sub == vDotIdx {
				j = int(imm)
			}
			sum := lane(d, 2, i)
			for k := 0; k < 4; k++ {
				sum += ext(lane(a, 0, 4*i+k), 0) * ext(lane(b, 0, 4*j+k), 0)
			}
			setLane(&r, 2, i, sum)
		}
	case vMullIdx, vMlalIdx, vMlslIdx:
		e := ext(lane(b, es, int(imm)), es)
		we := es + 1
		wn := 8 >> es
		for i := 0; i < wn; i++ {
			x := ext(lane(a, es, half+i), es)
			var z uint64
			switch sub {
			case vMullIdx:
				z = x * e
			case vMlalIdx:
				z = lane(d, we, i) + x*e
			case vMlslIdx:
				z = lane(d, we, i) - x*e
			}
			setLane(&r, we, i, z)
		}
	case vQdmullIdx, vQdmlalIdx, vQdmlslIdx:
		e := lane(b, es, int(imm))
		we := es + 1
		wn := 8 >> es
		if fl&sfScalar != 0 {
			wn = 1
		}
		kind := map[int]int{vQdmullIdx: vQdmull, vQdmlalIdx: vQdmlal, vQdmlslIdx: vQdmlsl}[sub]
		for i := 0; i < wn; i++ {
			c.wideAccumulate(&r, d, kind, we, i, c.qdmull(lane(a, es, half+i), e, es))
		}
	case vFmulIdx, vFmulxIdx, vFmlaIdx, vFmlsIdx:
		e := lane(b, es, int(imm))
		for i := 0; i < n; i++ {
			x := lane(a, es, i)
			var z uint64
			switch sub {
			case vFmulIdx:
				z = c.fpBinary(fMul, t, x, e)
			case vFmulxIdx:
				z = c.fpBinary(fMulx, t, x, e)
			case vFmlaIdx:
				z = c.fpFMA(t, lane(d, es, i), x, e, false, false)
			case vFmlsIdx:
				z = c.fpFMA(t, lane(d, es, i), x^signBit(t), e, false, false)
			}
			setLane(&r, es, i, z)
		}
	case vAese, vAesd, vAesmc, vAesimc, vSha1c, vSha1p, vSha1m, vSha1su0, vSha256h, vSha256h2, vSha256su1,
		vSha1h, vSha1su1, vSha256su0, vPmull64:
		r = execCrypto(sub, d, a, b, p2)
	default:
		return &cpu.Fault{PC: pc, Kind: cpu.FaultInternal, Err: fmt.Errorf("AdvSIMD sub-op %d has no executor", sub)}
	}
	if sub >= vAnd && sub <= vBif && fl&sfQ == 0 { // whole-register logic: 64-bit forms clear the top
		r[1] = 0
	}
	c.v[in.rd] = r
	return nil
}

// precOf maps an element size to an FP precision code (1 half→3, 2→0, 3→1).
func precOf(es uint8) uint8 {
	switch es {
	case 1:
		return 3
	case 2:
		return 0
	}
	return 1
}

func boolMask(b bool) uint64 {
	if b {
		return ^uint64(0)
	}
	return 0
}

func (c *Core) pairOp(sub int, es uint8, uns bool, x, y uint64) uint64 {
	t := es - 2
	switch sub {
	case vAddp:
		return x + y
	case vMaxp:
		if (uns && x >= y) || (!uns && sx(x, es) >= sx(y, es)) {
			return x
		}
		return y
	case vMinp:
		if (uns && x <= y) || (!uns && sx(x, es) <= sx(y, es)) {
			return x
		}
		return y
	case vFaddp:
		return c.fpBinary(fAdd, t, x, y)
	case vFmaxp:
		return c.fpBinary(fMax, t, x, y)
	case vFminp:
		return c.fpBinary(fMin, t, x, y)
	case vFmaxnmp:
		return c.fpBinary(fMaxnm, t, x, y)
	case vFminnmp:
		return c.fpBinary(fMinnm, t, x, y)
	}
	return 0
}

// wideAccumulate stores a saturating doubling product p into lane i of r
// (element size we), accumulating into d for sqdmlal/sqdmlsl.
func (c *Core) wideAccumulate(r *vec, d vec, kind int, we uint8, i int, p int64) {
	switch kind {
	case vQdmull:
		setLane(r, we, i, uint64(p)&emask(we))
	case vQdmlal, vQdmlsl:
		acc := lane(d, we, i)
		pv := uint64(p) & emask(we)
		setLane(r, we, i, c.qaddsub(acc, pv, we, false, kind == vQdmlsl))
	}
}

func (c *Core) addSignedUnsigned(acc, x uint64, es uint8) uint64 {
	// signed acc + unsigned x, saturating to signed
	if es < 3 {
		return c.satS(sx(acc, es)+int64(x), es)
	}
	lo, carry := bits.Add64(acc, x, 0)
	hi := carry
	if int64(acc) < 0 {
		hi += ^uint64(0)
	}
	if (hi == 0 && lo>>63 == 0) || (hi == ^uint64(0) && lo>>63 == 1) {
		return lo
	}
	c.qc()
	return math.MaxInt64
}

func (c *Core) addUnsignedSigned(acc, x uint64, es uint8) uint64 {
	if es < 3 {
		return c.satU(int64(acc)+sx(x, es), es)
	}
	s := int64(x)
	if s >= 0 {
		r, carry := bits.Add64(acc, uint64(s), 0)
		if carry != 0 {
			c.qc()
			return ^uint64(0)
		}
		return r
	}
	m := uint64(-s)
	if m > acc {
		c.qc()
		return 0
	}
	return acc - m
}

// fcvtRoundOdd converts a double to single with round-to-odd (fcvtxn).
func (c *Core) fcvtRoundOddNoFZ(x uint64) uint64 {
	if isNaN(1, x) {
		return c.fpConvert(1, 0, x)
	}
	f := f64(x)
	s := float32(f)
	if float64(s) != f && !math.IsInf(f, 0) {
		// truncate toward zero, then set the lowest bit
		tz := s
		if math.Abs(float64(s)) > math.Abs(f) {
			tz = math.Nextafter32(s, 0)
		}
		r := b32(tz) | 1
		// overflow only from 2^128 up: below, the truncation stays finite
		c.raise(ieee.Rounded(f, float64(f32(r)), 0x1p-126, math.Abs(f) >= 0x1p128))
		return r
	}
	return b32(s)
}

// fpRecpx is frecpx: the reciprocal exponent.
func (c *Core) fpRecpxNoFZ(t uint8, x uint64) uint64 {
	if r, ok := c.processNaNs(t, x); ok {
		return r
	}
	if t == 1 {
		sign := x & (1 << 63)
		exp := (x >> 52) & 0x7ff
		if exp == 0 {
			return sign | 0x7fe<<52
		}
		return sign | (^exp&0x7ff)<<52
	}
	sign := x & (1 << 31)
	exp := (x >> 23) & 0xff
	if exp == 0 {
		return sign | 0xfe<<23
	}
	return sign | (^exp&0xff)<<23
}

// execSIMDImm runs the modified-immediate forms (movi, mvni, orr, bic).
func (c *Core) execSIMDImm(in *inst) {
	pat := in.imm
	var r vec
	d := c.v[in.rd]
	switch int(in.ra) {
	case vMovi:
		r = vec{pat, pat}
	case vMvni:
		r = vec{^pat, ^pat}
	case vOrrImm:
		r = vec{d[0] | pat, d[1] | pat}
	case vBicImm:
		r = vec{d[0] &^ pat, d[1] &^ pat}
	}
	if in.b&sfQ == 0 {
		r[1] = 0
	}
	c.v[in.rd] = r
}

// recipEstimate is the architecture's 8-bit reciprocal estimate of a
// 9-bit fixed-point a in [256, 512) (0.5 <= x < 1).
func recipEstimate(a uint64) uint64 {
	a = a*2 + 1
	b := (1 << 19) / a
	return (b + 1) / 2
}

// recipSqrtEstimate is the reciprocal square root estimate of a in
// [128, 512) (0.25 <= x < 1).
func recipSqrtEstimate(a uint64) uint64 {
	if a < 256 {
		a = a*2 + 1
	} else {
		a = (a >> 1) << 1
		a = (a + 1) * 2
	}
	b := uint64(512)
	for a*(b+1)*(b+1) < 1<<28 {
		b++
	}
	return (b + 1) / 2
}

// fpRecipEstimate is frecpe for single (t = 0) and double (t = 1).
func (c *Core) fpRecipEstimateNoFZ(t uint8, x uint64) uint64 {
	if r, ok := c.processNaNs(t, x); ok {
		return r
	}
	sign := x & signBit(t)
	var exp int64
	var frac uint64 // 52-bit fraction
	if t == 1 {
		exp, frac = int64(x>>52&0x7ff), x&(1<<52-1)
	} else {
		exp, frac = int64(x>>23&0xff), (x&(1<<23-1))<<29
	}
	maxExp := int64(0xff)
	if t == 1 {
		maxExp = 0x7ff
	}
	switch {
	case exp == maxExp: // infinity
		return sign
	case exp == 0 && frac == 0:
		c.raise(ieee.DivByZero)
		return sign | infBits(t)
	}
	// |x| < 2^-128 (single) or 2^-1024 (double): the reciprocal overflows
	if exp == 0 && frac>>50 == 0 {
		c.raise(ieee.Overflow | ieee.Inexact)
		return sign | infBits(t)
	}
	if exp == 0 {
		if frac>>51 == 0 {
			exp = -1
			frac = (frac << 2) & (1<<52 - 1)
		} else {
			frac = (frac << 1) & (1<<52 - 1)
		}
	}
	scaled := 1<<8 | frac>>44
	var rexp int64
	if t == 1 {
		rexp = 2045 - exp
	} else {
		rexp = 253 - exp
	}
	est := recipEstimate(scaled)
	frac = (est & 0xff) << 44
	switch rexp {
	case 0:
		frac = 1<<51 | frac>>1
	case -1:
		frac = 1<<50 | frac>>2
		rexp = 0
	}
	if t == 1 {
		return sign | uint64(rexp)<<52 | frac
	}
	return sign | uint64(rexp)<<23 | frac>>29
}

func infBits(t uint8) uint64 {
	if t == 1 {
		return 0x7ff0000000000000
	}
	return 0x7f800000
}

// fpRSqrtEstimate is frsqrte.
func (c *Core) fpRSqrtEstimateNoFZ(t uint8, x uint64) uint64 {
	if r, ok := c.processNaNs(t, x); ok {
		return r
	}
	sign := x&signBit(t) != 0
	var exp int64
	var frac uint64
	if t == 1 {
		exp, frac = int64(x>>52&0x7ff), x&(1<<52-1)
	} else {
		exp, frac = int64(x>>23&0xff), (x&(1<<23-1))<<29
	}
	maxExp := int64(0xff)
	if t == 1 {
		maxExp = 0x7ff
	}
	switch {
	case exp == 0 && frac == 0:
		c.raise(ieee.DivByZero)
		return x&signBit(t) | infBits(t)
	case sign:
		c.raise(ieee.Invalid)
		return c.defaultNaN(t)
	case exp == maxExp:
		return 0
	}
	if exp == 0 {
		for frac>>51 == 0 {
			frac <<= 1
			exp--
		}
		frac = (frac << 1) & (1<<52 - 1)
	}
	var scaled uint64
	if exp&1 == 0 {
		scaled = 1<<8 | frac>>44
	} else {
		scaled = 1<<7 | frac>>45
	}
	var rexp int64
	if t == 1 {
		rexp = floorDiv2(3068 - exp)
	} else {
		rexp = floorDiv2(380 - exp)
	}
	est := recipSqrtEstimate(scaled)
	if t == 1 {
		return uint64(rexp)<<52 | (est&0xff)<<44
	}
	return uint64(rexp)<<23 | (est&0xff)<<15
}

func floorDiv2(v int64) int64 { return v >> 1 }

// urecpe and ursqrte on 32-bit lanes.
func urecpe(x uint64) uint64 {
	if x>>31 == 0 {
		return 0xffffffff
	}
	return recipEstimate(x>>23&0x1ff) << 23
}

func ursqrte(x uint64) uint64 {
	if x>>30 == 0 {
		return 0xffffffff
	}
	return recipSqrtEstimate(x>>23&0x1ff) << 23
}

// The AdvSIMD primitives under FZ (see flushIn).

func (c *Core) fcmp(kind int, t uint8, x, y uint64) uint64 {
	if c.fzOn() {
		x, y = c.flushIn(t, x), c.flushIn(t, y)
	}
	return c.fcmpNoFZ(kind, t, x, y)
}

func (c *Core) fpStep(t uint8, a, b uint64, rsqrt bool) uint64 {
	if !c.fzOn() {
		return c.fpStepNoFZ(t, a, b, rsqrt)
	}
	s := c.fzStart()
	a, b = c.flushIn(t, a), c.flushIn(t, b)
	return c.fzEnd(t, c.fpStepNoFZ(t, a, b, rsqrt), s)
}

func (c *Core) fpRecpx(t uint8, x uint64) uint64 {
	if c.fzOn() {
		x = c.flushIn(t, x)
	}
	return c.fpRecpxNoFZ(t, x)
}

// fpRecipEstimate under FZ: an operand so large that its reciprocal
// would be denormal (2^126 up for single, 2^1022 for double) gives a zero
// of its sign and underflow (Arm ARM FPRecipEstimate).
func (c *Core) fpRecipEstimate(t uint8, x uint64) uint64 {
	if c.fzOn() {
		x = c.flushIn(t, x)
		mag, big, inf := x&^signBit(t), uint64(0x7e800000), uint64(0x7f800000)
		if t == 1 {
			big, inf = 0x7fd0000000000000, 0x7ff0000000000000
		}
		if mag >= big && mag < inf {
			c.raise(ieee.Underflow)
			return x & signBit(t)
		}
	}
	return c.fpRecipEstimateNoFZ(t, x)
}

func (c *Core) fpRSqrtEstimate(t uint8, x uint64) uint64 {
	if c.fzOn() {
		x = c.flushIn(t, x)
	}
	return c.fpRSqrtEstimateNoFZ(t, x)
}

// fcvtRoundOdd under FZ flushes its double source and single result.
func (c *Core) fcvtRoundOdd(x uint64) uint64 {
	if !c.fzOn() {
		return c.fcvtRoundOddNoFZ(x)
	}
	s := c.fzStart()
	return c.fzEnd(0, c.fcvtRoundOddNoFZ(c.flushIn(1, x)), s)
}
