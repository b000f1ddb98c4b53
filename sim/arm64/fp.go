package arm64

import (
	"math"

	"simrun/sim/cpu"
	"simrun/sim/ieee"
)

// Floating point on raw bit patterns with the Arm rules the host FPU does
// not follow: NaN propagation (a signalling NaN operand wins, then the first
// quiet NaN; invalid operations give the default NaN 0x7fc00000 /
// 0x7ff8000000000000 rather than x86's negative one), fmax/fmin on zeros,
// and saturating float-to-integer conversion. Precision t: 0 single,
// 1 double, 3 half.

const (
	defNaN32 = 0x7fc00000
	defNaN64 = 0x7ff8000000000000
)

func isNaN(t uint8, v uint64) bool {
	if t == 1 {
		return v&0x7fffffffffffffff > 0x7ff0000000000000
	}
	return uint32(v)&0x7fffffff > 0x7f800000
}

func isSNaN(t uint8, v uint64) bool {
	if t == 1 {
		return isNaN(t, v) && v&(1<<51) == 0
	}
	return isNaN(t, v) && v&(1<<22) == 0
}

func quiet(t uint8, v uint64) uint64 {
	if t == 1 {
		return v | 1<<51
	}
	return uint64(uint32(v) | 1<<22)
}

func (c *Core) defaultNaN(t uint8) uint64 {
	if t == 1 {
		return defNaN64
	}
	return defNaN32
}

// raise sets IEEE exception flags in the FPSR (cumulative, bits 0-4 in
// ieee.Flags' order; Linux runs programs with every trap disabled).
func (c *Core) raise(f ieee.Flags) { c.fpsr |= uint32(f) }

// arithFlags raises the flags of the operation kind on a and b giving r,
// in precision t (0 single, 1 double).
func (c *Core) arithFlags(t uint8, kind uint8, a, b, r uint64) {
	op := ieee.Add
	switch kind {
	case fSub, fAbd:
		op = ieee.Sub
	case fMul, fMulx:
		op = ieee.Mul
	case fDiv:
		op = ieee.Div
	}
	if t == 1 {
		c.raise(ieee.Arith64(op, a, b, r))
	} else {
		c.raise(ieee.Arith32(op, uint32(a), uint32(b), uint32(r)))
	}
}

// processNaNs returns the NaN result for operands ops (in the
// architecture's priority order), or ok false if none is a NaN.
func (c *Core) processNaNs(t uint8, ops ...uint64) (uint64, bool) {
	for _, v := range ops {
		if isSNaN(t, v) {
			c.raise(ieee.Invalid)
			return c.nanResult(t, v), true
		}
	}
	for _, v := range ops {
		if isNaN(t, v) {
			return c.nanResult(t, v), true
		}
	}
	return 0, false
}

func (c *Core) nanResult(t uint8, v uint64) uint64 {
	if c.fpcr&fpcrDN != 0 {
		return c.defaultNaN(t)
	}
	return quiet(t, v)
}

func f32(v uint64) float32 { return math.Float32frombits(uint32(v)) }
func f64(v uint64) float64 { return math.Float64frombits(v) }
func b32(f float32) uint64 { return uint64(math.Float32bits(f)) }
func b64(f float64) uint64 { return math.Float64bits(f) }

// FP binary operation kinds (shared with AdvSIMD lanes).
const (
	fAdd = iota
	fSub
	fMul
	fDiv
	fMax
	fMin
	fMaxnm
	fMinnm
	fNmul
	fMulx
	fAbd
)

