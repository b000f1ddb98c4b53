package s390x

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"simrun/sim/cpu"
)

// IEEE exception flags of the FPC (bits 8-12). Linux runs programs with
// every exception masked, so an exception only sets its flag, which stays
// set until the program changes the FPC (sfpc); efpc shows them (glibc's
// printf reads the rounding mode with it). Every BFP instruction simrun
// implements, scalar and vector, raises its flags as qemu does; the
// random differential tests read the FPC after each one (fpcProbe).
const (
	fpcInvalid   = 0x80 << 16
	fpcDivZero   = 0x40 << 16
	fpcOverflow  = 0x20 << 16
	fpcUnderflow = 0x10 << 16
	fpcInexact   = 0x08 << 16
)

// The FPC's fields:
//
//	 0       8       16      24  25-27 29-31
//	+-------+-------+-------+---+-----+-----+
//	| masks | flags |  DXC  |   | DRM | BRM |
//	+-------+-------+-------+---+-----+-----+
//
// masks and flags: invalid, divide by zero, overflow, underflow, inexact
// (bits 0-4, 8-12); DRM and BRM the decimal and binary rounding modes.
const (
	fpcMasks    = 0xf8 << 24
	fpcReserved = 0x03030088 // bits 6-7, 14-15, 24, 28
	fpcBRM      = 0x7
)

var (
	errFPCReserved = errors.New("specification exception: sfpc sets a reserved FPC bit or an invalid rounding mode")
	errFPCTraps    = errors.New("simrun runs with the IEEE exceptions masked: sfpc would enable IEEE traps")
	errFPCRounding = errors.New("simrun rounds binary floating point to nearest only: sfpc would set another mode")
)

// setFPC is sfpc: a reserved bit or a binary rounding mode of 4-6 is a
// specification exception (qemu's test); enabling an IEEE trap or
// another binary rounding mode is refused as unsupported, since simrun
// implements neither.
func (c *Core) setFPC(v uint32) *cpu.Fault {
	switch {
	case v&fpcReserved != 0 || v&fpcBRM >= 4 && v&fpcBRM <= 6:
		return &cpu.Fault{Kind: cpu.FaultUndefined, Err: fmt.Errorf("%w (0x%08x)", errFPCReserved, v)}
	case v&fpcMasks != 0:
		return &cpu.Fault{Kind: cpu.FaultUnsupported, Err: fmt.Errorf("%w (0x%08x)", errFPCTraps, v)}
	case v&fpcBRM != 0:
		return &cpu.Fault{Kind: cpu.FaultUnsupported, Err: fmt.Errorf("%w (0x%08x)", errFPCRounding, v)}
	}
	c.fpc = v
	return nil
}

// resultFlags are the overflow, underflow and inexact flags of a finite
// computation whose rounded result is z: exact tells whether z is the
// exact value, tiny the minimum normal magnitude of the format. The
// architecture detects tininess before rounding (qemu): an inexact result
// that rounded up to ±tiny underflowed too. below, asked only then,
// reports whether the exact value lies closer to zero than z.
func resultFlags(z float64, exact bool, tiny float64, operandsFinite bool, below func() bool) uint32 {
	switch {
	case math.IsInf(z, 0) && operandsFinite:
		return fpcOverflow | fpcInexact
	case exact:
		return 0
	case math.Abs(z) < tiny || math.Abs(z) == tiny && below != nil && below():
		return fpcUnderflow | fpcInexact
	}
	return fpcInexact
}

// closerToZero reports whether a value whose difference from r has sign
// diff lies closer to zero than r.
func closerToZero(diff int, r float64) bool { return diff != 0 && (diff < 0) == (r > 0) }

