package arm64

import (
	"math/bits"

	"simrun/sim/cpu"
)

// threadContext is one guest thread's user state while another runs on
// the core (cpu.ThreadCore): the general, SIMD&FP and system registers
// EL0 sees. Pointer-authentication keys stay with the core: Linux gives
// a new thread its parent's keys, and every thread here is one's.
type threadContext struct {
	x              [34]uint64 // x0..x30, xzr, sp, the write sink
	v              [32][2]uint64
	nzcv           uint32
	fpcr, fpsr     uint32
	pc             uint64
	tpidr, tpidrro uint64
	// the exclusive monitor, for ResumeThread
	exclAddr  uint64
	exclSize  uint8
	exclValid bool
	exclVal   [2]uint64
}

// SaveThread copies the running thread's state (cpu.ThreadCore).
func (c *Core) SaveThread(into any) any {
	t := c.save(into)
	cpu.SaveVecs(&c.v, &c.vOwn, &t.v)
	return t
}

// save copies the running thread's state but the SIMD&FP registers into
// into, or a new context if into is not one, and returns it.
func (c *Core) save(into any) *threadContext {
	t, ok := into.(*threadContext)
	if !ok {
		t = new(threadContext)
	}
	copy(t.x[:], c.x[:len(t.x)])
	t.nzcv, t.fpcr, t.fpsr = c.nzcv, c.fpcr, c.fpsr
	t.pc, t.tpidr, t.tpidrro = c.pc, c.tpidr, c.tpidrro
	t.exclAddr, t.exclSize, t.exclValid, t.exclVal = c.exclAddr, c.exclSize, c.exclValid, c.exclVal
	return t
}

// LoadThread makes a saved thread's state the core's and clears the
// exclusive monitor: a context switch passes through the kernel, whose
// exception return clears it (Arm ARM D1.2, ClearExclusiveLocal on ERET),
// so a store-exclusive after a switch fails and its loop retries.
func (c *Core) LoadThread(ctx any) {
	t := ctx.(*threadContext)
	c.load(t)
	cpu.LoadVecs(&c.v, &c.vOwn, &t.v)
}

// load makes t's state but the SIMD&FP registers the core's, as
// LoadThread says.
func (c *Core) load(t *threadContext) {
	copy(c.x[:len(t.x)], t.x[:])
	c.nzcv, c.fpcr, c.fpsr = t.nzcv, t.fpcr, t.fpsr
	c.pc, c.tpidr, c.tpidrro = t.pc, t.tpidr, t.tpidrro
	c.exclAddr, c.exclSize, c.exclValid, c.exclVal = 0, 0, false, [2]uint64{}
	c.alignPending = false
}

// SwitchThread saves the running thread into from (unless save is false)
// and makes to the running one, resumed with resume (cpu.ThreadCore). The
// SIMD&FP registers, half of what a switch would copy, stay in to's
// storage while it runs.
func (c *Core) SwitchThread(from any, save bool, to any, resume bool) any {
	var fv *cpu.VecRegs
	if save {
		f := c.save(from)
		from, fv = f, &f.v
	}
	t := to.(*threadContext)
	cpu.SwitchVecs(&c.v, fv, &t.v)
	c.load(t)
	if resume {
		c.resume(t)
	}
	return from
}

// ResumeThread is LoadThread for a thread that goes on on a core that
// ran nothing else since it stopped (cpu.Resumer: with several CPUs, the
// other cores ran meanwhile, but no exception return cleared this core's
// local monitor).
func (c *Core) ResumeThread(ctx any) {
	c.LoadThread(ctx)
	c.resume(ctx.(*threadContext))
}

// resume arms the exclusive monitor again as t left it, unless the bytes
// it marks no longer hold what the load-exclusive read: another core's
// store to them clears the global monitor (Arm ARM B2.9). Like
// qemu-user's store-exclusive, it compares values: a store of the same
// value back goes unseen.
func (c *Core) resume(t *threadContext) {
	if !t.exclValid {
		return
	}
	var now [2]uint64
	ok := true
	switch t.exclSize {
	case 16:
		now[0], now[1], ok = c.loadPair(t.exclAddr, 3)
	default:
		now[0], ok = c.loadN(t.exclAddr, uint8(bits.TrailingZeros8(t.exclSize)))
	}
	if ok && now == t.exclVal {
		c.exclAddr, c.exclSize, c.exclValid, c.exclVal = t.exclAddr, t.exclSize, true, t.exclVal
	}
}

var _ cpu.Resumer = (*Core)(nil)

// SetTLS sets TPIDR_EL0, as clone's CLONE_SETTLS does.
func (c *Core) SetTLS(tls uint64) { c.tpidr = tls }

var _ cpu.ThreadCore = (*Core)(nil)

// ContextState shows a saved context as State shows the core
// (cpu.ContextStater), and returns its TPIDR_EL0.
func (c *Core) ContextState(ctx any, s *cpu.State) uint64 {
	t := ctx.(*threadContext)
	userState(s, t.pc, t.x[:], &t.v, t.nzcv, t.fpsr, t.fpcr)
	return t.tpidr
}

// SetContextState sets a saved context's registers from s, as SetState
// sets the core's.
func (c *Core) SetContextState(ctx any, s *cpu.State) {
	t := ctx.(*threadContext)
	setUserState(s, &t.pc, t.x[:], &t.v, &t.nzcv, &t.fpsr, &t.fpcr)
}

var _ cpu.ContextStater = (*Core)(nil)

// checkpoint is a threadContext with what only the core holds across
// instructions (cpu.Checkpointer).
type checkpoint struct {
	t            threadContext
	exclAddr     uint64
	exclSize     uint8
	exclValid    bool
	alignErr     uint64
	alignPending bool
}

// Checkpoint saves the core's whole state between instructions.
func (c *Core) Checkpoint(into any) any {
	k, ok := into.(*checkpoint)
	if !ok {
		k = new(checkpoint)
	}
	c.SaveThread(&k.t)
	k.exclAddr, k.exclSize, k.exclValid = c.exclAddr, c.exclSize, c.exclValid
	k.alignErr, k.alignPending = c.alignErr, c.alignPending
	return k
}

// Rewind sets the core back to a Checkpoint.
func (c *Core) Rewind(ctx any) {
	k := ctx.(*checkpoint)
	c.LoadThread(&k.t)
	c.exclAddr, c.exclSize, c.exclValid, c.exclVal = k.exclAddr, k.exclSize, k.exclValid, k.t.exclVal
	c.alignErr, c.alignPending = k.alignErr, k.alignPending
}

var _ cpu.Checkpointer = (*Core)(nil)
