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

	// The process events below go to the System's hooks only (see
	// System.AddHook), with the process they are about.

	// ProcessForked: fork (clone without CLONE_VM, vfork) made the
	// process, whose only thread is Tid (its pid), a copy of the process
	// of thread Prev (the caller, still running). Its machine is new and
	// shares the parent's timing model (cpu.Machine.ShareTiming). SP is
	// the stack clone gave the child, 0 when the child runs on the
	// caller's stack (no stack given, or the caller's own stack pointer:
	// glibc's arm64 vfork), so it returns through the caller's frames.
	ProcessForked
	// ProcessExeced: execve gave the process a new program on a new
	// machine (sharing the old one's timing model); Tid, its pid, is its
	// only thread and runs next, Prev called execve.
	ProcessExeced
	// ProcessExited: the process ended (a zombie now, or reaped); Tid is
	// the thread that ran last.
	ProcessExited
	// ProcessSwitched: the core now runs thread Tid of the process, after
	// thread Prev of another process, which stopped at PC (0 when that
	// process ended). A ThreadSwitched within the process may follow at
	// once.
	ProcessSwitched
	// CodeMapped: the process mapped a file with PROT_EXEC; PC is the
	// mapping's start (the last of Process.CodeMaps).
	CodeMapped
	// HostExeced: execve made the process run a program of the host
	// (hostproc.go), which simrun does not simulate: its threads are
	// gone, Prev called execve; the process keeps its pid until the host
	// program ends (a ProcessExited then).
	HostExeced
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

// threadEvent tells the hooks, if any: the process's, then the system's.
func (p *Process) threadEvent(e ThreadEvent) {
	if p.OnThread != nil {
		p.OnThread(e)
	}
	if p.sys != nil && p.sys.onEvent != nil {
		p.sys.onEvent(p, e)
	}
}

// AddHook makes f see every thread event of every process of the run,
// and the process events (ProcessForked, ...), after the hooks set before
// it. Like the process's hooks, it costs nothing per instruction.
func (s *System) AddHook(f func(*Process, ThreadEvent)) {
	prev := s.onEvent
	if prev == nil {
		s.onEvent = f
		return
	}
	s.onEvent = func(p *Process, e ThreadEvent) {
		prev(p, e)
		f(p, e)
	}
}

// processEvent tells the system's hooks, if any.
func (s *System) processEvent(p *Process, e ThreadEvent) {
	if s.onEvent != nil {
		s.onEvent(p, e)
	}
}

// Parent is the process that forked p (nil for the first process, or
// once its parent ended).
func (p *Process) Parent() *Process { return p.parent }

// Ended reports whether the process has ended.
func (p *Process) Ended() bool { return p.ended }
