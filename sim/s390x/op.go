package s390x

import "simrun/sim/cpu"

// NextOp classifies the instruction at pc for SPE and tracing, computing
// its data address and branch outcome from the current registers.
//
// Storage-to-storage instructions (mvc, xc, nc, oc) read the second
// operand and write the first: the sampled access is the store to the
// first operand (its address in VA, its length in Access); clc, which only
// reads, is a load of its first operand. All five carry
// OpStorageToStorage; the second operand's address is B2+D2 of the
// instruction (r2 and imm>>16 of the decoded form). Lengths above 255 bytes (mvc of
// 256 bytes, vlm/vstm of more than 15 registers) saturate at 255. The
// interlocked updates (cs, laa.., and asi, agsi, alsi, algsi, which the
// interlocked-access facility makes atomic) are atomic loads; the other
// read-modify-write storage instructions (ni, oi, xi) are stores.
//
// The string instructions touch a length found only while they run: mvst
// is a store of its first operand (R1, the destination), clst a load of
// its first operand and srst a load of the string it searches (R2); their
// Access is the one byte they certainly touch. stfle is a store of the
// facility list (24 bytes). ex and exrl are classified as their target,
// decoded as they would execute it, at the EXECUTE's address.
func (c *Core) NextOp(op *cpu.Op) bool {
	if c.pc&1 != 0 {
		return false
	}
	p, f := c.icache.Page(c.pc)
	if f != nil {
		return false
	}
	in := p.Slot(c.pc)
	if in.op == opNone {
		if stale, f := c.decodeAt(p, c.pc); f != nil || stale {
			return false
		}
	}
	if c.exPending {
		t := c.exInst
		in = &t
	} else if in.op == opEX || in.op == opEXRL {
		t, _, f := c.executeTarget(in, c.pc)
		if f != nil {
			return false
		}
		in = &t
	}
	if in.op == opUndef || in.op == opSpec {
		return false
	}
	pc := c.pc
	*op = cpu.Op{PC: pc, Size: in.ln}
	r := &c.r
	branch := func(target uint64, taken bool, flags cpu.OpFlags) {
		op.Class, op.Target, op.Flags = cpu.ClassBranch, target, op.Flags|flags
		if taken {
			op.Flags |= cpu.OpCondPassed
		}
	}
	rel := pc + uint64(in.imm)
	switch in.op {
	case opJ:
		branch(rel, true, 0)
		return true
	case opBRC, opBRCL:
		branch(rel, c.cond(in.m), cpu.OpConditional)
		return true
	case opBR:
		branch(r[in.r2], true, cpu.OpIndirect|returnFlag(in.r2))
		return true
	case opBCR:
		branch(r[in.r2], c.cond(in.m), cpu.OpIndirect|cpu.OpConditional|returnFlag(in.r2))
		return true
	case opBC:
		branch(r[in.b]+r[in.r2]+uint64(in.imm), c.cond(in.m), cpu.OpIndirect|cpu.OpConditional)
		return true
	case opBRAS, opBRASL:
		branch(rel, true, cpu.OpLink)
		return true
	case opBASR:
		if in.r2 == 0 { // saves the address only
			return true
		}
		branch(r[in.r2], true, cpu.OpLink|cpu.OpIndirect)
		return true
	case opBAS:
		branch(r[in.b]+r[in.r2]+uint64(in.imm), true, cpu.OpLink|cpu.OpIndirect)
		return true
	case opBRCT:
		branch(rel, uint32(r[in.r1])-1 != 0, cpu.OpConditional)
		return true
	case opBRCTG:
		branch(rel, r[in.r1]-1 != 0, cpu.OpConditional)
		return true
	case opBCTR, opBCTGR, opBCT, opBCTG:
		t, ind := r[in.r2], in.r2 != 0
		if in.op == opBCT || in.op == opBCTG {
			t, ind = r[in.b]+r[in.r2]+uint64(in.imm), true
		}
		nz := r[in.r1]-1 != 0
		if in.op == opBCTR || in.op == opBCT {
			nz = uint32(r[in.r1])-1 != 0
		}
		if ind {
			branch(t, nz, cpu.OpConditional|cpu.OpIndirect)
		}
		return true
	case opBRXH, opBRXLE, opBRXHG, opBRXLG:
		saved := r[in.r1]
		taken := c.branchIndex(in)
		r[in.r1] = saved
		branch(rel, taken, cpu.OpConditional)
		return true
	case opCRJ, opCGRJ, opCLRJ, opCLGRJ, opCIJ, opCGIJ, opCLIJ, opCLGIJ:
		branch(rel, in.m<<c.compareOperands(in)&8 != 0, cpu.OpConditional)
		return true
	case opCRB, opCGRB, opCLRB, opCLGRB, opCIB, opCGIB, opCLIB, opCLGIB:
		branch(r[in.b]+uint64(in.imm), in.m<<c.compareOperands(in)&8 != 0, cpu.OpConditional|cpu.OpIndirect)
		return true
	case opSVC:
		op.Flags |= cpu.OpSyscall
		return true
	case opLOCR, opLOCGR, opLOCHI, opLOCGHI:
		op.Flags |= cpu.OpConditional
		if c.cond(in.m) {
			op.Flags |= cpu.OpCondPassed
		}
		return true
	}
	class, size := memClass(in)
	if class == cpu.ClassOther {
		switch {
		case in.op >= opVFA:
			op.Flags |= cpu.OpSIMD | cpu.OpFP
		case in.op >= opVL:
			op.Flags |= cpu.OpSIMD
		case in.op >= opLD:
			op.Flags |= cpu.OpFP
		}
		return true
	}
	op.Class, op.Access, op.VA = class, size, c.operandAddr(in, pc)
	switch {
	case in.op >= opVL:
		op.Flags |= cpu.OpSIMD | cpu.OpSIMDFPReg
	case in.op >= opLD:
		op.Flags |= cpu.OpFP
		switch in.op {
		case opLD, opLDY, opLE, opLEY, opLDE, opSTD, opSTDY, opSTE, opSTEY:
			op.Flags |= cpu.OpSIMDFPReg
		}
	}
	switch in.op {
	case opLOC, opLOCG, opSTOC, opSTOCG:
		op.Flags |= cpu.OpConditional
		if c.cond(in.m) {
			op.Flags |= cpu.OpCondPassed
		}
	case opLM, opLMY, opLMG, opSTM, opSTMY, opSTMG, opVLM, opVSTM:
		n := uint64(in.r3-in.r1)&15 + 1
		switch in.op {
		case opLMG, opSTMG:
			n *= 8
		case opVLM, opVSTM:
			n = 16 * (uint64(in.r3-in.r1) + 1)
		default:
			n *= 4
		}
		op.Access = uint8(min(n, 255))
	case opMVC, opXC, opNC, opOC, opCLC:
		op.Access = uint8(min(uint64(in.m)+1, 255))
		op.Flags |= cpu.OpStorageToStorage
	case opVLL, opVSTL:
		op.Access = uint8(min(uint64(uint32(r[in.r3])), 15) + 1)
	}
	return true
}

