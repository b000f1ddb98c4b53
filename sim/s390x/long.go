package s390x

import (
	"errors"

	"simrun/sim/cpu"
)

// This file has the move-long and compare-long instructions (mvcl, clcl,
// mvcle, mvclu, clcle, clclu), as the Principles of Operation defines
// them in the 64-bit addressing mode (the only one Linux runs user
// programs in: every address is the whole register, and the lengths of
// the extended forms are whole registers too), with the CPU-determined
// amounts qemu 7.2 processes per execution, so that the registers after
// a partial execution match the oracle's:
//
//   - mvcle and mvclu move, or pad, up to the nearer page end of the
//     operands (never both in one execution) and end with condition code 3
//     while first-operand bytes remain; the program repeats them.
//   - clcle compares at most 0x2000 bytes and clclu 0x1000 per execution,
//     with condition code 3 if the longer operand goes on.
//   - mvcl and clcl (which the architecture makes interruptible rather
//     than partial) always complete.
//
// Each page-sized piece of a move is read before it is written, as if
// through a buffer: overlapping operands that the architecture leaves
// unpredictable (mvcle, mvclu) give qemu's result. mvcl's destructive
// overlap moves nothing and sets condition code 3.

const (
	clcleLimit = 0x2000 // bytes clcle compares per execution (qemu 7.2)
	clcluLimit = 0x1000 // bytes clclu compares per execution (qemu 7.2)
	lenMask24  = 0xffffff
)

var errLongOdd = errors.New("specification exception: an operand length of clclu is odd")

// lengthCC is the condition code of the move-long instructions: the
// first operand's length equal to, shorter or longer than the second's.
func lengthCC(dlen, slen uint64) uint8 {
	switch {
	case dlen == slen:
		return 0
	case dlen < slen:
		return 1
	}
	return 2
}

// toPageEnd is the number of bytes from a to the end of its page.
func toPageEnd(a uint64) uint64 { return cpu.PageSize - a&cpu.PageMask }

// moveChunk copies n bytes from src to dst, neither range crossing a
// page. All bytes are read before any is written (a fault then changes
// nothing; the first store decides for the whole destination page).
func (c *Core) moveChunk(dst, src, n uint64) bool {
	var buf [cpu.PageSize]byte
	for i := range n {
		v, ok := c.mem.Load8(src + i)
		if !ok {
			return false
		}
		buf[i] = v
	}
	for i := range n {
		if !c.mem.Store8(dst+i, buf[i]) {
			return false
		}
	}
	return true
}

// fillChunk stores n bytes of pad at dst (within one page).
func (c *Core) fillChunk(dst, n uint64, pad uint8) bool {
	for i := range n {
		if !c.mem.Store8(dst+i, pad) {
			return false
		}
	}
	return true
}

// moveLongExtended is mvcle and mvclu: move the second operand (address
// R3, length R3+1) to the first (R1, R1+1), padding with the pad
// character, which is bits 56-63 (mvcle) or 48-63 (mvclu) of the
// second-operand address. mvclu pads with the pad's left byte where the
// remaining first-operand length is even and its right byte where it is
// odd (so that whole characters line up with the operand's end).
// Condition code: 0, 1 or 2 for lengths equal, first shorter, first
// longer; 3 if first-operand bytes remain. The registers are written
// R1+1, R3+1, R1, R3 in that order, which decides when R1 = R3.
func (c *Core) moveLongExtended(in *inst, unicode bool) *cpu.Fault {
	r := &c.r
	pad := r[in.b] + uint64(in.imm)
	dst, dlen := r[in.r1], r[in.r1+1]
	src, slen := r[in.r3], r[in.r3+1]
	cc := lengthCC(dlen, slen)
	if dlen != 0 {
		n := min(dlen, toPageEnd(dst))
		switch {
		case slen != 0:
			n = min(n, slen, toPageEnd(src))
			if !c.moveChunk(dst, src, n) {
				return c.accessFault()
			}
			slen -= n
			src += n
		case !unicode:
			if !c.fillChunk(dst, n, uint8(pad)) {
				return c.accessFault()
			}
		default:
			for i := range n {
				b := uint8(pad >> 8)
				if (dlen-i)&1 != 0 {
					b = uint8(pad)
				}
				if !c.mem.Store8(dst+i, b) {
					return c.accessFault()
				}
			}
		}
		dlen -= n
		dst += n
		if dlen != 0 {
			cc = 3
		}
	}
	r[in.r1+1], r[in.r3+1], r[in.r1], r[in.r3] = dlen, slen, dst, src
	c.cc = cc
	return nil
}

// destructiveOverlap reports mvcl's destructive overlap: the first
// operand starts inside the n bytes the second operand moves, after its
// first byte (the range may wrap around the top of storage).
func destructiveOverlap(dst, src, n uint64) bool {
	if n == 0 || src == dst {
		return false
	}
	last := src + n - 1
	if last < src {
		return dst > src || dst <= last
	}
	return dst > src && dst <= last
}

