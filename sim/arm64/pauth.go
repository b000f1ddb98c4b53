package arm64

import "simrun/sim/cpu"

// Pointer authentication (FEAT_PAuth), off by default: without it the
// hint-space instructions (paciasp, autiasp, pacibsp, xpaclri, ...) are
// NOPs and the others (pacia, autia, retaa, braa, blraa, ldraa, pacga,
// ...) are undefined, as on a CPU without the feature and as in qemu with
// pauth=off.  EnablePAuth turns it on: pointers are then really signed and
// authenticated, so signed return addresses appear in x30 and on the
// stack.
//
// The model is FEAT_PAuth of Armv8.3 with an IMPLEMENTATION DEFINED PAC
// algorithm (the architecture allows one instead of QARMA) and without
// FEAT_PAuth2 and FEAT_FPAC, for Linux user space: 48-bit virtual
// addresses and the top byte ignored (TBI0), so the code of a pointer is
// bits 54:48 and bit 55 says which half of the address space it is in:
//
//	 63       56 55 54      48 47                               0
//	┌───────────┬──┬──────────┬──────────────────────────────────┐
//	│ top byte  │ e│   PAC    │ virtual address                  │
//	│ (kept)    │  │ (7 bits) │                                  │
//	└───────────┴──┴──────────┴──────────────────────────────────┘
//
// PAC(key, ptr, modifier), for the pointer with bits 54:48 stripped (set
// to copies of bit 55) and a key of two 64-bit halves k0, k1:
//
//	x = mix(ptr ^ k0) ^ modifier
//	x = mix(x ^ k1)
//	PAC = x >> 57                       (the top 7 bits)
//	mix(z): z ^= z>>30; z *= 0xbf58476d1ce4e5b9; z ^= z>>27;
//	        z *= 0x94d049bb133111eb; z ^= z>>31   (the splitmix64 finaliser)
//
// PACGA gives x's top 32 bits in the result's top half (low half zero).
// Signing a pointer whose bits 54:48 are not all copies of bit 55 inverts
// bit 54 of the result, so it never authenticates.  Authentication that
// fails returns the stripped pointer with error code 01 (A keys) or 10
// (B keys) in bits 54:53: a non-canonical address, so a branch to it
// faults (SIGSEGV), as FEAT_PAuth without FPAC does.
//
// The five keys (APIA, APIB, APDA, APDB, APGA) come from the run's seed
// (Linux picks random keys at exec): key word i is the i-th output of
// splitmix64 seeded with seed ^ 0x5041757468 ("PAuth").
//
// Not modelled: AT_HWCAP's PACA/PACG bits and the ID_AA64ISAR1_EL1 APA/
// GPA fields still say "absent" (static programs built with pac-ret do not
// look), the PAuth_LR (FEAT_PAuth_LR) forms, and ERETAA/ERETAB (EL1 only).

// Keys, in the order of inst.b.
const (
	keyIA = iota
	keyIB
	keyDA
	keyDB
	keyGA
)

// opPAuth kinds (inst.a).
const (
	paPAC   = iota // rd = AddPAC(x[ra], x[rn], key b)
	paAUT          // rd = Auth(x[ra], x[rn], key b)
	paXPAC         // rd = Strip(x[ra])
	paPACGA        // rd = PACGA(x[ra], x[rn])
)

// opPAuthBr flags (inst.a): target = Auth(x[rn], x[rm], key b).
const (
	paLink   = 1 // blraa...: x30 = pc+4
	paReturn = 2 // retaa, retab
)

const (
	pacShift = 48
	pacMask  = uint64(0x7f) << pacShift
)

// pauthState is the feature's state: the keys.
type pauthState struct {
	keys [5][2]uint64
}

// EnablePAuth turns pointer authentication on with keys derived from
// seed.  Call it before the program runs (it drops the decoded code).
func (c *Core) EnablePAuth(seed uint64) {
	s := &pauthState{}
	z := seed ^ 0x5041757468
	next := func() uint64 {
		z += 0x9e3779b97f4a7c15
		return mix64(z)
	}
	for i := range s.keys {
		s.keys[i] = [2]uint64{next(), next()}
	}
	c.pa = s
	withInfo := c.icache.WithInfo
	c.icache = cpu.NewICache(c.m.Mem, 2, 4, func(in *inst) { in.op = opNone })
	c.icache.WithInfo = withInfo
}

