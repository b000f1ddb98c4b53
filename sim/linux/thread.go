package linux

import (
	"fmt"
	"slices"
	"strings"

	"simrun/sim/cpu"
)

// Threads and the deterministic scheduler.
//
// A process's threads share its memory, descriptors and signal actions
// and run in turn on the machine's one core: the running thread's user
// state is in the core, every other thread's in a context the core saved
// (cpu.ThreadCore: registers, the thread pointer — TPIDR_EL0 on arm64,
// a0:a1 on s390x — and, on arm64, a cleared exclusive monitor at each
// switch). Each thread has its own signal mask, pending signals and
// alternate stack (sigThread) and its own clear_child_tid address.
//
// The main thread's tid is the pid, 1000; clone gives 1001, 1002, ... in
// creation order, never reused. The running thread runs until it blocks
// (a futex wait), yields (sched_yield), exits, or has retired
// Config.Quantum instructions (DefaultQuantum unless set); the next
// thread is the first runnable one after it in tid order, wrapping
// around (round robin). Everything is decided by retired-instruction
// counts and syscalls, so the same program with the same inputs and
// quantum runs the same interleaving: the same output and instruction
// count, run after run.
//
// The quantum only bounds the budget the machine hands the core
// (Machine.SetSliceEnd), and only while more than one thread exists: a
// single-threaded run pays nothing for the scheduler.
//
// A call that must wait for another thread — a read from an empty pipe
// whose write end is open, a write to a full one, a poll with nothing
// ready — blocks its thread with the pc back on the syscall instruction;
// when any other thread completes a syscall the waiter becomes runnable
// and runs the call again. A signal ends such a wait as Linux's restart
// rules say (timer.go).
//
// Timed waits use the virtual clock (CLOCK_MONOTONIC as
// clock_gettime reports it). A waiter whose deadline has passed is woken
// (a futex wait with ETIMEDOUT) at the next scheduling point; when every
// thread waits and one has a deadline or a wall timer is armed, virtual
// time jumps to the earliest of them (Process.clockOff), as an idle
// machine's clock would run on. Sleeps, signal waits and timers are in
// timer.go. When every thread waits and nothing is pending the program
// can never continue:
// the run ends with a deadlock fault listing each thread's tid, state, pc
// and futex, with status 128+SIGKILL (137), as a watchdog killing a hung
// process would leave it.

// DefaultQuantum is the number of retired instructions a thread runs
// before the scheduler switches to the next runnable one: about 10 µs of
// guest time at 1 ns per instruction, short enough that spinning threads
// hand over quickly and long enough that switches cost little.
const DefaultQuantum = 10000

// threadState is what a thread is doing.
type threadState uint8

const (
	threadRunnable threadState = iota // running or ready to run
	threadFutex                       // waiting on a futex word
	threadIO                          // waiting for a pipe (or poll) another thread may serve
	threadWait                        // sleeping or waiting for a signal (timer.go)
	threadExited
)

// thread is one guest thread.
type thread struct {
	tid      uint64
	ctx      any    // saved user state while another thread runs
	pc       uint64 // its pc when it was switched out
	sig      *sigThread
	state    threadState
	clearTid uint64 // set_tid_address / CLONE_CHILD_CLEARTID
	// robustList is the head set_robust_list registered (robust.go).
	robustList uint64

	// A futex wait: the word's address, the wake bitset, whether it is a
	// priority-inheritance lock (LOCK_PI), the order it began in, and
	// its deadline on the monotonic clock (hasDeadline).
	futex       uint64
	bitset      uint32
	pi          bool
	waitSeq     uint64
	deadline    uint64
	hasDeadline bool

	// result is the return value of the syscall the thread waits in,
	// written to its registers when it next runs (hasResult).
	result    uint64
	hasResult bool

	insns uint64 // instructions retired while it ran (up to its last switch)
	nice  int8   // setpriority's value, -20..19 (priority.go)

	// With Config.CPUs > 1 (cores.go): the core the thread runs on, the
	// cores it may run on (sched_setaffinity's mask), and the virtual
	// time it was last switched out or created at (it never starts
	// earlier).
	core     int
	affinity uint64
	readyAt  uint64
	// wasRunnable: runnable at the last scheduling decision (noteWakes)
	wasRunnable bool

	fifoWait *fifoWait // an open of a FIFO waiting for the other end (fifo.go)

	ioWhat string // what a threadIO wait waits for
	// ioRestart is the restart code a signal gives a threadIO wait (0:
	// ERESTARTSYS); rewound says its pc is back on the syscall.
	ioRestart uint64
	rewound   bool
	tw        *timedWait // a threadWait wait
	vforkWait bool       // a threadFutex wait for a vfork child (system.go)
	pipeWrite pipeWrite  // a blocking pipe write's progress while it waits (writeFrom)
}

