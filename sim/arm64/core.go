// Package arm64 simulates the A64 instruction set of an Armv8 CPU running
// Linux user programs: a decoder into the pre-decoded form of inst.go, an
// executor (run.go), scalar FP and AdvSIMD, and the arm64 Linux ABI facts.
package arm64

import (
	"encoding/binary"
	"math/bits"

	"simrun/sim/cpu"
)

// Core is an A64 CPU at EL0.
type Core struct {
	x [256]uint64 // x0..x30, [31] = 0 (xzr), [32] = sp, [33] = write sink
	// v is the SIMD&FP registers ([0] = bits 63:0, [1] = bits 127:64):
	// vOwn, or while a thread runs after SwitchThread, its context's.
	v       *cpu.VecRegs
	nzcv    uint32 // N=8 Z=4 C=2 V=1
	pc      uint64
	fpcr    uint32
	fpsr    uint32
	tpidr   uint64
	tpidrro uint64

	// vals receives the logged values, op k's at k&cpu.ValMask; with a
	// log they are its Vals (SetLog). The hot cases store theirs whether
	// or not anything is logged (loggedInCase): cheaper than a test. (A
	// pointer: the array inside Core measured slower.)
	vals   *[cpu.LogBatch]uint64
	logged inst // the instruction of a marked slot (logValue)

	// Exclusive monitor; exclVal holds the exclSize bytes the
	// load-exclusive read (ResumeThread).
	exclAddr  uint64
	exclSize  uint8
	exclValid bool
	exclVal   [2]uint64

	m      *cpu.Machine
	mem    *cpu.Memory
	icache *cpu.ICache[inst]
	log    *cpu.Batch // non-nil: every instruction is logged for the timing model

	alignErr     uint64 // address of a pending alignment fault
	alignPending bool

	pa *pauthState // pointer authentication; nil: off (pauth.go)

	vOwn cpu.VecRegs // (v's storage when no thread's context is)
}

// codePage is a page of decoded instructions, one slot per word.
type codePage = cpu.CodePage[inst]

func newCore(m *cpu.Machine) cpu.Core {
	c := &Core{m: m, mem: m.Mem, vals: new([cpu.LogBatch]uint64)}
	c.v = &c.vOwn
	m.Mem.TBI = true // Linux sets TCR_EL1.TBI0 for user space
	// Clearing only the op lets an instruction that overwrites itself
	// finish with its operands.
	c.icache = cpu.NewICache(m.Mem, 2, 4, func(in *inst) { in.op = opNone })
	return c
}

func (c *Core) PC() uint64         { return c.pc }
func (c *Core) SetPC(pc uint64)    { c.pc = pc }
func (c *Core) SetStack(sp uint64) { c.x[rSP] = sp }

// Syscall: number in x8, arguments x0..x5.
func (c *Core) Syscall() (uint64, [6]uint64) {
	return c.x[8], [6]uint64{c.x[0], c.x[1], c.x[2], c.x[3], c.x[4], c.x[5]}
}

func (c *Core) SetSyscallResult(v uint64) { c.x[0] = v }

// SetLog turns logging of retired instructions on (non-nil) or off.
func (c *Core) SetLog(l *cpu.Batch) {
	c.log = l
	if l != nil {
		l.Vals = c.vals[:]
	}
	c.icache.WithInfo = l != nil
}

// State copies x0..x30, sp, NZCV and q0..q31.
func (c *Core) State(s *cpu.State) {
	userState(s, c.pc, c.x[:], c.v, c.nzcv, c.fpsr, c.fpcr)
}

// SetState sets the registers State holds and clears the exclusive
// monitor, as an exception return does (Arm ARM D1.2, ClearExclusiveLocal
// on ERET).
func (c *Core) SetState(s *cpu.State) {
	setUserState(s, &c.pc, c.x[:], c.v, &c.nzcv, &c.fpsr, &c.fpcr)
	c.exclValid = false
}

// userState fills s from the user registers of the core or of a saved
// thread context: x holds x0..x30 and sp at rSP, v the q registers.
func userState(s *cpu.State, pc uint64, x []uint64, v *[32][2]uint64, nzcv, fpsr, fpcr uint32) {
	s.PC = pc
	if len(s.GPR) != 32 {
		s.GPR = make([]uint64, 32)
	}
	copy(s.GPR, x[:31])
	s.GPR[31] = x[rSP]
	s.Flags = uint64(nzcv)
	s.FPSR, s.FPCR = uint64(fpsr), uint64(fpcr)
	if len(s.Vec) != 32 {
		s.Vec = make([][2]uint64, 32)
	}
	for i := range v {
		s.Vec[i] = [2]uint64{v[i][1], v[i][0]}
	}
}

// setUserState is userState's inverse. Only the FPCR and FPSR bits
// simrun implements are taken (writeSysReg).
func setUserState(s *cpu.State, pc *uint64, x []uint64, v *[32][2]uint64, nzcv, fpsr, fpcr *uint32) {
	*pc = s.PC
	for i := 0; i < 31 && i < len(s.GPR); i++ {
		x[i] = s.GPR[i]
	}
	if len(s.GPR) > 31 {
		x[rSP] = s.GPR[31]
	}
	*nzcv = uint32(s.Flags & 15)
	*fpsr, *fpcr = uint32(s.FPSR)&fpsrMask, uint32(s.FPCR)&(fpcrDN|fpcrFZ)
	for i := 0; i < 32 && i < len(s.Vec); i++ {
		v[i] = [2]uint64{s.Vec[i][1], s.Vec[i][0]}
	}
}

// SetGPR writes State.GPR[i] (x0-x30, 31 = sp), for the differential
// test.
func (c *Core) SetGPR(i int, v uint64) {
	switch {
	case i >= 0 && i <= 30:
		c.x[i] = v
	case i == 31:
		c.x[rSP] = v
	}
}

