package ieee

import "math/big"

// Binary128 (IEEE 754 quadruple precision, z/Architecture's extended
// BFP) arithmetic, computed here in full since no host has it: every
// operation forms its exact result (or a truncation of it with a sticky
// bit) as an integer significand and a power of two, and one rounding
// routine encodes that in the destination format. The rules are those of
// IEEE 754-2008 with the choices the package comment names (tininess
// before rounding, flags as with every exception masked) and the NaN rules
// of z/Architecture (Principles of Operation, "BFP arithmetic", NaN
// results): a NaN operand propagates, the first signaling one before the
// first quiet one, made quiet; an invalid operation without NaN operands
// gives the default NaN, positive with only the quiet bit.

// F128 is a binary128 value as raw bits: Hi holds the sign, the 15-bit
// exponent and the top 48 fraction bits, Lo the other 64.
type F128 struct{ Hi, Lo uint64 }

// Rounding is a rounding direction.
type Rounding uint8

const (
	NearestEven Rounding = iota
	NearestAway          // to nearest, ties away from zero
	TowardZero
	TowardPositive
	TowardNegative
	ToOdd // truncate, then set the last bit if inexact ("prepare for shorter precision")
)

const (
	f128Sign  = 1 << 63
	f128Quiet = 1 << 47 // in Hi
	f128ExpHi = 0x7fff << 48
	f128FracH = 1<<48 - 1
)

// DefaultNaN128 is the default NaN.
var DefaultNaN128 = F128{0x7fff800000000000, 0}

// IsNaN reports a NaN, IsSNaN a signaling one.
func (a F128) IsNaN() bool  { return a.Hi&f128ExpHi == f128ExpHi && (a.Hi&f128FracH|a.Lo) != 0 }
func (a F128) IsSNaN() bool { return a.IsNaN() && a.Hi&f128Quiet == 0 }

// IsInf reports an infinity, IsZero a zero of either sign.
func (a F128) IsInf() bool  { return a.Hi&^f128Sign == f128ExpHi && a.Lo == 0 }
func (a F128) IsZero() bool { return a.Hi&^f128Sign == 0 && a.Lo == 0 }

// Neg reports a set sign bit.
func (a F128) Neg() bool { return a.Hi&f128Sign != 0 }

// Quiet is a with the quiet bit set.
func (a F128) Quiet() F128 { return F128{a.Hi | f128Quiet, a.Lo} }

// format is a binary interchange format for round.
type format struct {
	prec    int // significand bits with the implicit one
	expBits int
}

var (
	fmt32  = format{24, 8}
	fmt64  = format{53, 11}
	fmt128 = format{113, 15}
)

func (f format) bias() int { return 1<<(f.expBits-1) - 1 }
func (f format) emin() int { return 1 - f.bias() }

// encoded is a value of some format in fields: the sign, the biased
// exponent and the fraction (without the implicit bit).
type encoded struct {
	neg  bool
	exp  uint64
	frac *big.Int
}

func (e encoded) f128() F128 {
	var hi uint64
	if e.neg {
		hi = f128Sign
	}
	lo := new(big.Int).And(e.frac, new(big.Int).SetUint64(^uint64(0))).Uint64()
	hi |= e.exp<<48 | new(big.Int).Rsh(e.frac, 64).Uint64()
	return F128{hi, lo}
}

func (e encoded) bits(f format) uint64 {
	v := e.exp<<(f.prec-1) | e.frac.Uint64()
	if e.neg {
		v |= 1 << (f.prec + f.expBits - 1)
	}
	return v
}

