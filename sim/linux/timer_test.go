package linux

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// putItimerval writes a struct itimerval (interval, value) in µs.
func putItimerval(t *testing.T, p *Process, addr, intervalUS, valueUS uint64) uint64 {
	t.Helper()
	o := p.order()
	var b []byte
	for _, us := range []uint64{intervalUS, valueUS} {
		b = appendU64(o, appendU64(o, b, us/1e6), us%1e6)
	}
	require.True(t, p.writeGuest(addr, b))
	return addr
}

// putTimespecs writes consecutive struct timespecs (ns each).
func putTimespecs(t *testing.T, p *Process, addr uint64, ns ...uint64) uint64 {
	t.Helper()
	o := p.order()
	var b []byte
	for _, v := range ns {
		b = appendU64(o, appendU64(o, b, v/1e9), v%1e9)
	}
	require.True(t, p.writeGuest(addr, b))
	return addr
}

// cpuClockID is the clock id clock_getcpuclockid (thread false) or
// pthread_getcpuclockid (thread true) makes for pid, of type typ.
func cpuClockID(pid uint64, thread bool, typ uint64) uint64 {
	id := uint64(^int64(pid))<<3 | typ
	if thread {
		id |= 4
	}
	return id
}

// appendU32 appends v in p's byte order.
func appendU32(p *Process, b []byte, v uint32) []byte {
	var w [4]byte
	p.order().PutUint32(w[:], v)
	return append(b, w[:]...)
}

// u64At reads the guest's 64-bit word at addr.
func u64At(t *testing.T, p *Process, addr uint64) uint64 {
	t.Helper()
	v, ok := p.Mem.Load(addr, 8, p.order())
	require.True(t, ok)
	return v
}

// runInsns stands for n instructions retired: the core stops at each
// slice end the kernel sets, as Machine.stepBudget does.
func runInsns(p *Process, n uint64) {
	for n > 0 && !p.Exited() {
		step := n
		end := p.sliceEnd()
		if end != 0 {
			step = min(step, end-p.Insns)
		}
		p.Insns += step
		n -= step
		if end != 0 && p.Insns >= end {
			p.Preempt(p.Machine)
		}
	}
}

// TestItimerVirtualExact: ITIMER_VIRTUAL counts retired instructions, 1
// ns each: the slice ends exactly where it expires, its signal comes
// there, and with no timer armed no slice end is set at all.
func TestItimerVirtualExact(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			_, ok := p.timerEvent()
			require.False(t, ok, "no timer: nothing stops the core")
			// Ignored SIGVTALRM: the timer runs on, every 3 µs.
			sa := buf + 0x100
			require.True(t, p.writeGuest(sa, appendU64(p.order(), nil, sigIgn)))
			require.Equal(t, uint64(0), call(t, p, "rt_sigaction", sigVTALRM, sa, 0, 8))
			start := p.Insns
			require.Equal(t, uint64(0), call(t, p, "setitimer", itimerVirtual, putItimerval(t, p, buf, 3, 5), 0))
			e, ok := p.timerEvent()
			require.True(t, ok)
			require.Equal(t, start+5000, e)
			require.Equal(t, uint64(0), call(t, p, "getitimer", itimerVirtual, buf+0x40))
			require.Equal(t, []uint64{0, 3, 0, 5}, []uint64{u64At(t, p, buf+0x40), u64At(t, p, buf+0x48), u64At(t, p, buf+0x50), u64At(t, p, buf+0x58)})
			runInsns(p, 5000)
			e, _ = p.timerEvent()
			require.Equal(t, start+8000, e, "re-armed one interval on")
			require.False(t, p.Exited())

			// Its default action ends the process at the expiry.
			require.True(t, p.writeGuest(sa, appendU64(p.order(), nil, sigDfl)))
			require.Equal(t, uint64(0), call(t, p, "rt_sigaction", sigVTALRM, sa, 0, 8))
			runInsns(p, 2999)
			require.False(t, p.Exited())
			runInsns(p, 1)
			require.True(t, p.Exited())
			ex, err := p.Machine.RunFor(0)
			require.NoError(t, err)
			require.Equal(t, 128+sigVTALRM, ex.Status)
			require.Equal(t, start+8000, p.Insns)
		})
	}
}