func (c *Core) fpBinaryNoFZ(kind uint8, t uint8, a, b uint64) uint64 {
	if kind == fNmul { // FPNeg(FPMul()): the sign of a NaN result flips too
		return c.fpBinaryNoFZ(fMul, t, a, b) ^ signBit(t)
	}
	switch kind {
	case fMaxnm, fMinnm:
		// A quiet NaN against a number gives the number.
		qa, qb := isNaN(t, a) && !isSNaN(t, a), isNaN(t, b) && !isSNaN(t, b)
		if qa && !isNaN(t, b) {
			a = b
		} else if qb && !isNaN(t, a) {
			b = a
		}
		kind -= fMaxnm - fMax
	}
	if r, ok := c.processNaNs(t, a, b); ok {
		return r
	}
	if kind == fMax || kind == fMin {
		return fmaxmin(t, kind == fMax, a, b)
	}
	var r uint64
	if t == 1 {
		r = b64(arith(kind, f64(a), f64(b)))
	} else {
		r = b32(arith(kind, f32(a), f32(b)))
	}
	switch {
	case kind == fMulx && magnitude(t, a)|magnitude(t, b) == infBits(t) && (magnitude(t, a) == 0 || magnitude(t, b) == 0):
		// infinity times zero is ±2, exactly
	case kind == fAbd:
		// |a - b|: the subtraction's flags (the absolute value is exact)
		c.arithFlags(t, fSub, a, b, fpSub(t, a, b))
	default:
		c.arithFlags(t, kind, a, b, r)
	}
	if isNaN(t, r) { // invalid operation
		r = c.defaultNaN(t)
	}
	return r
}

// magnitude is v without its sign, in precision t.
func magnitude(t uint8, v uint64) uint64 {
	if t == 1 {
		return v &^ signBit(1)
	}
	return v & 0x7fffffff
}

// fpSub is a - b in precision t (for the sign of fabd's difference).
func fpSub(t uint8, a, b uint64) uint64 {
	if t == 1 {
		return b64(f64(a) - f64(b))
	}
	return b32(f32(a) - f32(b))
}

// arith is the arithmetic of fpBinary on non-NaN operands, in either
// precision (F's own arithmetic rounds once, as the architecture does).
func arith[F float32 | float64](kind uint8, x, y F) F {
	switch kind {
	case fAdd:
		return x + y
	case fSub:
		return x - y
	case fMul:
		return x * y
	case fDiv:
		return x / y
	case fAbd:
		return F(math.Abs(float64(x - y))) // exact: float32 widens losslessly
	case fMulx:
		if (isInf(x) && y == 0) || (x == 0 && isInf(y)) {
			r := F(2)
			if math.Signbit(float64(x)) != math.Signbit(float64(y)) {
				r = -2
			}
			return r
		}
		return x * y
	}
	return 0
}

func isInf[F float32 | float64](f F) bool { return math.IsInf(float64(f), 0) }

func isInf32(f float32) bool { return math.IsInf(float64(f), 0) }

// fmaxmin on non-NaN operands: +0 > -0.
func fmaxmin(t uint8, isMax bool, a, b uint64) uint64 {
	var x, y float64
	if t == 1 {
		x, y = f64(a), f64(b)
	} else {
		x, y = float64(f32(a)), float64(f32(b))
	}
	if x == y { // only zeros of different sign differ
		neg := a>>63 == 1
		if t != 1 {
			neg = a>>31&1 == 1
		}
		if neg == isMax {
			return b
		}
		return a
	}
	if (x > y) == isMax {
		return a
	}
	return b
}

