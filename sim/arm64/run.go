package arm64

import (
	"math/bits"

	"simrun/sim/cpu"
)

// Execute executes up to budget instructions (cpu.Core). The hot loop keeps pc and the
// current code page in locals; every case either falls through to the
// common "next instruction" tail, or sets pc itself and continues (a
// branch not taken) or goes to taken (a branch taken).
//
// With a log, a run begins where the loop enters a page and at a taken
// branch's target, nowhere else: an instruction that goes on to the next
// pays nothing for the log, and one whose value the log needs beyond its
// own case has its slot marked opLogged (describeSlot).
func (c *Core) Execute(budget uint64) (uint64, cpu.Stop) {
	x := &c.x
	mem := c.mem
	log := c.log
	pc := c.pc
	var page *codePage
	var slots *[cpu.PageSize / 4]inst // page.Slots, as an array: no bounds check
	base := pc + cpu.PageSize         // forces a page lookup (pc - base >= PageSize for this pc)
	var n uint64
	for n < budget {
		off := pc - base
		if off >= cpu.PageSize {
			p, stop := c.enterPage(pc, n)
			if p == nil {
				c.pc = pc
				return n, stop
			}
			page, base = p, pc&^cpu.PageMask
			slots = (*[cpu.PageSize / 4]inst)(p.Slots)
			off = pc - base
		}
		in := &slots[(off>>2)&(cpu.PageSize/4-1)]
	dispatch:
		switch in.op {
		case opNone:
			stale, f := c.decodeAt(page, pc)
			if f != nil {
				c.pc = pc
				return n, cpu.Stop{Kind: cpu.StopFault, Fault: f}
			}
			if stale {
				base = pc + cpu.PageSize // look the page up again
			}
			continue
		case opLogged:
			in = c.logValue(in, page, pc, n)
			goto dispatch
		case opUndef:
			c.pc = pc
			return n, c.undefFault(pc, uint32(in.imm))
		case opNop:
		case opMovI:
			x[in.rd] = in.imm
		case opMovX:
			x[in.rd] = x[in.rm]
		case opMovW:
			x[in.rd] = uint64(uint32(x[in.rm]))
		case opMovKX:
			x[in.rd] = x[in.rn]&^(0xffff<<in.a) | in.imm
		case opMovKW:
			x[in.rd] = uint64(uint32(x[in.rn]&^(0xffff<<in.a) | in.imm))
		case opAddXi:
			x[in.rd] = x[in.rn] + in.imm
		case opAddWi:
			x[in.rd] = uint64(uint32(x[in.rn] + in.imm))
		case opSubXi:
			x[in.rd] = x[in.rn] - in.imm
		case opSubWi:
			x[in.rd] = uint64(uint32(x[in.rn] - in.imm))
		case opAddsXi:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], in.imm, 0)
		case opAddsWi:
			r, f := addFlags32(uint32(x[in.rn]), uint32(in.imm), 0)
			x[in.rd], c.nzcv = uint64(r), f
		case opSubsXi:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], ^in.imm, 1)
		case opSubsWi:
			r, f := addFlags32(uint32(x[in.rn]), ^uint32(in.imm), 1)
			x[in.rd], c.nzcv = uint64(r), f
		case opAndXi, opAndWi:
			x[in.rd] = x[in.rn] & in.imm
		case opOrrXi:
			x[in.rd] = x[in.rn] | in.imm
		case opOrrWi:
			x[in.rd] = uint64(uint32(x[in.rn] | in.imm))
		case opEorXi:
			x[in.rd] = x[in.rn] ^ in.imm
		case opEorWi:
			x[in.rd] = uint64(uint32(x[in.rn] ^ in.imm))
		case opAndsXi:
			r := x[in.rn] & in.imm
			x[in.rd], c.nzcv = r, logicFlags64(r)
		case opAndsWi:
			r := uint32(x[in.rn] & in.imm)
			x[in.rd], c.nzcv = uint64(r), logicFlags32(r)
		case opLslXi:
			x[in.rd] = x[in.rn] << in.a
		case opLslWi:
			x[in.rd] = uint64(uint32(x[in.rn]) << in.a)
		case opLsrXi:
			x[in.rd] = x[in.rn] >> in.a
		case opLsrWi:
			x[in.rd] = uint64(uint32(x[in.rn]) >> in.a)
		case opAsrXi:
			x[in.rd] = uint64(int64(x[in.rn]) >> in.a)
		case opAsrWi:
			x[in.rd] = uint64(uint32(int32(x[in.rn]) >> in.a))
		case opUbfx:
			x[in.rd] = (x[in.rn] >> in.a) & in.imm
		case opUbfiz:
			x[in.rd] = (x[in.rn] & in.imm) << in.a
		case opSbfxX:
			x[in.rd] = uint64(int64(x[in.rn]<<(64-in.a-in.b)) >> (64 - in.b))
		case opSbfxW:
			x[in.rd] = uint64(uint32(int64(x[in.rn]<<(64-in.a-in.b)) >> (64 - in.b)))
		case opSbfizX:
			x[in.rd] = uint64(int64(x[in.rn]<<(64-in.b))>>(64-in.b)) << in.a
		case opSbfizW:
			x[in.rd] = uint64(uint32(uint64(int64(x[in.rn]<<(64-in.b))>>(64-in.b)) << in.a))
		case opBfxil:
			r := x[in.ra]&^in.imm | (x[in.rn]>>in.a)&in.imm
			if in.b == 32 {
				r = uint64(uint32(r))
			}
			x[in.rd] = r
		case opBfi:
			r := x[in.ra]&^(in.imm<<in.a) | (x[in.rn]&in.imm)<<in.a
			if in.b == 32 {
				r = uint64(uint32(r))
			}
			x[in.rd] = r
		case opExtrX:
			if in.a == 0 {
				x[in.rd] = x[in.rm]
			} else {
				x[in.rd] = x[in.rm]>>in.a | x[in.rn]<<(64-in.a)
			}
		case opExtrW:
			v := uint64(uint32(x[in.rn]))<<32 | uint64(uint32(x[in.rm]))
			x[in.rd] = uint64(uint32(v >> in.a))
		case opAddX:
			x[in.rd] = x[in.rn] + x[in.rm]<<in.a
		case opAddW:
			x[in.rd] = uint64(uint32(x[in.rn]) + uint32(x[in.rm])<<in.a)
		case opSubX:
			x[in.rd] = x[in.rn] - x[in.rm]<<in.a
		case opSubW:
			x[in.rd] = uint64(uint32(x[in.rn]) - uint32(x[in.rm])<<in.a)
		case opAddsX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], x[in.rm]<<in.a, 0)
		case opAddsW:
			r, f := addFlags32(uint32(x[in.rn]), uint32(x[in.rm])<<in.a, 0)
			x[in.rd], c.nzcv = uint64(r), f
		case opSubsX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], ^(x[in.rm] << in.a), 1)
		case opSubsW:
			r, f := addFlags32(uint32(x[in.rn]), ^(uint32(x[in.rm]) << in.a), 1)
			x[in.rd], c.nzcv = uint64(r), f
		case opAddShX:
			x[in.rd] = x[in.rn] + shift64(x[in.rm], in.b, in.a)
		case opAddShW:
			x[in.rd] = uint64(uint32(x[in.rn]) + shift32(x[in.rm], in.b, in.a))
		case opSubShX:
			x[in.rd] = x[in.rn] - shift64(x[in.rm], in.b, in.a)
		case opSubShW:
			x[in.rd] = uint64(uint32(x[in.rn]) - shift32(x[in.rm], in.b, in.a))
		case opAddsShX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], shift64(x[in.rm], in.b, in.a), 0)
		case opAddsShW:
			r, f := addFlags32(uint32(x[in.rn]), shift32(x[in.rm], in.b, in.a), 0)
			x[in.rd], c.nzcv = uint64(r), f
		case opSubsShX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], ^shift64(x[in.rm], in.b, in.a), 1)
		case opSubsShW:
			r, f := addFlags32(uint32(x[in.rn]), ^shift32(x[in.rm], in.b, in.a), 1)
			x[in.rd], c.nzcv = uint64(r), f
		case opAddExtX:
			x[in.rd] = x[in.rn] + extend(x[in.rm], in.b, in.a)
		case opAddExtW:
			x[in.rd] = uint64(uint32(x[in.rn] + extend(x[in.rm], in.b, in.a)))
		case opSubExtX:
			x[in.rd] = x[in.rn] - extend(x[in.rm], in.b, in.a)
		case opSubExtW:
			x[in.rd] = uint64(uint32(x[in.rn] - extend(x[in.rm], in.b, in.a)))
		case opAddsExtX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], extend(x[in.rm], in.b, in.a), 0)
		case opAddsExtW:
			r, f := addFlags32(uint32(x[in.rn]), uint32(extend(x[in.rm], in.b, in.a)), 0)
			x[in.rd], c.nzcv = uint64(r), f
		case opSubsExtX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], ^extend(x[in.rm], in.b, in.a), 1)
		case opSubsExtW:
			r, f := addFlags32(uint32(x[in.rn]), ^uint32(extend(x[in.rm], in.b, in.a)), 1)
			x[in.rd], c.nzcv = uint64(r), f
		case opAndX:
			x[in.rd] = x[in.rn] & (x[in.rm] << in.a)
		case opAndW:
			x[in.rd] = uint64(uint32(x[in.rn]) & (uint32(x[in.rm]) << in.a))
		case opOrrX:
			x[in.rd] = x[in.rn] | (x[in.rm] << in.a)
		case opOrrW:
			x[in.rd] = uint64(uint32(x[in.rn]) | (uint32(x[in.rm]) << in.a))
		case opEorX:
			x[in.rd] = x[in.rn] ^ (x[in.rm] << in.a)
		case opEorW:
			x[in.rd] = uint64(uint32(x[in.rn]) ^ (uint32(x[in.rm]) << in.a))
		case opAndsX:
			r := x[in.rn] & (x[in.rm] << in.a)
			x[in.rd], c.nzcv = r, logicFlags64(r)
		case opAndsW:
			r := uint32(x[in.rn]) & (uint32(x[in.rm]) << in.a)
			x[in.rd], c.nzcv = uint64(r), logicFlags32(r)
		case opBicX:
			x[in.rd] = x[in.rn] &^ (x[in.rm] << in.a)
		case opBicW:
			x[in.rd] = uint64(uint32(x[in.rn]) &^ (uint32(x[in.rm]) << in.a))
		case opOrnX:
			x[in.rd] = x[in.rn] | ^(x[in.rm] << in.a)
		case opOrnW:
			x[in.rd] = uint64(uint32(x[in.rn]) | ^(uint32(x[in.rm]) << in.a))
		case opEonX:
			x[in.rd] = x[in.rn] ^ ^(x[in.rm] << in.a)
		case opEonW:
			x[in.rd] = uint64(uint32(x[in.rn]) ^ ^(uint32(x[in.rm]) << in.a))
		case opBicsX:
			r := x[in.rn] &^ (x[in.rm] << in.a)
			x[in.rd], c.nzcv = r, logicFlags64(r)
		case opBicsW:
			r := uint32(x[in.rn]) &^ (uint32(x[in.rm]) << in.a)
			x[in.rd], c.nzcv = uint64(r), logicFlags32(r)
		case opLogShX:
			c.logicalShifted(in, true)
		case opLogShW:
			c.logicalShifted(in, false)
		case opAdcX:
			x[in.rd] = x[in.rn] + x[in.rm] + uint64(c.nzcv>>1&1)
		case opAdcW:
			x[in.rd] = uint64(uint32(x[in.rn]) + uint32(x[in.rm]) + c.nzcv>>1&1)
		case opAdcsX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], x[in.rm], uint64(c.nzcv>>1&1))
		case opAdcsW:
			r, f := addFlags32(uint32(x[in.rn]), uint32(x[in.rm]), c.nzcv>>1&1)
			x[in.rd], c.nzcv = uint64(r), f
		case opSbcX:
			x[in.rd] = x[in.rn] + ^x[in.rm] + uint64(c.nzcv>>1&1)
		case opSbcW:
			x[in.rd] = uint64(uint32(x[in.rn]) + ^uint32(x[in.rm]) + c.nzcv>>1&1)
		case opSbcsX:
			x[in.rd], c.nzcv = addFlags64(x[in.rn], ^x[in.rm], uint64(c.nzcv>>1&1))
		case opSbcsW:
			r, f := addFlags32(uint32(x[in.rn]), ^uint32(x[in.rm]), c.nzcv>>1&1)
			x[in.rd], c.nzcv = uint64(r), f
		case opCcmpX, opCcmpW, opCcmnX, opCcmnW:
			c.condCompare(in, n)
		case opCselX:
			if c.condLogged(in.a, n) {
				x[in.rd] = x[in.rn]
			} else {
				x[in.rd] = x[in.rm]
			}
		case opCselW:
			if c.condLogged(in.a, n) {
				x[in.rd] = uint64(uint32(x[in.rn]))
			} else {
				x[in.rd] = uint64(uint32(x[in.rm]))
			}
		case opCsincX:
			if c.condLogged(in.a, n) {
				x[in.rd] = x[in.rn]
			} else {
				x[in.rd] = x[in.rm] + 1
			}
		case opCsincW:
			if c.condLogged(in.a, n) {
				x[in.rd] = uint64(uint32(x[in.rn]))
			} else {
				x[in.rd] = uint64(uint32(x[in.rm] + 1))
			}
		case opCsinvX:
			if c.condLogged(in.a, n) {
				x[in.rd] = x[in.rn]
			} else {
				x[in.rd] = ^x[in.rm]
			}
		case opCsinvW:
			if c.condLogged(in.a, n) {
				x[in.rd] = uint64(uint32(x[in.rn]))
			} else {
				x[in.rd] = uint64(^uint32(x[in.rm]))
			}
		case opCsnegX:
			if c.condLogged(in.a, n) {
				x[in.rd] = x[in.rn]
			} else {
				x[in.rd] = -x[in.rm]
			}
		case opCsnegW:
			if c.condLogged(in.a, n) {
				x[in.rd] = uint64(uint32(x[in.rn]))
			} else {
				x[in.rd] = uint64(-uint32(x[in.rm]))
			}
		case opUdivX:
			if d := x[in.rm]; d != 0 {
				x[in.rd] = x[in.rn] / d
			} else {
				x[in.rd] = 0
			}
		case opUdivW:
			if d := uint32(x[in.rm]); d != 0 {
				x[in.rd] = uint64(uint32(x[in.rn]) / d)
			} else {
				x[in.rd] = 0
			}
		case opSdivX:
			x[in.rd] = uint64(sdiv64(int64(x[in.rn]), int64(x[in.rm])))
		case opSdivW:
			x[in.rd] = uint64(uint32(sdiv32(int32(x[in.rn]), int32(x[in.rm]))))
		case opLslvX:
			x[in.rd] = x[in.rn] << (x[in.rm] & 63)
		case opLslvW:
			x[in.rd] = uint64(uint32(x[in.rn]) << (x[in.rm] & 31))
		case opLsrvX:
			x[in.rd] = x[in.rn] >> (x[in.rm] & 63)
		case opLsrvW:
			x[in.rd] = uint64(uint32(x[in.rn]) >> (x[in.rm] & 31))
		case opAsrvX:
			x[in.rd] = uint64(int64(x[in.rn]) >> (x[in.rm] & 63))
		case opAsrvW:
			x[in.rd] = uint64(uint32(int32(x[in.rn]) >> (x[in.rm] & 31)))
		case opRorvX:
			x[in.rd] = bits.RotateLeft64(x[in.rn], -int(x[in.rm]&63))
		case opRorvW:
			x[in.rd] = uint64(bits.RotateLeft32(uint32(x[in.rn]), -int(x[in.rm]&31)))
		case opCrc32:
			x[in.rd] = uint64(crc32Step(uint32(x[in.rn]), x[in.rm], in.a, in.b == 1))
		case opRbitX:
			x[in.rd] = bits.Reverse64(x[in.rn])
		case opRbitW:
			x[in.rd] = uint64(bits.Reverse32(uint32(x[in.rn])))
		case opRev16X:
			v := x[in.rn]
			x[in.rd] = (v&0x00ff00ff00ff00ff)<<8 | (v>>8)&0x00ff00ff00ff00ff
		case opRev16W:
			v := uint32(x[in.rn])
			x[in.rd] = uint64((v&0x00ff00ff)<<8 | (v>>8)&0x00ff00ff)
		case opRev32X:
			v := x[in.rn]
			x[in.rd] = uint64(bits.ReverseBytes32(uint32(v))) | uint64(bits.ReverseBytes32(uint32(v>>32)))<<32
		case opRevX:
			x[in.rd] = bits.ReverseBytes64(x[in.rn])
		case opRevW:
			x[in.rd] = uint64(bits.ReverseBytes32(uint32(x[in.rn])))
		case opClzX:
			x[in.rd] = uint64(bits.LeadingZeros64(x[in.rn]))
		case opClzW:
			x[in.rd] = uint64(bits.LeadingZeros32(uint32(x[in.rn])))
		case opClsX:
			v := x[in.rn]
			x[in.rd] = uint64(bits.LeadingZeros64(v ^ (v << 1) | 1))
		case opClsW:
			v := uint32(x[in.rn])
			x[in.rd] = uint64(bits.LeadingZeros32(v ^ (v << 1) | 1))
		case opMaddX:
			x[in.rd] = x[in.ra] + x[in.rn]*x[in.rm]
		case opMaddW:
			x[in.rd] = uint64(uint32(x[in.ra]) + uint32(x[in.rn])*uint32(x[in.rm]))
		case opMsubX:
			x[in.rd] = x[in.ra] - x[in.rn]*x[in.rm]
		case opMsubW:
			x[in.rd] = uint64(uint32(x[in.ra]) - uint32(x[in.rn])*uint32(x[in.rm]))
		case opSmaddl:
			x[in.rd] = x[in.ra] + uint64(int64(int32(x[in.rn]))*int64(int32(x[in.rm])))
		case opSmsubl:
			x[in.rd] = x[in.ra] - uint64(int64(int32(x[in.rn]))*int64(int32(x[in.rm])))
		case opUmaddl:
			x[in.rd] = x[in.ra] + uint64(uint32(x[in.rn]))*uint64(uint32(x[in.rm]))
		case opUmsubl:
			x[in.rd] = x[in.ra] - uint64(uint32(x[in.rn]))*uint64(uint32(x[in.rm]))
		case opSmulh:
			x[in.rd] = smulh(x[in.rn], x[in.rm])
		case opUmulh:
			hi, _ := bits.Mul64(x[in.rn], x[in.rm])
			x[in.rd] = hi

		// Branches.
		case opB:
			pc = in.imm
			n++
			goto taken
		case opBL:
			c.vals[n&cpu.ValMask] = x[rSP]
			x[rLR] = pc + 4
			pc = in.imm
			n++
			goto taken
		case opBcond:
			n++
			if condHolds[in.a]>>c.nzcv&1 != 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opCbzX:
			n++
			if x[in.rn] == 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opCbzW:
			n++
			if uint32(x[in.rn]) == 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opCbnzX:
			n++
			if x[in.rn] != 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opCbnzW:
			n++
			if uint32(x[in.rn]) != 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opTbz:
			n++
			if x[in.rn]>>in.a&1 == 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opTbnz:
			n++
			if x[in.rn]>>in.a&1 != 0 {
				pc = in.imm
				goto taken
			}
			pc += 4
			continue
		case opBr, opRet:
			c.vals[n&cpu.ValMask] = x[rSP]
			n++
			pc = x[in.rn]
			if pc&3|pc>>56 != 0 {
				pc = branchAddr(pc)
				if pc&3 != 0 {
					base = pc + cpu.PageSize // not this page: its lookup raises the alignment fault
				}
			}
			goto taken
		case opBlr:
			c.vals[n&cpu.ValMask] = x[rSP]
			n++
			t := x[in.rn]
			x[rLR] = pc + 4
			pc = t
			if pc&3|pc>>56 != 0 {
				pc = branchAddr(pc) // as for br
				if pc&3 != 0 {
					base = pc + cpu.PageSize
				}
			}
			goto taken
		case opPAuth:
			c.pauthOp(in)
		case opPAuthLdr:
			if !c.ldra(in) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opPAuthBr:
			n++
			t := c.pauthTarget(in)
			if in.a&paLink != 0 {
				x[rLR] = pc + 4
			}
			pc = branchAddr(t)
			if pc&3 != 0 {
				base = pc + cpu.PageSize // as for br
			}
			goto taken
		case opSvc:
			c.pc = pc + 4
			return n + 1, cpu.Stop{Kind: cpu.StopSyscall}
		case opBrk:
			c.pc = pc
			return n, c.stopFault(pc, cpu.FaultBreakpoint, brkError(in.imm))
		case opMrs:
			x[in.rd] = c.readSysReg(in.a, uint32(in.imm))
		case opMsr:
			if f := c.writeSysReg(pc, in.a, x[in.rn]); f != nil {
				c.pc = pc
				return n, cpu.Stop{Kind: cpu.StopFault, Fault: f}
			}
		case opClrex:
			c.exclValid = false
		case opSysNop:
		case opDcZva:
			if !c.dcZva(x[in.rn]) {
				c.pc = pc
				return n, c.memFault(pc)
			}

		// Hot loads and stores.
		case opLdrXo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load64LE(a)
			if !ok {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rd] = v
		case opLdrWo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load32LE(a)
			if !ok {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rd] = uint64(v)
		case opLdrBo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load8(a)
			if !ok {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rd] = uint64(v)
		case opStrXo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			if !mem.Store64LE(a, x[in.rd]) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opStrWo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			if !mem.Store32LE(a, uint32(x[in.rd])) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opStrBo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			if !mem.Store8(a, uint8(x[in.rd])) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opLdpXo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			v1, ok1 := mem.Load64LE(a)
			v2, ok2 := mem.Load64LE(a + 8)
			if !ok1 || !ok2 {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rd], x[in.ra] = v1, v2
		case opLdpXpre:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			v1, ok1 := mem.Load64LE(a)
			v2, ok2 := mem.Load64LE(a + 8)
			if !ok1 || !ok2 {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rn] = a
			x[in.rd], x[in.ra] = v1, v2
		case opLdpXpost:
			a := x[in.rn]
			c.vals[n&cpu.ValMask] = a
			v1, ok1 := mem.Load64LE(a)
			v2, ok2 := mem.Load64LE(a + 8)
			if !ok1 || !ok2 {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rn] = a + in.imm
			x[in.rd], x[in.ra] = v1, v2
		case opStpXo:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			if !c.store128(a, x[in.rd], x[in.ra]) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opStpXpre:
			a := x[in.rn] + in.imm
			c.vals[n&cpu.ValMask] = a
			if !c.store128(a, x[in.rd], x[in.ra]) {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rn] = a
		case opStpXpost:
			a := x[in.rn]
			c.vals[n&cpu.ValMask] = a
			if !c.store128(a, x[in.rd], x[in.ra]) {
				c.pc = pc
				return n, c.memFault(pc)
			}
			x[in.rn] = a + in.imm
		case opLdSt:
			if !c.ldst(in, n) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opLdStP:
			if !c.ldstPair(in, n) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opLdxr, opStxr, opLdxp, opStxp, opLdar, opStlr, opCas, opCasp, opAtom, opSwp:
			if !c.exclusive(in) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		case opVLdSt:
			if !c.simdLdSt(in) {
				c.pc = pc
				return n, c.memFault(pc)
			}
		default:
			if in.op >= opFirstFP {
				if f := c.execFP(in, pc); f != nil {
					c.pc = pc
					return n, cpu.Stop{Kind: cpu.StopFault, Fault: f}
				}
				break
			}
			c.pc = pc
			return n, c.stopFault(pc, cpu.FaultInternal, errNoExec(in.op))
		}
		pc += 4
		n++
		continue
	taken: // a run begins at the target (at the page's entry if elsewhere)
		if log != nil && pc-base < cpu.PageSize {
			c.beginAt(page, pc, n)
		}
	}
	c.pc = pc
	return n, cpu.Stop{}
}

