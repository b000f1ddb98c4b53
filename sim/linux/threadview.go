package linux

import "simrun/sim/cpu"

// A view of the process's threads for a debugger and for core dumps:
// their ids, each one's registers (the running thread's from the core,
// the others' from the context the core saved when they were switched
// out) and the instructions each retired. Reading never changes the
// running thread or the schedule.

// visibleTid is the tid the program knows t by (the main thread's is
// the process id, AdoptSelfID's alias included).
func (p *Process) visibleTid(t *thread) uint64 {
	if t.tid == p.pid {
		return p.selfPID()
	}
	return t.tid
}

// ThreadIDs lists the live threads' ids in tid order.
func (p *Process) ThreadIDs() []uint64 {
	ids := make([]uint64, len(p.threads))
	for i, t := range p.threads {
		ids[i] = p.visibleTid(t)
	}
	return ids
}

// CurrentTid is the id of the thread the core runs.
func (p *Process) CurrentTid() uint64 { return p.visibleTid(p.cur) }

// ThreadInsns is the number of instructions thread tid has retired (0
// for a tid that is not a live thread).
func (p *Process) ThreadInsns(tid uint64) uint64 {
	t := p.threadByTid(tid)
	if t == nil {
		return 0
	}
	n := t.insns
	if t == p.cur {
		n += p.Insns - p.runStart
	}
	return n
}

// ThreadState reads thread tid's registers into st and returns its thread
// pointer; ok is false for a tid that is not a live thread, or a core
// that cannot show a saved context.
func (p *Process) ThreadState(tid uint64, st *cpu.State) (tls uint64, ok bool) {
	t := p.threadByTid(tid)
	cs, isCS := p.Core.(cpu.ContextStater)
	tc, isTC := p.Core.(cpu.ThreadCore)
	if t == nil || !isCS || !isTC {
		return 0, false
	}
	ctx := t.ctx
	if t == p.cur {
		ctx = tc.SaveThread(nil) // a copy: the core is not touched
	}
	if ctx == nil {
		return 0, false
	}
	return cs.ContextState(ctx, st), true
}

// SetThreadState sets the registers of thread tid, which is not the
// running one (the core's own registers are set through the core);
// false if it is not a live thread that is switched out.
func (p *Process) SetThreadState(tid uint64, st *cpu.State) bool {
	t := p.threadByTid(tid)
	cs, ok := p.Core.(cpu.ContextStater)
	if t == nil || t == p.cur || t.ctx == nil || !ok {
		return false
	}
	cs.SetContextState(t.ctx, st)
	t.pc = st.PC
	return true
}

// Comm is the program's name as /proc/self/comm shows it (at most 15
// bytes).
func (p *Process) Comm() string { return p.comm() }

// LockScheduler makes the scheduler run only thread tid while it can
// run — a debugger's scheduler locking (gdb's set scheduler-locking) —
// switching to it now if it is not running; 0 unlocks. A locked thread
// that waits (a futex, a pipe) lets the others run until it wakes: the
// machine cannot stay idle while the thread waits on one of them. false
// for a tid that is not a live thread.
func (p *Process) LockScheduler(tid uint64) bool {
	if tid == 0 {
		p.locked = nil
		return true
	}
	t := p.threadByTid(tid)
	if t == nil {
		return false
	}
	p.locked = t
	if t != p.cur && t.state == threadRunnable && !p.sys.multi() {
		p.switchTo(t, false)
		p.setSlice()
	}
	return true
}