// TestTimerSliceOff: disarming and deleting timers leaves no slice end,
// so the run loop again pays nothing.
func TestTimerSliceOff(t *testing.T) {
	p, buf := testProcess(t, "arm64")
	require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 100), 0))
	require.Equal(t, uint64(0), call(t, p, "timer_create", clockMonotonic, 0, buf+0x80))
	require.Equal(t, uint64(0), call(t, p, "timer_settime", 0, 0, putTimespecs(t, p, buf+0x100, 0, 1e6), 0))
	_, ok := p.timerEvent()
	require.True(t, ok)
	require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 0), 0))
	require.Equal(t, uint64(0), call(t, p, "timer_delete", 0))
	_, ok = p.timerEvent()
	require.False(t, ok)
}

// TestAlarm: alarm returns the seconds the last one had left, rounded to
// nearest, at least 1 while one is pending, as Linux.
func TestAlarm(t *testing.T) {
	p, _ := testProcess(t, "s390x")
	require.Equal(t, uint64(0), call(t, p, "alarm", 5))
	require.Equal(t, uint64(5), call(t, p, "alarm", 2))
	p.clockOff += 1_400_000_000
	require.Equal(t, uint64(1), call(t, p, "alarm", 2), "0.6 s left")
	p.clockOff += 1_999_000_000
	require.Equal(t, uint64(1), call(t, p, "alarm", 0), "1 ms left")
	require.Equal(t, uint64(0), call(t, p, "alarm", 0))
}

// TestTimerOverrun: expiries while the signal is pending are overruns,
// reported in si_overrun and by timer_getoverrun once the signal is
// taken; sigtimedwait takes it with SI_TIMER, the timer id and value.
func TestTimerOverrun(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			const rtmin = 34
			require.True(t, p.writeGuest(buf, appendU64(o, nil, sigBit(rtmin))))
			require.Equal(t, uint64(0), call(t, p, "rt_sigprocmask", 0, buf, 0, 8))
			// A CPU-time timer every 1 µs, SIGEV_SIGNAL with value 77.
			sev := buf + 0x40
			b := appendU64(o, nil, 77)
			b = appendU32(p, appendU32(p, b, rtmin), sigevSignal)
			require.True(t, p.writeGuest(sev, b))
			call(t, p, "timer_create", 2, 0, buf+0x80) // id 0, unused
			require.Equal(t, uint64(0), call(t, p, "timer_create", 2, sev, buf+0x80))
			id, _ := p.Mem.Load(buf+0x80, 4, o)
			require.Equal(t, uint64(1), id)
			require.Equal(t, uint64(0), call(t, p, "timer_settime", id, 0, putTimespecs(t, p, buf+0x100, 1000, 1000), 0))
			runInsns(p, 1000)
			require.Equal(t, sigBit(rtmin), p.sig.pendingSet())
			runInsns(p, 3500)
			require.Len(t, p.sig.pending, 1, "one signal, overruns counted")
			info := buf + 0x200
			require.Equal(t, uint64(rtmin), call(t, p, "rt_sigtimedwait", buf, info, 0, 8))
			si := guestBytes(t, p, info, 32)
			code := int32(siTimer)
			require.Equal(t, []uint64{rtmin, uint64(uint32(code)), 1, 3, 77},
				[]uint64{uint64(o.Uint32(si)), uint64(o.Uint32(si[8:])), uint64(o.Uint32(si[16:])), uint64(o.Uint32(si[20:])), o.Uint64(si[24:])})
			require.Equal(t, uint64(3), call(t, p, "timer_getoverrun", id))
			// timer_gettime: the interval and what is left of this period.
			require.Equal(t, uint64(0), call(t, p, "timer_gettime", id, buf+0x300))
			require.Equal(t, []uint64{0, 1000, 0, 500}, []uint64{u64At(t, p, buf+0x300), u64At(t, p, buf+0x308), u64At(t, p, buf+0x310), u64At(t, p, buf+0x318)})
			require.Equal(t, uint64(0), call(t, p, "timer_delete", id))
			require.Equal(t, errno(EINVAL), call(t, p, "timer_delete", id))
		})
	}
}