// fpFMA computes addend + n*m fused. Negations apply to the operands
// before anything else (as FPNeg does in the architecture), so a negated
// NaN operand propagates with its sign flipped.
func (c *Core) fpFMANoFZ(t uint8, addend, n, m uint64, negProduct, negAddend bool) uint64 {
	if negProduct {
		n ^= signBit(t)
	}
	if negAddend {
		addend ^= signBit(t)
	}
	// The infinity-times-zero case is invalid even with a quiet NaN addend.
	var infZero bool
	if t == 1 {
		x, y := f64(n), f64(m)
		infZero = (math.IsInf(x, 0) && y == 0) || (x == 0 && math.IsInf(y, 0))
	} else {
		x, y := f32(n), f32(m)
		infZero = (isInf32(x) && y == 0) || (x == 0 && isInf32(y))
	}
	if isNaN(t, addend) && !isSNaN(t, addend) && !isSNaN(t, n) && !isSNaN(t, m) && infZero {
		c.raise(ieee.Invalid)
		return c.defaultNaN(t)
	}
	if r, ok := c.processNaNs(t, addend, n, m); ok {
		return r
	}
	var r uint64
	if t == 1 {
		r = b64(math.FMA(f64(n), f64(m), f64(addend)))
		c.raise(ieee.FMA64(n, m, addend, r))
	} else {
		r = b32(fma32(f32(n), f32(m), f32(addend)))
		c.raise(ieee.FMA32(uint32(n), uint32(m), uint32(addend), uint32(r)))
	}
	if isNaN(t, r) {
		r = c.defaultNaN(t)
	}
	return r
}

// fma32 is a correctly rounded float32 fused multiply-add.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact: 24+24 bits fit in 53
	cc := float64(c)
	s := p + cc
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// The float64 sum rounds once and the conversion to float32 again; the
	// two can only disagree with one rounding when s landed exactly on a
	// float32 midpoint. Then the exact error of the sum (TwoSum) says which
	// way the true value lies.
	bb := s - p
	err := (p - (s - bb)) + (cc - bb)
	if err != 0 && isMidpoint32(s) {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), err))
	}
	return float32(s)
}