// round encodes the nonzero value mant * 2^exp, or, with sticky, a value
// a little above that (mant * 2^exp truncates it toward zero by less than
// 2^exp), in format f with rounding rm. The flags are overflow (the
// rounding with an unbounded exponent is beyond the largest finite value),
// underflow (the exact value is below the smallest normal magnitude and
// the result is inexact) and inexact.
func round(neg bool, mant *big.Int, exp int, sticky bool, f format, rm Rounding) (encoded, Flags) {
	n := mant.BitLen()
	e := exp + n - 1 // exponent of the leading bit
	keep := f.prec
	tiny := e < f.emin()
	if tiny {
		keep -= f.emin() - e
	}
	shift := n - keep // bits to drop
	kept := new(big.Int)
	half := false
	if shift <= 0 {
		kept.Lsh(mant, uint(-shift))
	} else {
		kept.Rsh(mant, uint(shift))
		half = mant.Bit(shift-1) != 0
		if int(mant.TrailingZeroBits()) < shift-1 {
			sticky = true
		}
	}
	inexact := half || sticky
	var up bool
	switch rm {
	case NearestEven:
		up = half && (sticky || kept.Bit(0) != 0)
	case NearestAway:
		up = half
	case TowardPositive:
		up = inexact && !neg
	case TowardNegative:
		up = inexact && neg
	case ToOdd:
		if inexact {
			kept.SetBit(kept, 0, 1)
		}
	}
	if up {
		kept.Add(kept, big.NewInt(1))
	}
	lsb := e - keep + 1 // exponent of kept's last bit
	if kept.BitLen() > f.prec {
		kept.Rsh(kept, 1)
		lsb++
	}
	var flags Flags
	if inexact {
		flags = Inexact
		if tiny {
			flags |= Underflow
		}
	}
	fracBits := f.prec - 1
	if kept.BitLen() <= fracBits { // subnormal or zero: lsb is the format's least
		return encoded{neg, 0, kept}, flags
	}
	biased := lsb + fracBits + f.bias()
	if biased >= 1<<f.expBits-1 {
		flags = Overflow | Inexact
		toInf := rm == NearestEven || rm == NearestAway || rm == TowardPositive && !neg || rm == TowardNegative && neg
		if toInf {
			return encoded{neg, 1<<f.expBits - 1, new(big.Int)}, flags
		}
		max := new(big.Int).Lsh(big.NewInt(1), uint(fracBits))
		return encoded{neg, 1<<f.expBits - 2, max.Sub(max, big.NewInt(1))}, flags
	}
	kept.SetBit(kept, fracBits, 0)
	return encoded{neg, uint64(biased), kept}, flags
}

// unpack splits a finite nonzero a into its sign, integer significand and
// the exponent of its last bit.
func (a F128) unpack() (neg bool, mant *big.Int, exp int) {
	be := int(a.Hi >> 48 & 0x7fff)
	mant = new(big.Int).SetUint64(a.Hi & f128FracH)
	if be != 0 {
		mant.SetBit(mant, 48, 1)
	}
	mant.Lsh(mant, 64)
	mant.Or(mant, new(big.Int).SetUint64(a.Lo))
	return a.Neg(), mant, max(be, 1) - fmt128.bias() - 112
}

func zero128(neg bool) F128 {
	if neg {
		return F128{f128Sign, 0}
	}
	return F128{}
}

func inf128(neg bool) F128 { return F128{zero128(neg).Hi | f128ExpHi, 0} }

// pickNaN128 is the NaN result and flags for operands of which at least
// one is a NaN.
func pickNaN128(ops ...F128) (F128, Flags) {
	for _, o := range ops {
		if o.IsSNaN() {
			return o.Quiet(), Invalid
		}
	}
	for _, o := range ops {
		if o.IsNaN() {
			return o, 0
		}
	}
	return DefaultNaN128, Invalid
}

func anyNaN(ops ...F128) bool {
	for _, o := range ops {
		if o.IsNaN() {
			return true
		}
	}
	return false
}

// finish rounds a finite nonzero result to binary128.
func finish(neg bool, mant *big.Int, exp int, sticky bool, rm Rounding) (F128, Flags) {
	e, f := round(neg, mant, exp, sticky, fmt128, rm)
	return e.f128(), f
}