// moveLong is mvcl: as mvcle with 24-bit lengths in bits 40-63 of R1+1
// and R2+1 (bits 0-39 kept) and the pad in bits 32-39 of R2+1; it always
// completes (condition code 0, 1 or 2), unless the operands overlap
// destructively: then nothing moves and the condition code is 3. A fault
// leaves the registers describing the pieces already moved.
func (c *Core) moveLong(in *inst) *cpu.Fault {
	r := &c.r
	dlen, slen := r[in.r1+1]&lenMask24, r[in.r2+1]&lenMask24
	dst, src := r[in.r1], r[in.r2]
	pad := uint8(r[in.r2+1] >> 24)
	if destructiveOverlap(dst, src, min(slen, dlen)) {
		c.cc = 3
		return nil
	}
	cc := lengthCC(dlen, slen)
	for dlen != 0 {
		n := min(dlen, toPageEnd(dst))
		if slen == 0 {
			if !c.fillChunk(dst, n, pad) {
				return c.accessFault()
			}
		} else {
			n = min(n, slen, toPageEnd(src))
			if !c.moveChunk(dst, src, n) {
				return c.accessFault()
			}
			src += n
			slen -= n
			r[in.r2+1] = r[in.r2+1]&^lenMask24 | slen
			r[in.r2] = src
		}
		dst += n
		dlen -= n
		r[in.r1+1] = r[in.r1+1]&^lenMask24 | dlen
		r[in.r1] = dst
	}
	c.cc = cc
	return nil
}

// compareLongOperands compares the operands at *a1 (length *l1) and *a3
// (*l3) in units of size bytes (1 or 2), the shorter one extended with
// pad, for at most limit bytes of the longer one. It advances the
// addresses and lengths past the equal units; the condition code is 0
// (equal), 1 or 2 (first operand low or high at the first difference),
// or 3 (limit bytes equal, more remain). Nothing changes on a fault.
func (c *Core) compareLongOperands(a1, l1, a3, l3 *uint64, pad uint16, size, limit uint64) (uint8, *cpu.Fault) {
	n := max(*l1, *l3)
	var cc uint8
	if n > limit {
		n, cc = limit, 3
	}
	x1, y1, x3, y3 := *a1, *l1, *a3, *l3
	load := func(a uint64) (uint16, bool) {
		if size == 1 {
			v, ok := c.mem.Load8(a)
			return uint16(v), ok
		}
		return c.mem.Load16BE(a)
	}
	for ; n != 0; n -= size {
		v1, v3 := pad, pad
		var ok bool
		if y1 != 0 {
			if v1, ok = load(x1); !ok {
				return 0, c.accessFault()
			}
		}
		if y3 != 0 {
			if v3, ok = load(x3); !ok {
				return 0, c.accessFault()
			}
		}
		if v1 != v3 {
			cc = 1 + b2u(v1 > v3)
			break
		}
		if y1 != 0 {
			x1, y1 = x1+size, y1-size
		}
		if y3 != 0 {
			x3, y3 = x3+size, y3-size
		}
	}
	*a1, *l1, *a3, *l3 = x1, y1, x3, y3
	return cc, nil
}

// compareLongExtended is clcle and clclu: compare the operands at R1
// (length R1+1) and R3 (R3+1), bytes or halfwords, the shorter one
// extended with the pad (bits 56-63 or 48-63 of the second-operand
// address), at most clcleLimit or clcluLimit bytes per execution. The
// registers are written R1+1, R3+1, R1, R3. clclu's lengths must be
// even (specification exception).
func (c *Core) compareLongExtended(in *inst, unicode bool) *cpu.Fault {
	r := &c.r
	pad := r[in.b] + uint64(in.imm)
	a1, l1, a3, l3 := r[in.r1], r[in.r1+1], r[in.r3], r[in.r3+1]
	size, limit := uint64(1), uint64(clcleLimit)
	if unicode {
		size, limit = 2, clcluLimit
		pad &= 0xffff
		if (l1|l3)&1 != 0 {
			return &cpu.Fault{Kind: cpu.FaultUndefined, Err: errLongOdd}
		}
	} else {
		pad &= 0xff
	}
	cc, f := c.compareLongOperands(&a1, &l1, &a3, &l3, uint16(pad), size, limit)
	if f != nil {
		return f
	}
	r[in.r1+1], r[in.r3+1], r[in.r1], r[in.r3] = l1, l3, a1, a3
	c.cc = cc
	return nil
}

// compareLong is clcl: clcle's comparison with the lengths and pad of
// mvcl, with no limit (it always completes: condition code 0, 1 or 2).
func (c *Core) compareLong(in *inst) *cpu.Fault {
	r := &c.r
	a1, l1 := r[in.r1], r[in.r1+1]&lenMask24
	a3, l3 := r[in.r2], r[in.r2+1]&lenMask24
	pad := uint16(uint8(r[in.r2+1] >> 24))
	cc, f := c.compareLongOperands(&a1, &l1, &a3, &l3, pad, 1, ^uint64(0))
	if f != nil {
		return f
	}
	r[in.r1+1] = r[in.r1+1]&^lenMask24 | l1
	r[in.r2+1] = r[in.r2+1]&^lenMask24 | l3
	r[in.r1], r[in.r2] = a1, a3
	c.cc = cc
	return nil
}
