package s390x

import (
	"math"
	"math/big"
)

// IEEE exception flags of the FPC (bits 8-12). Linux runs programs with
// every exception masked, so an exception only sets its flag, which stays
// set until the program changes the FPC; efpc shows them (glibc's printf
// reads the rounding mode with it). simrun keeps the flags of the scalar
// BFP arithmetic, square root, multiply-and-add, comparisons and integer
// conversions; the vector instructions, rounding to shorter precision and
// to integral values leave them alone.
const (
	fpcInvalid   = 0x80 << 16
	fpcDivZero   = 0x40 << 16
	fpcOverflow  = 0x20 << 16
	fpcUnderflow = 0x10 << 16
	fpcInexact   = 0x08 << 16
)

// resultFlags are the overflow, underflow and inexact flags of a finite
// computation whose rounded result is z: exact tells whether z is the
// exact value, tiny the minimum normal magnitude of the format.
func resultFlags(z float64, exact bool, tiny float64, operandsFinite bool) uint32 {
	switch {
	case math.IsInf(z, 0) && operandsFinite:
		return fpcOverflow | fpcInexact
	case exact:
		return 0
	case math.Abs(z) < tiny:
		return fpcUnderflow | fpcInexact
	}
	return fpcInexact
}

// arithFlags64 are the flags of the double-precision a op b = z.
func arithFlags64(kind int, a, b, z uint64) uint32 {
	x, y, r := math.Float64frombits(a), math.Float64frombits(b), math.Float64frombits(z)
	if f, ok := specialFlags(kind, x, y, r, isSNaN64(a) || isSNaN64(b)); ok {
		return f
	}
	return resultFlags(r, exact64(kind, x, y, r), 0x1p-1022, true)
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
	return exactBig(r, y, x, 0, true) // r*y == x
}

// exactBig reports whether x*y + c == r exactly (or, with eq, whether
// x*y == c), in exact arithmetic.
func exactBig(x, y, c, r float64, eq bool) bool {
	const prec = 2300 // holds any double product plus any double
	p := new(big.Float).SetPrec(prec).SetFloat64(x)
	p.Mul(p, new(big.Float).SetFloat64(y))
	if eq {
		return p.Cmp(new(big.Float).SetFloat64(c)) == 0
	}
	p.Add(p, new(big.Float).SetPrec(prec).SetFloat64(c))
	return p.Cmp(new(big.Float).SetFloat64(r)) == 0
}

// arithFlags32 are the flags of the single-precision a op b = z: the
// double-precision result of single operands is exact for add, subtract
// and multiply, so z is exact if it equals it; division checks z*b == a.
func arithFlags32(kind int, a, b, z uint32) uint32 {
	x, y := float64(math.Float32frombits(a)), float64(math.Float32frombits(b))
	r := float64(math.Float32frombits(z))
	if f, ok := specialFlags(kind, x, y, r, isSNaN32(a) || isSNaN32(b)); ok {
		return f
	}
	var exact bool
	switch kind {
	case bfpAdd:
		exact = x+y == r
	case bfpSub:
		exact = x-y == r
	case bfpMul:
		exact = x*y == r
	default:
		exact = r*y == x && !math.IsInf(r, 0)
	}
	return resultFlags(r, exact, 0x1p-126, true)
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
	return resultFlags(r, exact, 0x1p-1022, true)
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
	return resultFlags(r, exactBig(r, r, math.Float64frombits(a), 0, true), 0, false)
}

// compareFlags is invalid for a signaling NaN operand (compare) or any
// NaN (compare and signal).
func compareFlags(a, b uint64, signal bool) uint32 {
	if isSNaN64(a) || isSNaN64(b) || signal && (isNaN64(a) || isNaN64(b)) {
		return fpcInvalid
	}
	return 0
}

// toIntFlags are the flags of converting b (widened to double) to an
// integer whose condition code was cc: invalid for NaNs and values out of
// range (cc 3), inexact for a fraction rounded off.
func toIntFlags(b uint64, cc uint8) uint32 {
	if cc == 3 {
		return fpcInvalid
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
