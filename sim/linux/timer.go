package linux

import (
	"math"
	"slices"

	"simrun/sim/cpu"
)

// Timers, sleeps and signal waits on the virtual clock.
//
// Two kinds of clock drive them:
//
//   - The wall clocks (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME and
//     their _ALARM forms, ITIMER_REAL, alarm) run on the virtual clock that
//     clock_gettime reports: the machine's VirtualNanos (1 ns per retired
//     instruction without a timing model) plus the time sleeps and idle
//     waits skipped (Process.clockOff). CLOCK_REALTIME is CLOCK_MONOTONIC
//     plus a fixed offset (it starts 2026-01-01), so every wall timer keeps
//     its expiry on the monotonic clock.
//   - The CPU clocks (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID and
//     the ids clock_getcpuclockid and pthread_getcpuclockid make,
//     ITIMER_VIRTUAL, ITIMER_PROF) count retired instructions, 1 ns each,
//     whatever the timing model: the process's clock all its threads'
//     instructions, a thread's clock its own. A syscall costs its one
//     instruction, so user and system time are not told apart and
//     ITIMER_VIRTUAL and ITIMER_PROF run at the same rate. Sleeping and
//     waiting cost no CPU time.
//
// A timer expires at an instruction boundary: the core's budget ends
// where the earliest armed timer expires (Machine.SetSliceEnd, the
// scheduler's quantum mechanism), and Process.Preempt fires it and
// delivers its signal to the running thread before the next instruction.
// Nothing is armed while no timer is, so the run loop pays nothing. A
// wall timer's distance in instructions is its distance in nanoseconds:
// exact without a timing model; with one the core stops that many
// instructions later, checks again, and the timer fires at the first
// check at or after its expiry.
//
// A thread that sleeps (nanosleep, clock_nanosleep), waits for a signal
// (pause, rt_sigsuspend, rt_sigtimedwait) or polls with a timeout blocks
// on the scheduler while the other threads run. When every thread waits,
// virtual time jumps to the earliest deadline or wall-timer expiry (an
// idle machine's clock runs on); with no deadline and no wall timer
// pending the run ends with the deadlock report. A single thread that
// sleeps with no timer due before it wakes just moves the clock on.
//
// A signal that the thread takes interrupts its wait as Linux does
// (kernel/signal.c and the arm64 and s390x do_signal): the call ends with
// one of Linux's internal restart codes, and when a handler is entered
// the code becomes EINTR, or, for ERESTARTSYS with SA_RESTART and for
// ERESTARTNOINTR, the call runs again (pc back on the syscall
// instruction, its arguments untouched); with no handler the call runs
// again. Pipe reads and writes and futex waits without a timeout give
// ERESTARTSYS; timed futex waits and relative sleeps
// ERESTART_RESTARTBLOCK; poll, select, pause, rt_sigsuspend and absolute
// sleeps ERESTARTNOHAND; FUTEX_LOCK_PI ERESTARTNOINTR; rt_sigtimedwait
// returns EINTR. A signal whose action does nothing (a stop signal here)
// does not end a wait.

// Linux's kernel-internal restart codes (include/linux/errno.h); errRestart
// (ERESTARTSYS, 512) is in fd.go.
const (
	errRestartNoIntr = 513
	errRestartNoHand = 514
	errRestartBlock  = 516
)

// isRestart reports whether r is a negated restart code.
func isRestart(r uint64) bool {
	switch -int64(r) {
	case errRestart, errRestartNoIntr, errRestartNoHand, errRestartBlock:
		return true
	}
	return false
}

// Timer notification (include/uapi/asm-generic/siginfo.h) and flags.
const (
	sigevSignal   = 0
	sigevNone     = 1
	sigevThread   = 2
	sigevThreadID = 4
	siTimer       = -2
	timerAbstime  = 1

	sigALRM   = 14
	sigVTALRM = 26
	sigPROF   = 27

	itimerReal    = 0
	itimerVirtual = 1
	itimerProf    = 2

	// maxTimers bounds the live POSIX timers (Linux bounds them by
	// RLIMIT_SIGPENDING): more give EAGAIN.
	maxTimers = 4096
)

// clockKind is what a timer's clock counts.
type clockKind uint8

const (
	clockWall       clockKind = iota // the virtual monotonic clock
	clockProcessCPU                  // the process's retired instructions
	clockThreadCPU                   // one thread's retired instructions
)

// ptimer is a POSIX timer (timer_create) or an interval timer
// (setitimer, alarm).
type ptimer struct {
	id       int32 // timer_create's id (an interval timer's is unused)
	kind     clockKind
	thread   *thread // a thread CPU clock's thread
	notify   int
	signo    int
	value    uint64  // sigval
	target   *thread // SIGEV_THREAD_ID's thread
	posix    bool    // a POSIX timer: si_code SI_TIMER and overrun counts
	realtime bool    // on CLOCK_REALTIME: absolute times are real-time ones
	armed    bool
	expiry   uint64 // on its clock, in ns
	interval uint64
	queued   bool   // its signal is pending, not yet taken
	overrun  uint64 // expiries while its signal was pending
	lastOver uint64 // timer_getoverrun: the overrun of the last signal taken
	// sleeper is the thread a clock_nanosleep on a CPU clock put to
	// sleep until this timer's expiry: it wakes instead of a signal.
	sleeper *thread
}

