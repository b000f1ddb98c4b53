package s390x

import (
	"math"
	"math/bits"
)

// IEEE binary floating point as z/Architecture (and qemu's softfloat
// configuration for it) computes it, on raw bits: the host's arithmetic
// for ordinary operands, explicit rules where hosts differ.
//
//   - A NaN result of an invalid operation is the default NaN, positive
//     with only the quiet bit (x86 would make it negative).
//   - With NaN operands the result is the first signaling NaN, else the
//     first quiet NaN, in operand order, made quiet.
//   - Conversions and rounding take an explicit BFP rounding mode.

// BFP rounding-mode field values (M3 of conversions; 0 = the FPC's mode,
// which simrun keeps at round to nearest even).
const (
	rmFPC     = 0
	rmAway    = 1 // nearest, ties away from zero
	rmOdd     = 3 // prepare for shorter precision
	rmEven    = 4
	rmZero    = 5
	rmPosInf  = 6
	rmNegInf  = 7
	defNaN64  = 0x7ff8000000000000
	defNaN32  = 0x7fc00000
	quiet64   = 1 << 51
	quiet32   = 1 << 22
	signBit64 = 1 << 63
	signBit32 = 1 << 31
)

func isNaN64(b uint64) bool  { return b&^signBit64 > 0x7ff0000000000000 }
func isSNaN64(b uint64) bool { return isNaN64(b) && b&quiet64 == 0 }
func isNaN32(b uint32) bool  { return b&^signBit32 > 0x7f800000 }
func isSNaN32(b uint32) bool { return isNaN32(b) && b&quiet32 == 0 }

// pickNaN64 returns the NaN result for operands of which at least one is
// a NaN.
func pickNaN64(ops ...uint64) uint64 {
	for _, o := range ops {
		if isSNaN64(o) {
			return o | quiet64
		}
	}
	for _, o := range ops {
		if isNaN64(o) {
			return o
		}
	}
	return defNaN64
}

func pickNaN32(ops ...uint32) uint32 {
	for _, o := range ops {
		if isSNaN32(o) {
			return o | quiet32
		}
	}
	for _, o := range ops {
		if isNaN32(o) {
			return o
		}
	}
	return defNaN32
}

// Arithmetic kinds.
const (
	bfpAdd = iota
	bfpSub
	bfpMul
	bfpDiv
)

func arith64(kind int, a, b uint64) uint64 {
	if isNaN64(a) || isNaN64(b) {
		return pickNaN64(a, b)
	}
	x, y := math.Float64frombits(a), math.Float64frombits(b)
	var z float64
	switch kind {
	case bfpAdd:
		z = x + y
	case bfpSub:
		z = x - y
	case bfpMul:
		z = x * y
	default:
		z = x / y
	}
	if z != z {
		return defNaN64
	}
	return math.Float64bits(z)
}

func arith32(kind int, a, b uint32) uint32 {
	if isNaN32(a) || isNaN32(b) {
		return pickNaN32(a, b)
	}
	x, y := math.Float32frombits(a), math.Float32frombits(b)
	var z float32
	switch kind {
	case bfpAdd:
		z = x + y
	case bfpSub:
		z = x - y
	case bfpMul:
		z = x * y
	default:
		z = x / y
	}
	if z != z {
		return defNaN32
	}
	return math.Float32bits(z)
}

// fma64 is a*b + c (c negated first when sub), rounded once. A NaN
// operand gives the first NaN of a, b, c made quiet, whether signaling or
// not (qemu 7.2's rule for s390x multiply-and-add; the scalar forms pass
// the second operand as a, R3 as b, the vector forms V2, V3, V4).
func fma64(a, b, c uint64, sub bool) uint64 {
	if isNaN64(a) || isNaN64(b) || isNaN64(c) {
		for _, o := range [3]uint64{a, b, c} {
			if isNaN64(o) {
				return o | quiet64
			}
		}
	}
	if sub {
		c ^= signBit64
	}
	z := math.FMA(math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(c))
	if z != z {
		return defNaN64
	}
	return math.Float64bits(z)
}

// fma32 rounds a*b + c to single precision once: the product is exact in
// double precision, the sum is rounded to odd in double precision (exact
// error from TwoSum), and rounding that to single precision is correct.
// NaNs as fma64.
func fma32(a, b, c uint32, sub bool) uint32 {
	if isNaN32(a) || isNaN32(b) || isNaN32(c) {
		for _, o := range [3]uint32{a, b, c} {
			if isNaN32(o) {
				return o | quiet32
			}
		}
	}
	if sub {
		c ^= signBit32
	}
	p := float64(math.Float32frombits(a)) * float64(math.Float32frombits(b))
	q := float64(math.Float32frombits(c))
	s := p + q
	if s != s {
		return defNaN32
	}
	if !math.IsInf(s, 0) {
		bb := s - p
		e := (p - (s - bb)) + (q - bb)
		if e != 0 {
			t := s
			if (e > 0) != (s > 0) { // s is beyond the exact sum: truncate
				t = math.Nextafter(s, 0)
			}
			if math.Float64bits(t)&1 == 0 {
				t = math.Nextafter(t, math.Copysign(math.Inf(1), t))
			}
			s = t
		}
	}
	return math.Float32bits(float32(s))
}

