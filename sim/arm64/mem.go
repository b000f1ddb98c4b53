package arm64

import "simrun/sim/cpu"

// ldst executes the generic single-register load/store, the n-th
// operation of the core's Execute (it logs the address).
func (c *Core) ldst(in *inst, n uint64) bool {
	x := &c.x
	var addr uint64
	switch in.b {
	case amOff, amPre:
		addr = x[in.rn] + in.imm
	case amPost:
		addr = x[in.rn]
	case amReg:
		addr = x[in.rn] + extend(x[in.rm], uint8(in.imm>>8), uint8(in.imm))
	}
	c.vals[n&cpu.ValMask] = addr // the logged value (loggedInCase)
	mem := c.mem
	ok := true
	switch in.a {
	case lsLdrB:
		var v uint8
		v, ok = mem.Load8(addr)
		x[in.rd] = uint64(v)
	case lsLdrH:
		var v uint16
		v, ok = mem.Load16LE(addr)
		x[in.rd] = uint64(v)
	case lsLdrW:
		var v uint32
		v, ok = mem.Load32LE(addr)
		x[in.rd] = uint64(v)
	case lsLdrX:
		x[in.rd], ok = mem.Load64LE(addr)
	case lsLdrSBW, lsLdrSBX:
		var v uint8
		v, ok = mem.Load8(addr)
		r := uint64(int8(v))
		if in.a == lsLdrSBW {
			r = uint64(uint32(r))
		}
		x[in.rd] = r
	case lsLdrSHW, lsLdrSHX:
		var v uint16
		v, ok = mem.Load16LE(addr)
		r := uint64(int16(v))
		if in.a == lsLdrSHW {
			r = uint64(uint32(r))
		}
		x[in.rd] = r
	case lsLdrSW:
		var v uint32
		v, ok = mem.Load32LE(addr)
		x[in.rd] = uint64(int32(v))
	case lsStrB:
		ok = mem.Store8(addr, uint8(x[in.rd]))
	case lsStrH:
		ok = mem.Store16LE(addr, uint16(x[in.rd]))
	case lsStrW:
		ok = mem.Store32LE(addr, uint32(x[in.rd]))
	case lsStrX:
		ok = mem.Store64LE(addr, x[in.rd])
	case lsLdrFB, lsLdrFH, lsLdrFS, lsLdrFD:
		var v uint64
		v, ok = mem.Load(addr, int(lsSize[in.a]), littleEndian)
		if ok {
			c.v[in.rd] = [2]uint64{v, 0}
		}
	case lsLdrFQ:
		var lo, hi uint64
		lo, ok = mem.Load64LE(addr)
		if ok {
			hi, ok = mem.Load64LE(addr + 8)
		}
		if ok {
			c.v[in.rd] = [2]uint64{lo, hi}
		}
	case lsStrFB, lsStrFH, lsStrFS, lsStrFD:
		ok = mem.Store(addr, int(lsSize[in.a]), c.v[in.rd][0], littleEndian)
	case lsStrFQ:
		ok = c.store128(addr, c.v[in.rd][0], c.v[in.rd][1])
	case lsPrfm:
		return true
	}
	if !ok {
		return false
	}
	switch in.b {
	case amPre:
		x[in.rn] = addr
	case amPost:
		x[in.rn] = addr + in.imm
	}
	return true
}

