// Package s390x simulates the z/Architecture instruction set (64-bit
// addressing mode, problem state) running Linux user programs: a decoder
// for the 2-, 4- and 6-byte formats into the pre-decoded form of inst.go,
// an executor (run.go), binary floating point (fp.go), the vector facility
// (vec.go) and the s390x Linux ABI facts (arch.go).
//
// The condition code is kept eagerly, as the number 0-3 the PSW holds.
// The floating-point registers are bits 0-63 of vector registers 0-15.
package s390x

import (
	"math/bits"

	"simrun/sim/cpu"
)

// Core is a z/Architecture CPU in problem state.
type Core struct {
	r [256]uint64 // r0..r15; r[rNone] is always 0; the rest is never used
	// v is the vector registers ([0] = bits 0-63, the FPR of v0-v15; [1]
	// = bits 64-127): vOwn, or while a thread runs after SwitchThread, its
	// context's.
	v   *cpu.VecRegs
	cc  uint8 // condition code, PSW bits 18-19
	pc  uint64
	svc uint8      // the number in the last svc instruction
	ar  [16]uint32 // access registers: a0:a1 hold the thread pointer
	fpc uint32     // floating-point control: rounding mode and IEEE flags
	// lastTOD is the last clock value stck or stcke stored, which the
	// next must exceed (clock.go).
	lastTOD uint64

	// vals receives the logged values, op k's at k&cpu.ValMask; with a
	// log they are its Vals (SetLog). The hot cases store theirs whether
	// or not anything is logged (loggedInCase): cheaper than a test. (A
	// pointer: the array inside Core measured slower.)
	vals   *[cpu.LogBatch]uint64
	logged inst // the instruction of a marked slot (logValue)

	// exInst is the decoded target of an ex/exrl whose own retirement used
	// up Execute's budget; exPending says the next Execute starts with it.
	exInst    inst
	exPending bool

	// exInfos describes the executed targets for the timing log, per ex
	// site and target (an OpInfo may carry a timing block, so each must
	// stand for one instruction at one address).
	exInfos map[exKey][]cpu.OpInfo // each one description long (a run of its own in the log)

	m      *cpu.Machine
	mem    *cpu.Memory
	icache *cpu.ICache[inst]
	log    *cpu.Batch // non-nil: every instruction is logged for the timing model

	vOwn cpu.VecRegs // (v's storage when no thread's context is)
}

// codePage is a page of decoded instructions, one slot per halfword.
type codePage = cpu.CodePage[inst]

func newCore(m *cpu.Machine) cpu.Core {
	c := &Core{m: m, mem: m.Mem, vals: new([cpu.LogBatch]uint64)}
	c.v = &c.vOwn
	// Slots every 2 bytes, instructions up to 6 bytes long; invalidation
	// resets only the op, so an instruction that stores over itself still
	// has its operands.
	c.icache = cpu.NewICache(m.Mem, 1, 6, func(in *inst) { in.op = opNone })
	return c
}

func (c *Core) PC() uint64         { return c.pc }
func (c *Core) SetPC(pc uint64)    { c.pc, c.exPending = pc, false }
func (c *Core) SetStack(sp uint64) { c.r[15] = sp }

// Syscall: svc N with N > 0 is syscall N; svc 0 takes the number from r1.
// Arguments are r2..r7.
func (c *Core) Syscall() (uint64, [6]uint64) {
	nr := uint64(c.svc)
	if nr == 0 {
		nr = c.r[1]
	}
	return nr, [6]uint64{c.r[2], c.r[3], c.r[4], c.r[5], c.r[6], c.r[7]}
}

func (c *Core) SetSyscallResult(v uint64) { c.r[2] = v }

// SetLog turns logging of retired instructions on (non-nil) or off.
func (c *Core) SetLog(l *cpu.Batch) {
	c.log = l
	if l != nil {
		l.Vals = c.vals[:]
	}
	c.icache.WithInfo = l != nil
}

// SetGPR writes r0..r15 (State.GPR order), for the differential test.
func (c *Core) SetGPR(i int, v uint64) {
	if i >= 0 && i < 16 {
		c.r[i] = v
	}
}

// State copies r0..r15, the condition code and v0..v31.
func (c *Core) State(s *cpu.State) {
	userState(s, c.pc, c.r[:16], c.v, c.cc, c.fpc, c.ar)
}

