package linux

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// dispatch makes the running thread's registers ask for syscall name
// with args and runs it through Process.Syscall, as the machine does
// (blocking, thread switches and all); it returns the result register of
// the thread running afterwards.
func dispatch(t *testing.T, p *Process, name string, args ...uint64) uint64 {
	t.Helper()
	nr, ok := p.Arch.Syscalls[name]
	require.True(t, ok, "no syscall %s", name)
	w := p.Core.(cpu.GPRWriter)
	first, nrReg := 0, 8 // arm64: x0-x5, number in x8
	if p.Arch.Name == "s390x" {
		first, nrReg = 2, 1 // r2-r7, number in r1 (svc 0)
	}
	for i := range 6 {
		var v uint64
		if i < len(args) {
			v = args[i]
		}
		w.SetGPR(first+i, v)
	}
	w.SetGPR(nrReg, nr)
	p.Syscall(p.Machine)
	var st cpu.State
	p.Core.State(&st)
	return st.GPR[p.Arch.SyscallResult]
}

// threadCloneArgs are clone's arguments in arch's order.
func threadCloneArgs(arch string, flags, stack, ptid, ctid, tls uint64) []uint64 {
	if arch == "s390x" {
		return []uint64{stack, flags, ptid, ctid, tls}
	}
	return []uint64{flags, stack, ptid, tls, ctid}
}

const glibcThreadFlags = cloneVM | cloneFS | cloneFiles | cloneSighand | cloneThread | cloneSysvsem |
	cloneSettls | cloneParentSettid | cloneChildCleartid

func TestFutexErrors(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			require.True(t, p.Mem.Store(buf, 4, 5, o))
			next := buf + 256
			putTS := func(sec, nsec uint64) uint64 { // each in a place of its own
				ts := next
				next += 16
				require.True(t, p.writeGuest(ts, appendU64(o, appendU64(o, nil, sec), nsec)))
				return ts
			}
			const priv = futexPrivateFlag
			for _, c := range []struct {
				name string
				args []uint64
				want uint64
			}{
				{"wait misaligned", []uint64{buf + 2, futexWait, 5}, errno(EINVAL)},
				{"wait unmapped", []uint64{0x10, futexWait | priv, 5}, errno(EFAULT)},
				{"wait value differs", []uint64{buf, futexWait | priv, 4}, errno(EAGAIN)},
				{"wait_bitset 0", []uint64{buf, futexWaitBitset, 5, 0, 0, 0}, errno(EINVAL)},
				{"wait bad timeout", []uint64{buf, futexWait, 5, putTS(0, 1e9)}, errno(EINVAL)},
				{"wait timeout unmapped", []uint64{buf, futexWait, 5, 0x10}, errno(EFAULT)},
				{"wait realtime", []uint64{buf, futexWait | futexClockRealtime, 5}, errno(ENOSYS)},
				{"wait_bitset past deadline", []uint64{buf, futexWaitBitset | futexClockRealtime, 5, putTS(1, 0), 0, ^uint64(0)}, errno(ETIMEDOUT)},
				{"wake none", []uint64{buf, futexWake | priv, 1}, 0},
				{"wake misaligned", []uint64{buf + 1, futexWake, 1}, errno(EINVAL)},
				{"wake shared unmapped", []uint64{0x10, futexWake, 1}, errno(EFAULT)},
				{"wake private unmapped", []uint64{0x10, futexWake | priv, 1}, 0},
				{"wake_bitset 0", []uint64{buf, futexWakeBitset, 1, 0, 0, 0}, errno(EINVAL)},
				{"cmp_requeue differs", []uint64{buf, futexCmpRequeue, 1, 1, buf + 4, 4}, errno(EAGAIN)},
				{"cmp_requeue", []uint64{buf, futexCmpRequeue, 1, 1, buf + 4, 5}, 0},
				{"requeue negative", []uint64{buf, futexRequeue, ^uint64(0), 1, buf + 4}, errno(EINVAL)},
				{"wake_op misaligned", []uint64{buf, futexWakeOp, 1, 1, buf + 6, 0}, errno(EINVAL)},
				{"wake_op bad op", []uint64{buf, futexWakeOp, 1, 1, buf + 8, 7 << 28}, errno(ENOSYS)},
				{"futex_fd", []uint64{buf, 2, 0}, errno(ENOSYS)},
				{"unlock_pi not owner", []uint64{buf, futexUnlockPI}, errno(EPERM)},
				{"trylock_pi no owner thread", []uint64{buf, futexTrylockPI}, errno(ESRCH)},
			} {
				require.Equal(t, int64(c.want), int64(call(t, p, "futex", c.args...)), c.name)
			}
			// WAKE_OP: ADD 2 to the second word (3), compare old == 3.
			require.True(t, p.Mem.Store(buf+8, 4, 3, o))
			require.Equal(t, uint64(0), call(t, p, "futex", buf, futexWakeOp, 1, 1, buf+8, 1<<28|0<<24|2<<12|3))
			v, _ := p.Mem.Load(buf+8, 4, o)
			require.Equal(t, uint64(5), v)
			// LOCK_PI on a free word takes it; again is EDEADLK; UNLOCK_PI frees it.
			require.True(t, p.Mem.Store(buf+12, 4, 0, o))
			require.Equal(t, uint64(0), call(t, p, "futex", buf+12, futexLockPI))
			v, _ = p.Mem.Load(buf+12, 4, o)
			require.Equal(t, uint64(guestPID), v)
			require.Equal(t, errno(EDEADLK), call(t, p, "futex", buf+12, futexLockPI))
			require.Equal(t, uint64(0), call(t, p, "futex", buf+12, futexUnlockPI))
			v, _ = p.Mem.Load(buf+12, 4, o)
			require.Equal(t, uint64(0), v)

			// A timed wait with no other thread: virtual time jumps to
			// its deadline and it times out.
			before := p.monoNow()
			r := dispatch(t, p, "futex", buf, futexWait|priv, 5, putTS(0, 3_000_000))
			require.Equal(t, int64(errno(ETIMEDOUT)), int64(r))
			require.GreaterOrEqual(t, p.monoNow()-before, uint64(3_000_000))
			require.False(t, p.Exited())
			// Without a timeout it is a deadlock.
			dispatch(t, p, "futex", buf, futexWait|priv, 5)
			require.True(t, p.Exited())
			ex, err := p.Machine.RunFor(0)
			require.NoError(t, err)
			require.Equal(t, 137, ex.Status)
			require.Contains(t, ex.Fault.Error(), "deadlock")
			require.Contains(t, ex.Fault.Error(), "tid 1000 in futex wait on 0x")
		})
	}
}

