// Package ieee computes the IEEE 754 exception flags of a result that a
// core has already computed, for the cores that keep them as sticky
// status (the s390x FPC, the arm64 FPSR). Operands and results are raw
// bit patterns; each function answers for one operation. The rules are
// the ones both architectures (and qemu) follow with the exceptions
// masked: tininess is detected before rounding, so an inexact result
// that rounds up to the smallest normal magnitude underflowed too.
package ieee

import (
	"math"
	"math/big"
)

// Flags are exception flags, in the bit order of arm64's FPSR.
type Flags uint8

const (
	Invalid Flags = 1 << iota
	DivByZero
	Overflow
	Underflow
	Inexact
)

// Op is an arithmetic operation.
type Op int

const (
	Add Op = iota
	Sub
	Mul
	Div
)

const signBit64 = 1 << 63

func isNaN64(b uint64) bool  { return b&^signBit64 > 0x7ff0000000000000 }
func isSNaN64(b uint64) bool { return isNaN64(b) && b&(1<<51) == 0 }
func isNaN32(b uint32) bool  { return b&^(1<<31) > 0x7f800000 }
func isSNaN32(b uint32) bool { return isNaN32(b) && b&(1<<22) == 0 }

// nanFlags64 and nanFlags32 report a NaN operand of a one-operand
// operation with its flags: invalid if it signals.
func nanFlags64(a uint64) (Flags, bool) {
	if !isNaN64(a) {
		return 0, false
	}
	if isSNaN64(a) {
		return Invalid, true
	}
	return 0, true
}

func nanFlags32(a uint32) (Flags, bool) {
	if !isNaN32(a) {
		return 0, false
	}
	if isSNaN32(a) {
		return Invalid, true
	}
	return 0, true
}

// widen is the double of a short value that is not a NaN.
func widen(a uint32) uint64 { return math.Float64bits(float64(math.Float32frombits(a))) }

// Rounded are the flags of rounding the exact value x, finite or
// infinite, to r (of the destination format, widened to a double) where
// the smallest normal magnitude is tiny; overflow reports a rounding past
// the largest finite value, which a directed mode may stop at. An
// infinite x converts exactly to the infinity r: no flags (IEEE 754-2008
// 7.4, overflow is of a finite result's magnitude only).
func Rounded(x, r, tiny float64, overflow bool) Flags {
	if overflow {
		return Overflow | Inexact
	}
	return rounded(r, r == x, tiny, !math.IsInf(x, 0), func() bool { return math.Abs(x) < math.Abs(r) })
}

// Narrow are the flags of rounding the double a to the short z.
// overflows, asked for a finite a beyond the short range, reports whether
// the rounding with an unbounded exponent exceeds it (the caller knows
// its rounding mode).
func Narrow(a uint64, z uint32, overflows func(x float64) bool) Flags {
	if f, ok := nanFlags64(a); ok {
		return f
	}
	x := math.Float64frombits(a)
	if math.IsInf(x, 0) {
		return 0
	}
	r := float64(math.Float32frombits(z))
	return Rounded(x, r, 0x1p-126, math.Abs(x) > math.MaxFloat32 && overflows(x))
}

// rounded are the overflow, underflow and inexact flags of a finite
// computation whose rounded result is z: exact tells whether z is the
// exact value, tiny the minimum normal magnitude of the format. Tininess
// is detected before rounding: an inexact result that rounded up to
// ±tiny underflowed too. below, asked only then, reports whether the
// exact value lies closer to zero than z.
func rounded(z float64, exact bool, tiny float64, operandsFinite bool, below func() bool) Flags {
	switch {
	case math.IsInf(z, 0) && operandsFinite:
		return Overflow | Inexact
	case exact:
		return 0
	case math.Abs(z) < tiny || math.Abs(z) == tiny && below != nil && below():
		return Underflow | Inexact
	}
	return Inexact
}

// closerToZero reports whether a value whose difference from r has sign
// diff lies closer to zero than r.
func closerToZero(diff int, r float64) bool { return diff != 0 && (diff < 0) == (r > 0) }

// exactDiff is the sign of (x op y) - r in exact arithmetic (finite
// operands, y not 0 for a division).
func exactDiff(op Op, x, y, r float64) int {
	const prec = 3300 // see exactBig
	bf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	e := bf(0)
	switch op {
	case Add:
		e.Add(bf(x), bf(y))
	case Sub:
		e.Sub(bf(x), bf(y))
	case Mul:
		e.Mul(bf(x), bf(y))
	default: // x/y - r has the sign of (x - r*y) * y
		e.Sub(bf(x), e.Mul(bf(r), bf(y)))
		if y < 0 {
			e.Neg(e)
		}
		return e.Sign()
	}
	return e.Cmp(bf(r))
}