// timerState is the process's timers and what the scheduler's slice and
// the restart of interrupted calls need.
type timerState struct {
	itimers [3]*ptimer // ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF
	posix   []*ptimer  // live POSIX timers in creation (id) order
	nextID  int32
	fds     []*timerFD // timerfds (timerfd.go), in creation order
	sleeps  []*ptimer  // the expiries of clock_nanosleep on CPU clocks
	// resume holds, per thread, where a relative sleep that a signal
	// interrupted with ERESTART_RESTARTBLOCK was to end (on its clock):
	// when no handler settles the call and it runs again, it sleeps until
	// then, not for its whole time again, as Linux's restart_syscall does
	// with the restart block (hrtimer_nanosleep_restart,
	// posix_cpu_nsleep_restart). A handler drops it (the call gives EINTR).
	resume map[*thread]uint64

	quantumEnd uint64 // Insns at which the running thread's quantum ends (0: one thread)

	// restart is the negated restart code the running thread's syscall
	// ended with, until a handler is entered or the call runs again.
	restart uint64

	// What waitIO gives the thread a call blocks: its restart code and
	// its deadline (a poll with a timeout).
	blockRestart  uint64
	blockDeadline uint64
	blockTimed    bool
}

// waitKind is what a threadWait thread waits for.
type waitKind uint8

const (
	waitSleep   waitKind = iota // nanosleep, clock_nanosleep
	waitPause                   // pause, rt_sigsuspend
	waitSigwait                 // rt_sigtimedwait
)

// timedWait is a threadWait thread's wait.
type timedWait struct {
	kind     waitKind
	what     string
	code     uint64  // the restart code an interrupting signal gives (negated)
	rem      uint64  // nanosleep's remaining-time address (0: none)
	cpu      *ptimer // a sleep on a CPU clock: the timer that ends it
	set      uint64  // rt_sigtimedwait's set
	info     uint64  // rt_sigtimedwait's siginfo address (0: none)
	realMask uint64  // the mask rt_sigtimedwait restores
}

// Delivered is the number of signals whose handlers were entered.
func (p *Process) Delivered() uint64 { return p.delivered }

// --- the slice ---

// armSlice sets where the core's run stops next: the end of the running
// thread's quantum or the earliest timer expiry, whichever is first;
// never while one thread runs and no timer is armed.
func (p *Process) armSlice() { p.SetSliceEnd(p.sliceEnd()) }

// sliceEnd is the Insns count armSlice stops the core at (0: none).
func (p *Process) sliceEnd() uint64 {
	end := p.timer.quantumEnd
	if e, ok := p.timerEvent(); ok && (end == 0 || e < end) {
		end = e
	}
	return end
}

// hasTimers reports whether any timer exists (armed or not).
func (p *Process) hasTimers() bool {
	ts := &p.timer
	return len(ts.posix) != 0 || len(ts.sleeps) != 0 || ts.itimers != [3]*ptimer{}
}

// eachTimer calls f for every timer: the interval timers, then the
// POSIX ones in id order (a fixed order, so that timers expiring together
// send their signals in the same order every run).
func (p *Process) eachTimer(f func(t *ptimer)) {
	for _, t := range p.timer.itimers {
		if t != nil {
			f(t)
		}
	}
	for _, t := range p.timer.posix {
		f(t)
	}
	for _, t := range p.timer.sleeps {
		f(t)
	}
}

// signals reports whether t is armed and sends a signal (or wakes a
// sleeper) when it expires.
func (t *ptimer) signals() bool { return t.armed && (t.notify != sigevNone || t.sleeper != nil) }

// timerEvent is the Insns count at which the earliest signalling timer
// that can expire while the running thread runs does.
func (p *Process) timerEvent() (uint64, bool) {
	if !p.hasTimers() {
		return 0, false
	}
	var best uint64
	ok := false
	p.eachTimer(func(t *ptimer) {
		if !t.signals() || t.kind == clockThreadCPU && t.thread != p.cur {
			return
		}
		now := p.timerNow(t)
		left := uint64(1)
		if t.expiry > now {
			left = min(t.expiry-now, math.MaxInt64)
		}
		if e := p.Insns + left; !ok || e < best {
			best, ok = e, true
		}
	})
	return best, ok
}

// preempt is the scheduler's and the timers' stop (cpu.Preempter): due
// timers fire; at the end of the quantum (or if the thread no longer
// runs) the next thread runs, else the running one takes the signals
// that became pending.
func (p *Process) preempt() {
	if q := p.timer.quantumEnd; q != 0 && p.Insns >= q || p.cur.state != threadRunnable {
		p.reschedule() // (which fires the timers first)
		return
	}
	p.fireTimers()
	if len(p.sig.pending) != 0 {
		p.clearMonitor()
		p.deliverSignals()
	}
	if !p.Exited() {
		p.armSlice()
	}
}

// clearMonitor clears what the core holds between instructions (the
// arm64 exclusive monitor), as the exception entry that delivers an
// asynchronous signal does on Linux.
func (p *Process) clearMonitor() {
	if tc, ok := p.Core.(cpu.ThreadCore); ok {
		p.spare = tc.SaveThread(p.spare)
		tc.LoadThread(p.spare)
	}
}

// --- clocks ---

// threadCPU is thread t's CPU time: its retired instructions.
func (p *Process) threadCPU(t *thread) uint64 {
	n := t.insns
	if t == p.cur {
		n += p.Insns - p.runStart
	}
	return n
}

// timerNow is t's clock now.
func (p *Process) timerNow(t *ptimer) uint64 {
	switch t.kind {
	case clockProcessCPU:
		return p.Insns
	case clockThreadCPU:
		return p.threadCPU(t.thread)
	}
	return p.monoNow()
}