// logValue logs the value of the n-th operation, the instruction at pc
// in marked slot in of page, and returns the instruction as decoded.
func (c *Core) logValue(in *inst, page *codePage, pc, n uint64) *inst {
	info := &pageInfos(page)[(pc&cpu.PageMask)>>2]
	c.logged = decoded(in, info)
	c.vals[n&cpu.ValMask] = c.dynamicValue(&c.logged, info)
	return &c.logged
}

// beginAt begins a logged run at pc on page, with the n-th operation.
func (c *Core) beginAt(page *codePage, pc, n uint64) {
	c.log.Begin(pageInfos(page)[(pc&cpu.PageMask)>>2:], pc, n)
}

// enterPage finds the decoded page for pc when execution moves to another
// page, where a logged run begins (the n-th operation).
func (c *Core) enterPage(pc, n uint64) (*codePage, cpu.Stop) {
	if pc&3 != 0 {
		return nil, c.stopFault(pc, cpu.FaultAlignment, errMisalignedPC)
	}
	p, f := c.icache.Page(pc)
	if f != nil {
		return nil, cpu.Stop{Kind: cpu.StopFault, Fault: f}
	}
	if c.log != nil { // a run stays on its page
		if p.Infos == nil {
			c.describePage(p)
		}
		c.log.Begin(pageInfos(p)[(pc&cpu.PageMask)>>2:], pc, n)
	}
	return p, cpu.Stop{}
}

