package arm64

// AdvSIMD structure loads and stores (ld1-ld4, st1-st4, single lanes and
// ld1r-ld4r).
//
//	 31 30 29     23 22 21 20  16 15  12 11 10 9  5 4  0
//	┌──┬──┬────────┬──┬──┬──────┬──────┬─────┬────┬────┐
//	│0 │Q │0011 0PS│L │R │  Rm  │opcode│size │ Rn │ Rt │   P: post-index, S: single structure
//	└──┴──┴────────┴──┴──┴──────┴──────┴─────┴────┴────┘
//
// inst: rd = Rt, rn = base, rm = Rm (xzr = immediate post-index), a = element
// size, b = flags, imm = registers | elements-per-structure<<4 | lane<<8.
const (
	lsvLoad   = 1 << 1
	lsvSingle = 1 << 2
	lsvRepl   = 1 << 3
	lsvPost   = 1 << 4
)

func decodeSIMDLdSt(w uint32) inst {
	q := uint8(field(w, 30, 1))
	post := field(w, 23, 1) == 1
	single := field(w, 24, 1) == 1
	l := field(w, 22, 1)
	rm, opc, size := field(w, 16, 5), field(w, 12, 4), field(w, 10, 2)
	if !post && rm != 0 {
		return undef(w)
	}
	flags := q
	if l == 1 {
		flags |= lsvLoad
	}
	if post {
		flags |= lsvPost
	}
	rt, rn := uint8(field(w, 0, 5)), rSPr(field(w, 5, 5))
	var regs, selem, idx uint32
	es := uint8(size)
	if !single {
		if field(w, 21, 1) != 0 {
			return undef(w)
		}
		switch opc {
		case 0b0000:
			regs, selem = 4, 4
		case 0b0010:
			regs, selem = 4, 1
		case 0b0100:
			regs, selem = 3, 3
		case 0b0110:
			regs, selem = 3, 1
		case 0b0111:
			regs, selem = 1, 1
		case 0b1000:
			regs, selem = 2, 2
		case 0b1010:
			regs, selem = 2, 1
		default:
			return undef(w)
		}
		if size == 3 && q == 0 && selem != 1 {
			return undef(w)
		}
	} else {
		flags |= lsvSingle
		r := field(w, 21, 1)
		op3 := opc >> 1 // opcode<3:1>
		s := opc & 1    // S
		selem = (op3&1)<<1 | r + 1
		switch op3 >> 1 {
		case 0: // b
			es, idx = 0, uint32(q)<<3|s<<2|size
		case 1: // h
			if size&1 != 0 {
				return undef(w)
			}
			es, idx = 1, uint32(q)<<2|s<<1|size>>1
		case 2: // s or d
			switch {
			case size == 0:
				es, idx = 2, uint32(q)<<1|s
			case size == 1 && s == 0:
				es, idx = 3, uint32(q)
			default:
				return undef(w)
			}
		case 3: // replicate
			if l == 0 || s != 0 {
				return undef(w)
			}
			flags |= lsvRepl
			es = uint8(size)
		}
		regs = selem
	}
	in := inst{op: opVLdSt, rd: rt, rn: rn, rm: rReg(rm), a: es, b: flags, imm: uint64(regs) | uint64(selem)<<4 | uint64(idx)<<8}
	return in
}

// simdLdSt executes a structure load/store; a failing access leaves the
// registers and the base unchanged (loads go through a scratch copy).
func (c *Core) simdLdSt(in *inst) bool {
	addr := c.x[in.rn]
	regs := int(in.imm & 15)
	selem := int(in.imm >> 4 & 15)
	idx := int(in.imm >> 8)
	es := in.a
	esize := uint64(1) << es
	load := in.b&lsvLoad != 0
	q := in.b&1 != 0
	nl := 8 >> es
	if q {
		nl = 16 >> es
	}
	v := *c.v // scratch copy
	reg := func(i int) int { return (int(in.rd) + i) & 31 }
	var total uint64
	if !load {
		// stores: check the whole range first so nothing is half-written
		n := uint64(regs * nl * int(esize))
		if in.b&lsvSingle != 0 {
			n = uint64(selem) * esize
		}
		if !c.checkWrite(addr, int(n)) {
			return false
		}
	}
	access := func(r, ln int) bool {
		a := addr + total
		total += esize
		if load {
			x, ok := c.loadN(a, es)
			if !ok {
				return false
			}
			setLane(&v[r], es, ln, x)
			return true
		}
		return c.storeN(a, es, lane(c.v[r], es, ln))
	}
	switch {
	case in.b&lsvRepl != 0:
		for s := 0; s < selem; s++ {
			x, ok := c.loadN(addr+total, es)
			if !ok {
				return false
			}
			total += esize
			r := reg(s)
			v[r] = vec{}
			for ln := 0; ln < nl; ln++ {
				setLane(&v[r], es, ln, x)
			}
		}
	case in.b&lsvSingle != 0:
		for s := 0; s < selem; s++ {
			if !access(reg(s), idx) {
				return false
			}
		}
	default:
		if load {
			for i := 0; i < regs; i++ {
				v[reg(i)] = vec{} // upper half cleared for 64-bit forms
			}
		}
		for rpt := 0; rpt < regs/selem; rpt++ {
			for e := 0; e < nl; e++ {
				for s := 0; s < selem; s++ {
					if !access(reg(rpt+s), e) {
						return false
					}
				}
			}
		}
	}
	if load {
		*c.v = v
	}
	if in.b&lsvPost != 0 {
		if in.rm == rZR {
			c.x[in.rn] = addr + total
		} else {
			c.x[in.rn] = addr + c.x[in.rm]
		}
	}
	return true
}