// ldstPair executes the generic ldp/stp forms, the n-th operation of the
// core's Execute (it logs the address).
func (c *Core) ldstPair(in *inst, n uint64) bool {
	x := &c.x
	addr := x[in.rn]
	if in.b != amPost {
		addr += in.imm
	}
	c.vals[n&cpu.ValMask] = addr // the logged value (loggedInCase)
	mem := c.mem
	switch in.a {
	case lpLdW, lpLdSW:
		v1, ok1 := mem.Load32LE(addr)
		v2, ok2 := mem.Load32LE(addr + 4)
		if !ok1 || !ok2 {
			return false
		}
		if in.a == lpLdSW {
			x[in.rd], x[in.ra] = uint64(int32(v1)), uint64(int32(v2))
		} else {
			x[in.rd], x[in.ra] = uint64(v1), uint64(v2)
		}
	case lpLdX:
		v1, ok1 := mem.Load64LE(addr)
		v2, ok2 := mem.Load64LE(addr + 8)
		if !ok1 || !ok2 {
			return false
		}
		x[in.rd], x[in.ra] = v1, v2
	case lpLdS, lpLdD:
		sz := 4 << (in.a - lpLdS)
		v1, ok1 := mem.Load(addr, sz, littleEndian)
		v2, ok2 := mem.Load(addr+uint64(sz), sz, littleEndian)
		if !ok1 || !ok2 {
			return false
		}
		c.v[in.rd] = [2]uint64{v1, 0}
		c.v[in.ra] = [2]uint64{v2, 0}
	case lpLdQ:
		var w [4]uint64
		for i := range w {
			v, ok := mem.Load64LE(addr + uint64(8*i))
			if !ok {
				return false
			}
			w[i] = v
		}
		c.v[in.rd] = [2]uint64{w[0], w[1]}
		c.v[in.ra] = [2]uint64{w[2], w[3]}
	case lpStW:
		if !c.checkWrite(addr, 8) {
			return false
		}
		mem.Store32LE(addr, uint32(x[in.rd]))
		mem.Store32LE(addr+4, uint32(x[in.ra]))
	case lpStX:
		if !c.store128(addr, x[in.rd], x[in.ra]) {
			return false
		}
	case lpStS, lpStD:
		sz := 4 << (in.a - lpStS)
		if !c.checkWrite(addr, 2*sz) {
			return false
		}
		mem.Store(addr, sz, c.v[in.rd][0], littleEndian)
		mem.Store(addr+uint64(sz), sz, c.v[in.ra][0], littleEndian)
	case lpStQ:
		if !c.checkWrite(addr, 32) {
			return false
		}
		c.store128(addr, c.v[in.rd][0], c.v[in.rd][1])
		c.store128(addr+16, c.v[in.ra][0], c.v[in.ra][1])
	}
	switch in.b {
	case amPre:
		x[in.rn] = addr
	case amPost:
		x[in.rn] = addr + in.imm
	}
	return true
}

// checkWrite makes sure n bytes at addr are writable, so that a multi-part
// store either completes or changes nothing.
func (c *Core) checkWrite(addr uint64, n int) bool {
	for _, a := range []uint64{addr, addr + uint64(n) - 1} {
		v, ok := c.mem.Load8(a)
		if !ok {
			if c.mem.Fault.Unmapped || c.mem.PageAt(a) == nil {
				c.mem.Fault.Access = cpu.AccessWrite
				return false
			}
		}
		if !c.mem.Store8(a, v) {
			return false
		}
	}
	return true
}

func (c *Core) loadN(addr uint64, size uint8) (uint64, bool) {
	switch size {
	case 0:
		v, ok := c.mem.Load8(addr)
		return uint64(v), ok
	case 1:
		v, ok := c.mem.Load16LE(addr)
		return uint64(v), ok
	case 2:
		v, ok := c.mem.Load32LE(addr)
		return uint64(v), ok
	}
	return c.mem.Load64LE(addr)
}

func (c *Core) storeN(addr uint64, size uint8, v uint64) bool {
	switch size {
	case 0:
		return c.mem.Store8(addr, uint8(v))
	case 1:
		return c.mem.Store16LE(addr, uint16(v))
	case 2:
		return c.mem.Store32LE(addr, uint32(v))
	}
	return c.mem.Store64LE(addr, v)
}

func sizeMask(size uint8) uint64 {
	if size >= 3 {
		return ^uint64(0)
	}
	return 1<<(8<<size) - 1
}

