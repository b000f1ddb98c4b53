package s390x

import (
	"math/bits"

	"simrun/sim/cpu"
)

// Execute executes up to budget instructions (cpu.Core). The hot loop keeps pc and the
// current code page in locals; every case either falls through to the
// common "next instruction" tail or sets pc itself and continues (a
// taken branch first calls beginTaken with a log). A branch to an odd
// address retires and forces a page lookup, where the odd pc raises the
// specification exception.
//
// With a log, a run begins where the loop enters a page, at a taken
// branch's target and around an EXECUTE's target, nowhere else: an
// instruction that goes on to the next pays nothing for the log, and one
// whose value the log needs beyond its own case has its slot marked
// opLogged (describeSlot).
func (c *Core) Execute(budget uint64) (uint64, cpu.Stop) {
	r := &c.r
	mem := c.mem
	log := c.log
	pc := c.pc
	var page *codePage
	var slots *[cpu.PageSize / 2]inst // page.Slots, as an array: no bounds check
	base := pc + cpu.PageSize         // forces a page lookup (pc - base >= PageSize for this pc)
	var n uint64
	var in *inst
	var slot uint64
	for n < budget {
		if pc-base >= cpu.PageSize {
			p, stop := c.enterPage(pc, n)
			if p == nil {
				c.pc = pc
				return n, stop
			}
			page, base = p, pc&^cpu.PageMask
			slots = (*[cpu.PageSize / 2]inst)(p.Slots)
			if c.exPending { // the target of an ex that ended the last Execute
				c.exPending = false
				in = &c.exInst
				c.logExecuted(log, n, in, pc) // (the run just begun stays empty)
				base = cpu.TopPage            // what follows the target begins a run
				goto dispatch
			}
		}
		slot = ((pc - base) >> 1) & (cpu.PageSize/2 - 1)
		in = &slots[slot]
	dispatch:
		switch in.op {
		case opNone:
			stale, f := c.decodeAt(page, pc)
			if f != nil {
				c.pc = pc
				return n, stopFault(f)
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
			return n, c.undefFault(pc, in)
		case opSpec:
			c.pc = pc
			return n, specFault(pc, in.imm)
		case opNop:

		// Branches.
		case opJ:
			pc += uint64(in.imm)
			n++
			if log != nil {
				c.beginTaken(page, pc, n)
			}
			continue
		case opBRC, opBRCL:
			n++
			if in.m<<c.cc&8 != 0 {
				pc += uint64(in.imm)
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opBR:
			c.vals[n&cpu.ValMask] = r[15]
			t := r[in.r2]
			n++
			pc = t
			if t&1 != 0 {
				base = t + cpu.PageSize // the lookup raises the specification exception
			}
			if log != nil {
				c.beginTaken(page, pc, n)
			}
			continue
		case opBCR:
			c.vals[n&cpu.ValMask] = r[15]
			n++
			if in.m<<c.cc&8 != 0 {
				pc = r[in.r2]
				if pc&1 != 0 {
					base = pc + cpu.PageSize // as for br
				}
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opBC:
			n++
			if in.m<<c.cc&8 != 0 {
				pc = r[in.b] + r[in.r2] + uint64(in.imm)
				if pc&1 != 0 {
					base = pc + cpu.PageSize // as for br
				}
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opBRAS, opBRASL:
			c.vals[n&cpu.ValMask] = r[15]
			r[in.r1] = pc + uint64(in.ln)
			pc += uint64(in.imm)
			n++
			if log != nil {
				c.beginTaken(page, pc, n)
			}
			continue
		case opBASR, opBAS:
			c.vals[n&cpu.ValMask] = r[15]
			t := r[in.r2]
			if in.op == opBAS {
				t = r[in.b] + r[in.r2] + uint64(in.imm)
			}
			r[in.r1] = pc + uint64(in.ln)
			n++
			if in.op == opBASR && in.r2 == 0 {
				pc += uint64(in.ln)
				continue
			}
			pc = t
			if t&1 != 0 {
				base = t + cpu.PageSize // the lookup raises the specification exception
			}
			if log != nil {
				c.beginTaken(page, pc, n)
			}
			continue
		case opBRCT:
			v := uint32(r[in.r1]) - 1
			lo32(&r[in.r1], v)
			n++
			if v != 0 {
				pc += uint64(in.imm)
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opBRCTG:
			r[in.r1]--
			n++
			if r[in.r1] != 0 {
				pc += uint64(in.imm)
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opBCTR, opBCTGR, opBCT, opBCTG:
			t := r[in.r2]
			if in.op == opBCT || in.op == opBCTG {
				t = r[in.b] + r[in.r2] + uint64(in.imm)
			}
			var nz bool
			if in.op == opBCTR || in.op == opBCT {
				v := uint32(r[in.r1]) - 1
				lo32(&r[in.r1], v)
				nz = v != 0
			} else {
				r[in.r1]--
				nz = r[in.r1] != 0
			}
			n++
			if nz && (in.r2 != 0 || in.op == opBCT || in.op == opBCTG) {
				pc = t
				if t&1 != 0 {
					base = t + cpu.PageSize // as for br
				}
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opBRXH, opBRXLE, opBRXHG, opBRXLG:
			n++
			if c.branchIndex(in) {
				pc += uint64(in.imm)
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opCRJ, opCGRJ, opCLRJ, opCLGRJ, opCIJ, opCGIJ, opCLIJ, opCLGIJ:
			n++
			if in.m<<c.compareOperands(in)&8 != 0 {
				pc += uint64(in.imm)
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opCRB, opCGRB, opCLRB, opCLGRB, opCIB, opCGIB, opCLIB, opCLGIB:
			n++
			if in.m<<c.compareOperands(in)&8 != 0 {
				pc = r[in.b] + uint64(in.imm)
				if pc&1 != 0 {
					base = pc + cpu.PageSize // as for br
				}
				if log != nil {
					c.beginTaken(page, pc, n)
				}
				continue
			}
			pc += uint64(in.ln)
			continue
		case opSVC:
			c.svc = uint8(in.imm)
			c.pc = pc + uint64(in.ln) // 4 or 6 as the target of ex/exrl
			return n + 1, cpu.Stop{Kind: cpu.StopSyscall}

		// Execute: the target runs in this loop at the ex's pc, with the
		// ex's length (strop.go).
		case opEX, opEXRL:
			t, twice, f := c.executeTarget(in, pc)
			if f != nil {
				c.pc = pc
				return n, stopFault(f)
			}
			c.exInst = t
			in = &c.exInst
			if twice {
				n++
				if n >= budget {
					c.exPending = true
					c.pc = pc
					return n, cpu.Stop{}
				}
			}
			c.logExecuted(log, n, in, pc)
			base = cpu.TopPage // what follows the target begins a run (at a pc the target decides)
			goto dispatch

		// Register and immediate loads.
		case opLR:
			lo32(&r[in.r1], uint32(r[in.r2]))
		case opLGR:
			r[in.r1] = r[in.r2]
		case opLGFR:
			r[in.r1] = uint64(int32(r[in.r2]))
		case opLHR:
			lo32(&r[in.r1], uint32(int16(r[in.r2])))
		case opLGHR:
			r[in.r1] = uint64(int16(r[in.r2]))
		case opLBR:
			lo32(&r[in.r1], uint32(int8(r[in.r2])))
		case opLGBR:
			r[in.r1] = uint64(int8(r[in.r2]))
		case opLLCR:
			lo32(&r[in.r1], uint32(uint8(r[in.r2])))
		case opLLGCR:
			r[in.r1] = uint64(uint8(r[in.r2]))
		case opLLHR:
			lo32(&r[in.r1], uint32(uint16(r[in.r2])))
		case opLLGHR:
			r[in.r1] = uint64(uint16(r[in.r2]))
		case opLLGFR:
			r[in.r1] = uint64(uint32(r[in.r2]))
		case opLLGTR:
			r[in.r1] = r[in.r2] & 0x7fffffff
		case opLTR:
			v := uint32(r[in.r2])
			lo32(&r[in.r1], v)
			c.cc = ccSigned32(v)
		case opLTGR:
			r[in.r1] = r[in.r2]
			c.cc = ccSigned(int64(r[in.r1]))
		case opLTGFR:
			r[in.r1] = uint64(int32(r[in.r2]))
			c.cc = ccSigned(int64(r[in.r1]))
		case opLHI, opIILF:
			lo32(&r[in.r1], uint32(in.imm))
		case opLGHI, opLGFI:
			r[in.r1] = uint64(in.imm)
		case opLLILF:
			r[in.r1] = uint64(uint32(in.imm))
		case opLLILL:
			r[in.r1] = uint64(uint16(in.imm))
		case opLLILH:
			r[in.r1] = uint64(uint16(in.imm)) << 16
		case opLLIHL:
			r[in.r1] = uint64(uint16(in.imm)) << 32
		case opLLIHH:
			r[in.r1] = uint64(uint16(in.imm)) << 48
		case opLLIHF:
			r[in.r1] = uint64(uint32(in.imm)) << 32
		case opIIHF:
			r[in.r1] = r[in.r1]&0xffffffff | uint64(uint32(in.imm))<<32
		case opIILL, opIILH, opIIHL, opIIHH:
			sh := 16 * uint(in.op-opIILL)
			r[in.r1] = r[in.r1]&^(0xffff<<sh) | uint64(uint16(in.imm))<<sh
		case opLA, opLAY:
			r[in.r1] = r[in.b] + r[in.r2] + uint64(in.imm)
		case opLARL:
			r[in.r1] = pc + uint64(in.imm)
		case opLCR:
			v, cc := sub32(0, uint32(r[in.r2]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opLCGR:
			r[in.r1], c.cc = sub64(0, r[in.r2])
		case opLCGFR:
			r[in.r1] = -uint64(int32(r[in.r2]))
			c.cc = ccSigned(int64(r[in.r1]))
		case opLNR:
			v := int32(r[in.r2])
			if v > 0 {
				v = -v
			}
			lo32(&r[in.r1], uint32(v))
			c.cc = ccSigned(int64(v))
		case opLNGR, opLNGFR:
			v := int64(r[in.r2])
			if in.op == opLNGFR {
				v = int64(int32(v))
			}
			if v > 0 {
				v = -v
			}
			r[in.r1] = uint64(v)
			c.cc = ccSigned(v)
		case opLPR:
			v, cc := loadPositive(int64(int32(r[in.r2])), 32)
			lo32(&r[in.r1], uint32(v))
			c.cc = cc
		case opLPGR:
			r[in.r1], c.cc = loadPositive(int64(r[in.r2]), 64)
		case opLPGFR:
			r[in.r1], c.cc = loadPositive(int64(int32(r[in.r2])), 64)
		case opLRVR:
			lo32(&r[in.r1], bits.ReverseBytes32(uint32(r[in.r2])))
		case opLRVGR:
			r[in.r1] = bits.ReverseBytes64(r[in.r2])

		// Loads from storage.
		case opL, opLY, opLT:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load32BE(a)
			if !ok {
				goto fault
			}
			lo32(&r[in.r1], v)
			if in.op == opLT {
				c.cc = ccSigned32(v)
			}
		case opLG, opLTG:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load64BE(a)
			if !ok {
				goto fault
			}
			r[in.r1] = v
			if in.op == opLTG {
				c.cc = ccSigned(int64(v))
			}
		case opLGF, opLTGF:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load32BE(a)
			if !ok {
				goto fault
			}
			r[in.r1] = uint64(int32(v))
			if in.op == opLTGF {
				c.cc = ccSigned(int64(int32(v)))
			}
		case opLLGF, opLLGT:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load32BE(a)
			if !ok {
				goto fault
			}
			if in.op == opLLGT {
				v &= 0x7fffffff
			}
			r[in.r1] = uint64(v)
		case opLH, opLHY, opLGH, opLLH, opLLGH:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load16BE(a)
			if !ok {
				goto fault
			}
			switch in.op {
			case opLGH:
				r[in.r1] = uint64(int16(v))
			case opLLH:
				lo32(&r[in.r1], uint32(v))
			case opLLGH:
				r[in.r1] = uint64(v)
			default:
				lo32(&r[in.r1], uint32(int16(v)))
			}
		case opLB, opLGB, opLLC, opLLGC, opIC, opICY:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			v, ok := mem.Load8(a)
			if !ok {
				goto fault
			}
			switch in.op {
			case opLB:
				lo32(&r[in.r1], uint32(int8(v)))
			case opLGB:
				r[in.r1] = uint64(int8(v))
			case opLLC:
				lo32(&r[in.r1], uint32(v))
			case opLLGC:
				r[in.r1] = uint64(v)
			default:
				r[in.r1] = r[in.r1]&^0xff | uint64(v)
			}
		case opLRV:
			v, ok := mem.Load32BE(r[in.b] + r[in.r2] + uint64(in.imm))
			if !ok {
				goto fault
			}
			lo32(&r[in.r1], bits.ReverseBytes32(v))
		case opLRVG:
			v, ok := mem.Load64BE(r[in.b] + r[in.r2] + uint64(in.imm))
			if !ok {
				goto fault
			}
			r[in.r1] = bits.ReverseBytes64(v)
		case opLRVH:
			v, ok := mem.Load16BE(r[in.b] + r[in.r2] + uint64(in.imm))
			if !ok {
				goto fault
			}
			r[in.r1] = r[in.r1]&^0xffff | uint64(bits.ReverseBytes16(v))
		case opLGRL:
			c.vals[n&cpu.ValMask] = pc + uint64(in.imm)
			v, ok := mem.Load64BE(pc + uint64(in.imm))
			if !ok {
				goto fault
			}
			r[in.r1] = v
		case opLRL, opLGFRL, opLLGFRL:
			c.vals[n&cpu.ValMask] = pc + uint64(in.imm)
			v, ok := mem.Load32BE(pc + uint64(in.imm))
			if !ok {
				goto fault
			}
			switch in.op {
			case opLRL:
				lo32(&r[in.r1], v)
			case opLGFRL:
				r[in.r1] = uint64(int32(v))
			default:
				r[in.r1] = uint64(v)
			}
		case opLHRL, opLGHRL, opLLHRL, opLLGHRL:
			c.vals[n&cpu.ValMask] = pc + uint64(in.imm)
			v, ok := mem.Load16BE(pc + uint64(in.imm))
			if !ok {
				goto fault
			}
			switch in.op {
			case opLHRL:
				lo32(&r[in.r1], uint32(int16(v)))
			case opLGHRL:
				r[in.r1] = uint64(int16(v))
			case opLLHRL:
				lo32(&r[in.r1], uint32(v))
			default:
				r[in.r1] = uint64(v)
			}
		case opLMG: // prologue/epilogue: the one-page case inline
			a := r[in.b] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			cnt := uint64(in.r3-in.r1)&15 + 1
			if a&cpu.PageMask+8*cnt > cpu.PageSize {
				if !c.loadMultiple(in) {
					goto fault
				}
				break
			}
			for i := uint64(0); i < cnt; i++ { // the first load decides for the page
				v, ok := mem.Load64BE(a + 8*i)
				if !ok {
					goto fault
				}
				r[(in.r1+uint8(i))&15] = v
			}
		case opLM, opLMY:
			if !c.loadMultiple(in) {
				goto fault
			}
		case opICM, opICMY, opICMH:
			if !c.insertChars(in) {
				goto fault
			}

		// Stores.
		case opST, opSTY:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			if !mem.Store32BE(a, uint32(r[in.r1])) {
				goto fault
			}
		case opSTG:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			if !mem.Store64BE(a, r[in.r1]) {
				goto fault
			}
		case opSTC, opSTCY:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			if !mem.Store8(a, uint8(r[in.r1])) {
				goto fault
			}
		case opSTH, opSTHY:
			a := r[in.b] + r[in.r2] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			if !mem.Store16BE(a, uint16(r[in.r1])) {
				goto fault
			}
		case opSTRV:
			if !mem.Store32BE(r[in.b]+r[in.r2]+uint64(in.imm), bits.ReverseBytes32(uint32(r[in.r1]))) {
				goto fault
			}
		case opSTRVG:
			if !mem.Store64BE(r[in.b]+r[in.r2]+uint64(in.imm), bits.ReverseBytes64(r[in.r1])) {
				goto fault
			}
		case opSTRVH:
			if !mem.Store16BE(r[in.b]+r[in.r2]+uint64(in.imm), bits.ReverseBytes16(uint16(r[in.r1]))) {
				goto fault
			}
		case opSTRL:
			c.vals[n&cpu.ValMask] = pc + uint64(in.imm)
			if !mem.Store32BE(pc+uint64(in.imm), uint32(r[in.r1])) {
				goto fault
			}
		case opSTGRL:
			c.vals[n&cpu.ValMask] = pc + uint64(in.imm)
			if !mem.Store64BE(pc+uint64(in.imm), r[in.r1]) {
				goto fault
			}
		case opSTHRL:
			c.vals[n&cpu.ValMask] = pc + uint64(in.imm)
			if !mem.Store16BE(pc+uint64(in.imm), uint16(r[in.r1])) {
				goto fault
			}
		case opSTMG:
			a := r[in.b] + uint64(in.imm)
			c.vals[n&cpu.ValMask] = a
			cnt := uint64(in.r3-in.r1)&15 + 1
			if a&cpu.PageMask+8*cnt > cpu.PageSize {
				if !c.storeMultiple(in) {
					goto fault
				}
				break
			}
			for i := uint64(0); i < cnt; i++ { // the first store decides for the page
				if !mem.Store64BE(a+8*i, r[(in.r1+uint8(i))&15]) {
					goto fault
				}
			}
		case opSTM, opSTMY:
			if !c.storeMultiple(in) {
				goto fault
			}
		case opSTCM, opSTCMY, opSTCMH:
			if !c.storeChars(in) {
				goto fault
			}
		case opMVI, opMVIY:
			if !mem.Store8(r[in.b]+uint64(in.imm), in.m) {
				goto fault
			}
		case opMVHHI:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm&0xfff)
			if !mem.Store16BE(r[in.b]+uint64(in.imm&0xfff), uint16(in.imm>>16)) {
				goto fault
			}
		case opMVHI:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm&0xfff)
			if !mem.Store32BE(r[in.b]+uint64(in.imm&0xfff), uint32(in.imm>>16)) {
				goto fault
			}
		case opMVGHI:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm&0xfff)
			if !mem.Store64BE(r[in.b]+uint64(in.imm&0xfff), uint64(in.imm>>16)) {
				goto fault
			}
		case opMVC, opXC, opNC, opOC, opCLC:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm&0xfff)
			if !c.storageToStorage(in) {
				goto fault
			}

		// Load/store on condition.
		case opLOCR:
			if c.condLogged(in.m, n) {
				lo32(&r[in.r1], uint32(r[in.r2]))
			}
		case opLOCGR:
			if c.condLogged(in.m, n) {
				r[in.r1] = r[in.r2]
			}
		case opLOCHI:
			if c.condLogged(in.m, n) {
				lo32(&r[in.r1], uint32(in.imm))
			}
		case opLOCGHI:
			if c.condLogged(in.m, n) {
				r[in.r1] = uint64(in.imm)
			}
		case opLOC:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm)
			if in.m<<c.cc&8 != 0 {
				v, ok := mem.Load32BE(r[in.b] + uint64(in.imm))
				if !ok {
					goto fault
				}
				lo32(&r[in.r1], v)
			}
		case opLOCG:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm)
			if in.m<<c.cc&8 != 0 {
				v, ok := mem.Load64BE(r[in.b] + uint64(in.imm))
				if !ok {
					goto fault
				}
				r[in.r1] = v
			}
		case opSTOC:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm)
			if in.m<<c.cc&8 != 0 && !mem.Store32BE(r[in.b]+uint64(in.imm), uint32(r[in.r1])) {
				goto fault
			}
		case opSTOCG:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm)
			if in.m<<c.cc&8 != 0 && !mem.Store64BE(r[in.b]+uint64(in.imm), r[in.r1]) {
				goto fault
			}

		// Signed add and subtract, register and immediate operands.
		case opAR:
			v, cc := add32(uint32(r[in.r1]), uint32(r[in.r2]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opARK:
			v, cc := add32(uint32(r[in.r2]), uint32(r[in.r3]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opAHI, opAFI:
			v, cc := add32(uint32(r[in.r1]), uint32(in.imm))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opAHIK:
			v, cc := add32(uint32(r[in.r3]), uint32(in.imm))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opAGR:
			r[in.r1], c.cc = add64(r[in.r1], r[in.r2])
		case opAGRK:
			r[in.r1], c.cc = add64(r[in.r2], r[in.r3])
		case opAGFR:
			r[in.r1], c.cc = add64(r[in.r1], uint64(int32(r[in.r2])))
		case opAGHI, opAGFI:
			r[in.r1], c.cc = add64(r[in.r1], uint64(in.imm))
		case opAGHIK:
			r[in.r1], c.cc = add64(r[in.r3], uint64(in.imm))
		case opSR:
			v, cc := sub32(uint32(r[in.r1]), uint32(r[in.r2]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opSRK:
			v, cc := sub32(uint32(r[in.r2]), uint32(r[in.r3]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opSGR:
			r[in.r1], c.cc = sub64(r[in.r1], r[in.r2])
		case opSGRK:
			r[in.r1], c.cc = sub64(r[in.r2], r[in.r3])
		case opSGFR:
			r[in.r1], c.cc = sub64(r[in.r1], uint64(int32(r[in.r2])))

		// Logical add and subtract, register and immediate operands.
		case opALR:
			v, cc := addL32(uint32(r[in.r1]), uint32(r[in.r2]), 0)
			lo32(&r[in.r1], v)
			c.cc = cc
		case opALRK:
			v, cc := addL32(uint32(r[in.r2]), uint32(r[in.r3]), 0)
			lo32(&r[in.r1], v)
			c.cc = cc
		case opALFI:
			v, cc := addL32(uint32(r[in.r1]), uint32(in.imm), 0)
			lo32(&r[in.r1], v)
			c.cc = cc
		case opALHSIK:
			v, cc := addL32(uint32(r[in.r3]), uint32(in.imm), 0)
			lo32(&r[in.r1], v)
			c.cc = cc
		case opALGR:
			r[in.r1], c.cc = addL64(r[in.r1], r[in.r2], 0)
		case opALGRK:
			r[in.r1], c.cc = addL64(r[in.r2], r[in.r3], 0)
		case opALGFR:
			r[in.r1], c.cc = addL64(r[in.r1], uint64(uint32(r[in.r2])), 0)
		case opALGFI:
			r[in.r1], c.cc = addL64(r[in.r1], uint64(uint32(in.imm)), 0)
		case opALGHSIK:
			r[in.r1], c.cc = addL64(r[in.r3], uint64(in.imm), 0)
		case opALCR:
			v, cc := addL32(uint32(r[in.r1]), uint32(r[in.r2]), uint32(c.cc>>1))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opALCGR:
			r[in.r1], c.cc = addL64(r[in.r1], r[in.r2], uint64(c.cc>>1))
		case opSLR:
			v, cc := subL32(uint32(r[in.r1]), uint32(r[in.r2]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opSLRK:
			v, cc := subL32(uint32(r[in.r2]), uint32(r[in.r3]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opSLFI:
			v, cc := subL32(uint32(r[in.r1]), uint32(in.imm))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opSLGR:
			r[in.r1], c.cc = subL64(r[in.r1], r[in.r2])
		case opSLGRK:
			r[in.r1], c.cc = subL64(r[in.r2], r[in.r3])
		case opSLGFR:
			r[in.r1], c.cc = subL64(r[in.r1], uint64(uint32(r[in.r2])))
		case opSLGFI:
			r[in.r1], c.cc = subL64(r[in.r1], uint64(uint32(in.imm)))
		case opSLBR:
			v, cc := addL32(uint32(r[in.r1]), ^uint32(r[in.r2]), uint32(c.cc>>1))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opSLBGR:
			r[in.r1], c.cc = addL64(r[in.r1], ^r[in.r2], uint64(c.cc>>1))

		// Arithmetic and logic with a storage operand: see aluStorage.
		case opA, opAY, opAH, opAHY, opS, opSY, opSH, opSHY, opAL, opALY, opSL, opSLY, opALC, opSLB,
			opN, opNY, opO, opOY, opX, opXY, opMS, opMSY, opMH, opMHY, opMSC,
			opC, opCY, opCH, opCHY, opCL, opCLY:
			v, ok := mem.Load32BE(r[in.b] + r[in.r2] + uint64(in.imm))
			c.vals[n&cpu.ValMask] = r[in.b] + r[in.r2] + uint64(in.imm)
			if in.op == opAH || in.op == opAHY || in.op == opSH || in.op == opSHY ||
				in.op == opMH || in.op == opMHY || in.op == opCH || in.op == opCHY {
				var h uint16
				h, ok = mem.Load16BE(r[in.b] + r[in.r2] + uint64(in.imm))
				v = uint32(int16(h))
			}
			if !ok {
				goto fault
			}
			c.alu32(in, v)
		case opAG, opAGF, opSG, opSGF, opALG, opALGF, opSLG, opSLGF, opALCG, opSLBG,
			opNG, opOG, opXG, opMSG, opMSGF, opCG, opCGF, opCGH, opCLG, opCLGF,
			opMSGC, opAGH, opSGH, opMGH:
			c.vals[n&cpu.ValMask] = r[in.b] + r[in.r2] + uint64(in.imm)
			var v uint64
			ok := true
			switch in.op {
			case opAGF, opSGF, opMSGF, opCGF:
				var w uint32
				w, ok = mem.Load32BE(r[in.b] + r[in.r2] + uint64(in.imm))
				v = uint64(int32(w))
			case opALGF, opSLGF, opCLGF:
				var w uint32
				w, ok = mem.Load32BE(r[in.b] + r[in.r2] + uint64(in.imm))
				v = uint64(w)
			case opCGH, opAGH, opSGH, opMGH:
				var h uint16
				h, ok = mem.Load16BE(r[in.b] + r[in.r2] + uint64(in.imm))
				v = uint64(int16(h))
			default:
				v, ok = mem.Load64BE(r[in.b] + r[in.r2] + uint64(in.imm))
			}
			if !ok {
				goto fault
			}
			c.alu64(in, v)

		// Multiply and divide.
		case opMSR:
			lo32(&r[in.r1], uint32(r[in.r1])*uint32(r[in.r2]))
		case opMSFI, opMHI:
			lo32(&r[in.r1], uint32(r[in.r1])*uint32(in.imm))
		case opMSGR:
			r[in.r1] *= r[in.r2]
		case opMSGFR:
			r[in.r1] *= uint64(int32(r[in.r2]))
		case opMSGFI, opMGHI:
			r[in.r1] *= uint64(in.imm)
		case opMLGR:
			hi, lo := bits.Mul64(r[in.r1+1], r[in.r2])
			r[in.r1], r[in.r1+1] = hi, lo
		case opMGRK:
			hi, lo := mulSigned128(r[in.r2], r[in.r3])
			r[in.r1], r[in.r1+1] = hi, lo
		case opMSRKC:
			v, cc := mulCC32(uint32(r[in.r2]), uint32(r[in.r3]))
			lo32(&r[in.r1], v)
			c.cc = cc
		case opMSGRKC:
			r[in.r1], c.cc = mulCC64(r[in.r2], r[in.r3])
		case opMR, opMLR, opDR, opDLR, opDLGR, opDSGR, opDSGFR:
			if !c.mulDiv(in, r[in.r2]) {
				c.pc = pc
				return n, divideFault(pc)
			}
		case opM, opMFY, opML, opD, opDL, opDSGF:
			v, ok := mem.Load32BE(r[in.b] + r[in.r2] + uint64(in.imm))
			if !ok {
				goto fault
			}
			if !c.mulDiv(in, uint64(v)) {
				c.pc = pc
				return n, divideFault(pc)
			}
		case opMLG, opDLG, opDSG, opMG:
			v, ok := mem.Load64BE(r[in.b] + r[in.r2] + uint64(in.imm))
			if !ok {
				goto fault
			}
			if !c.mulDiv(in, v) {
				c.pc = pc
				return n, divideFault(pc)
			}

		// Logical operations, register and immediate operands.
		case opNR:
			lo32(&r[in.r1], uint32(r[in.r1]&r[in.r2]))
			c.cc = ccNonzero(uint64(uint32(r[in.r1])))
		case opOR:
			lo32(&r[in.r1], uint32(r[in.r1]|r[in.r2]))
			c.cc = ccNonzero(uint64(uint32(r[in.r1])))
		case opXR:
			lo32(&r[in.r1], uint32(r[in.r1]^r[in.r2]))
			c.cc = ccNonzero(uint64(uint32(r[in.r1])))
		case opNRK:
			lo32(&r[in.r1], uint32(r[in.r2]&r[in.r3]))
			c.cc = ccNonzero(uint64(uint32(r[in.r1])))
		case opORK:
			lo32(&r[in.r1], uint32(r[in.r2]|r[in.r3]))
			c.cc = ccNonzero(uint64(uint32(r[in.r1])))
		case opXRK:
			lo32(&r[in.r1], uint32(r[in.r2]^r[in.r3]))
			c.cc = ccNonzero(uint64(uint32(r[in.r1])))
		case opNCRK, opNNRK, opNORK, opNXRK, opOCRK:
			v := uint32(logical3(in.op, r[in.r2], r[in.r3]))
			lo32(&r[in.r1], v)
			c.cc = ccNonzero(uint64(v))
		case opNCGRK, opNNGRK, opNOGRK, opNXGRK, opOCGRK:
			r[in.r1] = logical3(in.op, r[in.r2], r[in.r3])
			c.cc = ccNonzero(r[in.r1])
		case opSELR:
			if c.cond(in.m) {
				lo32(&r[in.r1], uint32(r[in.r2]))
			} else {
				lo32(&r[in.r1], uint32(r[in.r3]))
			}
		case opSELGR:
			if c.cond(in.m) {
				r[in.r1] = r[in.r2]
			} else {
				r[in.r1] = r[in.r3]
			}
		case opNGR:
			r[in.r1] &= r[in.r2]
			c.cc = ccNonzero(r[in.r1])
		case opOGR:
			r[in.r1] |= r[in.r2]
			c.cc = ccNonzero(r[in.r1])
		case opXGR:
			r[in.r1] ^= r[in.r2]
			c.cc = ccNonzero(r[in.r1])
		case opNGRK:
			r[in.r1] = r[in.r2] & r[in.r3]
			c.cc = ccNonzero(r[in.r1])
		case opOGRK:
			r[in.r1] = r[in.r2] | r[in.r3]
			c.cc = ccNonzero(r[in.r1])
		case opXGRK:
			r[in.r1] = r[in.r2] ^ r[in.r3]
			c.cc = ccNonzero(r[in.r1])
		case opNILF, opOILF, opXILF, opNIHF, opOIHF, opXIHF,
			opNILL, opNILH, opNIHL, opNIHH, opOILL, opOILH, opOIHL, opOIHH:
			c.logicalImmediate(in)
		case opNI, opNIY, opOI, opOIY, opXI, opXIY:
			a := r[in.b] + uint64(in.imm)
			v, ok := mem.Load8(a)
			if !ok {
				goto fault
			}
			switch in.op {
			case opNI, opNIY:
				v &= in.m
			case opOI, opOIY:
				v |= in.m
			default:
				v ^= in.m
			}
			if !mem.Store8(a, v) {
				goto fault
			}
			c.cc = ccNonzero(uint64(v))

		// Add immediate to storage, interlocked updates.
		case opASI, opALSI, opAGSI, opALGSI:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm)
			if !c.addStorage(in) {
				goto fault
			}
		case opCS, opCSY, opCSG, opLAA, opLAAG, opLAAL, opLAALG, opLAN, opLANG, opLAO, opLAOG, opLAX, opLAXG:
			if a := r[in.b] + uint64(in.imm); a&uint64(atomicSize(in.op)-1) != 0 {
				c.pc = pc
				return n, specFault(pc, specAlign)
			}
			if !c.interlocked(in) {
				goto fault
			}

		// Compare.
		case opCR:
			c.cc = ccCompare(int64(int32(r[in.r1])), int64(int32(r[in.r2])))
		case opCGR:
			c.cc = ccCompare(int64(r[in.r1]), int64(r[in.r2]))
		case opCGFR:
			c.cc = ccCompare(int64(r[in.r1]), int64(int32(r[in.r2])))
		case opCHI, opCFI:
			c.cc = ccCompare(int64(int32(r[in.r1])), in.imm)
		case opCGHI, opCGFI:
			c.cc = ccCompare(int64(r[in.r1]), in.imm)
		case opCLR:
			c.cc = ccCompareU(uint64(uint32(r[in.r1])), uint64(uint32(r[in.r2])))
		case opCLGR:
			c.cc = ccCompareU(r[in.r1], r[in.r2])
		case opCLGFR:
			c.cc = ccCompareU(r[in.r1], uint64(uint32(r[in.r2])))
		case opCLFI:
			c.cc = ccCompareU(uint64(uint32(r[in.r1])), uint64(uint32(in.imm)))
		case opCLGFI:
			c.cc = ccCompareU(r[in.r1], uint64(uint32(in.imm)))
		case opCLI, opCLIY:
			v, ok := mem.Load8(r[in.b] + uint64(in.imm))
			if !ok {
				goto fault
			}
			c.cc = ccCompareU(uint64(v), uint64(in.m))
		case opCLM, opCLMY:
			c.vals[n&cpu.ValMask] = r[in.b] + uint64(in.imm)
			if !c.compareChars(in) {
				goto fault
			}
		case opCHHSI, opCHSI, opCGHSI, opCLHHSI, opCLFHSI, opCLGHSI,
			opCRL, opCGRL, opCGFRL, opCLRL, opCLGRL, opCLGFRL, opCHRL, opCGHRL, opCLHRL, opCLGHRL:
			if !c.compareStorage(in, pc) {
				goto fault
			}

		// Shifts and rotates: the amount is bits 58-63 of the address.
		case opSLL:
			lo32(&r[in.r1], uint32(r[in.r1])<<((r[in.b]+uint64(in.imm))&63))
		case opSRL:
			lo32(&r[in.r1], uint32(r[in.r1])>>((r[in.b]+uint64(in.imm))&63))
		case opSLLK:
			lo32(&r[in.r1], uint32(r[in.r3])<<((r[in.b]+uint64(in.imm))&63))
		case opSRLK:
			lo32(&r[in.r1], uint32(r[in.r3])>>((r[in.b]+uint64(in.imm))&63))
		case opSRA, opSRAK:
			src := in.r1
			if in.op == opSRAK {
				src = in.r3
			}
			v := int32(r[src]) >> min((r[in.b]+uint64(in.imm))&63, 31)
			lo32(&r[in.r1], uint32(v))
			c.cc = ccSigned(int64(v))
		case opSLLG:
			r[in.r1] = r[in.r3] << ((r[in.b] + uint64(in.imm)) & 63)
		case opSRLG:
			r[in.r1] = r[in.r3] >> ((r[in.b] + uint64(in.imm)) & 63)
		case opSRAG:
			r[in.r1] = uint64(int64(r[in.r3]) >> ((r[in.b] + uint64(in.imm)) & 63))
			c.cc = ccSigned(int64(r[in.r1]))
		case opRLL:
			lo32(&r[in.r1], bits.RotateLeft32(uint32(r[in.r3]), int((r[in.b]+uint64(in.imm))&31)))
		case opRLLG:
			r[in.r1] = bits.RotateLeft64(r[in.r3], int((r[in.b]+uint64(in.imm))&63))
		case opSLA, opSLAK, opSLAG, opSLDL, opSRDL, opSLDA, opSRDA:
			c.shiftSpecial(in)

		// Bit fields, counts, test under mask.
		case opRISBG, opRISBGN:
			rot := bits.RotateLeft64(r[in.r2], int(in.r3))
			mask := uint64(in.imm)
			v := rot & mask
			if in.m&0x40 == 0 {
				v |= r[in.r1] &^ mask
			}
			r[in.r1] = v
			if in.op == opRISBG {
				c.cc = ccSigned(int64(v))
			}
		case opRXSBG: // the T bit (m&0x80): only set the condition code
			mask := uint64(in.imm)
			v := r[in.r1] ^ bits.RotateLeft64(r[in.r2], int(in.r3))&mask
			c.cc = ccNonzero(v & mask)
			if in.m&0x80 == 0 {
				r[in.r1] = v
			}
		case opROSBG:
			mask := uint64(in.imm)
			v := r[in.r1] | bits.RotateLeft64(r[in.r2], int(in.r3))&mask
			c.cc = ccNonzero(v & mask)
			if in.m&0x80 == 0 {
				r[in.r1] = v
			}
		case opRNSBG:
			mask := uint64(in.imm)
			v := r[in.r1] & (bits.RotateLeft64(r[in.r2], int(in.r3)) | ^mask)
			c.cc = ccNonzero(v & mask)
			if in.m&0x80 == 0 {
				r[in.r1] = v
			}
		case opFLOGR:
			v := r[in.r2]
			if v == 0 {
				r[in.r1], r[in.r1+1], c.cc = 64, 0, 0
			} else {
				lz := bits.LeadingZeros64(v)
				r[in.r1], r[in.r1+1], c.cc = uint64(lz), v&^(1<<(63-lz)), 2
			}
		case opPOPCNT: // per byte; M3 bit 8 (z15, qemu has it): the whole register
			v := r[in.r2]
			var out uint64
			for i := 0; i < 64; i += 8 {
				out |= uint64(bits.OnesCount8(uint8(v>>i))) << i
			}
			if in.m&8 != 0 {
				out = uint64(bits.OnesCount64(v))
			}
			r[in.r1] = out
			c.cc = ccNonzero(out)
		case opTMLL, opTMLH, opTMHL, opTMHH:
			sh := 16 * uint(in.op-opTMLL)
			c.cc = testMask16(uint16(r[in.r1]>>sh), uint16(in.imm))
		case opTM, opTMY:
			v, ok := mem.Load8(r[in.b] + uint64(in.imm))
			if !ok {
				goto fault
			}
			c.cc = testMask16(uint16(v), uint16(in.m))
			if c.cc == 2 { // storage form: mixed is 1 whatever the leftmost bit
				c.cc = 1
			}

		// String instructions, access registers, PSW/FPC extracts, the
		// facility list (strop.go).
		case opSRST, opCLST, opMVST, opSTFLE:
			var f *cpu.Fault
			switch in.op {
			case opSRST:
				f = c.searchString(in)
			case opCLST:
				f = c.compareString(in)
			case opMVST:
				f = c.moveString(in)
			default:
				f = c.storeFacilities(in)
			}
			if f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		case opMVCL, opCLCL, opMVCLE, opMVCLU, opCLCLE, opCLCLU:
			var f *cpu.Fault
			switch in.op {
			case opMVCL:
				f = c.moveLong(in)
			case opCLCL:
				f = c.compareLong(in)
			case opMVCLE, opMVCLU:
				f = c.moveLongExtended(in, in.op == opMVCLU)
			default:
				f = c.compareLongExtended(in, in.op == opCLCLU)
			}
			if f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		case opSTCK, opSTCKF, opSTCKE:
			// The clock is the machine's virtual time, which counts the
			// instructions (or cycles) of finished runs: one that is not
			// the first of its run ends the run before it, so that the
			// next run begins with the clock up to date.
			if n != 0 {
				c.exPending = in == &c.exInst
				c.pc = pc
				return n, cpu.Stop{}
			}
			if f := c.storeClock(in); f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		case opECAG:
			c.extractCacheAttribute(in)
		case opEAR:
			lo32(&r[in.r1], c.ar[in.r2])
		case opSAR:
			c.ar[in.r1] = uint32(r[in.r2])
		case opIPM:
			c.insertProgramMask(in)
		case opEFPC:
			lo32(&r[in.r1], c.fpc)
		case opSFPC:
			if f := c.setFPC(uint32(r[in.r1])); f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		case opSRNM, opSRNMB:
			if f := c.setRoundingMode(in); f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		case opLAM, opLAMY, opSTAM, opSTAMY:
			if f := c.accessMultiple(in); f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		case opLFPC, opSTFPC:
			if f := c.loadStoreFPC(in); f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}

		default:
			var f *cpu.Fault
			switch {
			case in.op >= opLD && in.op < opVL:
				f = c.fp(in)
			case in.op >= opVL && in.op < opEnd:
				f = c.vec(in)
			default:
				c.pc = pc
				return n, internalFault(pc, in)
			}
			if f != nil {
				f.PC = pc
				c.pc = pc
				return n, stopFault(f)
			}
		}
		pc += uint64(in.ln)
		n++
	}
	c.pc = pc
	return n, cpu.Stop{}

fault:
	c.pc = pc
	return n, c.memFault(pc)
}

// logValue logs the value of the n-th operation, the instruction at pc
// in marked slot in of page, and returns the instruction as decoded.
func (c *Core) logValue(in *inst, page *codePage, pc, n uint64) *inst {
	info := &pageInfos(page)[(pc&cpu.PageMask)>>1]
	c.logged = decoded(in, info)
	c.vals[n&cpu.ValMask] = c.dynamicValue(&c.logged, info, pc)
	return &c.logged
}

// beginTaken begins a logged run at pc, a taken branch's target, with the
// n-th operation, unless pc is on another page than page (where the run
// begins as the page is entered).
func (c *Core) beginTaken(page *codePage, pc, n uint64) {
	if pc&^cpu.PageMask == page.Base {
		c.log.Begin(pageInfos(page)[(pc&cpu.PageMask)>>1:], pc, n)
	}
}

// enterPage finds the decoded page for pc when execution moves to another
// page (or a branch went to an odd address, which is where that
// specification exception is raised), where a logged run begins (the
// n-th operation).
func (c *Core) enterPage(pc, n uint64) (*codePage, cpu.Stop) {
	if pc&1 != 0 {
		return nil, oddPCFault(pc)
	}
	p, f := c.icache.Page(pc)
	if f != nil {
		return nil, stopFault(f)
	}
	if c.log != nil { // a run stays on its page
		if p.Infos == nil {
			c.describePage(p)
		}
		c.log.Begin(pageInfos(p)[(pc&cpu.PageMask)>>1:], pc, n)
	}
	return p, cpu.Stop{}
}

// pageInfos is a page's descriptions as an array: slices of it from a
// masked offset need no bounds check.
func pageInfos(p *codePage) *[cpu.PageSize / 2]cpu.OpInfo {
	return (*[cpu.PageSize / 2]cpu.OpInfo)(p.Infos)
}