// Reg returns a register by DWARF number (x0-x30 = 0-30, sp = 31,
// v0-v31 = 64-95 as their low 64 bits).
func (c *Core) Reg(dwarf int) (uint64, bool) {
	switch {
	case dwarf >= 0 && dwarf <= 30:
		return c.x[dwarf], true
	case dwarf == 31:
		return c.x[rSP], true
	case dwarf >= 64 && dwarf < 96:
		return c.v[dwarf-64][0], true
	}
	return 0, false
}

// X returns general register n (31 = sp) for tests.
func (c *Core) X(n int) uint64 {
	if n == 31 {
		return c.x[rSP]
	}
	return c.x[n&31]
}

// decodeAt decodes the word at pc into its slot of p. stale reports that p
// no longer backs pc; the caller looks the page up again.
func (c *Core) decodeAt(p *codePage, pc uint64) (stale bool, f *cpu.Fault) {
	var b [4]byte
	n, stale, f := c.icache.Fetch(p, pc, b[:])
	if f != nil || stale {
		return stale, f
	}
	if n < 4 {
		return false, &cpu.Fault{PC: pc, Kind: cpu.FaultFetch, Err: c.mem.Fault}
	}
	in := p.Slot(pc)
	*in = decode(binary.LittleEndian.Uint32(b[:]), pc)
	if c.pa != nil {
		*in = decodePAuth(binary.LittleEndian.Uint32(b[:]), *in)
	}
	if p.Infos != nil {
		c.describeSlot(p, in, pc)
	}
	return false, nil
}

// describeSlot fills the timing description of a decoded slot. A slot
// whose logged value Execute does not store in the instruction's own case is
// marked opLogged, its op kept in the description (CoreOp): Execute then
// logs it through dynamicValue, and no other instruction pays a test.
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

// describePage gives a page that was decoded before logging started its
// descriptions.
func (c *Core) describePage(p *codePage) {
	for i := range p.Slots {
		if in := &p.Slots[i]; in.op != opNone {
			c.describeSlot(p, in, p.Base+uint64(i)*4)
		}
	}
}

// condHolds[cond] has bit nzcv set when the condition holds for those flags.
var condHolds = func() (t [16]uint16) {
	for cond := 0; cond < 16; cond++ {
		for f := 0; f < 16; f++ {
			n, z, cf, v := f&8 != 0, f&4 != 0, f&2 != 0, f&1 != 0
			var r bool
			switch cond >> 1 {
			case 0:
				r = z
			case 1:
				r = cf
			case 2:
				r = n
			case 3:
				r = v
			case 4:
				r = cf && !z
			case 5:
				r = n == v
			case 6:
				r = n == v && !z
			case 7:
				r = true
			}
			if cond&1 == 1 && cond != 15 {
				r = !r
			}
			if r {
				t[cond] |= 1 << f
			}
		}
	}
	return
}()

func (c *Core) cond(cc uint8) bool { return condHolds[cc&15]>>c.nzcv&1 != 0 }

// condLogged is cond for the n-th operation of an Execute that logs whether
// its condition held (loggedInCase): 1 or 0 goes into its value.
func (c *Core) condLogged(cc uint8, n uint64) bool {
	v := condHolds[cc&15] >> c.nzcv & 1
	c.vals[n&cpu.ValMask] = uint64(v)
	return v != 0
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// Flag computation: every add/sub is a + b + carry in the architecture's
// AddWithCarry form.
func flags64(a, b, r, carry uint64) uint32 {
	return uint32(r>>63)<<3 | b2u(r == 0)<<2 | uint32(carry)<<1 | uint32(((a^r)&(b^r))>>63)
}

func flags32(a, b, r, carry uint32) uint32 {
	return (r>>31)<<3 | b2u(r == 0)<<2 | carry<<1 | ((a^r)&(b^r))>>31
}

func addFlags64(a, b, cin uint64) (uint64, uint32) {
	r, c := bits.Add64(a, b, cin)
	return r, flags64(a, b, r, c)
}

func addFlags32(a, b, cin uint32) (uint32, uint32) {
	r, c := bits.Add32(a, b, cin)
	return r, flags32(a, b, r, c)
}

func logicFlags64(r uint64) uint32 { return uint32(r>>63)<<3 | b2u(r == 0)<<2 }
func logicFlags32(r uint32) uint32 { return (r>>31)<<3 | b2u(r == 0)<<2 }

// Shift types of shifted-register operands.
const (
	shLSL = 0
	shLSR = 1
	shASR = 2
	shROR = 3
)

func shift64(v uint64, typ, amt uint8) uint64 {
	switch typ {
	case shLSL:
		return v << amt
	case shLSR:
		return v >> amt
	case shASR:
		return uint64(int64(v) >> amt)
	}
	return bits.RotateLeft64(v, -int(amt))
}

func shift32(v uint64, typ, amt uint8) uint32 {
	w := uint32(v)
	switch typ {
	case shLSL:
		return w << amt
	case shLSR:
		return w >> amt
	case shASR:
		return uint32(int32(w) >> amt)
	}
	return bits.RotateLeft32(w, -int(amt))
}

// extend applies an extended-register option (uxtb..sxtx) and shift.
func extend(v uint64, option, amt uint8) uint64 {
	switch option {
	case 0:
		v = uint64(uint8(v))
	case 1:
		v = uint64(uint16(v))
	case 2:
		v = uint64(uint32(v))
	case 4:
		v = uint64(int8(v))
	case 5:
		v = uint64(int16(v))
	case 6:
		v = uint64(int32(v))
	}
	return v << amt
}
