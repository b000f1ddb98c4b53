package s390x

import (
	"math/bits"

	"simrun/sim/cpu"
	"simrun/sim/ieee"
)

// The vector facility of the z13: 32 registers of 128 bits, elements
// numbered from the left. An element size field (es) is 0 for bytes, 1
// halfwords, 2 words, 3 doublewords and 4 for the whole quadword.
//
// simrun is a z13 here: the encodings that the later vector enhancements
// facilities give a meaning (short and extended BFP vectors, vpopct of
// wider elements, ...) are specification exceptions, as on that machine.

// vreg128 is a vector register as two doublewords, [0] the leftmost.
type vreg128 = [2]uint64

// elem reads element i of size es.
func elem(v *vreg128, es uint8, i int) uint64 {
	size := 8 << es
	bit := i * size
	w := v[bit>>6]
	if size == 64 {
		return w
	}
	return w >> (64 - size - bit&63) & (1<<size - 1)
}

// setElem writes element i of size es.
func setElem(v *vreg128, es uint8, i int, x uint64) {
	size := 8 << es
	bit := i * size
	if size == 64 {
		v[bit>>6] = x
		return
	}
	sh := 64 - size - bit&63
	mask := uint64(1)<<size - 1
	v[bit>>6] = v[bit>>6]&^(mask<<sh) | (x&mask)<<sh
}

func nelem(es uint8) int { return 16 >> es }

// sextElem sign-extends an element value of size es.
func sextElem(x uint64, es uint8) int64 {
	s := 64 - (8 << es)
	return int64(x<<s) >> s
}

// validVector checks the element-size, index and mask fields as a z13
// does; anything else is a specification exception.
func (in *inst) validVector() bool {
	es := in.m
	switch in.op {
	case opVLM, opVSTM:
		return in.r3 >= in.r1 && in.r3-in.r1 < 16
	case opVLBB, opLCBB:
		return es <= 6
	case opVLLEZ, opVERIM:
		return es <= 3
	case opVSEG:
		return es <= 2
	case opVAC, opVACCC, opVSBI, opVSBCBI:
		return es == 4
	case opVFTCI:
		return es == 3 && in.b&7 == 0
	case opVFAE, opVSTRC: // every flag of M5 (M6) is defined
		return es <= 2
	case opVFEE, opVFENE: // M5 bits 0-1 (IN, RT) are reserved
		return es <= 2 && in.b&^(strZS|strCS) == 0
	case opVISTR: // M5 bits 0-2 are reserved
		return es <= 2 && in.b&^strCS == 0
	case opVLREP, opVLVG, opVLGV, opVGM, opVREPI, opVMRH, opVMRL, opVLC, opVLP, opVCLZ, opVCTZ,
		opVAVG, opVAVGL, opVMX, opVMN, opVMXL, opVMNL, opVESL, opVESRA, opVESRL, opVERLL,
		opVESLV, opVESRAV, opVESRLV, opVERLLV, opVCEQ, opVCH, opVCHL, opVEC, opVECL:
		return es <= 3
	case opVLEH, opVSTEH, opVLEIH:
		return es < 8
	case opVLEF, opVSTEF, opVLEIF:
		return es < 4
	case opVLEG, opVSTEG, opVLEIG:
		return es < 2
	case opVREP:
		return es <= 3 && in.imm < int64(nelem(es))
	case opVPK, opVPKS, opVPKLS:
		return es >= 1 && es <= 3
	case opVUPH, opVUPL, opVUPLH, opVUPLL:
		return es <= 2
	case opVSLDB:
		return in.imm < 16
	case opVA, opVS, opVACC, opVSCBI:
		return es <= 4
	case opVPOPCT:
		return es == 0
	case opVML, opVMH, opVMLH, opVME, opVMO, opVMLE, opVMLO,
		opVMAL, opVMAH, opVMALH, opVMAE, opVMALE, opVMAO, opVMALO:
		return es <= 2
	case opVSUM:
		return es <= 1
	case opVSUMG:
		return es == 1 || es == 2
	case opVSUMQ:
		return es == 2 || es == 3
	case opVFA, opVFS, opVFM, opVFD:
		return es == 3 && in.b&7 == 0
	case opVFMA, opVFMS:
		return in.imm == 3 && es&7 == 0
	case opVFSQ:
		return es == 3 && in.r3&7 == 0
	case opVFCE, opVFCH, opVFCHE:
		return es == 3 && in.b&^8 == 0 && in.imm&^1 == 0
	case opWFC, opWFK:
		return es == 3 && in.r3 == 0
	case opVCDG, opVCDLG, opVCGD, opVCLGD, opVFI, opVFLR:
		return es == 3 && in.r3&3 == 0 && validRounding(in.b)
	case opVFLL:
		return es == 2 && in.r3&7 == 0
	case opVFPSO:
		return es == 3 && in.r3&7 == 0 && in.b <= 2
	}
	return true
}

