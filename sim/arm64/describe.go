package arm64

import "simrun/sim/cpu"

// The per-instruction description SPE and the timing model use: static
// facts (class, flags, access size, execution unit, registers read and
// written) from the decoded slot, dynamic ones (data address, condition,
// branch target) from the registers just before the instruction runs.

// gr maps a Core.x index to a timing-model register id.
func gr(r uint8) uint8 {
	switch r {
	case rZR, rSink:
		return cpu.RegNone
	case rSP:
		return 31
	}
	return r
}

func vr(r uint8) uint8 { return cpu.RegVec + r&31 }

func pickClass(load bool) cpu.OpClass {
	if load {
		return cpu.ClassLoad
	}
	return cpu.ClassStore
}

// describe computes the static description of an instruction from its
// op's group and flags (opTable, the inventory in inst.go) and its fields.
// It runs once per decoded slot (Core.describeSlot), never per execution.
func describe(in *inst) cpu.OpInfo {
	if int(in.op) >= len(opTable) {
		return cpu.NewOpInfo(4)
	}
	spec := &opTable[in.op]
	g, fl := spec.group, spec.flags
	if g == grpPAuth {
		return describePAuth(in)
	}
	o := cpu.NewOpInfo(4)
	src := func(rs ...uint8) {
		for _, r := range rs {
			o.AddSrc(gr(r))
		}
	}
	dst := func(rs ...uint8) {
		for _, r := range rs {
			o.AddDst(gr(r))
		}
	}
	flags := func(read, write bool) {
		if read {
			o.AddSrc(cpu.RegFlags)
		}
		if write {
			o.AddDst(cpu.RegFlags)
		}
	}
	reads, sets := fl&opfReadsNZCV != 0, fl&opfSetsNZCV != 0
	if fl&opfCond != 0 {
		o.Flags |= cpu.OpConditional
	}
	mem := func(cl cpu.OpClass, size uint8) {
		o.Class, o.Access = cl, size
		switch cl {
		case cpu.ClassLoad:
			o.Unit = cpu.UnitLoad
		case cpu.ClassStore:
			o.Unit = cpu.UnitStore
		default:
			o.Unit = cpu.UnitAtomic
		}
	}
	branch := func() {
		o.Class, o.Unit = cpu.ClassBranch, cpu.UnitBranch
		if fl&opfLink != 0 {
			o.Flags |= cpu.OpLink
			dst(rLR)
		}
		if fl&opfReturn != 0 {
			o.Flags |= cpu.OpReturn
		}
	}
	op := in.op
	switch g {
	case grpMovImm:
		dst(in.rd)
	case grpMov:
		src(in.rm)
		dst(in.rd)
	case grpALU1:
		src(in.rn)
		dst(in.rd)
		flags(false, sets)
	case grpBitIns:
		src(in.rn, in.ra)
		dst(in.rd)
	case grpALU2:
		src(in.rn, in.rm)
		dst(in.rd)
		if op == opLogShX || op == opLogShW { // ands and bics: kind 3 in imm bits 1-2
			sets = in.imm>>1 == 3
		}
		flags(reads, sets)
		if fl&opfDiv != 0 {
			o.Unit = cpu.UnitDiv
		}
	case grpCcmp:
		src(in.rn)
		if in.rm != 0xff {
			src(in.rm)
		}
		flags(reads, sets)
	case grpMul, grpMadd:
		src(in.rn, in.rm)
		if g == grpMadd {
			src(in.ra)
		}
		dst(in.rd)
		o.Unit = cpu.UnitMul
	case grpBranch:
		branch()
		flags(reads, false)
	case grpTestBranch:
		branch()
		src(in.rn)
	case grpIndirect:
		o.Flags |= cpu.OpIndirect
		branch()
		src(in.rn)
	case grpSyscall:
		o.Unit, o.Flags = cpu.UnitSys, cpu.OpSyscall
		src(8, 0, 1, 2, 3)
		dst(0)
	case grpMrs:
		o.Unit = cpu.UnitSys
		dst(in.rd)
	case grpMsr:
		o.Unit = cpu.UnitSys
		src(in.rn)
		if in.a == sysNZCV {
			flags(false, true)
		}
	case grpDcZva:
		mem(cpu.ClassStore, zvaBytes)
		src(in.rn)
	case grpLdStHot:
		load := fl&opfLoad != 0
		mem(pickClass(load), spec.size)
		src(in.rn)
		if load {
			dst(in.rd)
		} else {
			src(in.rd)
		}
	case grpLdSt:
		t := int(in.a)
		if t >= len(lsTypes) {
			break
		}
		ty := lsTypes[t]
		mem(pickClass(!ty.store), ty.size)
		if t == lsPrfm {
			o.Class, o.Access, o.Unit = cpu.ClassOther, 0, cpu.UnitALU
		}
		switch { // SPE counts Q-register transfers as SIMD, the others as FP
		case t == lsLdrFQ || t == lsStrFQ:
			o.Flags |= cpu.OpSIMDFPReg | cpu.OpSIMD
		case ty.fp:
			o.Flags |= cpu.OpSIMDFPReg | cpu.OpFP
		}
		src(in.rn)
		if in.b == amReg {
			src(in.rm)
		}
		if in.b == amPre || in.b == amPost {
			dst(in.rn)
		}
		data := gr(in.rd)
		if ty.fp {
			data = vr(in.rd)
		}
		if ty.store {
			o.AddSrc(data)
		} else if t != lsPrfm {
			o.AddDst(data)
		}
	case grpPair:
		t, load, size, wb := lpLdX, fl&opfLoad != 0, spec.size, fl&opfWriteback != 0
		if !load {
			t = lpStX
		}
		if op == opLdStP {
			t = int(in.a)
			if t >= len(lpTypes) {
				break
			}
			load, size, wb = !lpTypes[t].store, lpTypes[t].size, in.b != amOff
		}
		mem(pickClass(load), size)
		o.Flags |= cpu.OpPair
		fp := false
		switch t {
		case lpLdQ, lpStQ:
			o.Flags |= cpu.OpSIMDFPReg | cpu.OpSIMD
			fp = true
		case lpLdS, lpLdD, lpStS, lpStD:
			o.Flags |= cpu.OpSIMDFPReg | cpu.OpFP
			fp = true
		}
		src(in.rn)
		if wb {
			dst(in.rn)
		}
		for _, r := range []uint8{in.rd, in.ra} {
			id := gr(r)
			if fp {
				id = vr(r)
			}
			if load {
				o.AddDst(id)
			} else {
				o.AddSrc(id)
			}
		}
	case grpLoadEx:
		mem(cpu.ClassLoad, 1<<in.a)
		src(in.rn)
		dst(in.rd)
		if fl&opfPair != 0 {
			dst(in.ra)
			o.Access <<= 1
		}
		if fl&opfExclusive != 0 {
			o.Flags |= cpu.OpExclusive
		}
		if fl&opfAcquire != 0 || in.b == 1 {
			o.Flags |= cpu.OpAcquire
		}
	case grpStoreEx:
		mem(cpu.ClassStore, 1<<in.a)
		src(in.rn, in.rd)
		if fl&opfPair != 0 {
			src(in.ra)
			o.Access <<= 1
		}
		if fl&opfExclusive != 0 {
			o.Flags |= cpu.OpExclusive
			dst(in.rm)
		}
		if fl&opfRelease != 0 || in.b == 1 {
			o.Flags |= cpu.OpRelease
		}
	case grpAtomic:
		mem(cpu.ClassLoadAtomic, 1<<(in.a&3))
		src(in.rn, in.rm)
		if fl&opfCompare != 0 {
			src(in.rd)
			dst(in.rm)
		} else {
			dst(in.rd)
		}
	case grpVLdSt:
		cl := cpu.ClassStore
		if in.b&lsvLoad != 0 {
			cl = cpu.ClassLoad
		}
		mem(cl, 1<<in.a)
		o.Flags |= cpu.OpSIMD | cpu.OpSIMDFPReg
		src(in.rn)
		if in.b&lsvPost != 0 {
			dst(in.rn)
			src(in.rm)
		}
		for i := uint8(0); i < uint8(in.imm&15) && i < 3; i++ {
			if cl == cpu.ClassLoad {
				o.AddDst(vr(in.rd + i))
			} else {
				o.AddSrc(vr(in.rd + i))
			}
		}
	case grpSIMD:
		o.Flags, o.Unit = cpu.OpSIMD, cpu.UnitSIMD
		switch int(in.imm & 0xffff) {
		case vSmov, vUmov:
			o.AddSrc(vr(in.rn))
			dst(in.rd)
		case vDupGen, vInsGen:
			src(in.rn)
			o.AddSrc(vr(in.rd))
			o.AddDst(vr(in.rd))
		default:
			o.AddSrc(vr(in.rn))
			o.AddSrc(vr(in.rm))
			o.AddSrc(vr(in.rd)) // accumulating and inserting forms read it
			o.AddDst(vr(in.rd))
		}
	case grpSIMDImm:
		o.Flags, o.Unit = cpu.OpSIMD, cpu.UnitSIMD
		o.AddSrc(vr(in.rd))
		o.AddDst(vr(in.rd))
	case grpFP1, grpFP2, grpFP3, grpFcmp, grpFccmp, grpFcsel, grpFPToGP, grpFPFromGP:
		o.Flags |= cpu.OpFP
		o.Unit = cpu.UnitFP
		if fl&opfFPDiv != 0 {
			o.Unit = cpu.UnitFPDiv
		}
		switch g {
		case grpFPToGP:
			o.AddSrc(vr(in.rn))
			dst(in.rd)
		case grpFPFromGP:
			src(in.rn)
			o.AddDst(vr(in.rd))
		case grpFcmp, grpFccmp:
			o.AddSrc(vr(in.rn))
			o.AddSrc(vr(in.rm))
			flags(reads, sets)
		case grpFcsel:
			o.AddSrc(vr(in.rn))
			o.AddSrc(vr(in.rm))
			flags(reads, sets)
			o.AddDst(vr(in.rd))
		default: // grpFP1, grpFP2, grpFP3
			o.AddSrc(vr(in.rn))
			if g != grpFP1 {
				o.AddSrc(vr(in.rm))
			}
			if g == grpFP3 {
				o.AddSrc(vr(in.ra))
			}
			o.AddDst(vr(in.rd))
		}
	}
	return o
}