func TestCloneFlags(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			var notes bytes.Buffer
			p.Cfg.Notes = &notes
			stack := buf + 0x8000
			for _, c := range []struct {
				name  string
				flags uint64
				want  uint64
			}{
				{"thread without sighand", cloneVM | cloneFS | cloneFiles | cloneThread, errno(EINVAL)},
				{"sighand without vm", cloneSighand | cloneFS | cloneFiles, errno(EINVAL)},
				{"newns with fs", cloneNewNS | cloneFS, errno(EINVAL)},
				{"thread with newpid", threadFlags | cloneNewPID, errno(EINVAL)},
				{"pidfd with thread", threadFlags | clonePidfd, errno(EINVAL)},
			} {
				require.Equal(t, int64(c.want), int64(dispatch(t, p, "clone", threadCloneArgs(arch, c.flags, stack, 0, 0, 0)...)), c.name)
			}
			require.Empty(t, notes.String(), "EINVAL is the program's doing: nothing told")
			// A new process in a namespace is denied, told once.
			for _, fl := range []uint64{17 /* SIGCHLD */ | cloneNewPID, cloneVM | cloneVfork | 17 | cloneNewNS} {
				require.Equal(t, int64(errno(ENOSYS)), int64(dispatch(t, p, "clone", threadCloneArgs(arch, fl, 0, 0, 0, 0)...)))
			}
			require.Equal(t, 1, bytes.Count(notes.Bytes(), []byte("simrun: clone(")), notes.String())
			require.Len(t, p.threads, 1)

			// glibc's thread: the parent gets the tid, written at ptid.
			ptid, ctid := buf+0x100, buf+0x104
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags|cloneChildSettid, stack, ptid, ctid, 0x1234_5678_9abc)...)
			require.Equal(t, uint64(1001), tid)
			for _, a := range []uint64{ptid, ctid} {
				v, _ := p.Mem.Load(a, 4, p.order())
				require.Equal(t, uint64(1001), v)
			}
			require.Len(t, p.threads, 2)
			require.Equal(t, uint64(guestPID), call(t, p, "gettid"))
			require.Equal(t, ctid, p.threads[1].clearTid)

			// clone3's checks of struct clone_args.
			args := buf + 0x200
			o := p.order()
			putArgs := func(f ...uint64) {
				b := make([]byte, 88)
				for i, v := range f {
					o.PutUint64(b[8*i:], v)
				}
				require.True(t, p.writeGuest(args, b))
			}
			putArgs(glibcThreadFlags, 0, ctid, ptid, 0, buf, 0x4000, 0)
			require.Equal(t, errno(EINVAL), call(t, p, "clone3", args, 56), "size below 64")
			require.Equal(t, errno(E2BIG), call(t, p, "clone3", args, 8192), "size over a page")
			require.True(t, p.Mem.Store(args+96, 8, 1, o))
			require.Equal(t, errno(E2BIG), call(t, p, "clone3", args, 104), "unknown nonzero field")
			require.Equal(t, errno(EFAULT), call(t, p, "clone3", 0x10, 88))
			putArgs(glibcThreadFlags, 0, ctid, ptid, 0, buf, 0, 0)
			require.Equal(t, errno(EINVAL), call(t, p, "clone3", args, 88), "stack without a size")
			putArgs(glibcThreadFlags, 0, ctid, ptid, 17, buf, 0x4000, 0)
			require.Equal(t, errno(EINVAL), call(t, p, "clone3", args, 88), "exit signal for a thread")
			putArgs(glibcThreadFlags|cSignal&17, 0, ctid, ptid, 0, buf, 0x4000, 0)
			require.Equal(t, errno(EINVAL), call(t, p, "clone3", args, 88), "CSIGNAL bits in clone3's flags")
			putArgs(glibcThreadFlags, 0, ctid, ptid, 0, buf, 0x4000, 0)
			require.Equal(t, uint64(1002), call(t, p, "clone3", args, 88))
			require.Len(t, p.threads, 3)
		})
	}
}