// isMidpoint32 reports whether v lies exactly halfway between two adjacent
// float32 values.
func isMidpoint32(v float64) bool {
	r := float32(v)
	if float64(r) == v {
		return false
	}
	other := math.Nextafter32(r, float32(math.Inf(1)))
	if float64(r) > v {
		other = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	return (float64(r)+float64(other))/2 == v
}

func (c *Core) fpSqrtNoFZ(t uint8, a uint64) uint64 {
	if r, ok := c.processNaNs(t, a); ok {
		return r
	}
	var r uint64
	if t == 1 {
		r = b64(math.Sqrt(f64(a)))
		c.raise(ieee.Sqrt64(a, r))
	} else {
		r = b32(float32(math.Sqrt(float64(f32(a))))) // exact: sqrt is correctly rounded via double
		c.raise(ieee.Sqrt32(uint32(a), uint32(r)))
	}
	if isNaN(t, r) {
		r = c.defaultNaN(t)
	}
	return r
}

// fpCompare returns NZCV for a compare; signal (fcmpe) makes any NaN
// operand invalid, not only a signaling one.
func (c *Core) fpCompareNoFZ(t uint8, a, b uint64, signal bool) uint32 {
	c.compareFlags(t, a, b, signal)
	if isNaN(t, a) || isNaN(t, b) {
		return 0b0011
	}
	var x, y float64
	if t == 1 {
		x, y = f64(a), f64(b)
	} else {
		x, y = float64(f32(a)), float64(f32(b))
	}
	switch {
	case x == y:
		return 0b0110
	case x < y:
		return 0b1000
	}
	return 0b0010
}

// compareFlags raises invalid for a signaling NaN operand, or with
// signal for any NaN.
func (c *Core) compareFlags(t uint8, a, b uint64, signal bool) {
	if t == 1 {
		c.raise(ieee.Compare64(a, b, signal))
	} else {
		c.raise(ieee.Compare32(uint32(a), uint32(b), signal))
	}
}

func roundF(v float64, mode uint8) float64 {
	switch mode {
	case rnPos:
		return math.Ceil(v)
	case rnNeg:
		return math.Floor(v)
	case rnZero:
		return math.Trunc(v)
	case rnAway:
		return math.Round(v)
	}
	return math.RoundToEven(v)
}

// fpRoundInt is frint*: only frintx (exact) raises inexact.
func (c *Core) fpRoundIntNoFZ(t uint8, a uint64, mode uint8, exact bool) uint64 {
	if r, ok := c.processNaNs(t, a); ok {
		return r
	}
	var r uint64
	if t == 1 {
		r = b64(roundF(f64(a), mode))
	} else {
		r = b32(float32(roundF(float64(f32(a)), mode)))
	}
	if exact && r != a {
		c.raise(ieee.Inexact)
	}
	return r
}

// fpToInt converts with rounding mode and saturation; NaN gives 0. A NaN
// or a value out of range is invalid, a fraction rounded off inexact.
func (c *Core) fpToIntNoFZ(t uint8, a uint64, mode uint8, signed bool, width uint, fbits uint) uint64 {
	if isNaN(t, a) {
		c.raise(ieee.Invalid)
		return 0
	}
	var v float64
	if t == 1 {
		v = f64(a)
	} else {
		v = float64(f32(a))
	}
	if fbits != 0 {
		v = math.Ldexp(v, int(fbits))
	}
	exact := v
	v = roundF(v, mode)
	r, inRange := saturate(v, signed, width)
	switch {
	case !inRange:
		c.raise(ieee.Invalid)
	case v != exact:
		c.raise(ieee.Inexact)
	}
	return r
}

// saturate converts the integral v to a width-bit integer, saturating; ok
// is false if v was out of range.
func saturate(v float64, signed bool, width uint) (r uint64, ok bool) {
	if signed {
		hi := math.Ldexp(1, int(width-1)) // 2^(w-1)
		switch {
		case v >= hi:
			return uint64(1)<<(width-1) - 1, false
		case v < -hi:
			return 1 << (width - 1), false
		}
		return uint64(int64(v)) & mask(uint32(width)), true
	}
	hi := math.Ldexp(1, int(width))
	switch {
	case v >= hi:
		return mask(uint32(width)), false
	case v < 0:
		return 0, false
	case v >= 1<<63:
		return uint64(v-(1<<63)) | 1<<63, true
	}
	return uint64(v), true
}

// intToFP converts a 32- or 64-bit integer (already extended to 64 bits)
// with fbits fraction bits, rounding to nearest even; inexact when the
// integer does not convert exactly (the scaling by 2^-fbits is exact).
func (c *Core) intToFP(t uint8, v uint64, signed bool, fbits uint) uint64 {
	neg, mag := signed && int64(v) < 0, v
	if neg {
		mag = -v
	}
	if t == 1 {
		var f float64
		if signed {
			f = float64(int64(v))
		} else {
			f = float64(v)
		}
		c.raise(ieee.FromInt(mag, b64(f), false))
		if fbits != 0 {
			f = math.Ldexp(f, -int(fbits))
		}
		return b64(f)
	}
	var f float32
	if signed {
		f = float32(int64(v))
	} else {
		f = float32(v)
	}
	c.raise(ieee.FromInt(mag, b32(f), true))
	if fbits != 0 {
		f = float32(math.Ldexp(float64(f), -int(fbits)))
	}
	return b32(f)
}

// fpConvert changes precision (fcvt), quieting NaNs and keeping payloads.
func (c *Core) fpConvertNoFZ(from, to uint8, a uint64) uint64 {
	var sign uint64
	var f float64
	nan := false
	var payload uint64 // top mantissa bits, left-aligned in 64 bits
	switch from {
	case 0:
		sign = a >> 31 & 1
		nan = isNaN(0, a)
		payload = (a & 0x7fffff) << 41
		f = float64(f32(a))
	case 1:
		sign = a >> 63
		nan = isNaN(1, a)
		payload = (a & 0xfffffffffffff) << 12
		f = f64(a)
	case 3:
		sign = a >> 15 & 1
		nan = a&0x7fff > 0x7c00
		payload = (a & 0x3ff) << 54
		f = half2float(uint16(a))
	}
	if nan {
		if payload>>63 == 0 { // signaling
			c.raise(ieee.Invalid)
		}
		if c.fpcr&fpcrDN != 0 {
			switch to {
			case 0:
				return defNaN32
			case 1:
				return defNaN64
			}
			return 0x7e00
		}
		payload |= 1 << 63 // quiet
		switch to {
		case 0:
			return sign<<31 | 0x7f800000 | payload>>41
		case 1:
			return sign<<63 | 0x7ff0000000000000 | payload>>12
		}
		return sign<<15 | 0x7c00 | payload>>54
	}
	switch to {
	case 0:
		r := float32(f)
		c.raise(ieee.Rounded(f, float64(r), 0x1p-126, isInf32(r) && !math.IsInf(f, 0)))
		return b32(r)
	case 1:
		return b64(f)
	}
	h := float2half(f)
	r := half2float(h)
	c.raise(ieee.Rounded(f, r, 0x1p-14, math.IsInf(r, 0) && !math.IsInf(f, 0)))
	return uint64(h)
}

func half2float(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	man := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(man, -24)
	case 31:
		if man == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+man, exp-25)
}