func sqrt64(a uint64) uint64 {
	if isNaN64(a) {
		return pickNaN64(a)
	}
	z := math.Sqrt(math.Float64frombits(a))
	if z != z {
		return defNaN64
	}
	return math.Float64bits(z)
}

func sqrt32(a uint32) uint32 {
	if isNaN32(a) {
		return pickNaN32(a)
	}
	z := float32(math.Sqrt(float64(math.Float32frombits(a))))
	if z != z {
		return defNaN32
	}
	return math.Float32bits(z)
}

// ccFP is the condition code of a BFP result: 0 zero, 1 negative, 2
// positive, 3 NaN.
func ccFP64(b uint64) uint8 {
	switch {
	case isNaN64(b):
		return 3
	case b&^signBit64 == 0:
		return 0
	case b&signBit64 != 0:
		return 1
	}
	return 2
}

func ccFP32(b uint32) uint8 { return ccFP64(ext32to64(b)) }

// cmp64 compares: 0 equal, 1 low, 2 high, 3 unordered.
func cmp64(a, b uint64) uint8 {
	if isNaN64(a) || isNaN64(b) {
		return 3
	}
	x, y := math.Float64frombits(a), math.Float64frombits(b)
	return b2u(x < y) | b2u(x > y)<<1
}

// ext32to64 is the exact widening of a short BFP value (a signaling NaN
// becomes quiet, its payload kept).
func ext32to64(b uint32) uint64 {
	if isNaN32(b) {
		return uint64(b&signBit32)<<32 | 0x7ff8000000000000 | uint64(b&(1<<22-1))<<29
	}
	return math.Float64bits(float64(math.Float32frombits(b)))
}

// round64to32 narrows a long BFP value in rounding mode rm.
func round64to32(b uint64, rm uint8) uint32 {
	switch {
	case isNaN64(b):
		return uint32(b>>32)&signBit32 | defNaN32 | uint32(b>>29)&(1<<22-1)
	case b&^signBit64 == 0 || b&^signBit64 == 0x7ff0000000000000:
		return uint32(b>>32)&signBit32 | uint32(b>>32)&0x7f800000 // zero or infinity
	}
	neg := b&signBit64 != 0
	exp := int(b >> 52 & 0x7ff)
	mant := b & (1<<52 - 1)
	if exp == 0 {
		exp = 1
	} else {
		mant |= 1 << 52
	}
	return uint32(roundToFormat(neg, mant, exp-1075, &single, rm))
}

// A binary format for roundToFormat.
type bfpFormat struct {
	prec       int // significand bits, with the implicit one
	emin, emax int // exponent range of normal numbers (of the leading bit)
	expBits    int
}

var (
	single = bfpFormat{24, -126, 127, 8}
	double = bfpFormat{53, -1022, 1023, 11}
)

// roundToFormat encodes the nonzero value mant * 2^exp in format f,
// rounded in mode rm, with gradual underflow and overflow as the mode
// directs.
func roundToFormat(neg bool, mant uint64, exp int, f *bfpFormat, rm uint8) uint64 {
	if rm == rmFPC {
		rm = rmEven
	}
	lz := bits.LeadingZeros64(mant)
	mant <<= lz
	e := exp + 63 - lz // exponent of the leading bit
	keep := f.prec
	if e < f.emin {
		keep -= f.emin - e
	}
	// Split into kept bits and the discarded rest, left-aligned in rem
	// (its top bit is worth half of kept's last bit).
	var kept, rem uint64
	switch {
	case keep >= 64:
		kept = mant
	case keep > 0:
		kept, rem = mant>>(64-keep), mant<<keep
	case keep == 0:
		rem = mant
	case keep > -64:
		rem = mant >> -keep
		if mant<<(64+keep) != 0 {
			rem |= 1 // sticky
		}
	default:
		rem = 1
	}
	inexact := rem != 0
	half, sticky := rem>>63 != 0, rem<<1 != 0
	var up bool
	switch rm {
	case rmEven:
		up = half && (sticky || kept&1 != 0)
	case rmAway:
		up = half
	case rmPosInf:
		up = inexact && !neg
	case rmNegInf:
		up = inexact && neg
	case rmOdd:
		if inexact {
			kept |= 1
		}
	}
	if up {
		kept++
	}
	lsb := e - keep + 1 // exponent of kept's last bit
	if kept>>f.prec != 0 {
		kept >>= 1
		lsb++
	}
	var sign uint64
	if neg {
		sign = 1 << (f.expBits + f.prec - 1)
	}
	fracBits := f.prec - 1
	if kept>>fracBits == 0 { // subnormal or zero
		return sign | kept
	}
	biased := lsb + fracBits + (1<<(f.expBits-1) - 1)
	if biased >= 1<<f.expBits-1 { // overflow
		toInf := rm == rmEven || rm == rmAway || rm == rmPosInf && !neg || rm == rmNegInf && neg
		if toInf {
			return sign | uint64(1<<f.expBits-1)<<fracBits
		}
		return sign | uint64(1<<f.expBits-2)<<fracBits | (1<<fracBits - 1)
	}
	return sign | uint64(biased)<<fracBits | kept&(1<<fracBits-1)
}