// loggedInCase reports whether Execute stores the logged value (cpu.OpInfo.Logged)
// of op o inside o's own case, where the address is in a register anyway:
// the hot loads, stores, calls and conditional selects and compares. Every other op that logs one goes
// through dynamicValue before it executes (its slot is marked opLogged).
func loggedInCase(o op) bool {
	switch o {
	case opLdrXo, opLdrWo, opLdrBo, opStrXo, opStrWo, opStrBo, opLdpXo, opLdpXpre, opStpXo, opStpXpre,
		opLdpXpost, opStpXpost, opLdSt, opLdStP, opBL, opBlr, opBr, opRet,
		opCselX, opCselW, opCsincX, opCsincW, opCsinvX, opCsinvW, opCsnegX, opCsnegW,
		opCcmpX, opCcmpW, opCcmnX, opCcmnW:
		return true
	}
	return false
}

// dynamicValue is the data address of a load/store in the current state, for
// conditional non-branch operations 1 if the condition holds, and for
// calls and indirect branches the stack pointer (see cpu.Retired).
func (c *Core) dynamicValue(in *inst, info *cpu.OpInfo) uint64 {
	x := &c.x
	switch in.op {
	case opLdrXo, opLdrWo, opLdrBo, opStrXo, opStrWo, opStrBo, opLdpXo, opLdpXpre, opStpXo, opStpXpre:
		return x[in.rn] + in.imm
	case opLdpXpost, opStpXpost:
		return x[in.rn]
	case opLdSt:
		va := x[in.rn]
		switch in.b {
		case amOff, amPre:
			va += in.imm
		case amReg:
			va += extend(x[in.rm], uint8(in.imm>>8), uint8(in.imm))
		}
		return va
	case opLdStP:
		if in.b != amPost {
			return x[in.rn] + in.imm
		}
		return x[in.rn]
	case opDcZva:
		return x[in.rn] &^ (zvaBytes - 1)
	case opPAuthLdr:
		return c.ldraAddr(in)
	case opCselX, opCselW, opCsincX, opCsincW, opCsinvX, opCsinvW, opCsnegX, opCsnegW,
		opCcmpX, opCcmpW, opCcmnX, opCcmnW:
		if c.cond(in.a) {
			return 1
		}
		return 0
	case opFcsel:
		if c.cond(in.b) {
			return 1
		}
		return 0
	case opFccmp:
		if c.cond(in.ra) {
			return 1
		}
		return 0
	}
	if info.Class == cpu.ClassBranch {
		return x[rSP]
	}
	if info.Access != 0 {
		return x[in.rn]
	}
	return 0
}