// cpuClock resolves a CPU clock id: CLOCK_PROCESS_CPUTIME_ID (2),
// CLOCK_THREAD_CPUTIME_ID (3, the calling thread's), and the negative ids
// of clock_getcpuclockid and pthread_getcpuclockid (Linux's encoding:
// ^pid << 3, bit 2 for a thread, low bits 0-2 PROF, VIRT, SCHED, all
// counting alike here). ok is false for any other id; valid is false for
// a CPU id that names nothing of this process.
func (p *Process) cpuClock(id uint64) (kind clockKind, th *thread, ok, valid bool) {
	switch id {
	case 2:
		return clockProcessCPU, nil, true, true
	case 3:
		return clockThreadCPU, p.cur, true, true
	}
	cid := int32(id) // a clockid_t is an int
	if cid >= 0 {
		return 0, nil, false, false
	}
	if cid&3 == 3 {
		return 0, nil, true, false
	}
	pid := uint64(^(cid >> 3))
	if cid&4 != 0 {
		t := p.cur
		if pid != 0 {
			t = p.threadByTid(pid)
		}
		return clockThreadCPU, t, true, t != nil
	}
	return clockProcessCPU, nil, true, pid == 0 || p.isSelf(pid)
}

// cpuNanos is a CPU clock's time.
func (p *Process) cpuNanos(kind clockKind, th *thread) uint64 {
	if kind == clockThreadCPU {
		return p.threadCPU(th)
	}
	return p.Insns
}

// wallClock reports whether id is a clock a timer or a sleep can use as
// a wall clock, and whether it is a real-time one (its absolute times
// are on the real-time scale).
func wallClock(id uint64) (ok, realtime bool) {
	switch id {
	case clockRealtime, 8: // REALTIME, REALTIME_ALARM
		return true, true
	case clockMonotonic, 7, 9: // MONOTONIC, BOOTTIME, BOOTTIME_ALARM
		return true, false
	}
	return false, false
}

// wallDeadline turns a timeout on a wall clock into a monotonic deadline.
func (p *Process) wallDeadline(ns uint64, abs, realtime bool) uint64 {
	if abs && realtime {
		return p.deadline(ns, true, true)
	}
	return p.deadline(ns, abs, false)
}

// --- firing ---

// advance moves an expired timer on: a one-shot one disarms, a periodic
// one goes to its next expiry after now. It returns how many expiries
// passed (0: none).
func (t *ptimer) advance(now uint64) uint64 {
	if !t.armed || now < t.expiry {
		return 0
	}
	if t.interval == 0 {
		t.armed = false
		return 1
	}
	n := 1 + (now-t.expiry)/t.interval
	if d := n * t.interval; d/t.interval == n && t.expiry+d > t.expiry {
		t.expiry += d
	} else {
		t.armed = false // past the end of time
	}
	return n
}

// fireTimers sends the signals of the timers that have expired.
func (p *Process) fireTimers() {
	if !p.hasTimers() {
		return
	}
	p.eachTimer(func(t *ptimer) {
		if t.signals() {
			if n := t.advance(p.timerNow(t)); n != 0 {
				p.expire(t, n)
			}
		}
	})
	if len(p.timer.sleeps) != 0 {
		p.timer.sleeps = slices.DeleteFunc(p.timer.sleeps, func(t *ptimer) bool { return !t.armed })
	}
}

// expire sends t's signal for n expiries: a POSIX timer whose signal is
// still pending counts them as overruns instead, as Linux's
// posix_timer_event.
func (p *Process) expire(t *ptimer, n uint64) {
	if th := t.sleeper; th != nil {
		if th.state == threadWait && th.tw.cpu == t {
			p.wakeThread(th, 0)
		}
		return
	}
	if !t.posix {
		in := sigInfo{signo: t.signo, code: siKernel, kind: siKindKill, cause: "an interval timer sent the program"}
		p.sendSignal(in)
		return
	}
	if t.queued {
		t.overrun += n
		return
	}
	t.queued, t.overrun = true, n-1
	in := sigInfo{signo: t.signo, code: siTimer, kind: siKindTimer, timerID: uint32(t.id), value: t.value,
		timer: t, cause: "a timer sent the program"}
	if t.notify&sigevThreadID != 0 && t.target != nil && t.target.state != threadExited {
		p.sendSignalTo(t.target, in)
	} else {
		p.sendSignal(in)
	}
}

// timerTaken is called when a timer's signal leaves the pending set (a
// handler is entered, or rt_sigtimedwait takes it): its overrun count is
// the signal's si_overrun and timer_getoverrun's answer from then on.
func (p *Process) timerTaken(in *sigInfo) {
	t := in.timer
	if t == nil {
		return
	}
	t.queued = false
	t.lastOver = min(t.overrun, math.MaxInt32)
	t.overrun = 0
	in.overrun = uint32(t.lastOver)
}

// --- scheduler hooks ---

// wakeDue ends the waits whose deadline has passed, and runs the calls
// waiting in waitIO again when a timerfd has expired.
func (p *Process) wakeDue(now uint64) {
	p.wakeTimerFDs()
	for _, t := range p.threads {
		if t.state == threadRunnable || t.state == threadExited || !t.hasDeadline || t.deadline > now {
			continue
		}
		switch t.state {
		case threadFutex:
			p.wakeThread(t, errno(ETIMEDOUT))
		case threadIO:
			// The call runs again, finds its deadline passed and
			// returns what a timeout gives.
			t.state = threadRunnable
		case threadWait:
			r := uint64(0)
			if t.tw.kind == waitSigwait {
				t.sig.mask = t.tw.realMask
				r = errno(EAGAIN)
			}
			p.wakeThread(t, r)
		}
	}
}