// TestExitThread: exit ends one thread (clearing its tid word and waking
// the joiner), exit_group the process.
func TestExitThread(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			ctid := buf + 0x100
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags|cloneChildSettid, buf+0x8000, 0, ctid, 0x77)...)
			require.Equal(t, uint64(1001), tid)
			// The main thread waits for the child as pthread_join does:
			// the child runs, its clone returning 0 on its own stack.
			r := dispatch(t, p, "futex", ctid, futexWait, tid)
			require.Equal(t, uint64(1001), p.cur.tid)
			require.Equal(t, uint64(0), r)
			var st cpu.State
			p.Core.State(&st)
			require.Equal(t, buf+0x8000, st.GPR[p.Arch.DwarfSP])
			if arch == "s390x" {
				require.Equal(t, [2]uint32{0, 0x77}, [2]uint32{st.AR[0], st.AR[1]})
			}
			require.Equal(t, uint64(1001), call(t, p, "gettid"))
			// The child exits: the word becomes 0 and the main thread
			// runs on, its futex wait returning 0.
			r = dispatch(t, p, "exit", 3)
			require.False(t, p.Exited())
			require.Equal(t, uint64(guestPID), p.cur.tid)
			require.Equal(t, uint64(0), r)
			v, _ := p.Mem.Load(ctid, 4, p.order())
			require.Equal(t, uint64(0), v)
			require.Len(t, p.threads, 1)
			ts := p.ThreadStats()
			require.Equal(t, 2, ts.Threads)
			require.Equal(t, uint64(2), ts.Switches)
			require.Equal(t, []uint64{guestPID, 1001}, []uint64{ts.Insns[0].Tid, ts.Insns[1].Tid})

			// exit_group ends every thread at once.
			dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			require.Len(t, p.threads, 2)
			dispatch(t, p, "exit_group", 7)
			require.True(t, p.Exited())
			ex, err := p.Machine.RunFor(0)
			require.NoError(t, err)
			require.Equal(t, 7, ex.Status)
		})
	}
}

// TestTgkill: a signal to a waiting thread wakes its futex wait (to
// end in EINTR or a restart) and stays pending for it; an unknown tid is ESRCH.
func TestTgkill(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			require.Equal(t, errno(ESRCH), call(t, p, "tgkill", guestPID, 1234, 10))
			require.Equal(t, errno(EINVAL), call(t, p, "tgkill", guestPID, tid, 65))
			// The child waits; the main thread (next in turn) signals it
			// with SIGUSR1 blocked in the child, then unblocks it.
			require.True(t, p.Mem.Store(buf, 4, 0, p.order()))
			p.reschedule()
			require.Equal(t, tid, p.cur.tid)
			p.cur.sig.mask = sigBit(10)
			dispatch(t, p, "futex", buf, futexWait, 0)
			require.Equal(t, uint64(guestPID), p.cur.tid)
			child := p.threadByTid(tid)
			require.Equal(t, uint64(0), call(t, p, "tgkill", guestPID, tid, 10))
			require.Equal(t, threadFutex, child.state, "a blocked signal does not interrupt the wait")
			require.Equal(t, uint64(0), call(t, p, "tkill", tid, 12))
			require.Equal(t, threadRunnable, child.state)
			// ERESTARTSYS: EINTR once a handler runs (or, with
			// SA_RESTART, the wait again); here SIGUSR2 kills.
			require.Equal(t, errno(errRestart), child.result)
			require.Equal(t, sigBit(10)|sigBit(12), child.sig.pendingSet())
			require.Empty(t, p.sig.pending, "the main thread has none")
		})
	}
}