// pipeWrite is how far a blocking write to a pipe got before it waited.
type pipeWrite struct {
	f       *openFile
	addr, n uint64
	done    uint64
}

// ThreadStats are a run's thread figures for --stats.
type ThreadStats struct {
	Threads  int    // threads the process had, the main one included
	Switches uint64 // context switches between threads
	// Insns are the instructions each thread retired, by tid.
	Insns []ThreadInsns
}

// ThreadInsns is one thread's retired-instruction count.
type ThreadInsns struct {
	Tid   uint64
	Insns uint64
	CPU   int // the CPU it runs (or last ran) on (cores.go)
}

// ThreadStats returns the process's thread figures.
func (p *Process) ThreadStats() ThreadStats {
	s := ThreadStats{Threads: len(p.allThreads), Switches: p.switches}
	for _, t := range p.allThreads {
		n := t.insns
		if t == p.cur {
			n += p.Insns - p.runStart
		}
		s.Insns = append(s.Insns, ThreadInsns{Tid: t.tid, Insns: n, CPU: t.core})
	}
	return s
}

// initThreads makes the main thread, tid 1000.
func (p *Process) initThreads() {
	p.quantum = p.Cfg.Quantum
	if p.quantum == 0 {
		p.quantum = DefaultQuantum
	}
	if p.Cfg.RandomSched {
		p.schedRng = p.Cfg.Seed*0x9e3779b97f4a7c15 | 1
	}
	main := &thread{tid: p.pid, sig: &sigThread{}, affinity: cpuMask(p.Cfg.CPUs), wasRunnable: true}
	p.threads = []*thread{main}
	p.allThreads = []*thread{main}
	p.cur = main
	p.sig = main.sig
}

// threadByTid returns the live thread with tid (the main thread also by
// the alias AdoptSelfID gave it), or nil.
func (p *Process) threadByTid(tid uint64) *thread {
	if p.selfAlias != 0 && tid == p.selfAlias {
		tid = p.pid
	}
	for _, t := range p.threads {
		if t.tid == tid {
			return t
		}
	}
	return nil
}

// setSlice starts the running thread's quantum: the core stops after it
// while other threads exist, and never for a single thread.
func (p *Process) setSlice() {
	p.timer.quantumEnd = 0
	if len(p.threads) > 1 || p.sys.multi() {
		p.timer.quantumEnd = p.Insns + p.quantum
		if p.sys.cpus > 1 {
			p.timer.quantumEnd = p.Insns + p.sys.coreSlice(p.cur)
		}
	}
	p.armSlice()
}

// Preempt fires the timers that have expired and switches to the next
// runnable thread when the running one has used its quantum
// (cpu.Preempter; see timer.go).
func (p *Process) Preempt(m *cpu.Machine) { p.preempt() }

// monoNow is the monotonic clock in nanoseconds.
func (p *Process) monoNow() uint64 { return p.VirtualNanos() + p.clockOff } // clockNanos(clockMonotonic)