// Add128 is a + b rounded with rm.
func Add128(a, b F128, rm Rounding) (F128, Flags) {
	if anyNaN(a, b) {
		return pickNaN128(a, b)
	}
	return addSigned(a, b, rm)
}

// Sub128 is a - b rounded with rm.
func Sub128(a, b F128, rm Rounding) (F128, Flags) {
	if anyNaN(a, b) {
		return pickNaN128(a, b)
	}
	b.Hi ^= f128Sign
	return addSigned(a, b, rm)
}

// addSigned adds operands that are not NaNs.
func addSigned(a, b F128, rm Rounding) (F128, Flags) {
	switch {
	case a.IsInf() && b.IsInf():
		if a.Neg() != b.Neg() {
			return DefaultNaN128, Invalid
		}
		return a, 0
	case a.IsInf():
		return a, 0
	case b.IsInf():
		return b, 0
	case a.IsZero() && b.IsZero():
		if a.Neg() == b.Neg() {
			return a, 0
		}
		return zero128(rm == TowardNegative), 0
	case a.IsZero():
		return b, 0
	case b.IsZero():
		return a, 0
	}
	na, ma, ea := a.unpack()
	nb, mb, eb := b.unpack()
	// An operand whose every bit lies far below the other's last one
	// only decides the sticky bit and the direction: any value of its
	// sign below 2^(e-115), e the larger's last-bit exponent, rounds the
	// same (the result keeps no bit below 2^(e-114)).
	const far = 240
	if ea-eb > far {
		mb, eb = big.NewInt(1), ea-far
	} else if eb-ea > far {
		ma, ea = big.NewInt(1), eb-far
	}
	lo := min(ea, eb)
	x := new(big.Int).Lsh(ma, uint(ea-lo))
	y := new(big.Int).Lsh(mb, uint(eb-lo))
	if na {
		x.Neg(x)
	}
	if nb {
		y.Neg(y)
	}
	x.Add(x, y)
	if x.Sign() == 0 {
		return zero128(rm == TowardNegative), 0
	}
	neg := x.Sign() < 0
	return finish(neg, x.Abs(x), lo, false, rm)
}

// Mul128 is a * b rounded with rm.
func Mul128(a, b F128, rm Rounding) (F128, Flags) {
	if anyNaN(a, b) {
		return pickNaN128(a, b)
	}
	neg := a.Neg() != b.Neg()
	switch {
	case a.IsInf() && b.IsZero() || a.IsZero() && b.IsInf():
		return DefaultNaN128, Invalid
	case a.IsInf() || b.IsInf():
		return inf128(neg), 0
	case a.IsZero() || b.IsZero():
		return zero128(neg), 0
	}
	_, ma, ea := a.unpack()
	_, mb, eb := b.unpack()
	return finish(neg, ma.Mul(ma, mb), ea+eb, false, rm)
}

// Div128 is a / b rounded with rm.
func Div128(a, b F128, rm Rounding) (F128, Flags) {
	if anyNaN(a, b) {
		return pickNaN128(a, b)
	}
	neg := a.Neg() != b.Neg()
	switch {
	case a.IsInf() && b.IsInf() || a.IsZero() && b.IsZero():
		return DefaultNaN128, Invalid
	case a.IsInf():
		return inf128(neg), 0
	case b.IsInf() || a.IsZero():
		return zero128(neg), 0
	case b.IsZero():
		return inf128(neg), DivByZero
	}
	_, ma, ea := a.unpack()
	_, mb, eb := b.unpack()
	// a quotient of at least 116 bits: two below the last kept one
	s := max(0, 116+mb.BitLen()-ma.BitLen())
	ma.Lsh(ma, uint(s))
	q, r := new(big.Int).QuoRem(ma, mb, new(big.Int))
	return finish(neg, q, ea-eb-s, r.Sign() != 0, rm)
}

