package s390x

import (
	"fmt"
	"math/bits"

	"simrun/sim/cpu"
)

// This file has the integer instructions that take more than a line or
// two: storage operands of the RX/RXY arithmetic, pair registers,
// multiple-register and character-mask loads and stores, storage-to-storage
// operations and interlocked updates.

// alu32 applies a 32-bit RX/RXY operation with storage operand v (already
// sign-extended from a halfword where the instruction says so).
func (c *Core) alu32(in *inst, v uint32) {
	reg := &c.r[in.r1]
	a := uint32(*reg)
	var res uint32
	switch in.op {
	case opA, opAY, opAH, opAHY:
		res, c.cc = add32(a, v)
	case opS, opSY, opSH, opSHY:
		res, c.cc = sub32(a, v)
	case opAL, opALY:
		res, c.cc = addL32(a, v, 0)
	case opSL, opSLY:
		res, c.cc = subL32(a, v)
	case opALC:
		res, c.cc = addL32(a, v, uint32(c.cc>>1))
	case opSLB:
		res, c.cc = addL32(a, ^v, uint32(c.cc>>1))
	case opN, opNY:
		res = a & v
		c.cc = ccNonzero(uint64(res))
	case opO, opOY:
		res = a | v
		c.cc = ccNonzero(uint64(res))
	case opX, opXY:
		res = a ^ v
		c.cc = ccNonzero(uint64(res))
	case opMS, opMSY, opMH, opMHY:
		res = a * v
	case opMSC:
		res, c.cc = mulCC32(a, v)
	case opC, opCY, opCH, opCHY:
		c.cc = ccCompare(int64(int32(a)), int64(int32(v)))
		return
	case opCL, opCLY:
		c.cc = ccCompareU(uint64(a), uint64(v))
		return
	}
	lo32(reg, res)
}

// alu64 applies a 64-bit RXY operation with storage operand v (already
// extended as the instruction says).
func (c *Core) alu64(in *inst, v uint64) {
	reg := &c.r[in.r1]
	a := *reg
	switch in.op {
	case opAG, opAGF, opAGH:
		*reg, c.cc = add64(a, v)
	case opSG, opSGF, opSGH:
		*reg, c.cc = sub64(a, v)
	case opALG, opALGF:
		*reg, c.cc = addL64(a, v, 0)
	case opSLG, opSLGF:
		*reg, c.cc = subL64(a, v)
	case opALCG:
		*reg, c.cc = addL64(a, v, uint64(c.cc>>1))
	case opSLBG:
		*reg, c.cc = addL64(a, ^v, uint64(c.cc>>1))
	case opNG:
		*reg = a & v
		c.cc = ccNonzero(*reg)
	case opOG:
		*reg = a | v
		c.cc = ccNonzero(*reg)
	case opXG:
		*reg = a ^ v
		c.cc = ccNonzero(*reg)
	case opMSG, opMSGF, opMGH:
		*reg = a * v
	case opMSGC:
		*reg, c.cc = mulCC64(a, v)
	case opCG, opCGF, opCGH:
		c.cc = ccCompare(int64(a), int64(v))
	case opCLG, opCLGF:
		c.cc = ccCompareU(a, v)
	}
}