// reschedule runs the next thread: expired timers fire, waiters whose
// deadline has passed wake (a futex wait with ETIMEDOUT), the first
// runnable thread after the current one in tid order runs (the current
// one last); with none runnable, time jumps to the earliest deadline or
// wall-timer expiry, and without one the run ends in deadlock.
func (p *Process) reschedule() {
	if p.sys.multi() || p.sys.cpus > 1 {
		p.sys.reschedule(p)
		return
	}
	for jumps := 0; !p.Exited(); jumps++ {
		now := p.monoNow()
		p.fireTimers()
		p.wakeDue(now)
		if t := p.nextRunnable(); t != nil {
			p.switchTo(t, false)
			break
		}
		next, ok := p.nextWake()
		if !ok || jumps > maxIdleJumps {
			p.deadlock()
			return
		}
		p.clockOff += next - now
	}
	if !p.Exited() {
		p.setSlice()
	}
}

// nextRunnable is the first runnable thread after the current one in tid
// order, wrapping around to the current one itself; nil if none. The
// random scheduler picks any runnable one instead.
func (p *Process) nextRunnable() *thread {
	if t := p.locked; t != nil && t.state == threadRunnable {
		return t // a debugger's scheduler locking (LockScheduler)
	}
	if p.schedRng != 0 {
		return p.randomRunnable()
	}
	n := len(p.threads)
	start := 0
	for start < n && p.threads[start].tid <= p.cur.tid {
		start++
	}
	for i := range n {
		if t := p.threads[(start+i)%n]; t.state == threadRunnable {
			return t
		}
	}
	return nil
}

// randomRunnable picks a runnable thread with xorshift64* from the seed.
func (p *Process) randomRunnable() *thread {
	var ready []*thread
	for _, t := range p.threads {
		if t.state == threadRunnable {
			ready = append(ready, t)
		}
	}
	if len(ready) == 0 {
		return nil
	}
	return ready[xorshiftPick(&p.schedRng, len(ready))]
}

// xorshiftPick advances the xorshift64* state and picks one of n.
func xorshiftPick(state *uint64, n int) int {
	x := *state
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*state = x
	return int((x * 0x2545f4914f6cdd1d >> 32) % uint64(n))
}

// switchTo makes t the running thread: the core's state is saved into
// the current thread (unless it exited) and t's loaded (resumed, when
// resume says t's simulated CPU ran nothing else meanwhile: see
// cpu.Resumer); then t gets the result of the syscall it waited in, and
// its pending signals.
func (p *Process) switchTo(t *thread, resume bool) {
	if t != p.cur {
		tc := p.Core.(cpu.ThreadCore)
		old := p.cur
		old.insns += p.Insns - p.runStart
		var oldPC uint64
		save := old.state != threadExited
		if save {
			old.pc = p.Core.PC()
			oldPC = old.pc
		}
		if ctx := tc.SwitchThread(old.ctx, save, t.ctx, resume); save {
			old.ctx = ctx
		}
		p.cur, p.sig = t, t.sig
		p.runStart = p.Insns
		if p.sys.cpus <= 1 {
			p.switches++ // (with several, a CPU's change of thread: enterCore)
		}
		p.threadEvent(ThreadEvent{Kind: ThreadSwitched, Tid: t.tid, Prev: old.tid, PC: oldPC})
	}
	if t.hasResult {
		t.hasResult = false
		p.setResult(t, t.result)
	}
	if len(p.sig.pending) != 0 {
		p.deliverSignals()
	}
	p.finishRestart()
}

// wakeThread ends t's wait: its syscall returns r.
func (p *Process) wakeThread(t *thread, r uint64) {
	if s := p.sys; s.cpus > 1 && !t.wasRunnable {
		t.readyAt, t.wasRunnable = max(t.readyAt, s.cur.monoNow()), true // (cores.go)
	}
	t.state = threadRunnable
	t.result, t.hasResult = r, true
	t.hasDeadline = false
	t.pi = false
}