// nextWake is the earliest moment on the monotonic clock at which
// something can wake a thread: a wait's deadline or a wall timer's
// expiry. ok is false when nothing can.
func (p *Process) nextWake() (next uint64, ok bool) {
	for _, t := range p.threads {
		if t.state != threadRunnable && t.state != threadExited && t.hasDeadline && (!ok || t.deadline < next) {
			next, ok = t.deadline, true
		}
	}
	p.eachTimer(func(t *ptimer) {
		if t.signals() && t.kind == clockWall && (!ok || t.expiry < next) {
			next, ok = t.expiry, true
		}
	})
	if e, fdOK := p.timerfdNext(); fdOK && (!ok || e < next) {
		next, ok = e, true
	}
	return next, ok
}

// maxIdleJumps bounds the time jumps of one idle scheduling round that
// wake no thread (timers whose signals every thread blocks or ignores):
// past it the process is as good as deadlocked.
const maxIdleJumps = 1 << 16

// canWaitAlone reports whether the only thread may block in a call that
// waits for another thread: something (its deadline, a wall timer's
// signal) may still end the wait.
func (p *Process) canWaitAlone() bool {
	if p.timer.blockTimed {
		return true
	}
	if _, ok := p.timerfdNext(); ok {
		return true // a timerfd's expiry wakes it
	}
	ok := false
	p.eachTimer(func(t *ptimer) { ok = ok || t.signals() && t.kind == clockWall })
	return ok
}

// setResult gives the running thread (just switched to, or returning
// from its syscall) its syscall's result: a restart code is kept until
// the signals are delivered (restartForHandler, finishRestart).
func (p *Process) setResult(t *thread, r uint64) {
	if t.rewound {
		// A waitIO call put its pc back on the syscall instruction;
		// the signal that ended the wait decides.
		p.Core.SetPC(p.Core.PC() + p.Arch.SyscallInsnLen)
		t.rewound = false
	}
	if isRestart(r) {
		p.timer.restart = r
		return
	}
	p.Core.SetSyscallResult(r)
}

// restartForHandler settles an interrupted call as a handler is entered
// (Linux's handle_signal): EINTR, or the call runs again after the
// handler (ERESTARTSYS with SA_RESTART, ERESTARTNOINTR).
func (p *Process) restartForHandler(flags uint64) {
	p.cur.hasDeadline = false // a poll's timeout ends with it
	delete(p.timer.resume, p.cur)
	r := p.timer.restart
	if r == 0 {
		return
	}
	p.timer.restart = 0
	switch -int64(r) {
	case errRestart:
		if flags&saRestart != 0 {
			p.Core.SetPC(p.Core.PC() - p.Arch.SyscallInsnLen)
			return
		}
	case errRestartNoIntr:
		p.Core.SetPC(p.Core.PC() - p.Arch.SyscallInsnLen)
		return
	}
	p.Core.SetSyscallResult(errno(EINTR))
}

// finishRestart ends the delivery of signals: an interrupted call that
// no handler settled runs again, and rt_sigsuspend's mask, if no handler
// frame saved it, comes back.
func (p *Process) finishRestart() {
	if p.timer.restart != 0 {
		p.timer.restart = 0
		if !p.Exited() {
			p.Core.SetPC(p.Core.PC() - p.Arch.SyscallInsnLen)
		}
	}
	if t := p.sig; t.hasSaved {
		t.mask, t.hasSaved = t.saved, false
	}
}

// attention reports whether sig, arriving at a thread that does not
// block it, ends the thread's wait: a handler runs or the process dies.
func (p *Process) attention(sig int) bool {
	h := p.sigact[sig].handler
	if h == sigIgn {
		return false
	}
	return h != sigDfl || !defaultIgnored(sig) && !defaultStops(sig)
}

// interrupt ends th's wait for a signal it does not block (sendSignalTo).
func (p *Process) interrupt(th *thread, sig int) {
	if !p.attention(sig) {
		return
	}
	switch th.state {
	case threadFutex:
		if th.vforkWait {
			return // a vfork parent waits for the child, signals or not
		}
		code := errRestart
		switch {
		case th.pi:
			code = errRestartNoIntr
		case th.hasDeadline:
			code = errRestartBlock
		}
		p.wakeThread(th, errno(code))
	case threadIO:
		code := th.ioRestart
		if code == 0 {
			code = errno(errRestart)
		}
		th.state = threadRunnable
		th.result, th.hasResult, th.rewound = code, true, true
	case threadWait:
		w := th.tw
		switch w.kind {
		case waitSleep:
			end, now := th.deadline, p.monoNow()
			if w.cpu != nil {
				end, now = w.cpu.expiry, p.timerNow(w.cpu)
				w.cpu.armed = false
			}
			if w.code == errno(errRestartBlock) {
				if p.timer.resume == nil {
					p.timer.resume = map[*thread]uint64{}
				}
				p.timer.resume[th] = end
			}
			if w.rem != 0 {
				left := uint64(0)
				if end > now {
					left = end - now
				}
				p.putTimespec(w.rem, left, 1)
			}
		case waitSigwait:
			th.sig.mask = w.realMask
		}
		p.wakeThread(th, w.code)
	}
}