// mulDiv executes the multiplies and divides on the even/odd pair R1,
// R1+1 (the decoder has checked that R1 is even) with second operand v as
// the register or storage holds it. It returns false on a fixed-point
// divide exception (zero divisor or a quotient too large), leaving the
// registers unchanged.
//
//	M, MR, MFY, ML, MLR:  R1:R1+1 (low halves) = R1+1 (low half) * v, 32x32 -> 64
//	MLG, MLGR:            R1:R1+1 = R1+1 * v, 64x64 -> 128 unsigned
//	MG:                   R1:R1+1 = R1+1 * v, 64x64 -> 128 signed
//	D, DR, DL, DLR:       R1+1 (low half) = R1:R1+1 (low halves) / v, R1 = remainder
//	DLG, DLGR:            R1+1 = R1:R1+1 / v (128 by 64), R1 = remainder
//	DSG, DSGR, DSGF(R):   R1+1 = R1+1 / v (signed 64), R1 = remainder
func (c *Core) mulDiv(in *inst, v uint64) bool {
	hi, lo := &c.r[in.r1], &c.r[in.r1+1]
	switch in.op {
	case opM, opMR, opMFY:
		p := uint64(int64(int32(*lo)) * int64(int32(v)))
		lo32(hi, uint32(p>>32))
		lo32(lo, uint32(p))
	case opML, opMLR:
		p := uint64(uint32(*lo)) * uint64(uint32(v))
		lo32(hi, uint32(p>>32))
		lo32(lo, uint32(p))
	case opMLG, opMLGR:
		*hi, *lo = bits.Mul64(*lo, v)
	case opMG:
		*hi, *lo = mulSigned128(*lo, v)
	case opD, opDR:
		dividend := int64(uint64(uint32(*hi))<<32 | uint64(uint32(*lo)))
		d := int64(int32(v))
		if d == 0 {
			return false
		}
		q := dividend / d
		if d == -1 && dividend == -1<<63 || q != int64(int32(q)) {
			return false
		}
		lo32(hi, uint32(dividend%d))
		lo32(lo, uint32(q))
	case opDL, opDLR:
		dividend := uint64(uint32(*hi))<<32 | uint64(uint32(*lo))
		d := uint64(uint32(v))
		if d == 0 || dividend/d > 0xffffffff {
			return false
		}
		lo32(hi, uint32(dividend%d))
		lo32(lo, uint32(dividend/d))
	case opDLG, opDLGR:
		if v == 0 || *hi >= v {
			return false
		}
		q, rem := bits.Div64(*hi, *lo, v)
		*hi, *lo = rem, q
	case opDSG, opDSGR, opDSGF, opDSGFR:
		d := int64(v)
		if in.op == opDSGF || in.op == opDSGFR {
			d = int64(int32(v))
		}
		dividend := int64(*lo)
		if d == 0 || d == -1 && dividend == -1<<63 {
			return false
		}
		*hi, *lo = uint64(dividend%d), uint64(dividend/d)
	}
	return true
}

// logicalImmediate executes nilf..oihh, xilf, xihf: the immediate applies
// to a halfword or word of R1 and the condition code reflects that part.
func (c *Core) logicalImmediate(in *inst) {
	reg := &c.r[in.r1]
	var sh, width uint
	var kind byte
	switch in.op {
	case opNILF, opNIHF:
		kind, sh, width = '&', 32*uint(in.op-opNILF), 32
	case opOILF, opOIHF:
		kind, sh, width = '|', 32*uint(in.op-opOILF), 32
	case opXILF, opXIHF:
		kind, sh, width = '^', 32*uint(in.op-opXILF), 32
	case opNILL, opNILH, opNIHL, opNIHH:
		kind, sh, width = '&', 16*uint(in.op-opNILL), 16
	default: // oill, oilh, oihl, oihh
		kind, sh, width = '|', 16*uint(in.op-opOILL), 16
	}
	mask := uint64(1)<<width - 1
	part := *reg >> sh & mask
	imm := uint64(in.imm) & mask
	switch kind {
	case '&':
		part &= imm
	case '|':
		part |= imm
	default:
		part ^= imm
	}
	*reg = *reg&^(mask<<sh) | part<<sh
	c.cc = ccNonzero(part)
}

// loadPositive is the absolute value and condition code of lpr/lpgr: 0
// zero, 2 positive, 3 overflow (the most negative number stays as it is).
func loadPositive(v int64, width uint) (uint64, uint8) {
	if v == -1<<(width-1) {
		return uint64(v), 3
	}
	if v < 0 {
		v = -v
	}
	return uint64(v), 2 * b2u(v != 0)
}