// vec executes the vector instructions (opVL to the end); the caller
// fills in the fault's pc.
func (c *Core) vec(in *inst) *cpu.Fault {
	v := c.v
	es := in.m
	addr := c.r[in.b] + c.r[in.r2] + uint64(in.imm)
	switch in.op {
	// Loads and stores.
	case opVL:
		hi, ok1 := c.mem.Load64BE(addr)
		lo, ok2 := c.mem.Load64BE(addr + 8)
		if !ok1 || !ok2 {
			return c.accessFault()
		}
		v[in.r1] = vreg128{hi, lo}
	case opVST:
		if !c.probeWrite(addr, 16) {
			return c.accessFault()
		}
		c.mem.Store64BE(addr, v[in.r1][0])
		c.mem.Store64BE(addr+8, v[in.r1][1])
	case opVLM:
		var regs [16]vreg128
		n := int(in.r3-in.r1) + 1
		for i := 0; i < n; i++ {
			hi, ok1 := c.mem.Load64BE(addr + 16*uint64(i))
			lo, ok2 := c.mem.Load64BE(addr + 16*uint64(i) + 8)
			if !ok1 || !ok2 {
				return c.accessFault()
			}
			regs[i] = vreg128{hi, lo}
		}
		copy(v[in.r1:int(in.r1)+n], regs[:n])
	case opVSTM:
		n := int(in.r3-in.r1) + 1
		if !c.probeWrite(addr, 16*uint64(n)) {
			return c.accessFault()
		}
		for i := 0; i < n; i++ {
			c.mem.Store64BE(addr+16*uint64(i), v[int(in.r1)+i][0])
			c.mem.Store64BE(addr+16*uint64(i)+8, v[int(in.r1)+i][1])
		}
	case opVLR:
		v[in.r1] = v[in.r2]
	case opVLREP, opVLEB, opVLEH, opVLEF, opVLEG:
		size, idx := es, 0
		if in.op != opVLREP {
			size, idx = uint8(in.op-opVLEB), int(es)
		}
		x, ok := c.mem.Load(addr, 1<<size, Arch.ByteOrder)
		if !ok {
			return c.accessFault()
		}
		if in.op == opVLREP {
			for i := 0; i < nelem(size); i++ {
				setElem(&v[in.r1], size, i, x)
			}
		} else {
			setElem(&v[in.r1], size, idx, x)
		}
	case opVLLEZ: // into the rightmost element of the leftmost doubleword
		x, ok := c.mem.Load(addr, 1<<es, Arch.ByteOrder)
		if !ok {
			return c.accessFault()
		}
		var r vreg128
		setElem(&r, es, nelem(es)/2-1, x)
		v[in.r1] = r
	case opVLBB, opLCBB: // up to the next 64<<M3-byte boundary
		n := min(16, -(addr | -(64 << es)))
		if in.op == opLCBB {
			lo32(&c.r[in.r1], uint32(n))
			c.cc = 3 * b2u(n != 16)
			break
		}
		var b [16]byte
		for i := uint64(0); i < n; i++ {
			x, ok := c.mem.Load8(addr + i)
			if !ok {
				return c.accessFault()
			}
			b[i] = x
		}
		v[in.r1] = vreg128{beU64(b[:8]), beU64(b[8:])}
	case opVSTEB, opVSTEH, opVSTEF, opVSTEG:
		size := uint8(in.op - opVSTEB)
		if !c.mem.Store(addr, 1<<size, elem(&v[in.r1], size, int(es)), Arch.ByteOrder) {
			return c.accessFault()
		}
	case opVLL, opVSTL:
		n := min(uint64(uint32(c.r[in.r3])), 15) + 1
		addr = c.r[in.b] + uint64(in.imm)
		var b [16]byte
		if in.op == opVLL {
			for i := uint64(0); i < n; i++ {
				x, ok := c.mem.Load8(addr + i)
				if !ok {
					return c.accessFault()
				}
				b[i] = x
			}
			v[in.r1] = vreg128{beU64(b[:8]), beU64(b[8:])}
			break
		}
		if !c.probeWrite(addr, n) {
			return c.accessFault()
		}
		putBE(b[:8], v[in.r1][0])
		putBE(b[8:], v[in.r1][1])
		for i := uint64(0); i < n; i++ {
			c.mem.Store8(addr+i, b[i])
		}

	// Element moves and immediates.
	case opVLEIB, opVLEIH, opVLEIF, opVLEIG:
		setElem(&v[in.r1], uint8(in.op-opVLEIB), int(es), uint64(in.imm))
	case opVLVG: // element index from the "address" b2+d2
		a := c.r[in.b] + uint64(in.imm)
		setElem(&v[in.r1], es, int(a)&(nelem(es)-1), c.r[in.r3])
	case opVLGV:
		a := c.r[in.b] + uint64(in.imm)
		c.r[in.r1] = elem(&v[in.r3], es, int(a)&(nelem(es)-1))
	case opVLVGP:
		v[in.r1] = vreg128{c.r[in.r2], c.r[in.r3]}
	case opVGBM:
		var r vreg128
		for i := 0; i < 16; i++ {
			if in.imm>>(15-i)&1 != 0 {
				setElem(&r, 0, i, 0xff)
			}
		}
		v[in.r1] = r
	case opVGM:
		width := uint8(8 << es)
		start, end := in.r2&(width-1), in.r3&(width-1)
		var mask uint64
		for i := start; ; i = (i + 1) & (width - 1) {
			mask |= 1 << (width - 1 - i)
			if i == end {
				break
			}
		}
		c.fill(in.r1, es, mask)
	case opVREPI:
		c.fill(in.r1, es, uint64(in.imm))
	case opVREP:
		c.fill(in.r1, es, elem(&v[in.r3], es, int(in.imm)))

	// Permutes.
	case opVPERM:
		a, b, sel := v[in.r2], v[in.r3], v[in.b]
		var r vreg128
		for i := 0; i < 16; i++ {
			k := int(elem(&sel, 0, i) & 31)
			src := &a
			if k >= 16 {
				src, k = &b, k-16
			}
			setElem(&r, 0, i, elem(src, 0, k))
		}
		v[in.r1] = r
	case opVSEL:
		m := v[in.b]
		v[in.r1] = vreg128{v[in.r2][0]&m[0] | v[in.r3][0]&^m[0], v[in.r2][1]&m[1] | v[in.r3][1]&^m[1]}
	case opVMRH, opVMRL:
		a, b := v[in.r2], v[in.r3]
		var r vreg128
		n := nelem(es)
		off := 0
		if in.op == opVMRL {
			off = n / 2
		}
		for i := 0; i < n/2; i++ {
			setElem(&r, es, 2*i, elem(&a, es, off+i))
			setElem(&r, es, 2*i+1, elem(&b, es, off+i))
		}
		v[in.r1] = r
	case opVPK, opVPKS, opVPKLS:
		c.pack(in)
	case opVUPH, opVUPL, opVUPLH, opVUPLL:
		a := v[in.r2]
		var r vreg128
		n := nelem(es + 1)
		off := 0
		if in.op == opVUPL || in.op == opVUPLL {
			off = n
		}
		for i := 0; i < n; i++ {
			x := elem(&a, es, off+i)
			if in.op == opVUPH || in.op == opVUPL {
				x = uint64(sextElem(x, es))
			}
			setElem(&r, es+1, i, x)
		}
		v[in.r1] = r
	case opVSLDB:
		a, b := v[in.r2], v[in.r3]
		n := int(in.imm)
		var r vreg128
		for i := 0; i < 16; i++ {
			k := i + n
			if k < 16 {
				setElem(&r, 0, i, elem(&a, 0, k))
			} else {
				setElem(&r, 0, i, elem(&b, 0, k-16))
			}
		}
		v[in.r1] = r
	case opVSL, opVSRL, opVSRA: // each byte by bits 5-7 of its byte in V3
		a, sh := v[in.r2], v[in.r3]
		var r vreg128
		for i := 0; i < 16; i++ {
			n := uint(elem(&sh, 0, i) & 7)
			x := elem(&a, 0, i)
			if in.op == opVSL {
				var next uint64
				if i < 15 {
					next = elem(&a, 0, i+1)
				}
				setElem(&r, 0, i, (x<<8|next)<<n>>8)
				continue
			}
			var prev uint64
			switch {
			case i > 0:
				prev = elem(&a, 0, i-1)
			case in.op == opVSRA && x&0x80 != 0:
				prev = 0xff
			}
			setElem(&r, 0, i, (prev<<8|x)>>n)
		}
		v[in.r1] = r
	case opVSLB, opVSRLB, opVSRAB: // by bytes: bits 1-4 of V3's byte 7
		n := uint(elem(&v[in.r3], 0, 7) & 0x78)
		hi, lo := v[in.r2][0], v[in.r2][1]
		switch in.op {
		case opVSLB:
			hi, lo = shl128(hi, lo, n)
		case opVSRLB:
			hi, lo = shr128(hi, lo, n, false)
		default:
			hi, lo = shr128(hi, lo, n, true)
		}
		v[in.r1] = vreg128{hi, lo}

	case opVPDI:
		v[in.r1] = vreg128{v[in.r2][es>>2&1], v[in.r3][es&1]}
	case opVSEG: // sign-extend the rightmost element of each doubleword
		a := v[in.r2]
		n := nelem(es) / 2
		v[in.r1] = vreg128{uint64(sextElem(elem(&a, es, n-1), es)), uint64(sextElem(elem(&a, es, 2*n-1), es))}
	case opVERIM: // es in M5
		a, mask, old := v[in.r2], v[in.r3], v[in.r1]
		n := uint64(in.imm) & uint64(8<<es-1)
		var r vreg128
		for i := 0; i < nelem(es); i++ {
			m := elem(&mask, es, i)
			setElem(&r, es, i, elemShift(opVERLL, elem(&a, es, i), n, es)&m|elem(&old, es, i)&^m)
		}
		v[in.r1] = r

	// Bitwise.
	case opVN:
		v[in.r1] = vreg128{v[in.r2][0] & v[in.r3][0], v[in.r2][1] & v[in.r3][1]}
	case opVNC:
		v[in.r1] = vreg128{v[in.r2][0] &^ v[in.r3][0], v[in.r2][1] &^ v[in.r3][1]}
	case opVO:
		v[in.r1] = vreg128{v[in.r2][0] | v[in.r3][0], v[in.r2][1] | v[in.r3][1]}
	case opVNO:
		v[in.r1] = vreg128{^(v[in.r2][0] | v[in.r3][0]), ^(v[in.r2][1] | v[in.r3][1])}
	case opVX:
		v[in.r1] = vreg128{v[in.r2][0] ^ v[in.r3][0], v[in.r2][1] ^ v[in.r3][1]}

	// Integer arithmetic.
	case opVA, opVS, opVACC, opVSCBI:
		if es == 4 {
			v[in.r1] = quadArith(in.op, v[in.r2], v[in.r3])
			break
		}
		c.elementwise2(in, es, func(a, b uint64) uint64 {
			mask := uint64(1)<<(8<<es) - 1
			if es == 3 {
				mask = ^uint64(0)
			}
			switch in.op {
			case opVA:
				return a + b
			case opVS:
				return a - b
			case opVACC:
				return b2u64((a+b)&mask < a)
			}
			return b2u64(a >= b) // vscbi: 1 = no borrow
		})
	case opVAC, opVACCC, opVSBI, opVSBCBI: // 128-bit with the carry in bit 127 of V4
		a, b := v[in.r2], v[in.r3]
		if in.op == opVSBI || in.op == opVSBCBI {
			b = vreg128{^b[0], ^b[1]}
		}
		lo, carry := bits.Add64(a[1], b[1], v[in.b][1]&1)
		hi, carry := bits.Add64(a[0], b[0], carry)
		if in.op == opVACCC || in.op == opVSBCBI {
			v[in.r1] = vreg128{0, carry}
		} else {
			v[in.r1] = vreg128{hi, lo}
		}
	case opVCKSM: // end-around-carry sum of V2's words and V3's word 1
		a := v[in.r2]
		sum := uint32(v[in.r3][0])
		for i := 0; i < 4; i++ {
			s, carry := bits.Add32(sum, uint32(elem(&a, 2, i)), 0)
			sum = s + carry
		}
		v[in.r1] = vreg128{uint64(sum), 0}
	case opVLC, opVLP, opVCLZ, opVCTZ, opVPOPCT:
		a := v[in.r2]
		var r vreg128
		width := 8 << es
		for i := 0; i < nelem(es); i++ {
			x := elem(&a, es, i)
			switch in.op {
			case opVLC:
				x = -x
			case opVLP:
				if sextElem(x, es) < 0 {
					x = -x
				}
			case opVCLZ:
				x = uint64(bits.LeadingZeros64(x) - (64 - width))
			case opVCTZ:
				x = uint64(min(bits.TrailingZeros64(x), width))
			default:
				x = uint64(bits.OnesCount64(x))
			}
			setElem(&r, es, i, x)
		}
		v[in.r1] = r
	case opVAVG, opVAVGL, opVMX, opVMN, opVMXL, opVMNL:
		c.elementwise2(in, es, func(a, b uint64) uint64 {
			sa, sb := sextElem(a, es), sextElem(b, es)
			switch in.op {
			case opVAVG: // (a + b + 1) >> 1 without overflow
				return uint64(sa>>1 + sb>>1 + (sa&1 | sb&1))
			case opVAVGL:
				return a>>1 + b>>1 + (a&1 | b&1)
			case opVMX:
				return uint64(max(sa, sb))
			case opVMN:
				return uint64(min(sa, sb))
			case opVMXL:
				return max(a, b)
			}
			return min(a, b)
		})
	case opVML, opVMH, opVMLH:
		width := uint(8 << es)
		c.elementwise2(in, es, func(a, b uint64) uint64 {
			switch in.op {
			case opVML:
				return a * b
			case opVMH:
				return uint64(sextElem(a, es)*sextElem(b, es)) >> width
			}
			return a * b >> width
		})
	case opVME, opVMO, opVMLE, opVMLO:
		a, b := v[in.r2], v[in.r3]
		var r vreg128
		odd := b2i(in.op == opVMO || in.op == opVMLO)
		signed := in.op == opVME || in.op == opVMO
		for i := 0; i < nelem(es+1); i++ {
			x, y := elem(&a, es, 2*i+odd), elem(&b, es, 2*i+odd)
			if signed {
				x, y = uint64(sextElem(x, es)), uint64(sextElem(y, es))
			}
			setElem(&r, es+1, i, x*y)
		}
		v[in.r1] = r
	case opVMAL, opVMAH, opVMALH, opVMAE, opVMALE, opVMAO, opVMALO:
		c.multiplyAdd(in)

	// Shifts and rotates by an immediate/address amount or per element.
	case opVESL, opVESRA, opVESRL, opVERLL:
		n := (c.r[in.b] + uint64(in.imm)) & uint64(8<<es-1)
		a := v[in.r3]
		var r vreg128
		for i := 0; i < nelem(es); i++ {
			setElem(&r, es, i, elemShift(in.op, elem(&a, es, i), n, es))
		}
		v[in.r1] = r
	case opVESLV, opVESRAV, opVESRLV, opVERLLV:
		shiftOp := opVESL + (in.op - opVESLV) // same order: sl, sra, srl, rll
		c.elementwise2(in, es, func(a, b uint64) uint64 {
			return elemShift(shiftOp, a, b&uint64(8<<es-1), es)
		})

	// Compares.
	case opVCEQ, opVCH, opVCHL:
		a, b := v[in.r2], v[in.r3]
		var r vreg128
		all := ^uint64(0) >> (64 - (8 << es))
		hits := 0
		for i := 0; i < nelem(es); i++ {
			x, y := elem(&a, es, i), elem(&b, es, i)
			var t bool
			switch in.op {
			case opVCEQ:
				t = x == y
			case opVCH:
				t = sextElem(x, es) > sextElem(y, es)
			default:
				t = x > y
			}
			if t {
				setElem(&r, es, i, all)
				hits++
			}
		}
		v[in.r1] = r
		if in.b&1 != 0 {
			c.cc = ccAllSome(hits, nelem(es))
		}
	case opVEC, opVECL:
		i := nelem(es)/2 - 1
		x, y := elem(&v[in.r1], es, i), elem(&v[in.r2], es, i)
		if in.op == opVEC {
			c.cc = ccCompare(sextElem(x, es), sextElem(y, es))
		} else {
			c.cc = ccCompareU(x, y)
		}
	case opVTM:
		sel := vreg128{v[in.r1][0] & v[in.r2][0], v[in.r1][1] & v[in.r2][1]}
		switch {
		case sel == vreg128{}:
			c.cc = 0
		case sel == v[in.r2]:
			c.cc = 3
		default:
			c.cc = 1
		}
	case opVSUM, opVSUMG, opVSUMQ:
		c.sumAcross(in)
	case opVFAE, opVFEE, opVFENE, opVISTR, opVSTRC:
		c.vecString(in)

	default:
		return c.vecFP(in)
	}
	return nil
}