// TestTimerErrors: the errnos Linux gives for bad timer arguments.
func TestTimerErrors(t *testing.T) {
	p, buf := testProcess(t, "arm64")
	o := p.order()
	sev := func(signo, notify, tid uint32) uint64 {
		b := appendU32(p, appendU32(p, appendU32(p, appendU64(o, nil, 0), signo), notify), tid)
		require.True(t, p.writeGuest(buf+0x40, b))
		return buf + 0x40
	}
	for _, c := range []struct {
		name string
		args []uint64
		want uint64
	}{
		{"unknown clock", []uint64{77, 0, buf}, errno(EINVAL)},
		{"monotonic_raw", []uint64{4, 0, buf}, errno(ENOTSUP)},
		{"cpu clock of another process", []uint64{cpuClockID(4321, false, 2), 0, buf}, errno(EINVAL)},
		{"bad notify", []uint64{0, sev(10, 3, 0), buf}, errno(EINVAL)},
		{"bad signal", []uint64{0, sev(65, sigevSignal, 0), buf}, errno(EINVAL)},
		{"no signal", []uint64{0, sev(0, sigevThread, 0), buf}, errno(EINVAL)},
		{"unknown thread", []uint64{0, sev(10, sigevThreadID, 4321), buf}, errno(EINVAL)},
		{"unreadable sigevent", []uint64{0, 0x10, buf}, errno(EFAULT)},
		{"unwritable id", []uint64{0, 0, 0x10}, errno(EFAULT)},
	} {
		require.Equal(t, int64(c.want), int64(call(t, p, "timer_create", c.args...)), c.name)
	}
	require.Empty(t, p.timer.posix)
	require.Equal(t, uint64(0), call(t, p, "timer_create", clockRealtime, sev(10, sigevThreadID, guestPID), buf))
	require.Equal(t, errno(EINVAL), call(t, p, "timer_settime", 9, 0, putTimespecs(t, p, buf+0x100, 0, 1), 0), "unknown id")
	require.Equal(t, errno(EINVAL), call(t, p, "timer_settime", 0, 0, 0, 0), "no value")
	bad := appendU64(o, appendU64(o, appendU64(o, appendU64(o, nil, 0), 0), 0), 1e9)
	require.True(t, p.writeGuest(buf+0x100, bad))
	require.Equal(t, errno(EINVAL), call(t, p, "timer_settime", 0, 0, buf+0x100, 0), "nsec 1e9")
	require.Equal(t, errno(EFAULT), call(t, p, "timer_settime", 0, 0, 0x10, 0))
	require.Equal(t, errno(EFAULT), call(t, p, "timer_gettime", 0, 0x10))
	require.Equal(t, errno(EINVAL), call(t, p, "timer_gettime", 5, buf))
	require.Equal(t, uint64(0), call(t, p, "timer_gettime", 1<<40, buf), "timer_t is an int")
	require.Equal(t, errno(EINVAL), call(t, p, "timer_getoverrun", 5))
	require.Equal(t, errno(EINVAL), call(t, p, "setitimer", 3, 0, 0))
	require.Equal(t, errno(EINVAL), call(t, p, "getitimer", 3, buf))
	require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 0), 0), "disarmed")
	require.True(t, p.writeGuest(buf, appendU64(o, appendU64(o, nil, 0), 1e6)))
	require.Equal(t, errno(EINVAL), call(t, p, "setitimer", itimerReal, buf, 0), "usec 1e6")
	require.Equal(t, errno(EFAULT), call(t, p, "setitimer", itimerReal, 0x10, 0))
	require.Equal(t, errno(EFAULT), call(t, p, "getitimer", itimerReal, 0x10))
	require.Equal(t, errno(EINVAL), call(t, p, "rt_sigsuspend", buf, 4))
	require.Equal(t, errno(EFAULT), call(t, p, "rt_sigsuspend", 0x10, 8))
	require.Equal(t, errno(EINVAL), call(t, p, "rt_sigtimedwait", buf, 0, 0, 4))
	// As Linux (a raw syscall on Linux 6.x): CLOCK_THREAD_CPUTIME_ID has
	// no sleep, the caller's own per-thread clock id is refused, the
	// process's clock is slept on (an absolute time passed: at once).
	require.Equal(t, errno(ENOTSUP), call(t, p, "clock_nanosleep", 3, 0, buf, 0), "thread CPU clock")
	require.Equal(t, errno(EINVAL), call(t, p, "clock_nanosleep", cpuClockID(0, true, 2), 0, buf, 0), "own thread clock")
	require.Equal(t, errno(EINVAL), call(t, p, "clock_nanosleep", cpuClockID(guestPID, true, 2), 0, buf, 0), "own thread clock by tid")
	require.Equal(t, uint64(0), call(t, p, "clock_nanosleep", 2, timerAbstime, putTimespecs(t, p, buf+0x300, 1), 0), "process CPU clock, past")
	require.True(t, p.writeGuest(buf+0x100, bad))
	require.Equal(t, errno(EINVAL), call(t, p, "nanosleep", buf+0x110, 0), "nsec 1e9")
	require.Equal(t, errno(EFAULT), call(t, p, "nanosleep", 0x10, 0))
}