// testMask16 is the condition code of test under mask: 0 selected bits all
// zero (or no bits selected), 3 all one, else 1 or 2 as the leftmost
// selected bit is zero or one.
func testMask16(v, mask uint16) uint8 {
	sel := v & mask
	switch {
	case sel == 0:
		return 0
	case sel == mask:
		return 3
	case v&(0x8000>>bits.LeadingZeros16(mask)) != 0:
		return 2
	}
	return 1
}

// compareOperands is the comparison of compare-and-branch instructions, as
// a condition code (0 equal, 1 low, 2 high); the RIE-c and RIS forms keep
// their 8-bit immediate in r2.
func (c *Core) compareOperands(in *inst) uint8 {
	a := c.r[in.r1]
	switch in.op {
	case opCRJ, opCRB:
		return ccCompare(int64(int32(a)), int64(int32(c.r[in.r2])))
	case opCGRJ, opCGRB:
		return ccCompare(int64(a), int64(c.r[in.r2]))
	case opCLRJ, opCLRB:
		return ccCompareU(uint64(uint32(a)), uint64(uint32(c.r[in.r2])))
	case opCLGRJ, opCLGRB:
		return ccCompareU(a, c.r[in.r2])
	case opCIJ, opCIB:
		return ccCompare(int64(int32(a)), int64(int8(in.r2)))
	case opCGIJ, opCGIB:
		return ccCompare(int64(a), int64(int8(in.r2)))
	case opCLIJ, opCLIB:
		return ccCompareU(uint64(uint32(a)), uint64(in.r2))
	}
	return ccCompareU(a, uint64(in.r2)) // clgij, clgib
}

// branchIndex executes brxh, brxle, brxhg, brxlg: R1 += R3, compared with
// the odd register of the R3 pair (read before the addition).
func (c *Core) branchIndex(in *inst) bool {
	inc, limit := c.r[in.r3], c.r[in.r3|1]
	switch in.op {
	case opBRXH, opBRXLE:
		sum := int32(c.r[in.r1]) + int32(inc)
		lo32(&c.r[in.r1], uint32(sum))
		return (sum > int32(limit)) == (in.op == opBRXH)
	}
	sum := int64(c.r[in.r1]) + int64(inc)
	c.r[in.r1] = uint64(sum)
	return (sum > int64(limit)) == (in.op == opBRXHG)
}

// shiftSpecial executes the arithmetic left shifts (which keep the sign
// and report overflow) and the double-register shifts on R1:R1+1.
func (c *Core) shiftSpecial(in *inst) {
	n := (c.r[in.b] + uint64(in.imm)) & 63
	switch in.op {
	case opSLA, opSLAK:
		src := in.r1
		if in.op == opSLAK {
			src = in.r3
		}
		v, ov := shiftLeftArith(uint64(uint32(c.r[src]))<<32, n)
		lo32(&c.r[in.r1], uint32(v>>32))
		c.cc = ccShiftLeft(int64(v), ov)
	case opSLAG:
		v, ov := shiftLeftArith(c.r[in.r3], n)
		c.r[in.r1] = v
		c.cc = ccShiftLeft(int64(v), ov)
	case opSLDL, opSRDL, opSLDA, opSRDA:
		v := c.r[in.r1]<<32 | uint64(uint32(c.r[in.r1+1]))
		switch in.op {
		case opSLDL:
			v <<= n
		case opSRDL:
			v >>= n
		case opSLDA:
			var ov bool
			v, ov = shiftLeftArith(v, n)
			c.cc = ccShiftLeft(int64(v), ov)
		case opSRDA:
			v = uint64(int64(v) >> n)
			c.cc = ccSigned(int64(v))
		}
		lo32(&c.r[in.r1], uint32(v>>32))
		lo32(&c.r[in.r1+1], uint32(v))
	}
}

// shiftLeftArith shifts the 63 numeric bits of v left by n, keeping the
// sign bit; ov reports that a bit unlike the sign was shifted out.
func shiftLeftArith(v, n uint64) (res uint64, ov bool) {
	sign := v & (1 << 63)
	x := v
	for i := uint64(0); i < n; i++ {
		x <<= 1
		if x&(1<<63) != sign {
			ov = true
		}
	}
	return x&^(1<<63) | sign, ov
}