// fill replicates x into every element of size es of register n.
func (c *Core) fill(n, es uint8, x uint64) {
	var r vreg128
	for i := 0; i < nelem(es); i++ {
		setElem(&r, es, i, x)
	}
	c.v[n] = r
}

// elementwise2 sets V1 element i to fn(V2[i], V3[i]).
func (c *Core) elementwise2(in *inst, es uint8, fn func(a, b uint64) uint64) {
	a, b := c.v[in.r2], c.v[in.r3]
	var r vreg128
	for i := 0; i < nelem(es); i++ {
		setElem(&r, es, i, fn(elem(&a, es, i), elem(&b, es, i)))
	}
	c.v[in.r1] = r
}

func b2u64(b bool) uint64 { return uint64(b2u(b)) }

func b2i(b bool) int { return int(b2u(b)) }

// ccAllSome is the condition code of the element compares: 0 all true, 1
// some, 3 none.
func ccAllSome(hits, n int) uint8 {
	switch hits {
	case n:
		return 0
	case 0:
		return 3
	}
	return 1
}

func elemShift(o op, x, n uint64, es uint8) uint64 {
	width := uint64(8 << es)
	switch o {
	case opVESL:
		return x << n
	case opVESRL:
		return x >> n
	case opVESRA:
		return uint64(sextElem(x, es) >> n)
	}
	if n == 0 {
		return x
	}
	return x<<n | x>>(width-n) // rotate within the element (setElem masks)
}