// TestCPUClocks: the process's CPU clock is its retired instructions, a
// thread's its own; pthread_getcpuclockid's ids name them; sleeping costs
// no CPU time.
func TestCPUClocks(t *testing.T) {
	p, buf := testProcess(t, "arm64")
	p.Insns = 123456
	ns, ok := p.clockNanos(2)
	require.True(t, ok)
	require.Equal(t, uint64(123456), ns)
	require.Equal(t, uint64(0), call(t, p, "nanosleep", putTimespecs(t, p, buf, 5e9), 0))
	ns, _ = p.clockNanos(2)
	require.Equal(t, uint64(123456), ns, "a sleep uses no CPU")
	mono, _ := p.clockNanos(clockMonotonic)
	require.Equal(t, uint64(123456+5e9), mono, "one thread: the clock jumps")
	thr := cpuClockID(guestPID, true, 2) // pthread_getcpuclockid(main)
	ns, ok = p.clockNanos(thr)
	require.True(t, ok)
	require.Equal(t, p.threadCPU(p.cur), ns)
	_, ok = p.clockNanos(cpuClockID(4321, true, 2))
	require.False(t, ok, "no such thread")
	_, ok = p.clockNanos(cpuClockID(0, false, 3))
	require.False(t, ok, "clock type 3 does not exist")
}

// TestRestartRules: what a handler makes of each interrupted call, and
// what happens without one, as Linux's arm64 and s390x do_signal.
func TestRestartRules(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, _ := testProcess(t, arch)
			n := p.Arch.SyscallInsnLen
			for _, c := range []struct {
				code    int
				handler bool
				flags   uint64
				eintr   bool // the call returns EINTR; else it runs again
			}{
				{errRestart, true, 0, true},
				{errRestart, true, saRestart, false},
				{errRestart, false, 0, false},
				{errRestartNoHand, true, saRestart, true},
				{errRestartNoHand, false, 0, false},
				{errRestartBlock, true, saRestart, true},
				{errRestartNoIntr, true, 0, false},
			} {
				const pc, arg = 0x40_1000, 0x77
				p.Core.SetPC(pc)
				p.Core.(cpu.GPRWriter).SetGPR(p.Arch.SyscallResult, arg)
				p.setResult(p.cur, errno(c.code))
				if c.handler {
					p.restartForHandler(c.flags)
				}
				p.finishRestart()
				var st cpu.State
				p.Core.State(&st)
				if c.eintr {
					require.Equal(t, []uint64{pc, errno(EINTR)}, []uint64{st.PC, st.GPR[p.Arch.SyscallResult]}, "%+v", c)
				} else {
					require.Equal(t, []uint64{pc - n, arg}, []uint64{st.PC, st.GPR[p.Arch.SyscallResult]}, "%+v: again, arguments intact", c)
				}
			}
		})
	}
}