func ccShiftLeft(v int64, ov bool) uint8 {
	if ov {
		return 3
	}
	return ccSigned(v)
}

// loadMultiple executes lm, lmy, lmg: R1 up to R3 (wrapping after r15)
// from consecutive words or doublewords. Nothing is written unless every
// load succeeds.
func (c *Core) loadMultiple(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	cnt := int((in.r3-in.r1)&15) + 1
	var vals [16]uint64
	for i := 0; i < cnt; i++ {
		var ok bool
		if in.op == opLMG {
			vals[i], ok = c.mem.Load64BE(a + 8*uint64(i))
		} else {
			var w uint32
			w, ok = c.mem.Load32BE(a + 4*uint64(i))
			vals[i] = uint64(w)
		}
		if !ok {
			return false
		}
	}
	for i := 0; i < cnt; i++ {
		reg := &c.r[(in.r1+uint8(i))&15]
		if in.op == opLMG {
			*reg = vals[i]
		} else {
			lo32(reg, uint32(vals[i]))
		}
	}
	return true
}

// storeMultiple executes stm, stmy, stmg; nothing is stored unless all of
// the operand is writable.
func (c *Core) storeMultiple(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	cnt := uint64((in.r3-in.r1)&15) + 1
	size := uint64(4)
	if in.op == opSTMG {
		size = 8
	}
	if !c.probeWrite(a, cnt*size) {
		return false
	}
	for i := uint64(0); i < cnt; i++ {
		v := c.r[(in.r1+uint8(i))&15]
		if size == 8 {
			c.mem.Store64BE(a+8*i, v)
		} else {
			c.mem.Store32BE(a+4*i, uint32(v))
		}
	}
	return true
}

// probeWrite checks that the n bytes (at most a few hundred) at a can be
// written, by rewriting their first and last bytes.
func (c *Core) probeWrite(a, n uint64) bool {
	if a&^0xfff == (a+n-1)&^0xfff { // one page: the first store decides
		v, ok := c.mem.Load8(a)
		return ok && c.mem.Store8(a, v)
	}
	for _, p := range [2]uint64{a, a + n - 1} {
		v, ok := c.mem.Load8(p)
		if !ok || !c.mem.Store8(p, v) {
			c.mem.Fault.Addr = p
			return false
		}
	}
	return true
}

// probeRead checks that the n bytes at a can be read.
func (c *Core) probeRead(a, n uint64) bool {
	if _, ok := c.mem.Load8(a); !ok {
		return false
	}
	_, ok := c.mem.Load8(a + n - 1)
	return ok
}

// maskWord is the word of R1 that icm/stcm/clm (low word) or icmh/stcmh
// (high word) work on, as a shift.
func maskShift(o op) uint {
	if o == opICMH || o == opSTCMH {
		return 32
	}
	return 0
}

// insertChars executes icm, icmy, icmh: the bytes of the word selected by
// mask bits 8, 4, 2, 1 are loaded from consecutive bytes of storage.
func (c *Core) insertChars(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	sh := maskShift(in.op)
	w := uint32(c.r[in.r1] >> sh)
	var got []byte
	for i := 0; i < 4; i++ {
		if in.m&(8>>i) == 0 {
			continue
		}
		b, ok := c.mem.Load8(a + uint64(len(got)))
		if !ok {
			return false
		}
		got = append(got, b)
		w = w&^(0xff000000>>(8*i)) | uint32(b)<<(24-8*i)
	}
	c.r[in.r1] = c.r[in.r1]&^(0xffffffff<<sh) | uint64(w)<<sh
	c.cc = 0
	for _, b := range got {
		if b != 0 {
			c.cc = 2
			break
		}
	}
	if len(got) > 0 && got[0]&0x80 != 0 {
		c.cc = 1
	}
	return true
}