// waitTakes hands a signal to a thread waiting for it in
// rt_sigtimedwait; it reports whether it did.
func (p *Process) waitTakes(th *thread, in *sigInfo) bool {
	w := th.tw
	if th.state != threadWait || w.kind != waitSigwait || in.signo < 1 || in.signo > 64 || w.set&sigBit(in.signo) == 0 {
		return false
	}
	p.timerTaken(in)
	th.sig.mask = w.realMask
	r := uint64(in.signo)
	if w.info != 0 && !p.putSiginfo(w.info, in) {
		r = errno(EFAULT)
	}
	p.wakeThread(th, r)
	return true
}

// putSiginfo writes a whole siginfo_t (128 bytes, zero where in has
// nothing), as Linux's copy_siginfo_to_user.
func (p *Process) putSiginfo(addr uint64, in *sigInfo) bool {
	if !p.writeGuest(addr, make([]byte, 128)) {
		return false
	}
	w := &frameWriter{p: p}
	w.siginfo(addr, in)
	return w.err == nil
}

// --- waits ---

// waitFor blocks the running thread in w until a signal or its deadline.
func (p *Process) waitFor(w *timedWait, deadline uint64, timed bool) {
	t := p.cur
	t.state, t.tw = threadWait, w
	t.deadline, t.hasDeadline = deadline, timed
	p.resched = true
}

// wallTimerBy reports whether a wall timer signals at or before deadline.
func (p *Process) wallTimerBy(deadline uint64) bool {
	ok := false
	p.eachTimer(func(t *ptimer) { ok = ok || t.signals() && t.kind == clockWall && t.expiry <= deadline })
	return ok
}

// sleepUntil sleeps the running thread until deadline on the monotonic
// clock; an interrupting signal gives code (negated) and writes the time
// left at rem (0: nowhere). The only thread of the only process, with no
// timer due first, just moves the clock on; with other processes alive
// the clock is theirs too, so the thread waits for its deadline while
// they run, as any sleeper.
func (p *Process) sleepUntil(deadline, rem uint64, code int, what string) uint64 {
	now := p.monoNow()
	if deadline <= now {
		return 0
	}
	if len(p.threads) == 1 && !p.sys.multi() && !p.wallTimerBy(deadline) {
		p.clockOff += deadline - now
		p.armSlice()
		return 0
	}
	p.waitFor(&timedWait{kind: waitSleep, what: what, code: errno(code), rem: rem}, deadline, true)
	return 0
}

func sysNanosleep(p *Process, a [6]uint64) uint64 {
	ns, r := p.readTimeout(a[0])
	if r != 0 {
		return r
	}
	return p.sleepUntil(p.relativeEnd(ns), a[1], errRestartBlock, "nanosleep")
}

// relativeEnd is where a relative sleep of ns from now ends on the
// monotonic clock, or, for the run again of one a signal interrupted, where
// the first run was to end (timerState.resume).
func (p *Process) relativeEnd(ns uint64) uint64 {
	if end, ok := p.timer.resume[p.cur]; ok {
		delete(p.timer.resume, p.cur)
		return end
	}
	return p.deadline(ns, false, false)
}

// sysClockNanosleep sleeps on a wall clock or a CPU clock, relative or
// (TIMER_ABSTIME) absolute; it returns the error number itself, as Linux.
// As Linux's clock_nanosleep and posix_cpu_nsleep: MONOTONIC_RAW, the
// coarse clocks and CLOCK_THREAD_CPUTIME_ID have no sleep (EOPNOTSUPP;
// glibc's wrapper turns the last into EINVAL itself), a per-thread CPU
// clock id naming the caller gives EINVAL, and the process's CPU clock or
// another thread's is slept on: the thread waits until that clock reaches
// the end while the others run (alone, nothing advances it: the deadlock
// report).
func sysClockNanosleep(p *Process, a [6]uint64) uint64 {
	clock, flags := a[0], a[1]
	ok, realtime := wallClock(clock)
	kind, th, cpuOK, valid := p.cpuClock(clock)
	switch {
	case ok:
	case clock == 3, clock == 4, clock == 5, clock == 6:
		return errno(ENOTSUP)
	case !cpuOK:
		return errno(EINVAL)
	}
	ns, r := p.readTimeout(a[2])
	if r != 0 {
		return r
	}
	abs := flags&timerAbstime != 0
	if !ok {
		if !valid || kind == clockThreadCPU && th == p.cur {
			return errno(EINVAL)
		}
		return p.sleepCPU(kind, th, ns, abs, a[3])
	}
	if abs {
		return p.sleepUntil(p.wallDeadline(ns, true, realtime), 0, errRestartNoHand, "clock_nanosleep")
	}
	return p.sleepUntil(p.relativeEnd(ns), a[3], errRestartBlock, "clock_nanosleep")
}

// sleepCPU sleeps the running thread until a CPU clock (the process's,
// or thread th's) reaches ns (abs) or now+ns: a timer on that clock wakes
// it (ptimer.sleeper).
func (p *Process) sleepCPU(kind clockKind, th *thread, ns uint64, abs bool, rem uint64) uint64 {
	t := &ptimer{kind: kind, thread: th, notify: sigevNone, sleeper: p.cur, armed: true}
	now := p.timerNow(t)
	code := errRestartNoHand
	switch {
	case abs:
		t.expiry, rem = ns, 0
	default:
		code = errRestartBlock
		if end, ok := p.timer.resume[p.cur]; ok {
			delete(p.timer.resume, p.cur)
			t.expiry = end
		} else {
			t.expiry = now + min(ns, math.MaxInt64)
		}
	}
	if t.expiry <= now {
		return 0
	}
	p.timer.sleeps = append(p.timer.sleeps, t)
	p.waitFor(&timedWait{kind: waitSleep, what: "clock_nanosleep on a CPU clock", code: errno(code), rem: rem, cpu: t}, 0, false)
	return 0
}