// store128 writes two 64-bit words at a (stp), checking both before writing.
func (c *Core) store128(a, lo, hi uint64) bool {
	if a&cpu.PageMask <= cpu.PageSize-16 {
		return c.mem.Store64LE(a, lo) && c.mem.Store64LE(a+8, hi)
	}
	// Crossing a page: make sure the second half is writable first.
	if _, ok := c.mem.Load8(a + 15); !ok || !c.mem.Store8(a+15, byte(hi>>56)) {
		return false
	}
	return c.mem.Store64LE(a, lo) && c.mem.Store64LE(a+8, hi)
}

func sdiv64(a, b int64) int64 {
	switch {
	case b == 0:
		return 0
	case b == -1:
		return -a // MinInt64 / -1 wraps to MinInt64
	}
	return a / b
}

func sdiv32(a, b int32) int32 {
	switch {
	case b == 0:
		return 0
	case b == -1:
		return -a
	}
	return a / b
}

func smulh(a, b uint64) uint64 {
	hi, _ := bits.Mul64(a, b)
	if int64(a) < 0 {
		hi -= b
	}
	if int64(b) < 0 {
		hi -= a
	}
	return hi
}

// logicalShifted executes a logical op whose operand is shifted by
// lsr/asr/ror. imm = opc:N as in the encoding.
func (c *Core) logicalShifted(in *inst, sf bool) {
	x := &c.x
	var a, b uint64
	if sf {
		a, b = x[in.rn], shift64(x[in.rm], in.b, in.a)
	} else {
		a, b = uint64(uint32(x[in.rn])), uint64(shift32(x[in.rm], in.b, in.a))
	}
	if in.imm&1 == 1 {
		b = ^b
	}
	var r uint64
	switch in.imm >> 1 {
	case 0, 3:
		r = a & b
	case 1:
		r = a | b
	case 2:
		r = a ^ b
	}
	if !sf {
		r = uint64(uint32(r))
	}
	x[in.rd] = r
	if in.imm>>1 == 3 {
		if sf {
			c.nzcv = logicFlags64(r)
		} else {
			c.nzcv = logicFlags32(uint32(r))
		}
	}
}