// storeChars executes stcm, stcmy, stcmh.
func (c *Core) storeChars(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	w := uint32(c.r[in.r1] >> maskShift(in.op))
	var out []byte
	for i := 0; i < 4; i++ {
		if in.m&(8>>i) != 0 {
			out = append(out, byte(w>>(24-8*i)))
		}
	}
	if len(out) == 0 {
		return true
	}
	if !c.probeWrite(a, uint64(len(out))) {
		return false
	}
	for i, b := range out {
		c.mem.Store8(a+uint64(i), b)
	}
	return true
}

// compareChars executes clm, clmy: the selected bytes of the low word of
// R1 against consecutive storage bytes, as unsigned strings.
func (c *Core) compareChars(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	w := uint32(c.r[in.r1])
	c.cc = 0
	j := uint64(0)
	for i := 0; i < 4; i++ {
		if in.m&(8>>i) == 0 {
			continue
		}
		b, ok := c.mem.Load8(a + j)
		if !ok {
			return false
		}
		j++
		if x := byte(w >> (24 - 8*i)); c.cc == 0 && x != b {
			c.cc = 1 + b2u(x > b)
		}
	}
	return true
}

// compareStorage executes the compares with a storage operand and an
// immediate (SIL: chhsi..clghsi) or a register (RIL-b: crl..clghrl).
func (c *Core) compareStorage(in *inst, pc uint64) bool {
	mem := c.mem
	switch in.op {
	case opCHHSI, opCLHHSI, opCHSI, opCLFHSI, opCGHSI, opCLGHSI:
		a := c.r[in.b] + uint64(in.imm&0xfff)
		i2 := in.imm >> 16
		var v uint64
		var ok bool
		switch in.op {
		case opCHHSI, opCLHHSI:
			var h uint16
			h, ok = mem.Load16BE(a)
			v = uint64(h)
			if in.op == opCHHSI {
				c.cc = ccCompare(int64(int16(h)), i2)
			} else {
				c.cc = ccCompareU(v, uint64(uint16(i2)))
			}
		case opCHSI, opCLFHSI:
			var w uint32
			w, ok = mem.Load32BE(a)
			if in.op == opCHSI {
				c.cc = ccCompare(int64(int32(w)), i2)
			} else {
				c.cc = ccCompareU(uint64(w), uint64(uint16(i2)))
			}
		default:
			v, ok = mem.Load64BE(a)
			if in.op == opCGHSI {
				c.cc = ccCompare(int64(v), i2)
			} else {
				c.cc = ccCompareU(v, uint64(uint16(i2)))
			}
		}
		return ok
	}
	a := pc + uint64(in.imm)
	reg := c.r[in.r1]
	switch in.op {
	case opCRL, opCLRL, opCGFRL, opCLGFRL:
		w, ok := mem.Load32BE(a)
		switch in.op {
		case opCRL:
			c.cc = ccCompare(int64(int32(reg)), int64(int32(w)))
		case opCLRL:
			c.cc = ccCompareU(uint64(uint32(reg)), uint64(w))
		case opCGFRL:
			c.cc = ccCompare(int64(reg), int64(int32(w)))
		default:
			c.cc = ccCompareU(reg, uint64(w))
		}
		return ok
	case opCHRL, opCGHRL, opCLHRL, opCLGHRL:
		h, ok := mem.Load16BE(a)
		switch in.op {
		case opCHRL:
			c.cc = ccCompare(int64(int32(reg)), int64(int16(h)))
		case opCGHRL:
			c.cc = ccCompare(int64(reg), int64(int16(h)))
		case opCLHRL:
			c.cc = ccCompareU(uint64(uint32(reg)), uint64(h))
		default:
			c.cc = ccCompareU(reg, uint64(h))
		}
		return ok
	}
	d, ok := mem.Load64BE(a) // cgrl, clgrl
	if in.op == opCGRL {
		c.cc = ccCompare(int64(reg), int64(d))
	} else {
		c.cc = ccCompareU(reg, d)
	}
	return ok
}