// float2half rounds to nearest even IEEE half precision.
func float2half(f float64) uint16 {
	var sign uint16
	if math.Signbit(f) {
		sign = 0x8000
		f = -f
	}
	if math.IsInf(f, 0) {
		return sign | 0x7c00
	}
	if f == 0 {
		return sign
	}
	// Scale to an integer mantissa in units of the half's ulp at this exponent.
	_, e := math.Frexp(f) // f = m * 2^e, m in [0.5, 1)
	exp := e - 1          // f = 1.x * 2^exp
	if exp < -14 {
		exp = -14 // subnormal range: ulp is 2^-24
	}
	ulp := exp - 10
	m := math.RoundToEven(math.Ldexp(f, -ulp))
	if m >= 2048 { // rounding carried into the next binade
		m /= 2
		exp++
	}
	if exp > 15 {
		return sign | 0x7c00
	}
	if m < 1024 { // subnormal
		return sign | uint16(m)
	}
	return sign | uint16(exp+15)<<10 | uint16(m)&0x3ff
}

func (c *Core) fget(n uint8) uint64 { return c.v[n][0] }

func (c *Core) fset(d uint8, t uint8, v uint64) {
	switch t {
	case 0:
		v = uint64(uint32(v))
	case 3:
		v = uint64(uint16(v))
	}
	c.v[d] = [2]uint64{v, 0}
}