// block makes the running thread wait on the futex word at addr; the
// syscall that called it returns only when the thread is woken.
func (p *Process) block(addr uint64, bitset uint32, deadline uint64, hasDeadline bool) {
	t := p.cur
	p.waitSeq++
	t.state, t.futex, t.bitset, t.waitSeq = threadFutex, addr, bitset, p.waitSeq
	t.deadline, t.hasDeadline = deadline, hasDeadline
	p.resched = true
}

// waitIO blocks the running thread in a call that would wait for
// another thread (wouldBlock): its pc goes back to the syscall
// instruction, which runs again once another thread's syscall has
// completed (wakeIO). With no other thread the run ends: nothing could
// ever serve the call. It reports whether the thread waits.
func (p *Process) waitIO() bool {
	ts := &p.timer
	if len(p.threads) < 2 && !p.canWaitAlone() && !p.sys.multi() {
		ts.blockRestart, ts.blockTimed = 0, false
		p.endSyscallFault("deadlock: %s (the process has one thread, so it would wait for ever)", p.blockWhat)
		return false
	}
	t := p.cur
	t.state, t.ioWhat = threadIO, p.blockWhat
	t.ioRestart, t.deadline, t.hasDeadline = ts.blockRestart, ts.blockDeadline, ts.blockTimed
	ts.blockRestart, ts.blockTimed = 0, false
	p.Core.SetPC(p.Core.PC() - p.Arch.SyscallInsnLen)
	p.ioWaiters++
	return true
}

// wakeIO makes every thread waiting in waitIO runnable, to run its call
// again: a syscall has completed that may have filled or drained a pipe
// or closed one of its ends.
func (p *Process) wakeIO() {
	for _, t := range p.threads {
		if t.state == threadIO {
			t.state = threadRunnable
		}
	}
	p.ioWaiters = 0
}

// deadlock ends the run: every thread waits and nothing can wake one.
func (p *Process) deadlock() {
	// Found as the running thread exits, the deadlock is shown (the
	// message's pc, the backtrace) from the first thread that waits, not
	// from the dead one.
	if p.cur.state == threadExited && len(p.threads) > 0 {
		t := p.threads[0]
		p.Core.(cpu.ThreadCore).LoadThread(t.ctx)
		p.cur, p.sig = t, t.sig
	}
	p.EndFault(&cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultSignal, Sig: cpu.SIGKILL, Retired: true,
		Err: fmt.Errorf("deadlock: every thread waits and no timeout is pending; threads: %s", p.listThreads())})
}

// ThreadList describes every thread for a run that ends at --max-insns
// (cpu.ThreadLister); "" for a single thread.
func (p *Process) ThreadList() string {
	if len(p.threads) < 2 {
		return ""
	}
	return p.listThreads()
}

func (p *Process) listThreads() string {
	var b strings.Builder
	b.WriteString("{")
	for i, t := range p.threads {
		if i > 0 {
			b.WriteString("; ")
		}
		pc := t.pc
		if t == p.cur {
			pc = p.Core.PC()
		}
		fmt.Fprintf(&b, "tid %d ", t.tid)
		switch t.state {
		case threadFutex:
			kind := "futex wait"
			if t.pi {
				kind = "futex lock_pi"
			}
			fmt.Fprintf(&b, "in %s on 0x%x", kind, t.futex)
			if t.hasDeadline {
				fmt.Fprintf(&b, " until %d ns", t.deadline)
			}
		case threadIO:
			b.WriteString("in " + t.ioWhat)
			if t.hasDeadline {
				fmt.Fprintf(&b, " until %d ns", t.deadline)
			}
		case threadWait:
			b.WriteString("in " + t.tw.what)
			if t.hasDeadline {
				fmt.Fprintf(&b, " until %d ns", t.deadline)
			}
		default:
			b.WriteString("runnable")
		}
		fmt.Fprintf(&b, " at pc 0x%x", pc)
	}
	b.WriteString("}")
	return b.String()
}