// addStorage executes asi, alsi, agsi, algsi: a signed 8-bit immediate
// added to a word or doubleword in storage.
func (c *Core) addStorage(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	i := int64(int8(in.m))
	if in.op == opASI || in.op == opALSI {
		v, ok := c.mem.Load32BE(a)
		if !ok {
			return false
		}
		var res uint32
		var cc uint8
		if in.op == opASI {
			res, cc = add32(v, uint32(i))
		} else {
			res, cc = addL32(v, uint32(i), 0)
		}
		if !c.mem.Store32BE(a, res) {
			return false
		}
		c.cc = cc
		return true
	}
	v, ok := c.mem.Load64BE(a)
	if !ok {
		return false
	}
	var res uint64
	var cc uint8
	if in.op == opAGSI {
		res, cc = add64(v, uint64(i))
	} else {
		res, cc = addL64(v, uint64(i), 0)
	}
	if !c.mem.Store64BE(a, res) {
		return false
	}
	c.cc = cc
	return true
}

// atomicSize is the operand size of an interlocked instruction, which must
// be aligned to it.
func atomicSize(o op) int {
	switch o {
	case opCSG, opLAAG, opLAALG, opLANG, opLAOG, opLAXG:
		return 8
	}
	return 4
}

// interlocked executes compare and swap and the load-and-operate
// instructions (one CPU: no other observer).
func (c *Core) interlocked(in *inst) bool {
	a := c.r[in.b] + uint64(in.imm)
	if atomicSize(in.op) == 8 {
		old, ok := c.mem.Load64BE(a)
		if !ok {
			return false
		}
		if in.op == opCSG {
			if old != c.r[in.r1] {
				c.r[in.r1], c.cc = old, 1
				return true
			}
			if !c.mem.Store64BE(a, c.r[in.r3]) {
				return false
			}
			c.cc = 0
			return true
		}
		var res uint64
		var cc uint8
		v := c.r[in.r3]
		switch in.op {
		case opLAAG:
			res, cc = add64(old, v)
		case opLAALG:
			res, cc = addL64(old, v, 0)
		case opLANG:
			res = old & v
		case opLAOG:
			res = old | v
		default:
			res = old ^ v
		}
		if in.op == opLANG || in.op == opLAOG || in.op == opLAXG {
			cc = ccNonzero(res)
		}
		if !c.mem.Store64BE(a, res) {
			return false
		}
		c.r[in.r1], c.cc = old, cc
		return true
	}
	old, ok := c.mem.Load32BE(a)
	if !ok {
		return false
	}
	if in.op == opCS || in.op == opCSY {
		if old != uint32(c.r[in.r1]) {
			lo32(&c.r[in.r1], old)
			c.cc = 1
			return true
		}
		if !c.mem.Store32BE(a, uint32(c.r[in.r3])) {
			return false
		}
		c.cc = 0
		return true
	}
	var res uint32
	var cc uint8
	v := uint32(c.r[in.r3])
	switch in.op {
	case opLAA:
		res, cc = add32(old, v)
	case opLAAL:
		res, cc = addL32(old, v, 0)
	case opLAN:
		res = old & v
	case opLAO:
		res = old | v
	default:
		res = old ^ v
	}
	if in.op == opLAN || in.op == opLAO || in.op == opLAX {
		cc = ccNonzero(uint64(res))
	}
	if !c.mem.Store32BE(a, res) {
		return false
	}
	lo32(&c.r[in.r1], old)
	c.cc = cc
	return true
}

