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
// Access is the one byte they certainly touch. The move-long instructions
// (mvcl, mvcle, mvclu) are likewise stores of their first operand's first
// byte, the compare-long ones loads of it (a zero length touches nothing:
// the sample then names a byte not accessed). stck and stckf store 8
// bytes, stcke 16. stfle is a store of the
// facility list (24 bytes). ex and exrl whose target retires with them
// (see executeTarget) are classified as their target, decoded as they
// would execute it, at the EXECUTE's address; the others are operations
// of their own, and the target the next operation, at the same address.
func (c *Core) NextOp(op *cpu.Op) bool {
	if c.pc&1 != 0 {
		return false
	}
	p, in, ok := c.icache.DecodedSlot(c.pc, func(in *inst) bool { return in.op == opNone }, c.decodeAt)
	if !ok {
		return false
	}
	if in.op == opLogged {
		d := decoded(in, p.Info(c.pc))
		in = &d
	}
	pc := c.pc
	var info *cpu.OpInfo
	executed := c.exPending
	t := c.exInst
	if !executed && (in.op == opEX || in.op == opEXRL) {
		var twice bool
		var f *cpu.Fault
		if t, twice, f = c.executeTarget(in, pc); f != nil {
			return false
		}
		// A target that retires as a second instruction comes next;
		// this one is the ex itself.
		executed = !twice
	}
	if executed {
		in = &t
		if in.op == opUndef || in.op == opSpec {
			return false
		}
		info = &c.exInfo(in, pc)[0]
	} else {
		if in.op == opUndef || in.op == opSpec {
			return false
		}
		info = c.slotInfo(p, in, pc)
		d := decoded(in, info) // describing may mark the slot
		in = &d
	}
	*op = cpu.Op{PC: pc, Size: in.ln, Class: info.Class, Flags: info.Flags, Access: info.Access}
	if info.Class == cpu.ClassBranch {
		t, taken := c.branchTarget(in, pc)
		op.Target = t
		if taken {
			op.Flags |= cpu.OpCondPassed
		}
		return true
	}
	if info.Flags&cpu.OpConditional != 0 && c.condHolds(in) {
		op.Flags |= cpu.OpCondPassed
	}
	if info.Access != 0 {
		op.VA = c.dynamicValue(in, info, pc)
		if in.op == opVLL || in.op == opVSTL { // the length is in R3
			op.Access = uint8(min(uint64(uint32(c.r[in.r3])), 15) + 1)
		}
	}
	return true
}

// slotInfo returns the cached description of the slot for pc.
func (c *Core) slotInfo(p *codePage, in *inst, pc uint64) *cpu.OpInfo {
	if p.Infos == nil {
		c.describePage(p)
	}
	if info := p.Info(pc); info.Valid {
		return info
	}
	return c.describeSlot(p, in, pc)
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
	switch in.op {
	case opMVST, opCLST, opMVCL, opCLCL, opMVCLE, opMVCLU, opCLCLE, opCLCLU:
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
		opLD, opLDY, opADB, opSDB, opMDB, opDDB, opMADB, opMSDB, opSQDB, opCDB, opKDB, opLAAG,
		opLXDB, opMXDB, opMSGC, opMG:
		return cpu.ClassLoad, 8
	case opL, opLY, opLT, opLGF, opLTGF, opLLGF, opLLGT, opLRV, opLRL, opLGFRL, opLLGFRL,
		opA, opAY, opS, opSY, opAL, opALY, opSL, opSLY, opALC, opSLB, opN, opNY, opO, opOY, opX, opXY,
		opMS, opMSY, opC, opCY, opCL, opCLY, opAGF, opSGF, opALGF, opSLGF, opMSGF, opCGF, opCLGF,
		opM, opMFY, opML, opD, opDL, opDSGF, opLOC, opCRL, opCLRL, opCGFRL, opCLGFRL, opLM, opLMY,
		opCHSI, opCLFHSI, opLE, opLEY, opLDE, opLDEB, opAEB, opSEB, opMEEB, opDEB, opMAEB, opMSEB,
		opSQEB, opCEB, opKEB, opLXEB, opMSC:
		return cpu.ClassLoad, 4
	case opLH, opLHY, opLGH, opLLH, opLLGH, opLRVH, opLHRL, opLGHRL, opLLHRL, opLLGHRL,
		opAH, opAHY, opSH, opSHY, opMH, opMHY, opCH, opCHY, opCGH, opCHRL, opCGHRL, opCLHRL, opCLGHRL,
		opCHHSI, opCLHHSI, opAGH, opSGH, opMGH:
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
	case opMVCL, opMVCLE, opMVCLU:
		return cpu.ClassStore, 1
	case opCLCL, opCLCLE, opCLCLU:
		return cpu.ClassLoad, 1
	case opSTCK, opSTCKF:
		return cpu.ClassStore, 8
	case opLFPC, opLAM, opLAMY:
		return cpu.ClassLoad, 4
	case opSTAM, opSTAMY:
		return cpu.ClassStore, 4
	case opSTFPC:
		return cpu.ClassStore, 4
	case opSTCKE:
		return cpu.ClassStore, 16
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