// intToBFP converts an integer (magnitude and sign) in mode rm.
func intToBFP(neg bool, mag uint64, f *bfpFormat, rm uint8) uint64 {
	if mag == 0 {
		return 0
	}
	return roundToFormat(neg, mag, 0, f, rm)
}

func signedToBFP(v int64, f *bfpFormat, rm uint8) uint64 {
	if v < 0 {
		return intToBFP(true, -uint64(v), f, rm)
	}
	return intToBFP(false, uint64(v), f, rm)
}

// roundIntegral rounds x to an integral value in mode rm.
func roundIntegral(x float64, rm uint8) float64 {
	switch rm {
	case rmAway:
		return math.Round(x)
	case rmZero:
		return math.Trunc(x)
	case rmPosInf:
		return math.Ceil(x)
	case rmNegInf:
		return math.Floor(x)
	case rmOdd:
		t := math.Trunc(x)
		if t != x && math.Mod(t, 2) == 0 {
			t += math.Copysign(1, x)
		}
		return t
	}
	return math.RoundToEven(x)
}

// roundIntegral64 is fidbra: NaNs quiet, infinities and zeros unchanged.
func roundIntegral64(b uint64, rm uint8) uint64 {
	if isNaN64(b) {
		return pickNaN64(b)
	}
	return math.Float64bits(roundIntegral(math.Float64frombits(b), rm))
}

func roundIntegral32(b uint32, rm uint8) uint32 {
	if isNaN32(b) {
		return pickNaN32(b)
	}
	return math.Float32bits(float32(roundIntegral(float64(math.Float32frombits(b)), rm)))
}

// toInt converts a BFP value (widened to double) to an integer of the
// given width and signedness in mode rm. Out-of-range values and NaNs give
// the qemu results (the nearest limit; NaN: the most negative signed or 0
// unsigned) and condition code 3; otherwise the code reflects the sign of
// the source.
func toInt(b uint64, width uint, signed bool, rm uint8) (uint64, uint8) {
	if isNaN64(b) {
		if signed {
			return uint64(1) << (width - 1), 3
		}
		return 0, 3
	}
	cc := ccFP64(b)
	t := roundIntegral(math.Float64frombits(b), rm)
	lim := math.Ldexp(1, int(width))
	if signed {
		half := lim / 2
		switch {
		case t < -half:
			return uint64(1) << (width - 1), 3
		case t >= half:
			return 1<<(width-1) - 1, 3
		}
		return uint64(int64(t)), cc
	}
	switch {
	case t <= -1:
		return 0, 3
	case t >= lim:
		return 1<<width - 1, 3
	}
	return uint64(t), cc
}

// dataClass is the test-data-class mask bit of a value with fracBits
// fraction bits (tcdb, tceb): the leftmost of the 12 mask bits is +zero,
// then -zero, +normal, -normal, +subnormal, ..., -signaling NaN.
func dataClass(b uint64, fracBits uint) uint16 {
	neg := uint(b >> (fracBits + expBitsFor(fracBits)) & 1)
	exp := b >> fracBits & (1<<expBitsFor(fracBits) - 1)
	frac := b & (1<<fracBits - 1)
	var class uint
	switch {
	case exp == 0 && frac == 0:
		class = 0
	case exp == 0:
		class = 4 // subnormal
	case exp != 1<<expBitsFor(fracBits)-1:
		class = 2 // normal
	case frac == 0:
		class = 6 // infinity
	case frac>>(fracBits-1) != 0:
		class = 8 // quiet NaN
	default:
		class = 10 // signaling NaN
	}
	return 1 << (11 - class - neg)
}

func expBitsFor(fracBits uint) uint {
	if fracBits == 23 {
		return 8
	}
	return 11
}
