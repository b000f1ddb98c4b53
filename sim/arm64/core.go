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
	x       [256]uint64   // x0..x30, [31] = 0 (xzr), [32] = sp, [33] = write sink
	v       [32][2]uint64 // SIMD&FP registers: [0] = bits 63:0, [1] = bits 127:64
	nzcv    uint32        // N=8 Z=4 C=2 V=1
	pc      uint64
	fpcr    uint32
	fpsr    uint32
	tpidr   uint64
	tpidrro uint64

	// Exclusive monitor.
	exclAddr  uint64
	exclSize  uint8
	exclValid bool

	m   *cpu.Machine
	mem *cpu.Memory

	// Small direct-mapped cache of code pages by virtual page number.
	pcache [64]struct {
		vpn  uint64
		page *codePage
	}
	alignErr     uint64 // address of a pending alignment fault
	alignPending bool
}

// codePage holds the decoded slots of one 4 KiB page.
type codePage struct {
	base  uint64
	slots [cpu.PageSize / 4]inst
}

// InvalidateCode marks the slots covering [off, off+n) as undecoded. Only
// the op field is cleared, so an instruction that is executing while it
// overwrites itself still sees its own operands.
func (p *codePage) InvalidateCode(off, n int) {
	if n <= 0 {
		return
	}
	for i := off >> 2; i <= (off+n-1)>>2 && i < len(p.slots); i++ {
		p.slots[i].op = opNone
	}
}

func newCore(m *cpu.Machine) cpu.Core {
	c := &Core{m: m, mem: m.Mem}
	for i := range c.pcache {
		c.pcache[i].vpn = ^uint64(0)
	}
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

// State copies x0..x30, sp, NZCV and q0..q31.
func (c *Core) State(s *cpu.State) {
	s.PC = c.pc
	if len(s.GPR) != 32 {
		s.GPR = make([]uint64, 32)
	}
	copy(s.GPR, c.x[:31])
	s.GPR[31] = c.x[rSP]
	s.Flags = uint64(c.nzcv)
	if len(s.Vec) != 32 {
		s.Vec = make([][2]uint64, 32)
	}
	for i := range c.v {
		s.Vec[i] = [2]uint64{c.v[i][1], c.v[i][0]}
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

// codePageFor returns the decoded page holding pc, creating it on first use.
// A cached page stays valid until memory invalidates its slots; decodeAt
// then notices when the page itself was replaced.
func (c *Core) codePageFor(pc uint64) (*codePage, *cpu.Fault) {
	vpn := pc >> cpu.PageShift
	e := &c.pcache[vpn&63]
	if e.vpn == vpn {
		return e.page, nil
	}
	pg, ok := c.mem.FetchPage(pc)
	if !ok {
		return nil, &cpu.Fault{PC: pc, Kind: cpu.FaultFetch, Err: c.mem.Fault}
	}
	cp, _ := pg.Code.(*codePage)
	if cp == nil {
		cp = &codePage{base: pc &^ cpu.PageMask}
		c.mem.MarkCode(pg, cp, pc)
	}
	e.vpn, e.page = vpn, cp
	return cp, nil
}

// decodeAt decodes the word at pc into its slot of p. stale reports that p
// no longer backs pc (the page was unmapped and mapped anew); the caller
// looks the page up again.
func (c *Core) decodeAt(p *codePage, pc uint64) (stale bool, f *cpu.Fault) {
	pg, ok := c.mem.FetchPage(pc)
	if !ok {
		return false, &cpu.Fault{PC: pc, Kind: cpu.FaultFetch, Err: c.mem.Fault}
	}
	if pg.Code != cpu.CodeCache(p) {
		c.pcache[(pc>>cpu.PageShift)&63].vpn = ^uint64(0)
		return true, nil
	}
	off := pc & cpu.PageMask
	w := binary.LittleEndian.Uint32(pg.Bytes()[off:])
	p.slots[off>>2] = decode(w, pc)
	return false, nil
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