// PAuthEnabled reports whether pointer authentication is on.
func (c *Core) PAuthEnabled() bool { return c.pa != nil }

func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// stripPAC sets bits 54:48 to copies of bit 55 (XPACI, XPACD).
func stripPAC(p uint64) uint64 {
	if p&(1<<55) != 0 {
		return p | pacMask
	}
	return p &^ pacMask
}

func (s *pauthState) hash(key int, p, mod uint64) uint64 {
	k := &s.keys[key]
	x := mix64(p^k[0]) ^ mod
	return mix64(x ^ k[1])
}

// addPAC signs p with modifier mod.
func (s *pauthState) addPAC(key int, p, mod uint64) uint64 {
	q := stripPAC(p)
	r := p&^pacMask | s.hash(key, q, mod)>>57<<pacShift
	if q != p {
		r ^= 1 << 54
	}
	return r
}

// auth authenticates p: the stripped pointer if its code is right, else
// the stripped pointer with the key's error code in bits 54:53.
func (s *pauthState) auth(key int, p, mod uint64) uint64 {
	q := stripPAC(p)
	if p&pacMask == s.hash(key, q, mod)>>57<<pacShift {
		return q
	}
	code := uint64(1) // A keys
	if key == keyIB || key == keyDB {
		code = 2
	}
	return q&^(3<<53) | code<<53
}

// decodePAuth re-decodes a word as a pointer authentication instruction
// when the feature is on; in is what the plain decoder made of it (a NOP
// for the hint forms, undefined for the others).
func decodePAuth(w uint32, in inst) inst {
	pac := func(kind, key int, rd, ra, rn uint8) inst {
		return inst{op: opPAuth, a: uint8(kind), b: uint8(key), rd: rd, ra: ra, rn: rn}
	}
	switch {
	case w&0xfffff01f == 0xd503201f: // hint #imm
		switch field(w, 5, 7) {
		case 7: // xpaclri
			return pac(paXPAC, 0, rLR, rLR, rZR)
		case 8, 10: // pacia1716, pacib1716
			return pac(paPAC, int(field(w, 6, 1)), 17, 17, 16)
		case 12, 14: // autia1716, autib1716
			return pac(paAUT, int(field(w, 6, 1)), 17, 17, 16)
		case 24, 26: // paciaz, pacibz
			return pac(paPAC, int(field(w, 6, 1)), rLR, rLR, rZR)
		case 25, 27: // paciasp, pacibsp
			return pac(paPAC, int(field(w, 6, 1)), rLR, rLR, rSP)
		case 28, 30: // autiaz, autibz
			return pac(paAUT, int(field(w, 6, 1)), rLR, rLR, rZR)
		case 29, 31: // autiasp, autibsp
			return pac(paAUT, int(field(w, 6, 1)), rLR, rLR, rSP)
		}
	case w&0xffff0000 == 0xdac10000: // data-processing (1 source), opcode2 = 1
		opc, rn, rd := field(w, 10, 6), field(w, 5, 5), field(w, 0, 5)
		key := int(opc & 3)
		switch {
		case opc < 8: // pacia..pacdb, autia..autdb: Xd, Xn|SP
			kind := paPAC
			if opc&4 != 0 {
				kind = paAUT
			}
			return pac(kind, key, wReg(rd), rReg(rd), rSPr(rn))
		case opc < 16 && rn == 31: // paciza..autdzb
			kind := paPAC
			if opc&4 != 0 {
				kind = paAUT
			}
			return pac(kind, key, wReg(rd), rReg(rd), rZR)
		case (opc == 16 || opc == 17) && rn == 31: // xpaci, xpacd
			return pac(paXPAC, 0, wReg(rd), rReg(rd), rZR)
		}
	case w&0xffe0fc00 == 0x9ac03000: // pacga Xd, Xn, Xm|SP
		return pac(paPACGA, keyGA, wReg(field(w, 0, 5)), rReg(field(w, 5, 5)), rSPr(field(w, 16, 5)))
	case w&0xfe1f0000 == 0xd61f0000: // unconditional branch (register), op2 = 31
		opc, op3, rn, op4 := field(w, 21, 4), field(w, 10, 6), field(w, 5, 5), field(w, 0, 5)
		if op3 != 2 && op3 != 3 {
			break
		}
		key := int(op3 & 1) // 0: A, 1: B (instruction keys)
		br := func(flags uint8, target, mod uint8) inst {
			return inst{op: opPAuthBr, a: flags, b: uint8(key), rn: target, rm: mod}
		}
		switch {
		case opc == 0 && op4 == 31: // braaz, brabz
			return br(0, rReg(rn), rZR)
		case opc == 1 && op4 == 31: // blraaz, blrabz
			return br(paLink, rReg(rn), rZR)
		case opc == 2 && rn == 31 && op4 == 31: // retaa, retab
			return br(paReturn, rLR, rSP)
		case opc == 8: // braa, brab
			return br(0, rReg(rn), rSPr(op4))
		case opc == 9: // blraa, blrab
			return br(paLink, rReg(rn), rSPr(op4))
		}
	case w&0xff200400 == 0xf8200400: // ldraa, ldrab
		rt, rn := field(w, 0, 5), field(w, 5, 5)
		wb := field(w, 11, 1) == 1
		if wb && rn == rt && rn != 31 {
			break // CONSTRAINED UNPREDICTABLE (Unpredictable_WBOVERLAPLD): undefined, as the other writeback forms
		}
		off := sext(uint64(field(w, 22, 1)<<9|field(w, 12, 9)), 10) << 3
		key := [2]int{keyDA, keyDB}[field(w, 23, 1)] // M: ldraa, ldrab
		return inst{op: opPAuthLdr, a: uint8(b2u(wb)), b: uint8(key), rd: wReg(rt), rn: rSPr(rn), imm: off}
	}
	return in
}