func shl128(hi, lo uint64, n uint) (uint64, uint64) {
	switch {
	case n == 0:
		return hi, lo
	case n >= 64:
		return lo << (n - 64), 0
	}
	return hi<<n | lo>>(64-n), lo << n
}

func shr128(hi, lo uint64, n uint, arith bool) (uint64, uint64) {
	fillBits := uint64(0)
	if arith && int64(hi) < 0 {
		fillBits = ^uint64(0)
	}
	switch {
	case n == 0:
		return hi, lo
	case n >= 64:
		if arith {
			return fillBits, uint64(int64(hi) >> (n - 64))
		}
		return 0, hi >> (n - 64)
	}
	if arith {
		return uint64(int64(hi) >> n), lo>>n | hi<<(64-n)
	}
	return hi >> n, lo>>n | hi<<(64-n)
}

// quadArith is va, vs, vacc, vscbi on the whole 128-bit value.
func quadArith(o op, a, b vreg128) vreg128 {
	switch o {
	case opVA:
		lo, c := bits.Add64(a[1], b[1], 0)
		hi, _ := bits.Add64(a[0], b[0], c)
		return vreg128{hi, lo}
	case opVS:
		lo, br := bits.Sub64(a[1], b[1], 0)
		hi, _ := bits.Sub64(a[0], b[0], br)
		return vreg128{hi, lo}
	case opVACC:
		_, c := bits.Add64(a[1], b[1], 0)
		_, c = bits.Add64(a[0], b[0], c)
		return vreg128{0, c}
	}
	_, br := bits.Sub64(a[1], b[1], 0)
	_, br = bits.Sub64(a[0], b[0], br)
	return vreg128{0, 1 - br}
}