// SetState sets the registers State holds (the condition code from
// State.Flags) and drops a pending execute target.
func (c *Core) SetState(s *cpu.State) {
	setUserState(s, &c.pc, c.r[:16], c.v, &c.cc, &c.fpc, &c.ar)
	c.exPending = false
}

// userState fills s from the user registers of the core or of a saved
// thread context.
func userState(s *cpu.State, pc uint64, r []uint64, v *[32][2]uint64, cc uint8, fpc uint32, ar [16]uint32) {
	s.PC = pc
	if len(s.GPR) != 16 {
		s.GPR = make([]uint64, 16)
	}
	copy(s.GPR, r)
	s.Flags = uint64(cc)
	if len(s.Vec) != 32 {
		s.Vec = make([][2]uint64, 32)
	}
	copy(s.Vec, v[:])
	s.FPCR = uint64(fpc)
	s.AR = ar
}

// setUserState is userState's inverse.
func setUserState(s *cpu.State, pc *uint64, r []uint64, v *[32][2]uint64, cc *uint8, fpc *uint32, ar *[16]uint32) {
	*pc = s.PC
	copy(r, s.GPR)
	*cc = uint8(s.Flags & 3)
	copy(v[:], s.Vec)
	*fpc = uint32(s.FPCR)
	*ar = s.AR
}

// dwarfFPR maps DWARF numbers 16-31 to floating-point registers.
var dwarfFPR = [16]uint8{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}

// Reg returns a register by DWARF number: r0-r15 are 0-15, and 16-31 are
// f0, f2, f4, f6, f1, f3, f5, f7, f8, f10, f12, f14, f9, f11, f13, f15 as
// their 64 bits.
func (c *Core) Reg(dwarf int) (uint64, bool) {
	switch {
	case dwarf >= 0 && dwarf < 16:
		return c.r[dwarf], true
	case dwarf >= 16 && dwarf < 32:
		return c.v[dwarfFPR[dwarf-16]][0], true
	}
	return 0, false
}

// decodeAt decodes the instruction at pc into its slot of p. stale reports
// that p no longer backs pc; the caller looks the page up again.
func (c *Core) decodeAt(p *codePage, pc uint64) (stale bool, f *cpu.Fault) {
	var b [6]byte
	n, stale, f := c.icache.Fetch(p, pc, b[:])
	if f != nil || stale {
		return stale, f
	}
	if n < insnLen(b[0]) {
		c.mem.Fault = cpu.MemFault{Addr: pc + uint64(n), Size: insnLen(b[0]) - n, Access: cpu.AccessExec, Unmapped: true}
		return false, &cpu.Fault{PC: pc, Kind: cpu.FaultFetch, Insn: append([]byte(nil), b[:n]...),
			Err: truncatedError{n, insnLen(b[0]), c.mem.Fault}}
	}
	in := p.Slot(pc)
	*in = decode(b[:])
	if p.Infos != nil {
		c.describeSlot(p, in, pc)
	}
	return false, nil
}

// describeSlot fills the timing description of a decoded slot. A slot
// whose logged value (a data address or a condition) Execute does not store
// in the instruction's own case is marked opLogged, its op kept in the
// description (CoreOp): Execute then logs it through dynamicValue, and no other
// instruction pays a test.
func (c *Core) describeSlot(p *codePage, in *inst, pc uint64) *cpu.OpInfo {
	info := p.Info(pc)
	if in.op == opLogged { // described already
		return info
	}
	*info = describe(in)
	if info.LogsValue() && !loggedInCase(in.op) {
		info.CoreOp, in.op = uint16(in.op), opLogged
	}
	return info
}

// decoded is the instruction of slot in (described by info): a marked
// slot's op is its description's.
func decoded(in *inst, info *cpu.OpInfo) inst {
	d := *in
	if d.op == opLogged {
		d.op = op(info.CoreOp)
	}
	return d
}

// exKey names an executed target: the ex's address and the target as
// decoded there.
type exKey struct {
	pc uint64
	in inst
}

