package arm64

import "simrun/sim/cpu"

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
}

// SaveThread copies the running thread's state (cpu.ThreadCore).
func (c *Core) SaveThread(into any) any {
	t, ok := into.(*threadContext)
	if !ok {
		t = new(threadContext)
	}
	copy(t.x[:], c.x[:len(t.x)])
	t.v = c.v
	t.nzcv, t.fpcr, t.fpsr = c.nzcv, c.fpcr, c.fpsr
	t.pc, t.tpidr, t.tpidrro = c.pc, c.tpidr, c.tpidrro
	return t
}

// LoadThread makes a saved thread's state the core's and clears the
// exclusive monitor: a context switch passes through the kernel, whose
// exception return clears it (Arm ARM D1.2, ClearExclusiveLocal on ERET),
// so a store-exclusive after a switch fails and its loop retries.
func (c *Core) LoadThread(ctx any) {
	t := ctx.(*threadContext)
	copy(c.x[:len(t.x)], t.x[:])
	c.v = t.v
	c.nzcv, c.fpcr, c.fpsr = t.nzcv, t.fpcr, t.fpsr
	c.pc, c.tpidr, c.tpidrro = t.pc, t.tpidr, t.tpidrro
	c.exclValid = false
	c.alignPending = false
}

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
	c.exclAddr, c.exclSize, c.exclValid = k.exclAddr, k.exclSize, k.exclValid
	c.alignErr, c.alignPending = k.alignErr, k.alignPending
}

var _ cpu.Checkpointer = (*Core)(nil)
