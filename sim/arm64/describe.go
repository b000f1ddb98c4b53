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

// describe computes the static description of an instruction.
func describe(in *inst) cpu.OpInfo {
	if in.op >= opPAuth && in.op <= opPAuthBr {
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
	branch := func(f cpu.OpFlags) {
		o.Class, o.Unit = cpu.ClassBranch, cpu.UnitBranch
		o.Flags |= f
	}
	switch op := in.op; {
	case op == opMovI:
		dst(in.rd)
	case op == opMovX || op == opMovW:
		src(in.rm)
		dst(in.rd)
	case op >= opMovKX && op <= opUbfiz || op >= opSbfxX && op <= opSbfizW:
		src(in.rn)
		dst(in.rd)
		flags(false, op == opAddsXi || op == opAddsWi || op == opSubsXi || op == opSubsWi || op == opAndsXi || op == opAndsWi)
	case op == opBfxil || op == opBfi:
		src(in.rn, in.ra)
		dst(in.rd)
	case op >= opExtrX && op <= opLogShW:
		src(in.rn, in.rm)
		dst(in.rd)
		sets := false
		switch op {
		case opAddsX, opAddsW, opSubsX, opSubsW, opAddsShX, opAddsShW, opSubsShX, opSubsShW,
			opAddsExtX, opAddsExtW, opSubsExtX, opSubsExtW, opAndsX, opAndsW, opBicsX, opBicsW:
			sets = true
		case opLogShX, opLogShW:
			sets = in.imm>>1 == 3
		}
		flags(false, sets)
	case op >= opAdcX && op <= opSbcsW:
		src(in.rn, in.rm)
		dst(in.rd)
		flags(true, op == opAdcsX || op == opAdcsW || op == opSbcsX || op == opSbcsW)
	case op >= opCcmpX && op <= opCcmnW:
		src(in.rn)
		if in.rm != 0xff {
			src(in.rm)
		}
		flags(true, true)
		o.Flags |= cpu.OpConditional
	case op >= opCselX && op <= opCsnegW:
		src(in.rn, in.rm)
		dst(in.rd)
		flags(true, false)
		o.Flags |= cpu.OpConditional
	case op >= opUdivX && op <= opRorvW || op == opCrc32:
		src(in.rn, in.rm)
		dst(in.rd)
		if op <= opSdivW {
			o.Unit = cpu.UnitDiv
		}
	case op >= opRbitX && op <= opClsW:
		src(in.rn)
		dst(in.rd)
	case op >= opMaddX && op <= opUmulh:
		src(in.rn, in.rm)
		if op != opSmulh && op != opUmulh {
			src(in.ra)
		}
		dst(in.rd)
		o.Unit = cpu.UnitMul
	case op == opB:
		branch(0)
	case op == opBL:
		branch(cpu.OpLink)
		dst(rLR)
	case op == opBcond:
		branch(cpu.OpConditional)
		flags(true, false)
	case op >= opCbzX && op <= opTbnz:
		branch(cpu.OpConditional)
		src(in.rn)
	case op == opBr || op == opBlr || op == opRet:
		f := cpu.OpIndirect
		switch op {
		case opBlr:
			f |= cpu.OpLink
			dst(rLR)
		case opRet:
			f |= cpu.OpReturn
		}
		branch(f)
		src(in.rn)
	case op == opSvc:
		o.Unit, o.Flags = cpu.UnitSys, cpu.OpSyscall
		src(8, 0, 1, 2, 3)
		dst(0)
	case op == opMrs:
		o.Unit = cpu.UnitSys
		dst(in.rd)
	case op == opMsr:
		o.Unit = cpu.UnitSys
		src(in.rn)
		if in.a == sysNZCV {
			flags(false, true)
		}
	case op == opDcZva:
		mem(cpu.ClassStore, zvaBytes)
		src(in.rn)
	case op >= opLdrXo && op <= opStrBo:
		size := [...]uint8{8, 4, 1, 8, 4, 1}[op-opLdrXo]
		load := op <= opLdrBo
		mem(pickClass(load), size)
		src(in.rn)
		if load {
			dst(in.rd)
		} else {
			src(in.rd)
		}
	case op == opLdSt:
		t := int(in.a)
		store := t >= lsStrB && t <= lsStrX || t >= lsStrFB && t <= lsStrFQ
		fp := t >= lsLdrFB && t <= lsStrFQ
		mem(pickClass(!store), lsSize[t])
		if t == lsPrfm {
			o.Class, o.Access, o.Unit = cpu.ClassOther, 0, cpu.UnitALU
		}
		switch { // SPE counts Q-register transfers as SIMD, the others as FP
		case t == lsLdrFQ || t == lsStrFQ:
			o.Flags |= cpu.OpSIMDFPReg | cpu.OpSIMD
		case fp:
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
		if fp {
			data = vr(in.rd)
		}
		if store {
			o.AddSrc(data)
		} else if t != lsPrfm {
			o.AddDst(data)
		}
	case op >= opLdpXo && op <= opLdStP:
		t, load, size := lpLdX, true, uint8(16)
		switch op {
		case opStpXo, opStpXpre, opStpXpost:
			t, load = lpStX, false
		case opLdStP:
			t = int(in.a)
			load = t <= lpLdQ
			size = [...]uint8{lpLdW: 8, lpLdX: 16, lpLdSW: 8, lpLdS: 8, lpLdD: 16, lpLdQ: 32,
				lpStW: 8, lpStX: 16, lpStS: 8, lpStD: 16, lpStQ: 32}[t]
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
		wb := op == opLdpXpre || op == opLdpXpost || op == opStpXpre || op == opStpXpost || op == opLdStP && in.b != amOff
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
	case op == opLdxr || op == opLdxp || op == opLdar:
		mem(cpu.ClassLoad, 1<<in.a)
		src(in.rn)
		dst(in.rd)
		if op == opLdxp {
			dst(in.ra)
			o.Access <<= 1
		}
		if op != opLdar {
			o.Flags |= cpu.OpExclusive
		}
		if op == opLdar || in.b == 1 {
			o.Flags |= cpu.OpAcquire
		}
	case op == opStxr || op == opStxp || op == opStlr:
		mem(cpu.ClassStore, 1<<in.a)
		src(in.rn, in.rd)
		if op == opStxp {
			src(in.ra)
			o.Access <<= 1
		}
		if op != opStlr {
			o.Flags |= cpu.OpExclusive
			dst(in.rm)
		}
		if op == opStlr || in.b == 1 {
			o.Flags |= cpu.OpRelease
		}
	case op == opCas || op == opCasp || op == opAtom || op == opSwp:
		mem(cpu.ClassLoadAtomic, 1<<(in.a&3))
		src(in.rn, in.rm)
		if op == opCas || op == opCasp {
			src(in.rd)
			dst(in.rm)
		} else {
			dst(in.rd)
		}
	case op == opVLdSt:
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
	case op >= opFmovReg:
		o.Flags |= cpu.OpFP
		o.Unit = cpu.UnitFP
		switch op {
		case opFdiv, opFsqrt:
			o.Unit = cpu.UnitFPDiv
		case opSimd, opSimdImm:
			o.Flags = cpu.OpSIMD
			o.Unit = cpu.UnitSIMD
		}
		switch op {
		case opFmovToGP, opFcvtToInt:
			o.AddSrc(vr(in.rn))
			dst(in.rd)
		case opFmovFromGP, opIntToFcvt:
			src(in.rn)
			o.AddDst(vr(in.rd))
		case opFcmp:
			o.AddSrc(vr(in.rn))
			o.AddSrc(vr(in.rm))
			flags(false, true)
		case opFccmp:
			o.AddSrc(vr(in.rn))
			o.AddSrc(vr(in.rm))
			flags(true, true)
			o.Flags |= cpu.OpConditional
		case opFcsel:
			o.AddSrc(vr(in.rn))
			o.AddSrc(vr(in.rm))
			flags(true, false)
			o.AddDst(vr(in.rd))
			o.Flags |= cpu.OpConditional
		case opSimd:
			sub := int(in.imm & 0xffff)
			switch sub {
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
		case opSimdImm:
			o.AddSrc(vr(in.rd))
			o.AddDst(vr(in.rd))
		default:
			o.AddSrc(vr(in.rn))
			if op >= opFadd && op <= opFnmsub {
				o.AddSrc(vr(in.rm))
			}
			if op >= opFmadd && op <= opFnmsub {
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