// clone flags (include/uapi/linux/sched.h).
const (
	cloneVM            = 0x100
	cloneFS            = 0x200
	cloneFiles         = 0x400
	cloneSighand       = 0x800
	clonePidfd         = 0x1000
	clonePtrace        = 0x2000
	cloneVfork         = 0x4000
	cloneParent        = 0x8000
	cloneThread        = 0x10000
	cloneNewNS         = 0x20000
	cloneSysvsem       = 0x40000
	cloneSettls        = 0x80000
	cloneParentSettid  = 0x100000
	cloneChildCleartid = 0x200000
	cloneDetached      = 0x400000
	cloneUntraced      = 0x800000
	cloneChildSettid   = 0x1000000
	cloneNewUser       = 0x10000000
	cloneNewPID        = 0x20000000
	cloneIO            = 0x80000000
	cloneClearSighand  = 0x100000000
	cloneIntoCgroup    = 0x200000000
	cSignal            = 0xff
	cloneLegacyFlags   = 0xffffffff

	// threadFlags must all be set for simrun to start a thread.
	threadFlags = cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread
	// threadExtra may accompany them (honoured, or meaningless here).
	threadExtra = cloneSysvsem | cloneSettls | cloneParentSettid | cloneChildCleartid | cloneChildSettid |
		cloneDetached | cloneUntraced | clonePtrace | cloneIO
	// forkExtra may accompany a new process (fork: no CLONE_VM; vfork and
	// posix_spawn: CLONE_VM|CLONE_VFORK, the parent's memory shared).
	forkExtra = cloneVM | cloneVfork | cloneSettls | cloneParentSettid | cloneChildCleartid | cloneChildSettid |
		cloneUntraced | clonePtrace | cloneIO | cloneSysvsem
)

// cloneArgs are clone's or clone3's arguments.
type cloneArgs struct {
	flags, stack, ptid, ctid, tls uint64
}

// sysClone is clone(2). The arguments' order is the architecture's: arm64
// takes (flags, stack, parent_tid, tls, child_tid), as glibc's and musl's
// arm64 clone pass them; s390x (CONFIG_CLONE_BACKWARDS2) takes (stack,
// flags, parent_tid, child_tid, tls).
func sysClone(p *Process, a [6]uint64) uint64 {
	var c cloneArgs
	if p.Arch.Name == "s390x" {
		c = cloneArgs{stack: a[0], flags: a[1], ptid: a[2], ctid: a[3], tls: a[4]}
	} else {
		c = cloneArgs{flags: a[0], stack: a[1], ptid: a[2], tls: a[3], ctid: a[4]}
	}
	c.flags &= cloneLegacyFlags // clone's flags are an unsigned long, read as 32 bits
	if c.flags&cloneThread != 0 {
		c.flags &^= cSignal // the exit signal is meaningless for a thread
	}
	return p.clone(c)
}

// sysClone3 is clone3(2): struct clone_args (64, 80 or 88 bytes) at a[0],
// its size in a[1].
func sysClone3(p *Process, a [6]uint64) uint64 {
	const ver0, known = 64, 88
	size := a[1]
	if size > cpu.PageSize {
		return errno(E2BIG)
	}
	if size < ver0 {
		return errno(EINVAL)
	}
	b, ok := p.readGuest(a[0], size)
	if !ok {
		return errno(EFAULT)
	}
	for _, x := range b[min(size, known):] {
		if x != 0 {
			return errno(E2BIG)
		}
	}
	var f [11]uint64
	o := p.order()
	for i := range f {
		if 8*i+8 <= len(b) {
			f[i] = o.Uint64(b[8*i:])
		}
	}
	flags, exitSignal, stack, stackSize, setTid, setTidSize, cgroup := f[0], f[4], f[5], f[6], f[8], f[9], f[10]
	switch {
	case setTidSize > 32, setTid == 0 && setTidSize > 0, setTid != 0 && setTidSize == 0:
		return errno(EINVAL)
	case exitSignal&^cSignal != 0:
		return errno(EINVAL)
	case flags&cloneIntoCgroup != 0 && (cgroup > 1<<31-1 || size < known):
		return errno(EINVAL)
	case flags&^(cloneLegacyFlags|cloneClearSighand|cloneIntoCgroup) != 0:
		return errno(EINVAL)
	case flags&(cloneDetached|cSignal&^0x80) != 0: // 0x80 is CLONE_NEWTIME for clone3
		return errno(EINVAL)
	case flags&(cloneSighand|cloneClearSighand) == cloneSighand|cloneClearSighand:
		return errno(EINVAL)
	case flags&(cloneThread|cloneParent) != 0 && exitSignal != 0:
		return errno(EINVAL)
	case (stack == 0) != (stackSize == 0):
		return errno(EINVAL)
	case setTidSize > 0:
		return errno(ENOSYS) // choosing tids needs a pid namespace
	}
	if stack != 0 {
		stack += stackSize // the stack grows down from its end
	}
	return p.clone(cloneArgs{flags: flags, stack: stack, ptid: f[3], ctid: f[2], tls: f[7]})
}