// sysPause waits for a signal that runs a handler (or ends the process).
func sysPause(p *Process, a [6]uint64) uint64 {
	p.waitFor(&timedWait{kind: waitPause, what: "pause", code: errno(errRestartNoHand)}, 0, false)
	return 0
}

// sysRtSigsuspend waits, with the mask given, for a signal that runs a
// handler; the handler's frame holds the old mask, which comes back when
// it returns.
func sysRtSigsuspend(p *Process, a [6]uint64) uint64 {
	if a[1] != 8 {
		return errno(EINVAL)
	}
	b, ok := p.readGuest(a[0], 8)
	if !ok {
		return errno(EFAULT)
	}
	t := p.sig
	t.saved, t.hasSaved = t.mask, true
	t.mask = p.order().Uint64(b) &^ unblockable
	if t.next() >= 0 {
		return errno(errRestartNoHand) // one is pending already
	}
	p.waitFor(&timedWait{kind: waitPause, what: "rt_sigsuspend", code: errno(errRestartNoHand)}, 0, false)
	return 0
}

// sysRtSigtimedwait takes a pending signal of the set (the thread's own,
// then one sent to the process and pending on another thread), or waits
// for one until the timeout: EAGAIN when it passes, EINTR when another
// signal runs a handler.
func sysRtSigtimedwait(p *Process, a [6]uint64) uint64 {
	if a[3] != 8 {
		return errno(EINVAL)
	}
	b, ok := p.readGuest(a[0], 8)
	if !ok {
		return errno(EFAULT)
	}
	set := p.order().Uint64(b) &^ unblockable
	var deadline uint64
	timed := a[2] != 0
	if timed {
		ns, r := p.readTimeout(a[2])
		if r != 0 {
			return r
		}
		deadline = p.deadline(ns, false, false)
	}
	if in, ok := p.takePending(set); ok {
		r := uint64(in.signo)
		if a[1] != 0 && !p.putSiginfo(a[1], &in) {
			r = errno(EFAULT)
		}
		return r
	}
	if timed && deadline <= p.monoNow() {
		return errno(EAGAIN)
	}
	t := p.sig
	w := &timedWait{kind: waitSigwait, what: "rt_sigtimedwait", code: errno(EINTR), set: set, info: a[1], realMask: t.mask}
	// The waited signals are unblocked while it waits, so that a signal
	// sent to the process goes to this thread (Linux's real_blocked).
	t.mask &^= set
	p.waitFor(w, deadline, timed)
	return 0
}

// takePending removes and returns the pending signal of set that Linux
// would dequeue first (dequeue_signal): one sent to the running thread
// itself, else one sent to the process, wherever it waits; within each,
// synchronous ones, then the lowest number.
func (p *Process) takePending(set uint64) (sigInfo, bool) {
	take := func(t *sigThread, i int) sigInfo {
		in := t.pending[i]
		t.pending = slices.Delete(t.pending, i, i+1)
		p.timerTaken(&in)
		return in
	}
	if i := p.sig.pick(func(in *sigInfo) bool { return set&sigBit(in.signo) != 0 && !in.process }); i >= 0 {
		return take(p.sig, i), true
	}
	// The process's shared queue: the best over every thread's list,
	// the running thread's first on a tie.
	var best *sigThread
	bi := -1
	for _, t := range append([]*sigThread{p.sig}, p.threadSigs()...) {
		i := t.pick(func(in *sigInfo) bool { return set&sigBit(in.signo) != 0 && in.process })
		if i < 0 {
			continue
		}
		if best != nil {
			b, c := best.pending[bi].signo, t.pending[i].signo
			bs, cs := synchronous&sigBit(b) != 0, synchronous&sigBit(c) != 0
			if !(cs && !bs || cs == bs && c < b) {
				continue
			}
		}
		best, bi = t, i
	}
	if best != nil {
		return take(best, bi), true
	}
	return sigInfo{}, false
}

// threadSigs are the signal states of the threads other than the
// running one, in tid order.
func (p *Process) threadSigs() []*sigThread {
	var out []*sigThread
	for _, th := range p.threads {
		if th != p.cur {
			out = append(out, th.sig)
		}
	}
	return out
}

// sysRestartSyscall: nothing is left to restart (simrun runs an
// interrupted call again itself), so EINTR, as Linux's
// do_no_restart_syscall.
func sysRestartSyscall(p *Process, a [6]uint64) uint64 { return errno(EINTR) }

// --- polls ---

// pollDeadline is a poll-like call's deadline: the one its first run set
// when this is a run again after a wait, else timeout from now (timed).
func (p *Process) pollDeadline(timeout uint64, timed bool) (uint64, bool) {
	if t := p.cur; t.hasDeadline {
		return t.deadline, true
	}
	if !timed {
		return 0, false
	}
	return p.deadline(timeout, false, false), true
}