// Arith64 are the flags of the double-precision a op b = z.
func Arith64(op Op, a, b, z uint64) Flags {
	x, y, r := math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(z)
	if f, ok := special(op, x, y, r, isSNaN64(a) || isSNaN64(b)); ok {
		return f
	}
	return rounded(r, exact64(op, x, y, r), 0x1p-1022, true,
		func() bool { return closerToZero(exactDiff(op, x, y, r), r) })
}

// special are the flags of x op y = r (either width, widened) when an
// operand is a NaN (sNaN: a signalling one) or infinite, the result a NaN
// or a division by zero; ok reports one of those cases.
func special(op Op, x, y, r float64, sNaN bool) (flags Flags, ok bool) {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		if sNaN {
			return Invalid, true
		}
		return 0, true
	case math.IsNaN(r):
		return Invalid, true
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return 0, true
	case op == Div && y == 0:
		return DivByZero, true
	}
	return 0, false
}

// exact64 reports whether r is the exact result of x op y (finite
// operands; r finite or infinite).
func exact64(op Op, x, y, r float64) bool {
	if math.IsInf(r, 0) {
		return false
	}
	switch op {
	case Sub:
		y = -y
		fallthrough
	case Add:
		bb := r - x
		return (x-(r-bb))+(y-bb) == 0
	case Mul:
		if r == 0 || math.Abs(r) < 0x1p-1000 {
			return exactBig(x, y, 0, r, false)
		}
		return math.FMA(x, y, -r) == 0
	}
	if r == 0 {
		return x == 0
	}
	if math.Abs(x) > 0x1p-900 { // r*y - x cannot underflow to 0: one rounding tells
		return math.FMA(r, y, -x) == 0
	}
	return exactBig(r, y, x, 0, true) // r*y == x
}

// exactBig reports whether x*y + c == r exactly (or, with eq, whether
// x*y == c), in exact arithmetic.
func exactBig(x, y, c, r float64, eq bool) bool {
	const prec = 3300 // any double product (down to 2^-2148) plus any double (up to 2^1024), exactly
	p := new(big.Float).SetPrec(prec).SetFloat64(x)
	p.Mul(p, new(big.Float).SetFloat64(y))
	if eq {
		return p.Cmp(new(big.Float).SetFloat64(c)) == 0
	}
	p.Add(p, new(big.Float).SetPrec(prec).SetFloat64(c))
	return p.Cmp(new(big.Float).SetFloat64(r)) == 0
}

// Arith32 are the flags of the single-precision a op b = z: z is
// exact if it equals the exact result, which for add and subtract is the
// double one when that did not round, for multiply always the double
// one; division checks z*b == a.
func Arith32(op Op, a, b, z uint32) Flags {
	x, y := float64(math.Float32frombits(a)), float64(math.Float32frombits(b))
	r := float64(math.Float32frombits(z))
	if f, ok := special(op, x, y, r, isSNaN32(a) || isSNaN32(b)); ok {
		return f
	}
	var exact bool
	switch op {
	case Add, Sub:
		// the double sum can itself round (exponents far apart): then
		// the exact sum is not a short value either
		y := y
		if op == Sub {
			y = -y
		}
		s := x + y
		bb := s - x
		exact = (x-(s-bb))+(y-bb) == 0 && s == r
	case Mul:
		exact = x*y == r
	default:
		exact = r*y == x && !math.IsInf(r, 0)
	}
	return rounded(r, exact, 0x1p-126, true,
		func() bool { return closerToZero(exactDiff(op, x, y, r), r) })
}

// FMA64 are the flags of the double-precision a*b + c = z (c as
// added, its sign already applied).
func FMA64(a, b, c, z uint64) Flags {
	if isNaN64(a) || isNaN64(b) || isNaN64(c) {
		if isSNaN64(a) || isSNaN64(b) || isSNaN64(c) {
			return Invalid
		}
		return 0
	}
	return fmaFinite(a, b, c, z, 0x1p-1022)
}

