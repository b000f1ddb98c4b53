package linux

// Thread events for the tools that follow a program per thread: the
// truth of `simrun unwind check` and `record --callchain truth` keeps one
// shadow call stack per thread and a signal frame on it per handler
// running; the SPE unit's CONTEXT packets carry the running thread's id;
// perf.data gets a FORK and an EXIT record per thread. The kernel tells
// them through Process.OnThread at the few points where these change —
// never per instruction, so a run that sets no hook pays one nil check
// per context switch, clone, thread exit and signal.

// ThreadEventKind says what happened.
type ThreadEventKind uint8

const (
	// ThreadCreated: clone made thread Tid, in the process of thread
	// Prev (the caller, still running).
	ThreadCreated ThreadEventKind = iota + 1
	// ThreadSwitched: the core now runs Tid; Prev ran before it and
	// stopped at PC (0 when Prev exited), where it resumes.
	ThreadSwitched
	// ThreadGone: thread Tid exited (exit with other threads alive); the
	// next thread is switched to afterwards.
	ThreadGone
	// SignalEntered: the running thread Tid was interrupted at PC with
	// stack pointer SP and the core now holds its handler's entry state
	// (pc at the handler, the return-address register at the signal
	// trampoline, the stack pointer below the signal frame).
	SignalEntered
	// SignalReturned: rt_sigreturn (s390x: sigreturn too) restored the
	// state a handler interrupted; the core holds it.
	SignalReturned
)

// ThreadEvent is one event (see ThreadEventKind for the fields each kind sets).
type ThreadEvent struct {
	Kind      ThreadEventKind
	Tid, Prev uint64
	PC, SP    uint64
}

// Tid is the running thread's id (the main thread's is the pid, 1000).
func (p *Process) Tid() uint64 { return p.cur.tid }

// AddThreadHook makes f see every thread event, after the hooks set
// before it.
func (p *Process) AddThreadHook(f func(ThreadEvent)) {
	prev := p.OnThread
	if prev == nil {
		p.OnThread = f
		return
	}
	p.OnThread = func(e ThreadEvent) {
		prev(e)
		f(e)
	}
}

// threadEvent tells the hook, if any.
func (p *Process) threadEvent(e ThreadEvent) {
	if p.OnThread != nil {
		p.OnThread(e)
	}
}