// TestOneCPU: affinity, getcpu and membarrier on the one core.
func TestOneCPU(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			require.True(t, p.Mem.Store(buf, 8, 1, o))
			require.Equal(t, uint64(0), call(t, p, "sched_setaffinity", 0, 8, buf))
			require.Equal(t, uint64(0), call(t, p, "sched_setaffinity", guestPID, 8, buf))
			require.Equal(t, errno(ESRCH), call(t, p, "sched_setaffinity", 4321, 8, buf))
			require.Equal(t, errno(EFAULT), call(t, p, "sched_setaffinity", 0, 8, 0x10))
			require.True(t, p.Mem.Store(buf, 8, 2, o))
			require.Equal(t, errno(EINVAL), call(t, p, "sched_setaffinity", 0, 8, buf), "CPU 1 only")

			require.True(t, p.Mem.Store(buf+8, 8, ^uint64(0), o))
			require.Equal(t, uint64(0), call(t, p, "getcpu", buf+8, buf+12, 0))
			v, _ := p.Mem.Load(buf+8, 8, o)
			require.Equal(t, uint64(0), v)
			require.Equal(t, errno(EFAULT), call(t, p, "getcpu", 0x10, 0, 0))

			q := call(t, p, "membarrier", membarrierQuery, 0)
			require.NotZero(t, q&membarrierPrivateExpedited)
			require.Equal(t, errno(EPERM), call(t, p, "membarrier", membarrierPrivateExpedited, 0), "not registered")
			require.Equal(t, uint64(0), call(t, p, "membarrier", membarrierRegisterPrivate, 0))
			require.Equal(t, uint64(0), call(t, p, "membarrier", membarrierPrivateExpedited, 0))
			require.Equal(t, errno(EINVAL), call(t, p, "membarrier", membarrierGlobal, 1), "flags")
			require.Equal(t, errno(EINVAL), call(t, p, "membarrier", 1<<20, 0))

			// sched_yield with one thread keeps it running; with two it
			// hands over to the other.
			require.Equal(t, uint64(0), dispatch(t, p, "sched_yield"))
			require.Equal(t, uint64(guestPID), p.cur.tid)
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			require.Equal(t, uint64(0), dispatch(t, p, "sched_yield"))
			require.Equal(t, tid, p.cur.tid)
			require.Equal(t, uint64(0), dispatch(t, p, "sched_yield"))
			require.Equal(t, uint64(guestPID), p.cur.tid)
		})
	}
}

// TestPipeWait: a read from an empty pipe blocks its thread with the pc
// back on the syscall instruction, to run it again; the other thread's
// next completed syscall wakes it. With one thread it is a deadlock.
func TestPipeWait(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			require.Equal(t, uint64(0), call(t, p, "pipe2", buf, 0))
			rfd, wfd := uint64(p.order().Uint32(guestBytes(t, p, buf, 4))), uint64(p.order().Uint32(guestBytes(t, p, buf+4, 4)))
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			pc := p.Core.PC()
			dispatch(t, p, "read", rfd, buf+0x100, 16)
			require.Equal(t, tid, p.cur.tid, "the reader waits, the other thread runs")
			main := p.threadByTid(guestPID)
			require.Equal(t, threadIO, main.state)
			require.Equal(t, pc-p.Arch.SyscallInsnLen, main.pc, "back on the svc")
			require.Contains(t, p.ThreadList(), "tid 1000 in read from an empty pipe")
			require.Equal(t, uint64(3), dispatch(t, p, "write", wfd, putString(t, p, buf+0x200, "abc"), 3))
			require.Equal(t, threadRunnable, main.state)

			// Alone, the reader could never be served.
			q, qbuf := testProcess(t, arch)
			require.Equal(t, uint64(0), call(t, q, "pipe2", qbuf, 0))
			dispatch(t, q, "read", uint64(q.order().Uint32(guestBytes(t, q, qbuf, 4))), qbuf+0x100, 16)
			require.True(t, q.Exited())
			ex, err := q.Machine.RunFor(0)
			require.NoError(t, err)
			require.Contains(t, ex.Fault.Error(), "deadlock: read from an empty pipe")
		})
	}
}