// Sqrt128 is the square root of a rounded with rm.
func Sqrt128(a F128, rm Rounding) (F128, Flags) {
	switch {
	case a.IsNaN():
		return pickNaN128(a)
	case a.IsZero():
		return a, 0
	case a.Neg():
		return DefaultNaN128, Invalid
	case a.IsInf():
		return a, 0
	}
	_, m, e := a.unpack()
	s := max(0, 232-m.BitLen())
	if (e-s)&1 != 0 {
		s++
	}
	m.Lsh(m, uint(s))
	r := new(big.Int).Sqrt(m)
	sticky := new(big.Int).Mul(r, r).Cmp(m) != 0
	return finish(false, r, (e-s)/2, sticky, rm)
}

// Compare128 orders a and b: -1, 0 or 1, or unordered when either is a
// NaN. The flags are invalid for a signaling NaN, or with signal for any
// NaN.
func Compare128(a, b F128, signal bool) (int, bool, Flags) {
	if anyNaN(a, b) {
		if a.IsSNaN() || b.IsSNaN() || signal {
			return 0, true, Invalid
		}
		return 0, true, 0
	}
	if a.IsZero() && b.IsZero() {
		return 0, false, 0
	}
	// sign-magnitude to an order-preserving key
	key := func(x F128) (uint64, uint64) {
		if x.Neg() {
			hi, lo := ^x.Hi, ^x.Lo
			return hi, lo
		}
		return x.Hi | f128Sign, x.Lo
	}
	ah, al := key(a)
	bh, bl := key(b)
	switch {
	case ah < bh || ah == bh && al < bl:
		return -1, false, 0
	case ah == bh && al == bl:
		return 0, false, 0
	}
	return 1, false, 0
}

// FromFloat64 widens the double with bits b, exactly; a signaling NaN
// becomes quiet (invalid), a NaN keeps its payload's leading bits.
func FromFloat64(b uint64) (F128, Flags) {
	return widenTo128(b, fmt64)
}

// FromFloat32 widens a short value as FromFloat64.
func FromFloat32(b uint32) (F128, Flags) {
	return widenTo128(uint64(b), fmt32)
}

func widenTo128(b uint64, f format) (F128, Flags) {
	fracBits := uint(f.prec - 1)
	neg := b>>(fracBits+uint(f.expBits))&1 != 0
	be := b >> fracBits & (1<<f.expBits - 1)
	frac := b & (1<<fracBits - 1)
	sign := zero128(neg)
	switch {
	case be == 1<<f.expBits-1 && frac == 0:
		return inf128(neg), 0
	case be == 1<<f.expBits-1: // NaN: the fraction left-aligned
		var flags Flags
		if frac>>(fracBits-1) == 0 {
			flags = Invalid
		}
		x := F128{sign.Hi | f128ExpHi, 0}
		if sh := 112 - fracBits; sh >= 64 {
			x.Hi |= frac << (sh - 64)
		} else {
			x.Hi |= frac >> (64 - sh)
			x.Lo = frac << sh
		}
		return x.Quiet(), flags
	case be == 0 && frac == 0:
		return sign, 0
	}
	mant := frac
	if be != 0 {
		mant |= 1 << fracBits
	}
	exp := max(int(be), 1) - f.bias() - int(fracBits)
	return finish(neg, new(big.Int).SetUint64(mant), exp, false, NearestEven)
}

// ToFloat64 rounds a to a double (its bits) with rm. A NaN keeps the
// leading bits of its payload, made quiet (invalid if it signaled).
func ToFloat64(a F128, rm Rounding) (uint64, Flags) { return narrow(a, fmt64, rm) }

// ToFloat32 rounds a to a short value as ToFloat64.
func ToFloat32(a F128, rm Rounding) (uint32, Flags) {
	v, f := narrow(a, fmt32, rm)
	return uint32(v), f
}

