package unwind

import "simrun/sim/cpu"

// Threads is the truth of a program with several threads: one Shadow
// per thread, since each thread has its own stack and its own calls.
// The kernel tells it of each context switch (Switch), and of each
// signal a handler takes and returns from (Signal, SigReturn); the
// per-instruction drivers (Shadow.Observe, Shadow.StepRetired) go to
// Cur, the running thread's.  A single-threaded program never switches:
// Cur stays the one Shadow it began with, and following it costs what
// following a Shadow costs.
type Threads struct {
	// Cur is the running thread's shadow stack, Tid its id.
	Cur *Shadow
	Tid uint64
	all []ThreadShadow // every thread seen, in order of first appearance
	by  map[uint64]int // index in all by tid
	mk  func() *Shadow
}

// ThreadShadow is one thread's truth.
type ThreadShadow struct {
	Tid uint64
	*Shadow
	// Pid is the thread's process when several ran (0: the first),
	// Program what that process ran (set by Exec and Fork's caller).
	Pid     uint64
	Program string
}

// NewThreads follows thread tid (the one running first) with first; each
// thread seen later gets a shadow stack from mk (an empty one, configured
// as first is: a new thread starts at its start routine, with no frame of
// its creator's on its own stack).
func NewThreads(tid uint64, first *Shadow, mk func() *Shadow) *Threads {
	return &Threads{Cur: first, Tid: tid, all: []ThreadShadow{{Tid: tid, Shadow: first}}, by: map[uint64]int{tid: 0}, mk: mk}
}

// Get returns thread tid's shadow stack, making it if it is new.
func (t *Threads) Get(tid uint64) *Shadow {
	if i, ok := t.by[tid]; ok {
		return t.all[i].Shadow
	}
	s := t.mk()
	t.by[tid] = len(t.all)
	t.all = append(t.all, ThreadShadow{Tid: tid, Shadow: s})
	return s
}

// Fork gives thread tid, the only thread of a new process (fork), a copy
// of the running thread's stack, as fork copies the caller's: the child
// returns through the same frames. Its counts start at zero. A child
// given a stack of its own (clone with a stack: posix_spawn's) starts
// with an empty one, as a new thread does.
func (t *Threads) Fork(tid, pid uint64, program string, ownStack bool) {
	c := t.mk()
	if !ownStack {
		c.stack = append([]shadowFrame(nil), t.Cur.stack...)
		c.sigs = append([]sigMark(nil), t.Cur.sigs...)
	}
	t.by[tid] = len(t.all)
	t.all = append(t.all, ThreadShadow{Tid: tid, Shadow: c, Pid: pid, Program: program})
}

// Exec starts thread tid (the process's pid, which execve leaves as its
// only thread) afresh on a new program: an empty stack, listed after the
// thread's truth before execve, and running now. sp is the new program's
// stack-pointer register (DWARF number): the program may be of another
// architecture than the one before.
func (t *Threads) Exec(tid uint64, program string, sp uint32) {
	s := t.mk()
	s.sp = int(sp)
	t.by[tid] = len(t.all)
	t.all = append(t.all, ThreadShadow{Tid: tid, Shadow: s, Pid: tid, Program: program})
	t.Cur, t.Tid = s, tid
}

// Switch makes tid the running thread.  The thread that ran before
// stopped at prevPC (where it resumes): a call or return it had begun
// completes there, on its own stack, before the switch.
func (t *Threads) Switch(tid, prevPC uint64) {
	if tid == t.Tid {
		return
	}
	t.Cur.settle(prevPC)
	t.Cur, t.Tid = t.Get(tid), tid
}

// All returns every thread's truth, in the order the threads were first
// seen (the main thread first).
func (t *Threads) All() []ThreadShadow { return t.all }

// Signal records the running thread's entry into a signal handler (see
// Shadow.Signal); c holds the handler's entry state.
func (t *Threads) Signal(c cpu.Core, pc, sp uint64, ra uint32) {
	t.Cur.Signal(c, pc, sp, ra)
}

// SigReturn records the running thread's rt_sigreturn.
func (t *Threads) SigReturn() { t.Cur.SigReturn() }

// Totals sums every thread's counts (MaxDepth is the deepest of them).
func (t *Threads) Totals() Shadow {
	var s Shadow
	for _, th := range t.all {
		x := th.Shadow
		s.Calls += x.Calls
		s.Returns += x.Returns
		s.MaxDepth = max(s.MaxDepth, x.MaxDepth)
		s.Unwound += x.Unwound
		s.NonLocal += x.NonLocal
		s.Abandoned += x.Abandoned
		s.Overflowed += x.Overflowed
		s.Mismatched += x.Mismatched
		s.Limit = x.Limit
		s.Signals += x.Signals
		s.SigReturns += x.SigReturns
		s.Mismatches = append(s.Mismatches, x.Mismatches...)
	}
	return s
}