// exInfo is the description of target in, executed by the ex at pc.
func (c *Core) exInfo(in *inst, pc uint64) []cpu.OpInfo {
	k := exKey{pc, *in}
	info := c.exInfos[k]
	if info == nil {
		if c.exInfos == nil {
			c.exInfos = map[exKey][]cpu.OpInfo{}
		}
		info = []cpu.OpInfo{describe(in)}
		info[0].Varies = true
		c.exInfos[k] = info
	}
	return info
}

// logExecuted logs the target of an ex/exrl as the n-th operation of this
// Execute, at the ex's address, in a run of its own (nothing when logging is
// off).
func (c *Core) logExecuted(log *cpu.Batch, n uint64, in *inst, pc uint64) {
	if log == nil {
		return
	}
	infos := c.exInfo(in, pc)
	log.Begin(infos, pc, n) // Execute begins the next run after the target
	if infos[0].LogsValue() {
		c.vals[n&cpu.ValMask] = c.dynamicValue(in, &infos[0], pc)
	}
}

// describePage gives a page that was decoded before logging started its
// descriptions.
func (c *Core) describePage(p *codePage) {
	for i := range p.Slots {
		if in := &p.Slots[i]; in.op != opNone {
			c.describeSlot(p, in, p.Base+uint64(i)*2)
		}
	}
}

// cond reports whether a branch mask (8 = cc0, 4 = cc1, 2 = cc2, 1 = cc3)
// selects the current condition code.
func (c *Core) cond(mask uint8) bool { return mask<<c.cc&8 != 0 }

// condLogged is cond for the n-th operation of an Execute that logs whether
// its condition held (loggedInCase): 1 or 0 goes into its value.
func (c *Core) condLogged(mask uint8, n uint64) bool {
	v := uint64(mask<<c.cc) >> 3 & 1
	c.vals[n&cpu.ValMask] = v
	return v != 0
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Condition codes of the instruction kinds.

// ccSigned: 0 zero, 1 negative, 2 positive.
func ccSigned(v int64) uint8 { return uint8(uint64(v)>>63) | b2u(v > 0)<<1 }

func ccSigned32(v uint32) uint8 { return ccSigned(int64(int32(v))) }

// ccNonzero: 0 zero, 1 not zero (logical operations).
func ccNonzero(v uint64) uint8 { return b2u(v != 0) }

// ccCompare: 0 equal, 1 first operand low, 2 high.
func ccCompare(a, b int64) uint8 { return b2u(a < b) | b2u(a > b)<<1 }

func ccCompareU(a, b uint64) uint8 { return b2u(a < b) | b2u(a > b)<<1 }

// ccLogical: add/subtract logical, bit 1 = carry (no borrow), bit 0 =
// result not zero.
func ccLogical(r uint64, carry uint64) uint8 { return b2u(r != 0) | uint8(carry)<<1 }

// add64 and sub64 return the sum or difference with the signed-arithmetic
// condition code (3 on overflow), without branches so that they inline.
func add64(a, b uint64) (uint64, uint8) {
	r := a + b
	return r, ccSigned(int64(r)) | uint8(((a^r)&(b^r))>>63)*3
}

func sub64(a, b uint64) (uint64, uint8) {
	r := a - b
	return r, ccSigned(int64(r)) | uint8(((a^b)&(a^r))>>63)*3
}

func add32(a, b uint32) (uint32, uint8) {
	r := a + b
	return r, ccSigned32(r) | uint8(((a^r)&(b^r))>>31)*3
}

func sub32(a, b uint32) (uint32, uint8) {
	r := a - b
	return r, ccSigned32(r) | uint8(((a^b)&(a^r))>>31)*3
}

// addL64 and the like are the logical forms; cin is the carry in (1 for
// subtraction without borrow).
func addL64(a, b, cin uint64) (uint64, uint8) {
	r, c := bits.Add64(a, b, cin)
	return r, ccLogical(r, c)
}

func addL32(a, b, cin uint32) (uint32, uint8) {
	r, c := bits.Add32(a, b, cin)
	return r, ccLogical(uint64(r), uint64(c))
}

func subL64(a, b uint64) (uint64, uint8) { return addL64(a, ^b, 1) }
func subL32(a, b uint32) (uint32, uint8) { return addL32(a, ^b, 1) }

// lo32 replaces bits 32-63 of a register, keeping bits 0-31.
func lo32(reg *uint64, v uint32) { *reg = *reg&^0xffffffff | uint64(v) }