// returnFlag marks a branch through r14, the return-address register.
func returnFlag(reg uint8) cpu.OpFlags {
	if reg == 14 {
		return cpu.OpReturn
	}
	return 0
}

// operandAddr is the storage operand's address for memClass's instructions.
func (c *Core) operandAddr(in *inst, pc uint64) uint64 {
	r := &c.r
	switch opInfos[in.op-opFirst].format {
	case fmtRILrel, fmtRILm:
		return pc + uint64(in.imm)
	case fmtSIL, fmtSSa:
		return r[in.b] + uint64(in.imm&0xfff)
	}
	if in.op == opMVST || in.op == opCLST {
		return r[in.r1]
	}
	return r[in.b] + r[in.r2] + uint64(in.imm)
}

// memClass is the class and access size of an instruction with a storage
// operand (ClassOther for the rest).
func memClass(in *inst) (cpu.OpClass, uint8) {
	switch in.op {
	case opLG, opLTG, opLRVG, opLGRL, opAG, opSG, opALG, opSLG, opALCG, opSLBG, opNG, opOG, opXG,
		opMSG, opCG, opCLG, opMLG, opDLG, opDSG, opLOCG, opCGRL, opCLGRL, opLMG, opCGHSI, opCLGHSI,
		opLD, opLDY, opADB, opSDB, opMDB, opDDB, opMADB, opMSDB, opSQDB, opCDB, opKDB, opLAAG:
		return cpu.ClassLoad, 8
	case opL, opLY, opLT, opLGF, opLTGF, opLLGF, opLLGT, opLRV, opLRL, opLGFRL, opLLGFRL,
		opA, opAY, opS, opSY, opAL, opALY, opSL, opSLY, opALC, opSLB, opN, opNY, opO, opOY, opX, opXY,
		opMS, opMSY, opC, opCY, opCL, opCLY, opAGF, opSGF, opALGF, opSLGF, opMSGF, opCGF, opCLGF,
		opM, opMFY, opML, opD, opDL, opDSGF, opLOC, opCRL, opCLRL, opCGFRL, opCLGFRL, opLM, opLMY,
		opCHSI, opCLFHSI, opLE, opLEY, opLDE, opLDEB, opAEB, opSEB, opMEEB, opDEB, opMAEB, opMSEB,
		opSQEB, opCEB, opKEB:
		return cpu.ClassLoad, 4
	case opLH, opLHY, opLGH, opLLH, opLLGH, opLRVH, opLHRL, opLGHRL, opLLHRL, opLLGHRL,
		opAH, opAHY, opSH, opSHY, opMH, opMHY, opCH, opCHY, opCGH, opCHRL, opCGHRL, opCLHRL, opCLGHRL,
		opCHHSI, opCLHHSI:
		return cpu.ClassLoad, 2
	case opLB, opLGB, opLLC, opLLGC, opIC, opICY, opCLI, opCLIY, opTM, opTMY:
		return cpu.ClassLoad, 1
	case opICM, opICMY, opICMH, opCLM, opCLMY:
		return cpu.ClassLoad, uint8(popcount4(in.m))
	case opCLC:
		return cpu.ClassLoad, 0
	case opSTG, opSTRVG, opSTGRL, opMVGHI, opSTOCG, opSTMG, opSTD, opSTDY:
		return cpu.ClassStore, 8
	case opST, opSTY, opSTRV, opSTRL, opMVHI, opSTOC, opSTM, opSTMY, opSTE, opSTEY:
		return cpu.ClassStore, 4
	case opSTH, opSTHY, opSTRVH, opSTHRL, opMVHHI:
		return cpu.ClassStore, 2
	case opSTC, opSTCY, opMVI, opMVIY, opNI, opNIY, opOI, opOIY, opXI, opXIY:
		return cpu.ClassStore, 1
	case opSTCM, opSTCMY, opSTCMH:
		return cpu.ClassStore, uint8(popcount4(in.m))
	case opMVC, opXC, opNC, opOC:
		return cpu.ClassStore, 0
	case opCSG, opLAALG, opLANG, opLAOG, opLAXG, opAGSI, opALGSI:
		return cpu.ClassLoadAtomic, 8
	case opCS, opCSY, opLAA, opLAAL, opLAN, opLAO, opLAX, opASI, opALSI:
		return cpu.ClassLoadAtomic, 4
	case opMVST:
		return cpu.ClassStore, 1
	case opSRST, opCLST:
		return cpu.ClassLoad, 1
	case opSTFLE:
		return cpu.ClassStore, 8 * uint8(len(facilities))
	case opVL, opVLM, opVLL:
		return cpu.ClassLoad, 16
	case opVST, opVSTM, opVSTL:
		return cpu.ClassStore, 16
	case opVLREP, opVLLEZ:
		return cpu.ClassLoad, 1 << in.m
	case opVLBB:
		return cpu.ClassLoad, 16
	case opVLEB, opVLEH, opVLEF, opVLEG:
		return cpu.ClassLoad, 1 << (in.op - opVLEB)
	case opVSTEB, opVSTEH, opVSTEF, opVSTEG:
		return cpu.ClassStore, 1 << (in.op - opVSTEB)
	}
	return cpu.ClassOther, 0
}

func popcount4(m uint8) int { return int(m>>3&1 + m>>2&1 + m>>1&1 + m&1) }