// execFP runs the scalar floating-point ops.
func (c *Core) execFP(in *inst, pc uint64) *cpu.Fault {
	t := in.a
	switch in.op {
	case opFmovReg:
		c.fset(in.rd, t, c.fget(in.rn))
	case opFabs:
		c.fset(in.rd, t, c.fget(in.rn)&^signBit(t))
	case opFneg:
		c.fset(in.rd, t, c.fget(in.rn)^signBit(t))
	case opFsqrt:
		c.fset(in.rd, t, c.fpSqrt(t, c.fget(in.rn)))
	case opFcvt:
		c.fset(in.rd, in.b, c.fpConvert(t, in.b, c.fget(in.rn)))
	case opFrint:
		c.fset(in.rd, t, c.fpRoundInt(t, c.fget(in.rn), roundMode(in.b), in.b == rnExact))
	case opFadd, opFsub, opFmul, opFdiv, opFmax, opFmin, opFmaxnm, opFminnm, opFnmul:
		c.fset(in.rd, t, c.fpBinary(uint8(in.op-opFadd+fAdd)&0xff, t, c.fget(in.rn), c.fget(in.rm)))
	case opFmadd:
		c.fset(in.rd, t, c.fpFMA(t, c.fget(in.ra), c.fget(in.rn), c.fget(in.rm), false, false))
	case opFmsub:
		c.fset(in.rd, t, c.fpFMA(t, c.fget(in.ra), c.fget(in.rn), c.fget(in.rm), true, false))
	case opFnmadd:
		c.fset(in.rd, t, c.fpFMA(t, c.fget(in.ra), c.fget(in.rn), c.fget(in.rm), true, true))
	case opFnmsub:
		c.fset(in.rd, t, c.fpFMA(t, c.fget(in.ra), c.fget(in.rn), c.fget(in.rm), false, true))
	case opFcmp:
		b := c.fget(in.rm)
		if in.b&2 != 0 {
			b = 0
		}
		c.nzcv = c.fpCompare(t, c.fget(in.rn), b, in.b&1 != 0) // fcmpe signals
	case opFccmp:
		if c.cond(in.ra) {
			c.nzcv = c.fpCompare(t, c.fget(in.rn), c.fget(in.rm), in.b != 0) // fccmpe signals
		} else {
			c.nzcv = uint32(in.imm)
		}
	case opFcsel:
		if c.cond(in.b) {
			c.fset(in.rd, t, c.fget(in.rn))
		} else {
			c.fset(in.rd, t, c.fget(in.rm))
		}
	case opFmovI:
		c.fset(in.rd, t, in.imm)
	case opFmovToGP:
		switch in.b {
		case 0:
			c.x[in.rd] = uint64(uint32(c.v[in.rn][0]))
		case 1:
			c.x[in.rd] = c.v[in.rn][0]
		case 2:
			c.x[in.rd] = c.v[in.rn][1]
		}
	case opFmovFromGP:
		switch in.b {
		case 0:
			c.v[in.rd] = [2]uint64{uint64(uint32(c.x[in.rn])), 0}
		case 1:
			c.v[in.rd] = [2]uint64{c.x[in.rn], 0}
		case 2:
			c.v[in.rd][1] = c.x[in.rn]
		}
	case opFcvtToInt:
		width := uint(32)
		if in.b>>4&1 == 1 {
			width = 64
		}
		r := c.fpToInt(t, c.fget(in.rn), in.b&7, in.b>>3&1 == 1, width, uint(in.imm))
		if width == 32 {
			r = uint64(uint32(r))
		}
		c.x[in.rd] = r
	case opIntToFcvt:
		v := c.x[in.rn]
		signed := in.b&1 == 1
		if in.b&2 == 0 {
			if signed {
				v = uint64(int32(v))
			} else {
				v = uint64(uint32(v))
			}
		}
		c.fset(in.rd, t, c.intToFP(t, v, signed, uint(in.imm)))
	case opSimd:
		return c.execSIMD(in, pc)
	case opSimdImm:
		c.execSIMDImm(in)
	default:
		return &cpu.Fault{PC: pc, Kind: cpu.FaultInternal, Err: errNoExec(in.op)}
	}
	return nil
}

func signBit(t uint8) uint64 {
	switch t {
	case 1:
		return 1 << 63
	case 3:
		return 1 << 15
	}
	return 1 << 31
}

// roundMode resolves frintx/frinti's "current mode" (always nearest here).
func roundMode(m uint8) uint8 {
	if m == rnExact || m == rnCur {
		return rnEven
	}
	return m
}

// Flush-to-zero (FPCR.FZ, which gcc's -ffast-math start-up sets): single
// and double operands that are denormal count as zeros of their sign and
// raise IDC (Arm ARM FPUnpackBase), and a result whose exact value lies
// below the smallest normal magnitude becomes a zero of its sign raising
// UFC alone, not IXC (FPRoundBase); half precision, governed by FZ16, is
// left alone (simrun has no half-precision arithmetic, and its
// conversions ignore FZ16). The primitives below wrap the ones that
// compute without FZ.

const fpsrIDC = 1 << 7

func (c *Core) fzOn() bool { return c.fpcr&fpcrFZ != 0 }