// FMA32 is FMA64 for short operands.
func FMA32(a, b, c, z uint32) Flags {
	if isNaN32(a) || isNaN32(b) || isNaN32(c) {
		if isSNaN32(a) || isSNaN32(b) || isSNaN32(c) {
			return Invalid
		}
		return 0
	}
	return fmaFinite(widen(a), widen(b), widen(c), widen(z), 0x1p-126)
}

// fmaFinite are the flags of a*b + c = z (as doubles, none of a, b, c
// a NaN) in a format whose smallest normal magnitude is tiny.
func fmaFinite(a, b, c, z uint64, tiny float64) Flags {
	if isNaN64(z) {
		return Invalid
	}
	x, y, w := math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(c)
	r := math.Float64frombits(z)
	if math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(w, 0) {
		return 0
	}
	exact := false
	if !math.IsInf(r, 0) {
		exact = exactFMA(x, y, w, r)
	}
	return rounded(r, exact, tiny, true, func() bool {
		p := new(big.Float).SetPrec(3300).SetFloat64(x)
		p.Mul(p, new(big.Float).SetFloat64(y))
		p.Add(p, new(big.Float).SetFloat64(w))
		return closerToZero(p.Cmp(new(big.Float).SetFloat64(r)), r)
	})
}

// exactFMA reports whether x*y + w == r exactly (finite operands). When
// the product is a double (always for short operands) and far from
// underflow, one TwoSum decides; otherwise exactBig does.
func exactFMA(x, y, w, r float64) bool {
	p := x * y
	if !math.IsInf(p, 0) && math.Abs(p) > 0x1p-960 && math.FMA(x, y, -p) == 0 {
		if s := p + w; !math.IsInf(s, 0) {
			bb := s - p
			return (p-(s-bb))+(w-bb) == 0 && s == r
		}
	}
	return exactBig(x, y, w, r, false)
}

// Sqrt64 are the flags of the double-precision square root of a = z.
func Sqrt64(a, z uint64) Flags {
	if f, ok := nanFlags64(a); ok {
		return f
	}
	if isNaN64(z) {
		return Invalid
	}
	r := math.Float64frombits(z)
	if math.IsInf(r, 0) || r == 0 {
		return 0
	}
	return rounded(r, exactBig(r, r, math.Float64frombits(a), 0, true), 0, false, nil)
}

// Sqrt32 is Sqrt64 for a short operand.
func Sqrt32(a, z uint32) Flags {
	if f, ok := nanFlags32(a); ok {
		return f
	}
	return Sqrt64(widen(a), widen(z))
}

// Compare64 is invalid for a signaling NaN operand (compare) or any
// NaN (compare and signal).
func Compare64(a, b uint64, signal bool) Flags {
	if isSNaN64(a) || isSNaN64(b) || signal && (isNaN64(a) || isNaN64(b)) {
		return Invalid
	}
	return 0
}

// Compare32 is Compare64 for short operands (whose NaNs the
// widening would quiet).
func Compare32(a, b uint32, signal bool) Flags {
	if isSNaN32(a) || isSNaN32(b) || signal && (isNaN32(a) || isNaN32(b)) {
		return Invalid
	}
	return 0
}

// FromInt is inexact when the integer of magnitude mag did not convert
// exactly to z, a short value if single, else a double.
func FromInt(mag uint64, z uint64, single bool) Flags {
	prec := 53
	r := math.Float64frombits(z)
	if single {
		prec, r = 24, float64(math.Float32frombits(uint32(z)))
	}
	if mag < 1<<uint(prec) {
		return 0
	}
	// r is integral here; below 2^64 it converts back exactly
	if f := math.Abs(r); f >= 0x1p64 || uint64(f) != mag {
		return Inexact
	}
	return 0
}

// Integral64 are the flags of rounding the double a to the integral
// z: invalid for a signaling NaN, inexact when the value changed.
func Integral64(a, z uint64) Flags {
	if f, ok := nanFlags64(a); ok {
		return f
	}
	if a != z {
		return Inexact
	}
	return 0
}

// Integral32 is Integral64 for a short operand (whose NaNs
// the widening would quiet).
func Integral32(a, z uint32) Flags {
	if f, ok := nanFlags32(a); ok {
		return f
	}
	return Integral64(widen(a), widen(z))
}

// Lengthen are the flags of widening the short a: invalid for a
// signaling NaN, the only case that is not exact.
func Lengthen(a uint32) Flags {
	if isSNaN32(a) {
		return Invalid
	}
	return 0
}