// clone starts a thread, after Linux's checks of the flags
// (copy_process): combinations Linux refuses give EINVAL; anything but a
// thread of this process (a new process: fork, vfork, posix_spawn) gives
// ENOSYS, told once (toldDenials).
func (p *Process) clone(c cloneArgs) uint64 {
	fl := c.flags
	switch {
	case fl&(cloneNewNS|cloneFS) == cloneNewNS|cloneFS, fl&(cloneNewUser|cloneFS) == cloneNewUser|cloneFS:
		return errno(EINVAL)
	case fl&cloneThread != 0 && fl&cloneSighand == 0:
		return errno(EINVAL)
	case fl&cloneSighand != 0 && fl&cloneVM == 0:
		return errno(EINVAL)
	case fl&cloneThread != 0 && fl&(cloneNewUser|cloneNewPID) != 0:
		return errno(EINVAL)
	case fl&clonePidfd != 0 && fl&(cloneDetached|cloneThread) != 0:
		return errno(EINVAL)
	case fl&cloneVM == 0 || fl&(cloneVM|cloneVfork|cloneThread) == cloneVM|cloneVfork:
		if fl&^(forkExtra|cSignal) != 0 {
			return errno(ENOSYS)
		}
		return p.fork(c)
	case fl&threadFlags != threadFlags, fl&^(threadFlags|threadExtra) != 0:
		return errno(ENOSYS)
	}
	tc, ok := p.Core.(cpu.ThreadCore)
	if !ok {
		return errno(ENOSYS)
	}
	tid := p.sys.newID()
	t := &thread{tid: tid, sig: &sigThread{mask: p.sig.mask}, nice: p.cur.nice}
	p.sys.placeNew(p, t)
	// The child is the parent's registers with clone returning 0, on
	// the stack given (if any) and with the thread pointer given.
	parent := tc.SaveThread(p.spare)
	p.Core.SetSyscallResult(0)
	if c.stack != 0 {
		p.Core.SetStack(c.stack)
	}
	if fl&cloneSettls != 0 {
		tc.SetTLS(c.tls)
	}
	t.ctx = tc.SaveThread(nil)
	t.pc = p.Core.PC()
	tc.LoadThread(parent)
	p.spare = parent
	if fl&cloneChildCleartid != 0 {
		t.clearTid = c.ctid
	}
	// Linux ignores a failure to store the tids (the child's store is
	// its own, in memory shared with the parent).
	if fl&cloneParentSettid != 0 {
		p.Mem.Store(c.ptid, 4, tid, p.order())
	}
	if fl&cloneChildSettid != 0 {
		p.Mem.Store(c.ctid, 4, tid, p.order())
	}
	p.threads = append(p.threads, t) // tids only grow: the list stays in tid order
	p.allThreads = append(p.allThreads, t)
	p.setSlice()
	p.threadEvent(ThreadEvent{Kind: ThreadCreated, Tid: tid, Prev: p.cur.tid})
	return tid
}

