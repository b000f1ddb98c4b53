package s390x

import "math/bits"

// The vector string instructions of the z13 (z/Architecture Principles of
// Operation, chapter "Vector String Instructions"): vfae, vfee, vfene,
// vistr and vstrc, on byte, halfword or word elements of unsigned
// characters. glibc's z13 string functions (strlen, strchr, strcspn,
// strspn, strcmp, wcslen, ...) are built on them.
//
// Each finds the leftmost element with some property and reports the byte
// index of its first byte in byte 7 of V1 (the rest of V1 zero), or 16
// when there is none; vfae and vstrc can instead leave a mask of all the
// elements that have it (result type). The zero-search flag also stops at
// the leftmost zero element of V2: the index is that of whichever comes
// first.

// Flags of the M5 field (M6 for vstrc).
const (
	strIN = 8 // invert the outcome of each element's comparison (vfae, vstrc)
	strRT = 4 // result type: a mask of the matching elements, not an index (vfae, vstrc)
	strZS = 2 // zero search
	strCS = 1 // set the condition code
)

// Per element size: every bit of each element but its leftmost (low),
// and the value 1 in every element (ones).
var (
	strLow  = [3]uint64{0x7f7f7f7f7f7f7f7f, 0x7fff7fff7fff7fff, 0x7fffffff7fffffff}
	strOnes = [3]uint64{0x0101010101010101, 0x0001000100010001, 0x0000000100000001}
)

// zeroElems returns x with the leftmost bit of each zero element of size
// es set and every other bit clear. Adding low to each element's low bits
// carries into its leftmost bit exactly when one of them is set, and no
// further, so there is no carry between elements.
func zeroElems(x uint64, es uint8) uint64 {
	low := strLow[es]
	return ^((x&low + low) | x | low)
}

// nonzeroElems marks the leftmost bit of each nonzero element instead.
func nonzeroElems(x uint64, es uint8) uint64 { return ^zeroElems(x, es) &^ strLow[es] }

// firstMarked is the byte index of the leftmost element marked (by its
// leftmost bit) in the doublewords hi and lo, or 16 if none is.
func firstMarked(hi, lo uint64) int {
	if hi != 0 {
		return bits.LeadingZeros64(hi) >> 3
	}
	return (64 + bits.LeadingZeros64(lo)) >> 3
}

// expandMarks turns each element's mark into an element of all ones.
func expandMarks(m uint64, es uint8) uint64 {
	size := uint(8 << es)
	return m >> (size - 1) * (1<<size - 1)
}

// firstZero is the byte index of the leftmost zero element of a if the
// zero-search flag is set, else 16.
func firstZero(a *vreg128, es, flags uint8) int {
	if flags&strZS == 0 {
		return 16
	}
	return firstMarked(zeroElems(a[0], es), zeroElems(a[1], es))
}

// searchCC is the condition code of vfee, vfae and vstrc from the byte
// indexes of the first match and the first zero element (16: none):
// 0 a zero element comes first (or together with the match), 1 a match
// and no zero element, 2 a match before the first zero element, 3 neither.
// glibc relies on this split: after vfeezbs, cc 0 means the string ended
// before the character, cc 1 or 2 that the character was found.
func searchCC(match, zero int) uint8 {
	switch {
	case match == 16 && zero == 16:
		return 3
	case zero == 16:
		return 1
	case match < zero:
		return 2
	}
	return 0
}

// indexResult is V1 of an index result: byte 7 holds the index.
func indexResult(i int) vreg128 { return vreg128{uint64(i), 0} }