// flushIn is operand v of precision t (0 single, 1 double) after FZ.
func (c *Core) flushIn(t uint8, v uint64) uint64 {
	switch {
	case t == 0 && v&0x7f800000 == 0 && v&0x7fffff != 0:
		c.fpsr |= fpsrIDC
		return v & (1 << 31)
	case t == 1 && v&0x7ff0000000000000 == 0 && v&(1<<52-1) != 0:
		c.fpsr |= fpsrIDC
		return v & (1 << 63)
	}
	return v
}

// fzStart sets the FPSR aside so that the operation's own flags can be
// told apart; fzEnd flushes the operation's result r of precision t and
// merges the flags back. The result is tiny when the operation raised
// underflow (an inexact value below the normal range before rounding,
// whatever it rounded to: zero, a denormal or the smallest normal) or is
// itself an exact denormal.
func (c *Core) fzStart() uint32 {
	s := c.fpsr
	c.fpsr = 0
	return s
}

func (c *Core) fzEnd(t uint8, r uint64, saved uint32) uint64 {
	f := c.fpsr
	var mag, minNormal uint64
	switch t {
	case 0:
		mag, minNormal = r&0x7fffffff, 0x00800000
	case 1:
		mag, minNormal = r&^(1<<63), 1<<52
	default:
		c.fpsr = saved | f
		return r
	}
	if f&uint32(ieee.Underflow) != 0 || mag != 0 && mag < minNormal {
		r &= signBit(t)
		f = f&^uint32(ieee.Inexact) | uint32(ieee.Underflow)
	}
	c.fpsr = saved | f
	return r
}

func (c *Core) fpBinary(kind uint8, t uint8, a, b uint64) uint64 {
	if !c.fzOn() {
		return c.fpBinaryNoFZ(kind, t, a, b)
	}
	s := c.fzStart()
	a, b = c.flushIn(t, a), c.flushIn(t, b)
	return c.fzEnd(t, c.fpBinaryNoFZ(kind, t, a, b), s)
}

func (c *Core) fpFMA(t uint8, addend, n, m uint64, negProduct, negAddend bool) uint64 {
	if !c.fzOn() {
		return c.fpFMANoFZ(t, addend, n, m, negProduct, negAddend)
	}
	s := c.fzStart()
	addend, n, m = c.flushIn(t, addend), c.flushIn(t, n), c.flushIn(t, m)
	return c.fzEnd(t, c.fpFMANoFZ(t, addend, n, m, negProduct, negAddend), s)
}

func (c *Core) fpSqrt(t uint8, a uint64) uint64 {
	if c.fzOn() {
		a = c.flushIn(t, a)
	}
	return c.fpSqrtNoFZ(t, a)
}

func (c *Core) fpCompare(t uint8, a, b uint64, signal bool) uint32 {
	if c.fzOn() {
		a, b = c.flushIn(t, a), c.flushIn(t, b)
	}
	return c.fpCompareNoFZ(t, a, b, signal)
}

func (c *Core) fpRoundInt(t uint8, a uint64, mode uint8, exact bool) uint64 {
	if c.fzOn() {
		a = c.flushIn(t, a)
	}
	return c.fpRoundIntNoFZ(t, a, mode, exact)
}

func (c *Core) fpToInt(t uint8, a uint64, mode uint8, signed bool, width uint, fbits uint) uint64 {
	if c.fzOn() {
		a = c.flushIn(t, a)
	}
	return c.fpToIntNoFZ(t, a, mode, signed, width, fbits)
}

// fpConvert flushes a single or double source and a single or double
// result (a half source or result is FZ16's, which conversions ignore).
func (c *Core) fpConvert(from, to uint8, a uint64) uint64 {
	if !c.fzOn() {
		return c.fpConvertNoFZ(from, to, a)
	}
	s := c.fzStart()
	if from < 2 {
		a = c.flushIn(from, a)
	}
	return c.fzEnd(to, c.fpConvertNoFZ(from, to, a), s)
}