// pauthOp executes opPAuth.
func (c *Core) pauthOp(in *inst) {
	x := &c.x
	v := x[in.ra]
	switch in.a {
	case paPAC:
		v = c.pa.addPAC(int(in.b), v, x[in.rn])
	case paAUT:
		v = c.pa.auth(int(in.b), v, x[in.rn])
	case paXPAC:
		v = stripPAC(v)
	case paPACGA:
		v = c.pa.hash(keyGA, v, x[in.rn]) >> 32 << 32
	}
	x[in.rd] = v
}

// pauthTarget is the authenticated target of opPAuthBr.
func (c *Core) pauthTarget(in *inst) uint64 {
	return c.pa.auth(int(in.b), c.x[in.rn], c.x[in.rm])
}

// ldraAddr is the address opPAuthLdr loads from.
func (c *Core) ldraAddr(in *inst) uint64 {
	return c.pa.auth(int(in.b), c.x[in.rn], 0) + in.imm
}

// ldra executes opPAuthLdr; false on a memory fault.
func (c *Core) ldra(in *inst) bool {
	a := c.ldraAddr(in)
	v, ok := c.mem.Load64LE(a)
	if !ok {
		return false
	}
	if in.a != 0 {
		c.x[in.rn] = a
	}
	c.x[in.rd] = v
	return true
}

// describePAuth is describe for the pointer authentication operations.
func describePAuth(in *inst) cpu.OpInfo {
	o := cpu.NewOpInfo(4)
	switch in.op {
	case opPAuth:
		o.Unit = cpu.UnitMul // a multi-cycle integer operation
		o.AddSrc(gr(in.ra))
		o.AddSrc(gr(in.rn))
		o.AddDst(gr(in.rd))
	case opPAuthLdr:
		o.Class, o.Access, o.Unit = cpu.ClassLoad, 8, cpu.UnitLoad
		o.AddSrc(gr(in.rn))
		o.AddDst(gr(in.rd))
		if in.a != 0 {
			o.AddDst(gr(in.rn))
		}
	case opPAuthBr:
		o.Class, o.Unit = cpu.ClassBranch, cpu.UnitBranch
		o.Flags |= cpu.OpIndirect
		if in.a&paLink != 0 {
			o.Flags |= cpu.OpLink
			o.AddDst(gr(rLR))
		}
		if in.a&paReturn != 0 {
			o.Flags |= cpu.OpReturn
		}
		o.AddSrc(gr(in.rn))
		o.AddSrc(gr(in.rm))
	}
	return o
}