// vecString executes the vector string instructions. The element size is
// m (M4 of vfae, vfee, vfene; M3 of vistr; M5 of vstrc), the flags b (M5)
// or, for vstrc, imm (M6); validVector has checked both.
func (c *Core) vecString(in *inst) {
	v := c.v
	es := in.m
	flags := in.b
	a := v[in.r2]
	var cc uint8
	switch in.op {
	case opVFEE:
		b := v[in.r3]
		match := firstMarked(zeroElems(a[0]^b[0], es), zeroElems(a[1]^b[1], es))
		zero := firstZero(&a, es, flags)
		v[in.r1] = indexResult(min(match, zero))
		cc = searchCC(match, zero)
	case opVFENE:
		b := v[in.r3]
		diff := firstMarked(nonzeroElems(a[0]^b[0], es), nonzeroElems(a[1]^b[1], es))
		zero := firstZero(&a, es, flags)
		v[in.r1] = indexResult(min(diff, zero))
		// 0: equal up to and including a zero element of V2; 1 or 2:
		// V2's element at the first difference is low or high; 3: all equal.
		switch {
		case diff == 16 && zero == 16:
			cc = 3
		case zero < diff:
			cc = 0
		case elem(&a, es, diff>>es) < elem(&b, es, diff>>es):
			cc = 1
		default:
			cc = 2
		}
	case opVFAE:
		b := v[in.r3]
		var m0, m1 uint64 // elements of V2 equal to some element of V3
		for j := 0; j < nelem(es); j++ {
			rep := elem(&b, es, j) * strOnes[es]
			m0 |= zeroElems(a[0]^rep, es)
			m1 |= zeroElems(a[1]^rep, es)
		}
		c.findResult(in, es, flags, &a, m0, m1)
		return
	case opVSTRC:
		flags = uint8(in.imm)
		var m vreg128
		for i := 0; i < nelem(es); i++ {
			if inSomeRange(elem(&a, es, i), es, &v[in.r3], &v[in.b]) {
				setElem(&m, es, i, 1<<(8<<es-1))
			}
		}
		c.findResult(in, es, flags, &a, m[0], m[1])
		return
	case opVISTR:
		// V2 up to its first zero element; that and all the elements
		// after it zero. cc 0: there was a zero element; 3: there was not.
		zero := firstMarked(zeroElems(a[0], es), zeroElems(a[1], es))
		switch {
		case zero < 8:
			a = vreg128{a[0] &^ (^uint64(0) >> (8 * zero)), 0}
		case zero < 16:
			a[1] &^= ^uint64(0) >> (8 * (zero - 8))
		}
		v[in.r1] = a
		cc = 3
		if zero < 16 {
			cc = 0
		}
	}
	if flags&strCS != 0 {
		c.cc = cc
	}
}

// findResult completes vfae and vstrc from the marks of V2's matching
// elements: inverted by IN, then either the mask (RT) or the index of the
// first match or zero element, and the condition code of searchCC. Like
// qemu, the mask of the RT form does not stop at a zero element.
func (c *Core) findResult(in *inst, es, flags uint8, a *vreg128, m0, m1 uint64) {
	if flags&strIN != 0 {
		m0, m1 = ^m0&^strLow[es], ^m1&^strLow[es]
	}
	match := firstMarked(m0, m1)
	zero := firstZero(a, es, flags)
	if flags&strRT != 0 {
		c.v[in.r1] = vreg128{expandMarks(m0, es), expandMarks(m1, es)}
	} else {
		c.v[in.r1] = indexResult(min(match, zero))
	}
	if flags&strCS != 0 {
		c.cc = searchCC(match, zero)
	}
}

// inSomeRange reports whether x lies in one of the ranges of vstrc: each
// even-odd pair of elements of V3 bounds a range, and the element of V4
// beside each bound says which outcomes of comparing x with it count (its
// leftmost bits: 0 equal, 1 x low, 2 x high); x is in the range when both
// comparisons count.
func inSomeRange(x uint64, es uint8, bounds, ctl *vreg128) bool {
	size := 8 << es
	for j := 0; j < nelem(es); j += 2 {
		if boundHolds(x, elem(bounds, es, j), elem(ctl, es, j)>>(size-3)) &&
			boundHolds(x, elem(bounds, es, j+1), elem(ctl, es, j+1)>>(size-3)) {
			return true
		}
	}
	return false
}

// boundHolds compares x with a range bound under the three control bits
// ctl: 4 equal, 2 low, 1 high.
func boundHolds(x, bound, ctl uint64) bool {
	switch {
	case x == bound:
		return ctl&4 != 0
	case x < bound:
		return ctl&2 != 0
	}
	return ctl&1 != 0
}
