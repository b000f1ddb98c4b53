package s390x

import "simrun/sim/cpu"

// threadContext is one guest thread's user state while another runs on
// the core (cpu.ThreadCore): the PSW's address and condition code, the
// general, vector and access registers, the FPC, and an EXECUTE target
// whose own retirement ended the thread's last run.
type threadContext struct {
	r         [16]uint64
	v         [32][2]uint64
	cc        uint8
	pc        uint64
	svc       uint8
	ar        [16]uint32
	fpc       uint32
	exInst    inst
	exPending bool
}

// SaveThread copies the running thread's state (cpu.ThreadCore).
func (c *Core) SaveThread(into any) any {
	t := c.save(into)
	cpu.SaveVecs(&c.v, &c.vOwn, &t.v)
	return t
}

// save copies the running thread's state but the vector registers into
// into, or a new context if into is not one, and returns it.
func (c *Core) save(into any) *threadContext {
	t, ok := into.(*threadContext)
	if !ok {
		t = new(threadContext)
	}
	copy(t.r[:], c.r[:16])
	t.cc, t.pc, t.svc, t.ar, t.fpc = c.cc, c.pc, c.svc, c.ar, c.fpc
	t.exInst, t.exPending = c.exInst, c.exPending
	return t
}

// LoadThread makes a saved thread's state the core's. Interlocked
// updates (cs, csg, the interlocked-access facility) complete within one
// instruction, so nothing else carries over a switch.
func (c *Core) LoadThread(ctx any) {
	t := ctx.(*threadContext)
	c.load(t)
	cpu.LoadVecs(&c.v, &c.vOwn, &t.v)
}

// load makes t's state but the vector registers the core's.
func (c *Core) load(t *threadContext) {
	copy(c.r[:16], t.r[:])
	c.cc, c.pc, c.svc, c.ar, c.fpc = t.cc, t.pc, t.svc, t.ar, t.fpc
	c.exInst, c.exPending = t.exInst, t.exPending
}

// SwitchThread saves the running thread into from (unless save is false)
// and makes to the running one (cpu.ThreadCore; nothing here outlives a
// switch, so resuming is loading). The vector registers, most of what a
// switch would copy, stay in to's storage while it runs.
func (c *Core) SwitchThread(from any, save bool, to any, resume bool) any {
	var fv *cpu.VecRegs
	if save {
		f := c.save(from)
		from, fv = f, &f.v
	}
	t := to.(*threadContext)
	cpu.SwitchVecs(&c.v, fv, &t.v)
	c.load(t)
	return from
}

// SetTLS sets the thread pointer in access registers a0 (high word) and
// a1 (low word), as clone's CLONE_SETTLS does on s390x.
func (c *Core) SetTLS(tls uint64) { c.ar[0], c.ar[1] = uint32(tls>>32), uint32(tls) }

var _ cpu.ThreadCore = (*Core)(nil)

// ContextState shows a saved context as State shows the core
// (cpu.ContextStater); the thread pointer is a0:a1.
func (c *Core) ContextState(ctx any, s *cpu.State) uint64 {
	t := ctx.(*threadContext)
	userState(s, t.pc, t.r[:], &t.v, t.cc, t.fpc, t.ar)
	return uint64(t.ar[0])<<32 | uint64(t.ar[1])
}

// SetContextState sets a saved context's registers from s, as SetState
// sets the core's (a pending execute target is dropped).
func (c *Core) SetContextState(ctx any, s *cpu.State) {
	t := ctx.(*threadContext)
	setUserState(s, &t.pc, t.r[:], &t.v, &t.cc, &t.fpc, &t.ar)
	t.exPending = false
}

var _ cpu.ContextStater = (*Core)(nil)

// checkpoint is a threadContext with the clock value stck last stored
// (cpu.Checkpointer).
type checkpoint struct {
	t       threadContext
	lastTOD uint64
}

// Checkpoint saves the core's whole state between instructions.
func (c *Core) Checkpoint(into any) any {
	k, ok := into.(*checkpoint)
	if !ok {
		k = new(checkpoint)
	}
	c.SaveThread(&k.t)
	k.lastTOD = c.lastTOD
	return k
}

// Rewind sets the core back to a Checkpoint.
func (c *Core) Rewind(ctx any) {
	k := ctx.(*checkpoint)
	c.LoadThread(&k.t)
	c.lastTOD = k.lastTOD
}

var _ cpu.Checkpointer = (*Core)(nil)