// pollBlock is what a poll-like call with nothing ready returns: 0 when
// its deadline has passed, ERESTARTNOHAND when a signal its mask lets
// through is pending, else the wait (for another thread's syscall or the
// deadline) with ERESTARTNOHAND for a signal.
func (p *Process) pollBlock(what string, deadline uint64, timed bool) uint64 {
	if timed && deadline <= p.monoNow() {
		p.cur.hasDeadline = false
		return 0
	}
	if p.sig.next() >= 0 {
		return errno(errRestartNoHand)
	}
	if !timed {
		what += " and no timeout"
	}
	p.blockWhat = what
	p.timer.blockRestart = errno(errRestartNoHand)
	p.timer.blockDeadline, p.timer.blockTimed = deadline, timed
	return errno(errRestart)
}

// pollMask applies the signal mask ppoll or pselect6 is given (addr 0:
// none) for the length of the call, as rt_sigsuspend does: it comes back
// when the call returns, or through the frame of a handler the call's
// end runs (finishRestart, handleSignal).
func (p *Process) pollMask(addr, size uint64) uint64 {
	if addr == 0 {
		return 0
	}
	if size != 8 {
		return errno(EINVAL)
	}
	b, ok := p.readGuest(addr, 8)
	if !ok {
		return errno(EFAULT)
	}
	t := p.sig
	if !t.hasSaved { // a run again after a wait keeps the first saved mask
		t.saved, t.hasSaved = t.mask, true
	}
	t.mask = p.order().Uint64(b) &^ unblockable
	return 0
}

// pollLeft writes the time left before deadline at addr (ppoll and
// pselect6 update their timeout, as Linux's poll_select_finish).
func (p *Process) pollLeft(addr, deadline uint64) bool {
	left := uint64(0)
	if now := p.monoNow(); deadline > now {
		left = deadline - now
	}
	return p.putTimespec(addr, left, 1)
}

// --- interval timers ---

// readTimeval reads a struct timeval as nanoseconds (EINVAL for a
// negative or out-of-range field, as Linux's timeval_valid).
func (p *Process) readTimeval(b []byte) (uint64, uint64) {
	o := p.order()
	sec, usec := int64(o.Uint64(b)), int64(o.Uint64(b[8:]))
	if sec < 0 || usec < 0 || usec >= 1e6 {
		return 0, errno(EINVAL)
	}
	if sec > math.MaxInt64/1_000_000_000-1 {
		return math.MaxInt64, 0
	}
	return uint64(sec)*1e9 + uint64(usec)*1e3, 0
}

// itimerLeft is an interval timer's time left and interval in ns; an
// armed timer due now reports 1 µs, as Linux.
func (p *Process) itimerLeft(t *ptimer) (left, interval uint64) {
	if t == nil || !t.armed {
		if t != nil {
			interval = t.interval
		}
		return 0, interval
	}
	if now := p.timerNow(t); t.expiry > now {
		left = t.expiry - now
	}
	return max(left, 1000), t.interval
}

func (p *Process) putTimeval(b []byte, ns uint64) []byte {
	b = appendU64(p.order(), b, ns/1e9)
	return appendU64(p.order(), b, ns%1e9/1e3)
}

// setItimer arms (value != 0) or disarms interval timer which and returns
// what it held.
func (p *Process) setItimer(which int, value, interval uint64) (oldLeft, oldInterval uint64) {
	ts := &p.timer
	t := ts.itimers[which]
	oldLeft, oldInterval = p.itimerLeft(t)
	if t == nil {
		t = &ptimer{id: -1 - int32(which), notify: sigevSignal, signo: [3]int{sigALRM, sigVTALRM, sigPROF}[which]}
		if which != itimerReal {
			t.kind = clockProcessCPU
		}
		ts.itimers[which] = t
	}
	t.armed, t.interval = value != 0, interval
	if t.armed {
		t.expiry = p.timerNow(t) + value
	}
	p.fireTimers()
	p.armSlice()
	return oldLeft, oldInterval
}

func sysSetitimer(p *Process, a [6]uint64) uint64 {
	which := a[0]
	if which > itimerProf {
		return errno(EINVAL)
	}
	var value, interval uint64
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 32)
		if !ok {
			return errno(EFAULT)
		}
		var r uint64
		if interval, r = p.readTimeval(b); r != 0 {
			return r
		}
		if value, r = p.readTimeval(b[16:]); r != 0 {
			return r
		}
	}
	left, iv := p.setItimer(int(which), value, interval)
	if a[2] != 0 && !p.writeGuest(a[2], p.putTimeval(p.putTimeval(nil, iv), left)) {
		return errno(EFAULT)
	}
	return 0
}

func sysGetitimer(p *Process, a [6]uint64) uint64 {
	if a[0] > itimerProf {
		return errno(EINVAL)
	}
	left, iv := p.itimerLeft(p.timer.itimers[a[0]])
	if !p.writeGuest(a[1], p.putTimeval(p.putTimeval(nil, iv), left)) {
		return errno(EFAULT)
	}
	return 0
}

// sysAlarm is ITIMER_REAL in whole seconds; it returns the seconds the
// previous alarm had left, rounded to nearest (at least 1 while one was
// pending), as Linux's alarm_setitimer.
func sysAlarm(p *Process, a [6]uint64) uint64 {
	left, _ := p.setItimer(itimerReal, uint64(uint32(a[0]))*1e9, 0)
	sec, usec := left/1e9, left%1e9/1e3
	if usec >= 500000 || sec == 0 && usec != 0 {
		sec++
	}
	return sec
}

// --- POSIX timers ---