// condCompare executes ccmp/ccmn, the n-th operation of this Execute.
func (c *Core) condCompare(in *inst, n uint64) {
	if !c.condLogged(in.a, n) {
		c.nzcv = uint32(in.b)
		return
	}
	b := in.imm
	if in.rm != 0xff {
		b = c.x[in.rm]
	}
	neg := in.op == opCcmpX || in.op == opCcmpW
	if in.op == opCcmpX || in.op == opCcmnX {
		if neg {
			_, c.nzcv = addFlags64(c.x[in.rn], ^b, 1)
		} else {
			_, c.nzcv = addFlags64(c.x[in.rn], b, 0)
		}
		return
	}
	if neg {
		_, c.nzcv = addFlags32(uint32(c.x[in.rn]), ^uint32(b), 1)
	} else {
		_, c.nzcv = addFlags32(uint32(c.x[in.rn]), uint32(b), 0)
	}
}

// crc32Step is the crc32/crc32c instructions: the CRC of the low 8<<size
// bits of data appended to acc (bit-reflected polynomials).
func crc32Step(acc uint32, data uint64, size uint8, castagnoli bool) uint32 {
	poly := uint32(0xedb88320)
	if castagnoli {
		poly = 0x82f63b78
	}
	nbits := 8 << size
	for i := 0; i < nbits; i++ {
		bit := (acc ^ uint32(data>>i)) & 1
		acc >>= 1
		if bit != 0 {
			acc ^= poly
		}
	}
	return acc
}

// pageInfos is a page's descriptions as an array: slices of it from a
// masked offset need no bounds check.
func pageInfos(p *codePage) *[cpu.PageSize / 4]cpu.OpInfo {
	return (*[cpu.PageSize / 4]cpu.OpInfo)(p.Infos)
}