// pack executes vpk (truncating), vpks and vpkls (saturating, with the
// condition code when M5 bit 3 is set): V2's elements then V3's, halved.
func (c *Core) pack(in *inst) {
	es := in.m
	a, b := c.v[in.r2], c.v[in.r3]
	var r vreg128
	n := nelem(es)
	half := 4 << es // bits of a result element
	sat := 0
	for i := 0; i < 2*n; i++ {
		src := &a
		k := i
		if k >= n {
			src, k = &b, k-n
		}
		x := elem(src, es, k)
		switch in.op {
		case opVPKS:
			s := sextElem(x, es)
			lim := int64(1)<<(half-1) - 1
			if s > lim {
				x, sat = uint64(lim), sat+1
			} else if s < -lim-1 {
				x, sat = uint64(-lim-1), sat+1
			}
		case opVPKLS:
			if lim := uint64(1)<<half - 1; x > lim {
				x, sat = lim, sat+1
			}
		}
		setElem(&r, es-1, i, x)
	}
	c.v[in.r1] = r
	if in.op != opVPK && in.b&1 != 0 {
		switch sat {
		case 0:
			c.cc = 0
		case 2 * n:
			c.cc = 3
		default:
			c.cc = 1
		}
	}
}

// multiplyAdd executes vmal, vmah, vmalh (element-sized results) and
// vmae, vmale, vmao, vmalo (double-width results of the even or odd
// elements plus V4's double-width elements).
func (c *Core) multiplyAdd(in *inst) {
	es := in.m
	a, b, d := c.v[in.r2], c.v[in.r3], c.v[in.b]
	var r vreg128
	width := uint(8 << es)
	switch in.op {
	case opVMAL, opVMAH, opVMALH:
		for i := 0; i < nelem(es); i++ {
			x, y, z := elem(&a, es, i), elem(&b, es, i), elem(&d, es, i)
			var p uint64
			switch in.op {
			case opVMAL:
				p = x*y + z
			case opVMAH:
				p = uint64(sextElem(x, es)*sextElem(y, es)+sextElem(z, es)) >> width
			default:
				p = (x*y + z) >> width
			}
			setElem(&r, es, i, p)
		}
	default:
		odd := b2i(in.op == opVMAO || in.op == opVMALO)
		signed := in.op == opVMAE || in.op == opVMAO
		for i := 0; i < nelem(es+1); i++ {
			x, y := elem(&a, es, 2*i+odd), elem(&b, es, 2*i+odd)
			if signed {
				x, y = uint64(sextElem(x, es)), uint64(sextElem(y, es))
			}
			setElem(&r, es+1, i, x*y+elem(&d, es+1, i))
		}
	}
	c.v[in.r1] = r
}