// timerByID is the live POSIX timer id, or nil.
func (p *Process) timerByID(id uint64) *ptimer {
	for _, t := range p.timer.posix {
		if t.id == int32(id) { // a timer_t is an int
			return t
		}
	}
	return nil
}

// sysTimerCreate makes a POSIX timer on a wall or CPU clock with the
// sigevent given (SIGEV_SIGNAL with SIGALRM and the timer's id as value
// when none is).
func sysTimerCreate(p *Process, a [6]uint64) uint64 {
	t := &ptimer{posix: true, notify: sigevSignal, signo: sigALRM}
	if ok, realtime := wallClock(a[0]); ok {
		t.realtime = realtime
	} else {
		kind, th, cpuOK, valid := p.cpuClock(a[0])
		switch {
		case !cpuOK:
			switch a[0] {
			case 4, 5, 6: // MONOTONIC_RAW, the coarse clocks
				return errno(ENOTSUP)
			}
			return errno(EINVAL)
		case !valid:
			return errno(EINVAL)
		}
		t.kind, t.thread = kind, th
	}
	if len(p.timer.posix) >= maxTimers {
		return errno(EAGAIN)
	}
	if a[1] != 0 {
		b, ok := p.readGuest(a[1], 20)
		if !ok {
			return errno(EFAULT)
		}
		o := p.order()
		t.value, t.signo, t.notify = o.Uint64(b), int(int32(o.Uint32(b[8:]))), int(int32(o.Uint32(b[12:])))
		switch t.notify {
		case sigevSignal | sigevThreadID:
			t.target = p.threadByTid(uint64(o.Uint32(b[16:])))
			if t.target == nil {
				return errno(EINVAL)
			}
			fallthrough
		case sigevSignal, sigevThread:
			if t.signo < 1 || t.signo > 64 {
				return errno(EINVAL)
			}
		case sigevNone:
		default:
			return errno(EINVAL)
		}
	}
	t.id = p.timer.nextID
	if a[1] == 0 {
		t.value = uint64(t.id)
	}
	if !p.Mem.Store(a[2], 4, uint64(t.id), p.order()) {
		return errno(EFAULT)
	}
	p.timer.nextID = (p.timer.nextID + 1) & math.MaxInt32
	p.timer.posix = append(p.timer.posix, t)
	return 0
}

// timerSpec is a timer's itimerspec now: interval and time left (1 ns for
// a signalling timer that is due, as Linux's common_timer_get).
func (p *Process) timerSpec(t *ptimer) []byte {
	if t.notify == sigevNone {
		t.advance(p.timerNow(t))
	}
	var left uint64
	if t.armed {
		if now := p.timerNow(t); t.expiry > now {
			left = t.expiry - now
		} else {
			left = 1
		}
	}
	o := p.order()
	var b []byte
	for _, ns := range []uint64{t.interval, left} {
		b = appendU64(o, appendU64(o, b, ns/1e9), ns%1e9)
	}
	return b
}

func sysTimerSettime(p *Process, a [6]uint64) uint64 {
	t := p.timerByID(a[0])
	if t == nil {
		return errno(EINVAL)
	}
	if a[2] == 0 {
		return errno(EINVAL)
	}
	interval, r := p.readTimeout(a[2])
	if r != 0 {
		return r
	}
	value, r := p.readTimeout(a[2] + 16)
	if r != 0 {
		return r
	}
	if a[3] != 0 && !p.writeGuest(a[3], p.timerSpec(t)) {
		return errno(EFAULT)
	}
	t.armed, t.interval, t.overrun = value != 0, interval, 0
	if t.armed {
		now := p.timerNow(t)
		switch {
		case a[1]&timerAbstime == 0:
			t.expiry = now + min(value, math.MaxInt64)
		case t.kind == clockWall:
			t.expiry = p.wallDeadline(value, true, t.realtime)
		default:
			t.expiry = value
		}
	}
	p.fireTimers()
	p.armSlice()
	return 0
}

func sysTimerGettime(p *Process, a [6]uint64) uint64 {
	t := p.timerByID(a[0])
	if t == nil {
		return errno(EINVAL)
	}
	if !p.writeGuest(a[1], p.timerSpec(t)) {
		return errno(EFAULT)
	}
	return 0
}

func sysTimerGetoverrun(p *Process, a [6]uint64) uint64 {
	t := p.timerByID(a[0])
	if t == nil {
		return errno(EINVAL)
	}
	return t.lastOver
}

func sysTimerDelete(p *Process, a [6]uint64) uint64 {
	t := p.timerByID(a[0])
	if t == nil {
		return errno(EINVAL)
	}
	p.timer.posix = slices.DeleteFunc(p.timer.posix, func(u *ptimer) bool { return u == t })
	p.armSlice()
	return 0
}

// execTimers carries over execve what Linux keeps of the old program's
// timers (old, with its process CPU clock at oldInsns): the interval
// timers of setitimer and alarm, a CPU-time one with what it had left
// (the new program's CPU clock starts again here), and the timerfds
// whose descriptors are still open. POSIX timers are deleted, as
// execve's exit_itimers does.
func (p *Process) execTimers(old *timerState, oldInsns uint64) {
	for i, t := range old.itimers {
		if t == nil {
			continue
		}
		if t.kind == clockProcessCPU && t.armed {
			t.expiry = p.Insns + (t.expiry - min(t.expiry, oldInsns))
		}
		p.timer.itimers[i] = t
	}
	p.timer.fds = old.fds
	p.liveTimerFDs()
}