// storageToStorage executes mvc, xc, nc, oc and clc on L+1 bytes, one byte
// at a time from left to right as the architecture defines overlapping
// operands (mvc with the destination one byte above the source
// replicates a byte; xc of a field with itself clears it). Both operands
// are checked before anything is stored.
func (c *Core) storageToStorage(in *inst) bool {
	mem := c.mem
	n := uint64(in.m) + 1
	a1 := c.r[in.b] + uint64(in.imm&0xfff)
	a2 := c.r[in.r2] + uint64(in.imm>>16&0xfff)
	if !c.probeRead(a2, n) {
		return false
	}
	if in.op == opCLC {
		if !c.probeRead(a1, n) {
			return false
		}
		c.cc = 0
		for i := uint64(0); i < n; i++ {
			x, _ := mem.Load8(a1 + i)
			y, _ := mem.Load8(a2 + i)
			if x != y {
				c.cc = 1 + b2u(x > y)
				break
			}
		}
		return true
	}
	if !c.probeWrite(a1, n) {
		return false
	}
	var acc byte
	for i := uint64(0); i < n; i++ {
		y, _ := mem.Load8(a2 + i)
		if in.op != opMVC {
			x, _ := mem.Load8(a1 + i)
			switch in.op {
			case opXC:
				y ^= x
			case opNC:
				y &= x
			case opOC:
				y |= x
			}
			acc |= y
		}
		mem.Store8(a1+i, y)
	}
	if in.op != opMVC {
		c.cc = ccNonzero(uint64(acc))
	}
	return true
}

// logical3 is the result of the three-operand logical instructions of
// the miscellaneous-instruction-extensions facility 3 (Principles of
// Operation, AND WITH COMPLEMENT, NAND, NOR, NOT EXCLUSIVE OR, OR WITH
// COMPLEMENT): the 32-bit forms use the low word of the result.
func logical3(o op, a, b uint64) uint64 {
	switch o {
	case opNCRK, opNCGRK:
		return a &^ b
	case opNNRK, opNNGRK:
		return ^(a & b)
	case opNORK, opNOGRK:
		return ^(a | b)
	case opNXRK, opNXGRK:
		return ^(a ^ b)
	}
	return a | ^b // ocrk, ocgrk
}

// accessMultiple is lam, lamy (access registers R1 up to R3, wrapping
// after a15, from consecutive words) and stam, stamy (the registers to
// them). The operand must be word aligned, else a specification
// exception (Principles of Operation, LOAD ACCESS MULTIPLE); nothing is
// written unless all of the operand can be accessed.
func (c *Core) accessMultiple(in *inst) *cpu.Fault {
	a := c.r[in.b] + uint64(in.imm)
	if a&3 != 0 {
		return &cpu.Fault{Kind: cpu.FaultUndefined, Err: fmt.Errorf("specification exception: %v operand 0x%x is not word aligned", in.op, a)}
	}
	cnt := int((in.r3-in.r1)&15) + 1
	if in.op == opSTAM || in.op == opSTAMY {
		if !c.probeWrite(a, 4*uint64(cnt)) {
			return c.accessFault()
		}
		for i := 0; i < cnt; i++ {
			c.mem.Store32BE(a+4*uint64(i), c.ar[(in.r1+uint8(i))&15])
		}
		return nil
	}
	var vals [16]uint32
	for i := 0; i < cnt; i++ {
		v, ok := c.mem.Load32BE(a + 4*uint64(i))
		if !ok {
			return c.accessFault()
		}
		vals[i] = v
	}
	for i := 0; i < cnt; i++ {
		c.ar[(in.r1+uint8(i))&15] = vals[i]
	}
	return nil
}

// mulSigned128 is the signed 128-bit product of a and b (mg, mgrk): the
// unsigned product with each negative operand's weight taken back out of
// the high half.
func mulSigned128(a, b uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(a, b)
	if int64(a) < 0 {
		hi -= b
	}
	if int64(b) < 0 {
		hi -= a
	}
	return hi, lo
}

// mulCC32 and mulCC64 are msrkc/msc and msgrkc/msgc: the low bits of the
// signed product, condition code 3 when it does not fit, else its sign
// (Principles of Operation, MULTIPLY SINGLE).
func mulCC32(a, b uint32) (uint32, uint8) {
	p := int64(int32(a)) * int64(int32(b))
	if p != int64(int32(p)) {
		return uint32(p), 3
	}
	return uint32(p), ccSigned(p)
}

func mulCC64(a, b uint64) (uint64, uint8) {
	hi, lo := mulSigned128(a, b)
	if hi != uint64(int64(lo)>>63) {
		return lo, 3
	}
	return lo, ccSigned(int64(lo))
}