func narrow(a F128, f format, rm Rounding) (uint64, Flags) {
	fracBits := uint(f.prec - 1)
	signBit := uint64(0)
	if a.Neg() {
		signBit = 1 << (fracBits + uint(f.expBits))
	}
	expAll := uint64(1<<f.expBits-1) << fracBits
	switch {
	case a.IsNaN():
		var flags Flags
		if a.IsSNaN() {
			flags = Invalid
		}
		// the top fracBits of the 112-bit fraction
		top := (a.Hi&f128FracH)<<16 | a.Lo>>48 // 64 leading fraction bits
		frac := top >> (64 - fracBits)
		return signBit | expAll | frac | 1<<(fracBits-1), flags
	case a.IsInf():
		return signBit | expAll, 0
	case a.IsZero():
		return signBit, 0
	}
	neg, m, e := a.unpack()
	enc, flags := round(neg, m, e, false, f, rm)
	return enc.bits(f), flags
}

// RoundIntegral128 rounds a to an integral value with rm: a NaN is made
// quiet (invalid if it signaled), infinities and zeros stay; the result
// is inexact when it differs from a. A zero result keeps a's sign.
func RoundIntegral128(a F128, rm Rounding) (F128, Flags) {
	switch {
	case a.IsNaN():
		return pickNaN128(a)
	case a.IsInf() || a.IsZero():
		return a, 0
	}
	neg, m, e := a.unpack()
	if e >= 0 {
		return a, 0
	}
	sh := uint(-e)
	q := new(big.Int).Rsh(m, sh)
	half := m.Bit(int(sh)-1) != 0
	sticky := m.TrailingZeroBits() < sh-1
	inexact := half || sticky
	if !inexact {
		return a, 0
	}
	var up bool
	switch rm {
	case NearestEven:
		up = half && (sticky || q.Bit(0) != 0)
	case NearestAway:
		up = half
	case TowardPositive:
		up = !neg
	case TowardNegative:
		up = neg
	case ToOdd:
		up = q.Bit(0) == 0
	}
	if up {
		q.Add(q, big.NewInt(1))
	}
	if q.Sign() == 0 {
		return zero128(neg), Inexact
	}
	z, _ := finish(neg, q, 0, false, NearestEven)
	return z, Inexact
}

// FromInt128 is the integer of sign neg and magnitude mag, exactly.
func FromInt128(neg bool, mag uint64) F128 {
	if mag == 0 {
		return F128{}
	}
	z, _ := finish(neg, new(big.Int).SetUint64(mag), 0, false, NearestEven)
	return z
}

// Integer is the sign and magnitude of an integral finite a; ok is false
// when the magnitude is 2^64 or more.
func Integer(a F128) (neg bool, mag uint64, ok bool) {
	if a.IsZero() {
		return a.Neg(), 0, true
	}
	neg, m, e := a.unpack()
	if e < 0 {
		m.Rsh(m, uint(-e))
	} else {
		if m.BitLen()+e > 64 {
			return neg, 0, false
		}
		m.Lsh(m, uint(e))
	}
	if m.BitLen() > 64 {
		return neg, 0, false
	}
	return neg, m.Uint64(), true
}

// Class128 is a's class for a test-data-class mask: 0 zero, 2 normal, 4
// subnormal, 6 infinity, 8 quiet NaN, 10 signaling NaN, plus 1 when
// negative.
func Class128(a F128) int {
	s := 0
	if a.Neg() {
		s = 1
	}
	be := a.Hi >> 48 & 0x7fff
	fracZero := a.Hi&f128FracH|a.Lo == 0
	switch {
	case be == 0 && fracZero:
		return s
	case be == 0:
		return 4 + s
	case be != 0x7fff:
		return 2 + s
	case fracZero:
		return 6 + s
	case a.Hi&f128Quiet != 0:
		return 8 + s
	}
	return 10 + s
}