// exactDiff is the sign of (x op y) - r in exact arithmetic (finite
// operands, y not 0 for a division).
func exactDiff(kind int, x, y, r float64) int {
	const prec = 3300 // see exactBig
	bf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	e := bf(0)
	switch kind {
	case bfpAdd:
		e.Add(bf(x), bf(y))
	case bfpSub:
		e.Sub(bf(x), bf(y))
	case bfpMul:
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

// arithFlags64 are the flags of the double-precision a op b = z.
func arithFlags64(kind int, a, b, z uint64) uint32 {
	x, y, r := math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(z)
	if f, ok := specialFlags(kind, x, y, r, isSNaN64(a) || isSNaN64(b)); ok {
		return f
	}
	return resultFlags(r, exact64(kind, x, y, r), 0x1p-1022, true,
		func() bool { return closerToZero(exactDiff(kind, x, y, r), r) })
}

// specialFlags are the flags of x op y = r (either width, widened) when an
// operand is a NaN (sNaN: a signalling one) or infinite, the result a NaN
// or a division by zero; ok reports one of those cases.
func specialFlags(kind int, x, y, r float64, sNaN bool) (flags uint32, ok bool) {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		if sNaN {
			return fpcInvalid, true
		}
		return 0, true
	case math.IsNaN(r):
		return fpcInvalid, true
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return 0, true
	case kind == bfpDiv && y == 0:
		return fpcDivZero, true
	}
	return 0, false
}

// exact64 reports whether r is the exact result of x op y (finite
// operands; r finite or infinite).
func exact64(kind int, x, y, r float64) bool {
	if math.IsInf(r, 0) {
		return false
	}
	switch kind {
	case bfpSub:
		y = -y
		fallthrough
	case bfpAdd:
		bb := r - x
		return (x-(r-bb))+(y-bb) == 0
	case bfpMul:
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

// arithFlags32 are the flags of the single-precision a op b = z: z is
// exact if it equals the exact result, which for add and subtract is the
// double one when that did not round, for multiply always the double
// one; division checks z*b == a.
func arithFlags32(kind int, a, b, z uint32) uint32 {
	x, y := float64(math.Float32frombits(a)), float64(math.Float32frombits(b))
	r := float64(math.Float32frombits(z))
	if f, ok := specialFlags(kind, x, y, r, isSNaN32(a) || isSNaN32(b)); ok {
		return f
	}
	var exact bool
	switch kind {
	case bfpAdd, bfpSub:
		// the double sum can itself round (exponents far apart): then
		// the exact sum is not a short value either
		y := y
		if kind == bfpSub {
			y = -y
		}
		s := x + y
		bb := s - x
		exact = (x-(s-bb))+(y-bb) == 0 && s == r
	case bfpMul:
		exact = x*y == r
	default:
		exact = r*y == x && !math.IsInf(r, 0)
	}
	return resultFlags(r, exact, 0x1p-126, true,
		func() bool { return closerToZero(exactDiff(kind, x, y, r), r) })
}

// fmaFlags64 are the flags of the double-precision a*b + c = z (c as
// added, its sign already applied).
func fmaFlags64(a, b, c, z uint64) uint32 {
	if isNaN64(a) || isNaN64(b) || isNaN64(c) {
		if isSNaN64(a) || isSNaN64(b) || isSNaN64(c) {
			return fpcInvalid
		}
		return 0
	}
	return fmaFlagsFinite(a, b, c, z, 0x1p-1022)
}

// fmaFlags32 is fmaFlags64 for short operands.
func fmaFlags32(a, b, c, z uint32) uint32 {
	if isNaN32(a) || isNaN32(b) || isNaN32(c) {
		if isSNaN32(a) || isSNaN32(b) || isSNaN32(c) {
			return fpcInvalid
		}
		return 0
	}
	return fmaFlagsFinite(ext32to64(a), ext32to64(b), ext32to64(c), ext32to64(z), 0x1p-126)
}

// fmaFlagsFinite are the flags of a*b + c = z (as doubles, none of a, b, c
// a NaN) in a format whose smallest normal magnitude is tiny.
func fmaFlagsFinite(a, b, c, z uint64, tiny float64) uint32 {
	if isNaN64(z) {
		return fpcInvalid
	}
	x, y, w := math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(c)
	r := math.Float64frombits(z)
	if math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(w, 0) {
		return 0
	}
	exact := false
	if !math.IsInf(r, 0) {
		exact = exactBig(x, y, w, r, false)
	}
	return resultFlags(r, exact, tiny, true, func() bool {
		p := new(big.Float).SetPrec(3300).SetFloat64(x)
		p.Mul(p, new(big.Float).SetFloat64(y))
		p.Add(p, new(big.Float).SetFloat64(w))
		return closerToZero(p.Cmp(new(big.Float).SetFloat64(r)), r)
	})
}

// sqrtFlags64 are the flags of the double-precision square root of a = z.
func sqrtFlags64(a, z uint64) uint32 {
	if isNaN64(a) {
		if isSNaN64(a) {
			return fpcInvalid
		}
		return 0
	}
	if isNaN64(z) {
		return fpcInvalid
	}
	r := math.Float64frombits(z)
	if math.IsInf(r, 0) || r == 0 {
		return 0
	}
	return resultFlags(r, exactBig(r, r, math.Float64frombits(a), 0, true), 0, false, nil)
}

// sqrtFlags32 is sqrtFlags64 for a short operand.
func sqrtFlags32(a, z uint32) uint32 {
	if isNaN32(a) {
		if isSNaN32(a) {
			return fpcInvalid
		}
		return 0
	}
	return sqrtFlags64(ext32to64(a), ext32to64(z))
}

// compareFlags is invalid for a signaling NaN operand (compare) or any
// NaN (compare and signal).
func compareFlags(a, b uint64, signal bool) uint32 {
	if isSNaN64(a) || isSNaN64(b) || signal && (isNaN64(a) || isNaN64(b)) {
		return fpcInvalid
	}
	return 0
}

// compareFlags32 is compareFlags for short operands (whose NaNs the
// widening would quiet).
func compareFlags32(a, b uint32, signal bool) uint32 {
	if isSNaN32(a) || isSNaN32(b) || signal && (isNaN32(a) || isNaN32(b)) {
		return fpcInvalid
	}
	return 0
}

// toIntFlags are the flags of converting b (widened to double) to an
// integer whose condition code was cc: invalid for a NaN, invalid and
// inexact for a number out of range (cc 3 both; qemu), inexact for a
// fraction rounded off.
func toIntFlags(b uint64, cc uint8) uint32 {
	switch {
	case cc == 3 && isNaN64(b):
		return fpcInvalid
	case cc == 3:
		return fpcInvalid | fpcInexact
	}
	x := math.Float64frombits(b)
	if x != math.Trunc(x) {
		return fpcInexact
	}
	return 0
}

// fromIntFlags is inexact when the integer (sign and magnitude) did not convert exactly to
// the BFP value z of format f.
func fromIntFlags(neg bool, mag uint64, z uint64, f *bfpFormat) uint32 {
	if mag < 1<<uint(f.prec) {
		return 0
	}
	var r float64
	if f == &single {
		r = float64(math.Float32frombits(uint32(z)))
	} else {
		r = math.Float64frombits(z)
	}
	want := new(big.Float).SetUint64(mag)
	if neg {
		want.Neg(want)
	}
	if want.Cmp(new(big.Float).SetFloat64(r)) != 0 {
		return fpcInexact
	}
	return 0
}

// integralFlags64 are the flags of rounding the double a to the integral
// z: invalid for a signaling NaN, inexact when the value changed (the
// inexact control of the vector form only suppresses the trap, as in
// qemu).
func integralFlags64(a, z uint64) uint32 {
	switch {
	case isNaN64(a):
		if isSNaN64(a) {
			return fpcInvalid
		}
		return 0
	case a != z:
		return fpcInexact
	}
	return 0
}

// integralFlags32 is integralFlags64 for a short operand (whose NaNs
// the widening would quiet).
func integralFlags32(a, z uint32) uint32 {
	if isNaN32(a) {
		if isSNaN32(a) {
			return fpcInvalid
		}
		return 0
	}
	return integralFlags64(ext32to64(a), ext32to64(z))
}

// narrowFlags are the flags of rounding the double a to the short z with
// rounding mode rm. A directed mode can round a value beyond the short
// range to the largest finite one: it overflows when its rounding with
// an unbounded exponent does (the value scaled down by 2^64, which is
// exact, rounds in range).
func narrowFlags(a uint64, z uint32, rm uint8) uint32 {
	x := math.Float64frombits(a)
	switch {
	case isNaN64(a):
		if isSNaN64(a) {
			return fpcInvalid
		}
		return 0
	case math.IsInf(x, 0):
		return 0
	case math.Abs(x) > math.MaxFloat32:
		scaled := round64to32(math.Float64bits(x*0x1p-64), rm)
		if math.Abs(float64(math.Float32frombits(scaled)))*0x1p64 > math.MaxFloat32 {
			return fpcOverflow | fpcInexact
		}
	}
	r := float64(math.Float32frombits(z))
	return resultFlags(r, r == x, 0x1p-126, true, func() bool { return math.Abs(x) < math.Abs(r) })
}

// lengthenFlags are the flags of widening the short a: invalid for a
// signaling NaN, the only case that is not exact.
func lengthenFlags(a uint32) uint32 {
	if isSNaN32(a) {
		return fpcInvalid
	}
	return 0
}