// sumAcross executes vsum (into words), vsumg (doublewords) and vsumq
// (the quadword): each result element is the sum of the V2 elements it
// covers plus the rightmost V3 element within it.
func (c *Core) sumAcross(in *inst) {
	es := in.m
	a, b := c.v[in.r2], c.v[in.r3]
	dst := uint8(2)
	switch in.op {
	case opVSUMG:
		dst = 3
	case opVSUMQ:
		var hi, lo uint64
		n := nelem(es)
		lo = elem(&b, es, n-1)
		for i := 0; i < n; i++ {
			var carry uint64
			lo, carry = bits.Add64(lo, elem(&a, es, i), 0)
			hi += carry
		}
		c.v[in.r1] = vreg128{hi, lo}
		return
	}
	var r vreg128
	per := nelem(es) / nelem(dst)
	for j := 0; j < nelem(dst); j++ {
		sum := elem(&b, es, (j+1)*per-1)
		for i := j * per; i < (j+1)*per; i++ {
			sum += elem(&a, es, i)
		}
		setElem(&r, dst, j, sum)
	}
	c.v[in.r1] = r
}

// vecFP executes the vector BFP instructions (long format; "single
// element" forms, M bit 8, do element 0 and clear element 1, as qemu).
// The IEEE flags of all elements processed go to the FPC together.
func (c *Core) vecFP(in *inst) *cpu.Fault {
	v := c.v
	var r vreg128
	var flags uint32 // the IEEE flags of all elements
	switch in.op {
	case opVFA, opVFS, opVFM, opVFD:
		kind := int(in.op - opVFA) // vfa, vfs, vfm, vfd as bfpAdd..bfpDiv
		a, b := v[in.r2], v[in.r3]
		for i := 0; i < elements(in.b); i++ {
			r[i] = arith64(kind, a[i], b[i])
			flags |= fpc(ieee.Arith64(ieee.Op(kind), a[i], b[i], r[i]))
		}
	case opVFMA, opVFMS:
		a, b, d := v[in.r2], v[in.r3], v[in.b]
		for i := 0; i < elements(in.m); i++ {
			r[i] = c.fma64(a[i], b[i], d[i], in.op == opVFMS) // raises its flags
		}
	case opVFSQ:
		a := v[in.r2]
		for i := 0; i < elements(in.r3); i++ {
			r[i] = sqrt64(a[i])
			flags |= fpc(ieee.Sqrt64(a[i], r[i]))
		}
	case opVFCE, opVFCH, opVFCHE:
		a, b := v[in.r2], v[in.r3]
		hits, n := 0, elements(in.b)
		for i := 0; i < n; i++ {
			var t bool
			flags |= fpc(ieee.Compare64(a[i], b[i], in.b&4 != 0)) // SQ: signal on any NaN
			if cc := cmp64(a[i], b[i]); cc != 3 {
				switch in.op {
				case opVFCE:
					t = cc == 0
				case opVFCH:
					t = cc == 2
				default:
					t = cc != 1
				}
			}
			if t {
				r[i] = ^uint64(0)
				hits++
			}
		}
		if in.imm&1 != 0 {
			c.cc = ccAllSome(hits, n)
		}
	case opWFC, opWFK:
		c.cc = cmp64(v[in.r1][0], v[in.r2][0])
		c.fpc |= fpc(ieee.Compare64(v[in.r1][0], v[in.r2][0], in.op == opWFK))
		return nil
	case opVCDG, opVCDLG, opVCGD, opVCLGD, opVFI:
		a := v[in.r2]
		for i := 0; i < elements(in.r3); i++ {
			switch in.op {
			case opVCDG:
				r[i] = signedToBFP(int64(a[i]), &double, in.b)
				mag := a[i]
				if int64(mag) < 0 {
					mag = -mag
				}
				flags |= fpc(ieee.FromInt(mag, r[i], false))
			case opVCDLG:
				r[i] = intToBFP(false, a[i], &double, in.b)
				flags |= fpc(ieee.FromInt(a[i], r[i], false))
			case opVCGD, opVCLGD:
				var cc uint8
				r[i], cc = toInt(a[i], 64, in.op == opVCGD, in.b)
				flags |= toIntFlags(a[i], cc)
			default:
				r[i] = roundIntegral64(a[i], in.b)
				flags |= fpc(ieee.Integral64(a[i], r[i]))
			}
		}
	case opVFLR: // doubles to shorts in the even word elements
		a := v[in.r2]
		for i := 0; i < elements(in.r3); i++ {
			z := round64to32(a[i], in.b)
			setElem(&r, 2, 2*i, uint64(z))
			flags |= narrowFlags(a[i], z, in.b)
		}
	case opVFLL: // shorts in the even word elements to doubles
		a := v[in.r2]
		for i := 0; i < elements(in.r3); i++ {
			r[i] = ext32to64(uint32(elem(&a, 2, 2*i)))
			flags |= fpc(ieee.Lengthen(uint32(elem(&a, 2, 2*i))))
		}
	case opVFTCI: // the single-element form leaves element 1 (qemu)
		a := v[in.r2]
		r = v[in.r1]
		hits, n := 0, elements(in.b)
		for i := 0; i < n; i++ {
			r[i] = 0
			if dataClass(a[i], 52)&uint16(in.imm) != 0 {
				r[i] = ^uint64(0)
				hits++
			}
		}
		c.cc = ccAllSome(hits, n)
	case opVFPSO:
		a := v[in.r2]
		n := elements(in.r3)
		for i := 0; i < n; i++ {
			switch in.b {
			case 0:
				r[i] = a[i] ^ signBit64
			case 1:
				r[i] = a[i] | signBit64
			default:
				r[i] = a[i] &^ signBit64
			}
		}
		if n == 1 { // the single-element form leaves V1's element 1 (qemu)
			r[1] = v[in.r1][1]
		}
	default:
		return internalFault(0, in).Fault
	}
	v[in.r1] = r
	c.fpc |= flags
	return nil
}

// elements is how many doubleword elements a vector BFP instruction
// processes: 1 if its single-element control (bit value 8) is set.
func elements(m uint8) int {
	if m&8 != 0 {
		return 1
	}
	return 2
}

func beU64(b []byte) uint64 {
	var x uint64
	for _, c := range b {
		x = x<<8 | uint64(c)
	}
	return x
}

func putBE(b []byte, x uint64) {
	for i := range b {
		b[i] = byte(x >> (56 - 8*i))
	}
}