// TestWaits: pause with nothing to wake it is a deadlock; sigsuspend
// with a signal already pending returns at once; sigtimedwait takes a
// pending signal, times out with EAGAIN, and a waiting thread is woken
// by the signal it waits for.
func TestWaits(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			require.True(t, p.writeGuest(buf, appendU64(o, nil, sigBit(10))))
			require.Equal(t, uint64(0), call(t, p, "rt_sigprocmask", 0, buf, 0, 8))
			require.Equal(t, uint64(0), call(t, p, "tgkill", guestPID, guestPID, 10))
			require.Equal(t, uint64(10), call(t, p, "rt_sigtimedwait", buf, 0, 0, 8))
			require.Equal(t, errno(EAGAIN), call(t, p, "rt_sigtimedwait", buf, 0, putTimespecs(t, p, buf+0x10, 0), 8))
			require.Equal(t, uint64(0), call(t, p, "tgkill", guestPID, guestPID, 10))
			require.True(t, p.writeGuest(buf+0x20, appendU64(o, nil, 0)))
			require.Equal(t, errno(errRestartNoHand), call(t, p, "rt_sigsuspend", buf+0x20, 8), "pending: at once")
			require.True(t, p.sig.hasSaved)
			p.finishRestart()
			require.Equal(t, sigBit(10), p.sig.mask, "the mask comes back")

			// A thread waits in sigtimedwait; a signal to the process
			// goes to it (it alone does not block it now).
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			p.sig.pending = nil
			p.reschedule()
			require.Equal(t, tid, p.cur.tid)
			require.True(t, p.writeGuest(buf, appendU64(o, nil, sigBit(12))))
			dispatch(t, p, "rt_sigprocmask", 0, buf, 0, 8)
			dispatch(t, p, "rt_sigtimedwait", buf, buf+0x200, 0, 8)
			child := p.threadByTid(tid)
			require.Equal(t, threadWait, child.state)
			require.Equal(t, uint64(guestPID), p.cur.tid)
			require.True(t, p.writeGuest(buf, appendU64(o, nil, sigBit(12))))
			dispatch(t, p, "rt_sigprocmask", 0, buf, 0, 8)
			require.Equal(t, uint64(0), call(t, p, "kill", guestPID, 12))
			require.Equal(t, threadRunnable, child.state)
			require.Equal(t, uint64(12), child.result)
			require.Equal(t, sigBit(12)|sigBit(10), child.sig.mask, "its mask is back")
			require.Empty(t, child.sig.pending)

			// Every thread pauses (arm64 has no pause: glibc's is
			// rt_sigsuspend with the mask as it is): nothing can wake them.
			require.True(t, p.writeGuest(buf+0x30, appendU64(o, nil, sigBit(10)|sigBit(12))))
			pause := func() {
				if arch == "s390x" {
					dispatch(t, p, "pause")
				} else {
					dispatch(t, p, "rt_sigsuspend", buf+0x30, 8)
				}
			}
			pause()
			require.Equal(t, tid, p.cur.tid)
			pause()
			require.True(t, p.Exited())
			ex, err := p.Machine.RunFor(0)
			require.NoError(t, err)
			require.Equal(t, 137, ex.Status)
			require.Contains(t, ex.Fault.Error(), map[string]string{"arm64": "tid 1000 in rt_sigsuspend", "s390x": "tid 1000 in pause"}[arch])
		})
	}
}

