package timing

import "math/bits"

// divider divides 64-bit numbers by d exactly, with a multiplication
// and shifts in place of a division (tens of cycles on the host): the
// method of Granlund and Montgomery, "Division by Invariant Integers
// using Multiplication" (PLDI 1994), figure 4.1. With
//
//	l = ⌈log2 d⌉,  m = ⌊2^64·(2^l − d) / d⌋ + 1,
//	t = ⌊m·n / 2^64⌋,
//
// n / d is (t + (n − t) >> min(l, 1)) >> max(l − 1, 0) for every n.
// Nanos divides by the clock rate at every clock reading, several
// times per scheduling step with several CPUs.
type divider struct {
	d        uint64 // 0: none (div divides, and panics as n / 0 does)
	m        uint64
	sh1, sh2 uint8
}

// newDivider returns the divider by d.
func newDivider(d uint64) divider {
	if d == 0 {
		return divider{}
	}
	l := bits.Len64(d - 1)
	// 2^l − d < d, so the quotient fits in 64 bits (and for l = 64 the
	// shift gives 0: 2^64 − d, modulo 2^64)
	m, _ := bits.Div64(uint64(1)<<l-d, 0, d)
	return divider{d: d, m: m + 1, sh1: uint8(min(l, 1)), sh2: uint8(max(l-1, 0))}
}

// div is n / v.d.
func (v *divider) div(n uint64) uint64 {
	if v.d == 0 {
		return n / v.d
	}
	t, _ := bits.Mul64(v.m, n)
	return (t + (n-t)>>v.sh1) >> v.sh2
}