// exitThread ends the running thread (exit with other threads alive):
// its clear_child_tid word becomes 0 and one waiter on it wakes, as
// pthread_join expects; then the next thread runs.
func (p *Process) exitThread() {
	t := p.cur
	p.walkRobustList()
	if t.clearTid != 0 && p.Mem.Store(t.clearTid, 4, 0, p.order()) {
		p.futexWake(t.clearTid, 1, ^uint32(0))
	}
	t.state = threadExited
	p.threadEvent(ThreadEvent{Kind: ThreadGone, Tid: t.tid})
	p.threads = slices.DeleteFunc(slices.Clone(p.threads), func(u *thread) bool { return u == t })
	// Signals sent to the process but pending on this thread go to
	// another thread that can take them.
	for _, in := range t.sig.pending {
		if in.process {
			p.sendSignal(in)
		}
	}
	p.resched = true
}

func sysGettid(p *Process, a [6]uint64) uint64 {
	if p.cur.tid == p.pid && p.selfAlias != 0 {
		return p.selfAlias
	}
	return p.cur.tid
}

func sysSetTidAddress(p *Process, a [6]uint64) uint64 {
	p.cur.clearTid = a[0]
	return sysGettid(p, a)
}

func sysSchedYield(p *Process, a [6]uint64) uint64 {
	if len(p.threads) > 1 {
		p.resched = true
	}
	return 0
}

// sysSchedSetaffinity sets a thread's CPU mask: the CPUs it names that
// exist (Config.CPUs of them, numbered from 0); a mask naming none of
// them is EINVAL, as on Linux. A thread whose core the mask leaves out
// moves to the next core the mask allows (cores.go).
func sysSchedSetaffinity(p *Process, a [6]uint64) uint64 {
	t := p.cur
	if a[0] != 0 {
		if t = p.threadByTid(a[0]); t == nil {
			return errno(ESRCH)
		}
	}
	if a[1] == 0 {
		return errno(EINVAL)
	}
	// The mask is an array of longs; CPU n is bit n%64 of long n/64, as
	// much of it as len covers (CPUs past MaxCPUs do not exist).
	n := min(a[1], 8)
	b, ok := p.readGuest(a[2], n)
	if !ok {
		return errno(EFAULT)
	}
	var w [8]byte
	copy(w[:], b)
	mask := p.order().Uint64(w[:]) & cpuMask(p.sys.cpus)
	if mask == 0 {
		return errno(EINVAL)
	}
	p.sys.setAffinity(p, t, mask)
	return 0
}

// sysGetcpu: the running thread's core, node 0.
func sysGetcpu(p *Process, a [6]uint64) uint64 {
	for i, addr := range []uint64{a[0], a[1]} {
		v := uint64(0)
		if i == 0 {
			v = uint64(p.cur.core)
		}
		if addr != 0 && !p.Mem.Store(addr, 4, v, p.order()) {
			return errno(EFAULT)
		}
	}
	return 0
}

// membarrier commands (include/uapi/linux/membarrier.h).
const (
	membarrierQuery                   = 0
	membarrierGlobal                  = 1
	membarrierGlobalExpedited         = 2
	membarrierRegisterGlobalExpedited = 4
	membarrierPrivateExpedited        = 8
	membarrierRegisterPrivate         = 16
	membarrierSupported               = membarrierGlobal | membarrierGlobalExpedited | membarrierRegisterGlobalExpedited |
		membarrierPrivateExpedited | membarrierRegisterPrivate
)

// sysMembarrier: with one core every barrier holds already; the
// private-expedited command needs its registration first, as on Linux.
func sysMembarrier(p *Process, a [6]uint64) uint64 {
	if a[1] != 0 {
		return errno(EINVAL)
	}
	switch a[0] {
	case membarrierQuery:
		return membarrierSupported
	case membarrierGlobal, membarrierGlobalExpedited, membarrierRegisterGlobalExpedited:
		return 0
	case membarrierRegisterPrivate:
		p.membarrierReg = true
		return 0
	case membarrierPrivateExpedited:
		if !p.membarrierReg {
			return errno(EPERM)
		}
		return 0
	}
	return errno(EINVAL)
}