// TestSleepWithTimer: a sleep a timer's signal interrupts ends with
// ERESTART_RESTARTBLOCK (EINTR for the handler) and the time left; the
// clock has moved to the timer's expiry, not the sleep's end.
func TestSleepWithTimer(t *testing.T) {
	p, buf := testProcess(t, "arm64")
	sa := buf + 0x100
	require.True(t, p.writeGuest(sa, appendU64(p.order(), nil, 0x40_0000))) // a handler (never run here)
	require.Equal(t, uint64(0), call(t, p, "rt_sigaction", sigALRM, sa, 0, 8))
	start := p.monoNow()
	require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 1000), 0))
	require.Equal(t, uint64(0), call(t, p, "nanosleep", putTimespecs(t, p, buf+0x40, 3e9), buf+0x60))
	require.Equal(t, threadWait, p.cur.state)
	p.reschedule()
	require.Equal(t, threadRunnable, p.cur.state)
	require.Equal(t, start+1e6, p.monoNow())
	require.Equal(t, []uint64{2, 999e6}, []uint64{u64At(t, p, buf+0x60), u64At(t, p, buf+0x68)})
	require.Equal(t, uint64(1), p.Delivered(), "the handler was entered")
	require.Equal(t, uint64(0x40_0000), p.Core.PC())
	require.Zero(t, p.timer.restart, "settled: EINTR for the handler")
}

// TestPpollMask: ppoll's mask holds for the call: a signal it unblocks
// that is pending ends the call (ERESTARTNOHAND, so EINTR for the
// handler) whose frame then holds the mask from before the call; with
// nothing pending and a timeout, one thread's ppoll lets the clock jump to
// it and returns 0, the mask restored.
func TestPpollMask(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			require.Equal(t, uint64(0), dispatch(t, p, "pipe2", buf, 0))
			rfd, _ := p.Mem.Load(buf, 4, o)
			pfd := buf + 0x10 // struct pollfd {fd, events POLLIN, revents}
			require.True(t, p.writeGuest(pfd, appendU32(p, appendU32(p, nil, uint32(rfd)), uint32(pollin)<<map[string]uint{"arm64": 0, "s390x": 16}[arch])))
			mask := buf + 0x20
			require.True(t, p.writeGuest(mask, appendU64(o, nil, sigBit(10))))
			require.Equal(t, uint64(0), dispatch(t, p, "rt_sigprocmask", 0, mask, 0, 8))

			// Nothing pending: the 2 ms timeout passes on the clock.
			zero := buf + 0x28
			require.True(t, p.writeGuest(zero, appendU64(o, nil, 0)))
			ts := putTimespecs(t, p, buf+0x40, 2e6)
			start := p.monoNow()
			pc := p.Core.PC()
			dispatch(t, p, "ppoll", pfd, 1, ts, zero, 8)
			require.Equal(t, pc-p.Arch.SyscallInsnLen, p.Core.PC(), "it waited: the core runs the call again")
			p.Core.SetPC(pc)
			p.Syscall(p.Machine)
			var st cpu.State
			p.Core.State(&st)
			require.Equal(t, uint64(0), st.GPR[p.Arch.SyscallResult])
			require.Equal(t, start+2e6, p.monoNow())
			require.Equal(t, sigBit(10), p.sig.mask, "restored")
			require.Equal(t, []uint64{0, 0}, []uint64{u64At(t, p, ts), u64At(t, p, ts+8)}, "no time left")
			require.Equal(t, errno(EINVAL), dispatch(t, p, "ppoll", pfd, 1, ts, zero, 4))

			// SIGUSR1 pending, unblocked by ppoll's mask: its handler runs.
			sa := buf + 0x100
			require.True(t, p.writeGuest(sa, appendU64(o, nil, 0x40_0000)))
			require.Equal(t, uint64(0), dispatch(t, p, "rt_sigaction", 10, sa, 0, 8))
			require.Equal(t, uint64(0), dispatch(t, p, "tgkill", guestPID, guestPID, 10))
			require.Equal(t, uint64(0), p.Delivered())
			dispatch(t, p, "ppoll", pfd, 1, 0, zero, 8)
			require.Equal(t, uint64(1), p.Delivered())
			require.Equal(t, uint64(0x40_0000), p.Core.PC())
			require.False(t, p.sig.hasSaved, "the frame holds the mask from before")
			require.Zero(t, p.timer.restart)
		})
	}
}