// branchTarget is where a branch goes if taken, and whether it will be.
func (c *Core) branchTarget(in *inst) (uint64, bool) {
	x := &c.x
	switch in.op {
	case opB, opBL:
		return in.imm, true
	case opBcond:
		return in.imm, c.cond(in.a)
	case opCbzX:
		return in.imm, x[in.rn] == 0
	case opCbzW:
		return in.imm, uint32(x[in.rn]) == 0
	case opCbnzX:
		return in.imm, x[in.rn] != 0
	case opCbnzW:
		return in.imm, uint32(x[in.rn]) != 0
	case opTbz:
		return in.imm, x[in.rn]>>in.a&1 == 0
	case opTbnz:
		return in.imm, x[in.rn]>>in.a&1 != 0
	case opBr, opBlr, opRet:
		return branchAddr(x[in.rn]), true
	case opPAuthBr:
		return branchAddr(c.pauthTarget(in)), true
	}
	return 0, false
}

// branchAddr is the pc a branch to register value t sets: the Arm ARM's
// AArch64.BranchAddr at EL0 under Linux, whose TCR_EL1 has TBI0 set and
// TBID0 and TBI1 clear, so the top byte of an address in the lower half
// (bit 55 clear) is ignored for instruction addresses too (AddrTop gives
// bit 55) and the pc takes bits 55:0 sign-extended, that is with the top
// byte cleared; an address with bit 55 set (the upper half, TBI1 clear)
// is used as it is, and its fetch faults.  Linux's tagged-pointers
// document says the same: the architecture prevents a tagged pc.
// qemu-user does the same (BR, BLR, RET and their authenticated forms).
func branchAddr(t uint64) uint64 {
	if t&(1<<55) == 0 {
		return t << 8 >> 8
	}
	return t
}