// exclusive executes exclusives, ordered accesses, cas and atomics. The
// process has one thread, so atomicity is automatic; the exclusive monitor
// tracks one address as the architecture's local monitor does.
func (c *Core) exclusive(in *inst) bool {
	x := &c.x
	addr := x[in.rn]
	size := in.a
	// Exclusive and atomic accesses must be naturally aligned.
	if in.op != opLdar && in.op != opStlr {
		align := uint64(1) << size
		if in.op == opLdxp || in.op == opStxp {
			align <<= 1
		}
		if addr&(align-1) != 0 {
			return c.alignFault(addr)
		}
	}
	switch in.op {
	case opLdar:
		v, ok := c.loadN(addr, size)
		if !ok {
			return false
		}
		x[in.rd] = v
	case opStlr:
		return c.storeN(addr, size, x[in.rd])
	case opLdxr:
		v, ok := c.loadN(addr, size)
		if !ok {
			return false
		}
		x[in.rd] = v
		c.exclAddr, c.exclSize, c.exclValid, c.exclVal[0] = addr, 1<<size, true, v
	case opLdxp:
		lo, hi, ok := c.loadPair(addr, size)
		if !ok {
			return false
		}
		x[in.rd], x[in.ra] = lo, hi
		c.exclAddr, c.exclSize, c.exclValid = addr, 2<<size, true
		c.exclVal = [2]uint64{lo, hi}
		if size == 2 {
			c.exclVal = [2]uint64{lo | hi<<32, 0} // the 8 bytes as one
		}
	case opStxr, opStxp:
		width := uint8(1 << size)
		if in.op == opStxp {
			width <<= 1
		}
		if !c.exclValid || c.exclAddr != addr || c.exclSize != width {
			c.exclValid = false
			// A failing store-exclusive still needs a writable address.
			if !c.checkWrite(addr, int(width)) {
				return false
			}
			x[in.rm] = 1
			return true
		}
		var ok bool
		if in.op == opStxr {
			ok = c.storeN(addr, size, x[in.rd])
		} else if size == 2 {
			ok = c.mem.Store64LE(addr, uint64(uint32(x[in.rd]))|x[in.ra]<<32)
		} else {
			ok = c.store128(addr, x[in.rd], x[in.ra])
		}
		if !ok {
			return false
		}
		c.exclValid = false
		x[in.rm] = 0
	case opCas:
		old, ok := c.loadN(addr, size)
		if !ok {
			return false
		}
		m := sizeMask(size)
		if old == x[in.rm]&m {
			if !c.storeN(addr, size, x[in.rd]) {
				return false
			}
		} else if !c.checkWrite(addr, 1<<size) {
			return false
		}
		if in.rm != rZR {
			x[in.rm] = old
		}
	case opCasp:
		sz := in.a - 2 // element size log2: 2 or 3
		lo, hi, ok := c.loadPair(addr, sz)
		if !ok {
			return false
		}
		m := sizeMask(sz)
		s0, s1 := x[in.rm&31], x[(in.rm+1)&31]
		if lo == s0&m && hi == s1&m {
			n0, n1 := x[in.rd&31], x[(in.rd+1)&31]
			if sz == 2 {
				ok = c.mem.Store64LE(addr, n0&m|n1<<32)
			} else {
				ok = c.store128(addr, n0, n1)
			}
			if !ok {
				return false
			}
		} else if !c.checkWrite(addr, 2<<sz) {
			return false
		}
		if in.rm != rZR {
			x[in.rm&31], x[(in.rm+1)&31] = lo, hi
		}
	case opAtom, opSwp:
		old, ok := c.loadN(addr, size)
		if !ok {
			return false
		}
		m := sizeMask(size)
		s := x[in.rm] & m
		var nv uint64
		if in.op == opSwp {
			nv = s
		} else {
			nv = atomicOp(in.b&15, old, s, size)
		}
		if !c.storeN(addr, size, nv) {
			return false
		}
		x[in.rd] = old
	}
	return true
}

// loadPair reads two adjacent elements of 1<<size bytes (size 2 or 3) as
// one access, as the pair exclusives and casp do.
func (c *Core) loadPair(addr uint64, size uint8) (lo, hi uint64, ok bool) {
	if size == 2 {
		v, ok := c.mem.Load64LE(addr)
		return uint64(uint32(v)), v >> 32, ok
	}
	lo, ok = c.mem.Load64LE(addr)
	if ok {
		hi, ok = c.mem.Load64LE(addr + 8)
	}
	return lo, hi, ok
}

func atomicOp(kind uint8, old, s uint64, size uint8) uint64 {
	sh := 64 - (8 << size)
	so, ss := int64(old<<sh)>>sh, int64(s<<sh)>>sh
	switch kind {
	case atomAdd:
		return old + s
	case atomClr:
		return old &^ s
	case atomEor:
		return old ^ s
	case atomSet:
		return old | s
	case atomSmax:
		if ss > so {
			return s
		}
	case atomSmin:
		if ss < so {
			return s
		}
	case atomUmax:
		if s > old {
			return s
		}
	case atomUmin:
		if s < old {
			return s
		}
	}
	return old
}
