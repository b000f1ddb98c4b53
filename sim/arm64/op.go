package arm64

import "simrun/sim/cpu"

// NextOp classifies the instruction at pc for SPE and tracing, computing
// its data address and branch outcome from the current registers.
func (c *Core) NextOp(op *cpu.Op) bool {
	p, f := c.icache.Page(c.pc)
	if f != nil || c.pc&3 != 0 {
		return false
	}
	in := p.Slot(c.pc)
	if in.op == opNone {
		if stale, f := c.decodeAt(p, c.pc); f != nil || stale {
			return false
		}
	}
	*op = cpu.Op{PC: c.pc, Size: 4}
	x := &c.x
	taken := func(t uint64, cond bool) {
		op.Class = cpu.ClassBranch
		op.Target = t
		if cond {
			op.Flags |= cpu.OpCondPassed
		}
	}
	mem := func(cl cpu.OpClass, size uint8, va uint64) {
		op.Class, op.Access, op.VA = cl, size, va
	}
	switch in.op {
	case opB:
		taken(in.imm, true)
	case opBL:
		taken(in.imm, true)
		op.Flags |= cpu.OpLink
	case opBcond:
		taken(in.imm, c.cond(in.a))
		op.Flags |= cpu.OpConditional
	case opCbzX, opCbzW, opCbnzX, opCbnzW, opTbz, opTbnz:
		v := x[in.rn]
		var t bool
		switch in.op {
		case opCbzX:
			t = v == 0
		case opCbzW:
			t = uint32(v) == 0
		case opCbnzX:
			t = v != 0
		case opCbnzW:
			t = uint32(v) != 0
		case opTbz:
			t = v>>in.a&1 == 0
		case opTbnz:
			t = v>>in.a&1 != 0
		}
		taken(in.imm, t)
		op.Flags |= cpu.OpConditional
	case opBr, opBlr, opRet:
		taken(x[in.rn], true)
		op.Flags |= cpu.OpIndirect
		switch in.op {
		case opBlr:
			op.Flags |= cpu.OpLink
		case opRet:
			op.Flags |= cpu.OpReturn
		}
	case opSvc:
		op.Flags |= cpu.OpSyscall
	case opCselX, opCselW, opCsincX, opCsincW, opCsinvX, opCsinvW, opCsnegX, opCsnegW,
		opCcmpX, opCcmpW, opCcmnX, opCcmnW:
		op.Flags |= cpu.OpConditional
		if c.cond(in.a) {
			op.Flags |= cpu.OpCondPassed
		}
	case opLdrXo, opStrXo:
		mem(pickClass(in.op == opLdrXo), 8, x[in.rn]+in.imm)
	case opLdrWo, opStrWo:
		mem(pickClass(in.op == opLdrWo), 4, x[in.rn]+in.imm)
	case opLdrBo, opStrBo:
		mem(pickClass(in.op == opLdrBo), 1, x[in.rn]+in.imm)
	case opLdSt:
		va := x[in.rn]
		switch in.b {
		case amOff, amPre:
			va += in.imm
		case amReg:
			va += extend(x[in.rm], uint8(in.imm>>8), uint8(in.imm))
		}
		cl := cpu.ClassLoad
		if (in.a >= lsStrB && in.a <= lsStrX) || (in.a >= lsStrFB && in.a <= lsStrFQ) {
			cl = cpu.ClassStore
		}
		switch { // SPE counts Q-register transfers as SIMD, the others as FP
		case in.a == lsLdrFQ || in.a == lsStrFQ:
			op.Flags |= cpu.OpSIMDFPReg | cpu.OpSIMD
		case in.a >= lsLdrFB && in.a <= lsStrFQ:
			op.Flags |= cpu.OpSIMDFPReg | cpu.OpFP
		}
		if in.a == lsPrfm {
			cl = cpu.ClassOther
		}
		mem(cl, lsSize[in.a], va)
	case opLdpXo, opLdpXpre, opLdpXpost, opStpXo, opStpXpre, opStpXpost, opLdStP:
		va := x[in.rn]
		if in.op == opLdpXo || in.op == opLdpXpre || in.op == opStpXo || in.op == opStpXpre ||
			(in.op == opLdStP && in.b != amPost) {
			va += in.imm
		}
		cl := cpu.ClassLoad
		size := uint8(16)
		switch in.op {
		case opStpXo, opStpXpre, opStpXpost:
			cl = cpu.ClassStore
		case opLdStP:
			size = [...]uint8{lpLdW: 8, lpLdX: 16, lpLdSW: 8, lpLdS: 8, lpLdD: 16, lpLdQ: 32,
				lpStW: 8, lpStX: 16, lpStS: 8, lpStD: 16, lpStQ: 32}[in.a]
			if in.a >= lpStW {
				cl = cpu.ClassStore
			}
			switch in.a {
			case lpLdQ, lpStQ:
				op.Flags |= cpu.OpSIMDFPReg | cpu.OpSIMD
			case lpLdS, lpLdD, lpStS, lpStD:
				op.Flags |= cpu.OpSIMDFPReg | cpu.OpFP
			}
		}
		op.Flags |= cpu.OpPair
		mem(cl, size, va)
	case opLdxr, opLdxp:
		mem(cpu.ClassLoad, 1<<in.a, x[in.rn])
		op.Flags |= cpu.OpExclusive
		if in.b == 1 {
			op.Flags |= cpu.OpAcquire
		}
	case opStxr, opStxp:
		mem(cpu.ClassStore, 1<<in.a, x[in.rn])
		op.Flags |= cpu.OpExclusive
		if in.b == 1 {
			op.Flags |= cpu.OpRelease
		}
	case opLdar:
		mem(cpu.ClassLoad, 1<<in.a, x[in.rn])
		op.Flags |= cpu.OpAcquire
	case opStlr:
		mem(cpu.ClassStore, 1<<in.a, x[in.rn])
		op.Flags |= cpu.OpRelease
	case opCas, opCasp, opAtom, opSwp:
		mem(cpu.ClassLoadAtomic, 1<<(in.a&3), x[in.rn])
	case opVLdSt:
		cl := cpu.ClassStore
		if in.b&lsvLoad != 0 {
			cl = cpu.ClassLoad
		}
		mem(cl, 1<<in.a, x[in.rn])
		op.Flags |= cpu.OpSIMD | cpu.OpSIMDFPReg
	case opDcZva:
		mem(cpu.ClassStore, zvaBytes, x[in.rn]&^(zvaBytes-1))
	default:
		switch {
		case in.op == opSimd || in.op == opSimdImm:
			op.Flags |= cpu.OpSIMD
		case in.op >= opFmovReg:
			op.Flags |= cpu.OpFP
			if in.op == opFcsel || in.op == opFccmp {
				op.Flags |= cpu.OpConditional
			}
		}
	}
	return true
}

func pickClass(load bool) cpu.OpClass {
	if load {
		return cpu.ClassLoad
	}
	return cpu.ClassStore
}