// TestSleepRestartRemaining: a relative nanosleep that a signal
// interrupts, when no handler settles it (the signal is gone by the time
// the thread runs), runs again until the first call's end, not for its
// whole time again, as Linux's restart_syscall; a handler drops that
// end (the call gave EINTR).
func TestSleepRestartRemaining(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			sa := buf + 0x100
			require.True(t, p.writeGuest(sa, appendU64(p.order(), nil, 0x40_0000)))
			require.Equal(t, uint64(0), call(t, p, "rt_sigaction", 10, sa, 0, 8))
			// A wall timer due later keeps the lone thread from just
			// moving the clock on: it waits.
			require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 2e6), 0))
			start := p.monoNow()
			ts := putTimespecs(t, p, buf+0x40, 3e9)
			require.Equal(t, uint64(0), call(t, p, "nanosleep", ts, buf+0x60))
			require.Equal(t, threadWait, p.cur.state)
			p.clockOff += 1e6 // 1 ms passes, then SIGUSR1 interrupts ...
			p.interrupt(p.cur, 10)
			require.Equal(t, []uint64{2, 999e6}, []uint64{u64At(t, p, buf+0x60), u64At(t, p, buf+0x68)})
			p.switchTo(p.cur, false) // ... and is gone: no handler settles the call
			require.Equal(t, map[*thread]uint64{p.cur: start + 3e9}, p.timer.resume)
			require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 0), 0))
			call(t, p, "nanosleep", ts, buf+0x60)
			require.Equal(t, start+3e9, p.monoNow(), "slept the time left, not 3 s more")
			require.Empty(t, p.timer.resume)

			// With a handler the call ends in EINTR: nothing to resume.
			require.Equal(t, uint64(0), call(t, p, "setitimer", itimerReal, putItimerval(t, p, buf, 0, 2e6), 0))
			call(t, p, "nanosleep", ts, 0)
			require.Equal(t, uint64(0), call(t, p, "tgkill", guestPID, guestPID, 10))
			p.reschedule()
			require.Equal(t, uint64(0x40_0000), p.Core.PC(), "the handler runs")
			require.Empty(t, p.timer.resume)
		})
	}
}

// TestSleepOnCPUClock: clock_nanosleep on the process's CPU clock waits
// until the other threads have retired that many instructions; alone, the
// thread would wait for ever: the deadlock report.
func TestSleepOnCPUClock(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			p.sig.pending = nil
			main := p.cur
			start := p.Insns
			dispatch(t, p, "clock_nanosleep", 2, 0, putTimespecs(t, p, buf+0x40, 5000), 0)
			require.Equal(t, threadWait, main.state)
			require.Equal(t, tid, p.cur.tid, "the other thread runs")
			runInsns(p, 4000)
			require.Equal(t, threadWait, main.state)
			runInsns(p, 1000)
			require.Equal(t, threadRunnable, main.state, "woken at 5000 instructions of CPU time")
			require.Equal(t, start+5000, p.Insns)
			require.Empty(t, p.timer.sleeps)

			// Alone, nothing advances the process's CPU clock.
			q, qbuf := testProcess(t, arch)
			dispatch(t, q, "clock_nanosleep", 2, 0, putTimespecs(t, q, qbuf+0x40, 5000), 0)
			require.True(t, q.Exited())
			ex, err := q.Machine.RunFor(0)
			require.NoError(t, err)
			require.Contains(t, ex.Fault.Error(), "clock_nanosleep on a CPU clock")
		})
	}
}
