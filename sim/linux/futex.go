package linux

import (
	"math"

	"simrun/sim/cpu"
)

// futex(2) between the process's threads (Linux's kernel/futex): a
// waiter blocks its thread until a wake, its timeout on the virtual
// clock, or a signal (EINTR). Within a process private
// (FUTEX_PRIVATE_FLAG) and shared futexes are keyed alike, by address;
// a shared FUTEX_WAKE also wakes other processes' waiters on the same
// word of a MAP_SHARED page (sharedFutexWake). Waiters wake in the order they began to wait, as Linux's
// plist does for threads of one priority.

// futex operations and flags (include/uapi/linux/futex.h).
const (
	futexWait          = 0
	futexWake          = 1
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexLockPI        = 6
	futexUnlockPI      = 7
	futexTrylockPI     = 8
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexLockPI2       = 13
	futexPrivateFlag   = 128
	futexClockRealtime = 256
	futexCmdMask       = ^uint64(futexPrivateFlag | futexClockRealtime)

	futexWaiters   = 0x80000000
	futexOwnerDied = 0x40000000
	futexTidMask   = 0x3fffffff
)

func sysFutex(p *Process, a [6]uint64) uint64 {
	uaddr, op, val, utime, uaddr2, val3 := a[0], a[1], uint32(a[2]), a[3], a[4], uint32(a[5])
	cmd := op & futexCmdMask
	realtime := op&futexClockRealtime != 0
	if realtime && cmd != futexWaitBitset && cmd != futexLockPI2 {
		return errno(ENOSYS)
	}
	private := op&futexPrivateFlag != 0
	switch cmd {
	case futexWait, futexWaitBitset:
		bitset := ^uint32(0)
		if cmd == futexWaitBitset {
			bitset = val3
		}
		var deadline uint64
		var timed bool
		if utime != 0 {
			ns, r := p.readTimeout(utime)
			if r != 0 {
				return r
			}
			deadline, timed = p.deadline(ns, cmd == futexWaitBitset, realtime), true
		}
		return p.futexWait(uaddr, val, bitset, deadline, timed)
	case futexWake, futexWakeBitset:
		bitset := ^uint32(0)
		if cmd == futexWakeBitset {
			bitset = val3
		}
		if bitset == 0 {
			return errno(EINVAL)
		}
		if r := p.futexKey(uaddr, private); r != 0 {
			return r
		}
		woke := p.futexWake(uaddr, int32(val), bitset)
		if !private && p.sys.multi() && int64(woke) < int64(int32(val)) {
			woke += p.sharedFutexWake(uaddr, int32(val)-int32(woke), bitset)
		}
		return woke
	case futexRequeue, futexCmpRequeue:
		return p.futexRequeue(uaddr, uaddr2, int32(val), int32(uint32(utime)), val3, cmd == futexCmpRequeue, private)
	case futexWakeOp:
		return p.futexWakeOp(uaddr, uaddr2, int32(val), int32(uint32(utime)), val3, private)
	case futexLockPI, futexLockPI2, futexTrylockPI:
		var deadline uint64
		var timed bool
		if utime != 0 && cmd != futexTrylockPI {
			ns, r := p.readTimeout(utime)
			if r != 0 {
				return r
			}
			// LOCK_PI's timeout is absolute on CLOCK_REALTIME, LOCK_PI2's
			// on CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME.
			deadline, timed = p.deadline(ns, true, cmd == futexLockPI || realtime), true
		}
		return p.futexLockPI(uaddr, deadline, timed, cmd == futexTrylockPI)
	case futexUnlockPI:
		return p.futexUnlockPI(uaddr)
	}
	return errno(ENOSYS)
}

// readTimeout reads a struct timespec.
func (p *Process) readTimeout(addr uint64) (uint64, uint64) {
	b, ok := p.readGuest(addr, 16)
	if !ok {
		return 0, errno(EFAULT)
	}
	sec, nsec := int64(p.order().Uint64(b)), int64(p.order().Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return 0, errno(EINVAL)
	}
	if sec > math.MaxInt64/1_000_000_000-1 {
		return math.MaxInt64, 0
	}
	return uint64(sec)*1e9 + uint64(nsec), 0
}

// deadline turns a timeout into a monotonic-clock deadline: relative to
// now, or absolute on the monotonic or the real-time clock.
func (p *Process) deadline(ns uint64, absolute, realtime bool) uint64 {
	now := p.monoNow()
	if !absolute {
		return now + min(ns, math.MaxInt64)
	}
	if realtime {
		off := p.realtimeNanos() - now
		if ns < off {
			return 0
		}
		return ns - off
	}
	return ns
}

// futexKey checks a futex address as Linux's get_futex_key: it must be
// 4-byte aligned, and a shared futex's page must be mapped.
func (p *Process) futexKey(addr uint64, private bool) uint64 {
	if addr%4 != 0 {
		return errno(EINVAL)
	}
	if !private {
		if _, ok := p.Mem.Load(addr, 4, p.order()); !ok {
			return errno(EFAULT)
		}
	}
	return 0
}

// loadFutex reads the 32-bit futex word.
func (p *Process) loadFutex(addr uint64) (uint32, uint64) {
	if addr%4 != 0 {
		return 0, errno(EINVAL)
	}
	v, ok := p.Mem.Load(addr, 4, p.order())
	if !ok {
		return 0, errno(EFAULT)
	}
	return uint32(v), 0
}

func (p *Process) futexWait(addr uint64, val, bitset uint32, deadline uint64, timed bool) uint64 {
	if bitset == 0 {
		return errno(EINVAL)
	}
	v, r := p.loadFutex(addr)
	if r != 0 {
		return r
	}
	if v != val {
		return errno(EAGAIN)
	}
	if timed && deadline <= p.monoNow() {
		return errno(ETIMEDOUT)
	}
	p.block(addr, bitset, deadline, timed)
	return 0
}

// waiters returns the threads waiting on addr (not for a PI lock) whose
// bitset meets bitset, in the order they began to wait.
func (p *Process) waiters(addr uint64, bitset uint32, pi bool) []*thread {
	var out []*thread
	for _, t := range p.threads {
		if t.state == threadFutex && t.futex == addr && t.pi == pi && t.bitset&bitset != 0 {
			out = append(out, t)
		}
	}
	for i := 1; i < len(out); i++ { // few waiters: insertion sort by waitSeq
		for j := i; j > 0 && out[j].waitSeq < out[j-1].waitSeq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// futexWake wakes up to n waiters on addr (at least one, as Linux's loop
// counts after waking) and returns how many woke.
func (p *Process) futexWake(addr uint64, n int32, bitset uint32) uint64 {
	var woke uint64
	for _, t := range p.waiters(addr, bitset, false) {
		p.wakeThread(t, 0)
		woke++
		if int64(woke) >= int64(n) {
			break
		}
	}
	return woke
}

// sharedFutexWake wakes up to n waiters of other processes on the futex
// word at addr when it lies in a shared mapping they share with p (a
// process-shared semaphore, mutex or condition variable in a MAP_SHARED
// page), as Linux keys a shared futex by the page, not the address
// space; in pid order, each process's in the order they began to wait.
func (p *Process) sharedFutexWake(addr uint64, n int32, bitset uint32) uint64 {
	key, ok := p.Mem.SharedKey(addr)
	if !ok {
		return 0
	}
	var woke uint64
	for _, q := range p.sys.procs {
		if q == p || q.ended || q.Mem == p.Mem {
			continue // p's own (and a vfork child's, on p's memory) are woken
		}
		for _, t := range q.threads {
			if t.state != threadFutex || t.pi || t.bitset&bitset == 0 || t.futex&cpu.PageMask != addr&cpu.PageMask {
				continue
			}
			if k, ok := q.Mem.SharedKey(t.futex); !ok || k != key {
				continue
			}
			q.wakeThread(t, 0)
			if woke++; int64(woke) >= int64(n) {
				return woke
			}
		}
	}
	return woke
}

func (p *Process) futexRequeue(addr, addr2 uint64, nWake, nRequeue int32, val3 uint32, cmp, private bool) uint64 {
	if nWake < 0 || nRequeue < 0 {
		return errno(EINVAL)
	}
	if r := p.futexKey(addr, private); r != 0 {
		return r
	}
	if r := p.futexKey(addr2, private); r != 0 {
		return r
	}
	if cmp {
		v, r := p.loadFutex(addr)
		if r != 0 {
			return r
		}
		if v != val3 {
			return errno(EAGAIN)
		}
	}
	var woke, moved int32
	for _, t := range p.waiters(addr, ^uint32(0), false) {
		switch {
		case woke < nWake:
			p.wakeThread(t, 0)
			woke++
		case moved < nRequeue:
			t.futex = addr2
			moved++
		}
	}
	return uint64(woke + moved)
}

// futexWakeOp is FUTEX_WAKE_OP: the operation val3 encodes is applied to
// the word at addr2 (op 28-30, OPARG_SHIFT 31, cmp 24-27, oparg 12-23,
// cmparg 0-11, both sign-extended); up to nWake waiters on addr wake,
// and up to nWake2 on addr2 if the old value compares true.
func (p *Process) futexWakeOp(addr, addr2 uint64, nWake, nWake2 int32, enc uint32, private bool) uint64 {
	if r := p.futexKey(addr, private); r != 0 {
		return r
	}
	if addr2%4 != 0 {
		return errno(EINVAL)
	}
	op, cmp := (enc>>28)&7, (enc>>24)&15
	oparg := int32(enc<<8) >> 20
	cmparg := int32(enc<<20) >> 20
	if enc&(1<<31) != 0 {
		oparg = 1 << (uint32(oparg) & 31)
	}
	if op > 4 || cmp > 5 {
		return errno(ENOSYS)
	}
	oldU, r := p.loadFutex(addr2)
	if r != 0 {
		return r
	}
	old := int32(oldU)
	var nv int32
	switch op {
	case 0:
		nv = oparg
	case 1:
		nv = old + oparg
	case 2:
		nv = old | oparg
	case 3:
		nv = old &^ oparg
	case 4:
		nv = old ^ oparg
	}
	if !p.Mem.Store(addr2, 4, uint64(uint32(nv)), p.order()) {
		return errno(EFAULT)
	}
	woke := p.futexWake(addr, nWake, ^uint32(0))
	var hit bool
	switch cmp {
	case 0:
		hit = old == cmparg
	case 1:
		hit = old != cmparg
	case 2:
		hit = old < cmparg
	case 3:
		hit = old <= cmparg
	case 4:
		hit = old > cmparg
	case 5:
		hit = old >= cmparg
	}
	if hit {
		woke += p.futexWake(addr2, nWake2, ^uint32(0))
	}
	return woke
}

// futexLockPI is FUTEX_LOCK_PI (and TRYLOCK_PI): the word holds the
// owner's tid; a free word (tid 0) becomes the caller's, a taken one gets
// FUTEX_WAITERS and the caller waits until UNLOCK_PI hands the lock over.
// Priorities do not matter with one core and one priority.
func (p *Process) futexLockPI(addr uint64, deadline uint64, timed, try bool) uint64 {
	v, r := p.loadFutex(addr)
	if r != 0 {
		return r
	}
	me := sysGettid(p, [6]uint64{})
	owner := uint64(v & futexTidMask)
	switch {
	case owner == 0:
		// Free (perhaps with OWNER_DIED): take it, keeping the waiters bit.
		if !p.Mem.Store(addr, 4, uint64(v&futexWaiters)|me, p.order()) {
			return errno(EFAULT)
		}
		return 0
	case owner == me:
		return errno(EDEADLK)
	case p.threadByTid(owner) == nil:
		return errno(ESRCH)
	case try:
		return errno(EAGAIN)
	}
	if v&futexWaiters == 0 && !p.Mem.Store(addr, 4, uint64(v|futexWaiters), p.order()) {
		return errno(EFAULT)
	}
	if timed && deadline <= p.monoNow() {
		return errno(ETIMEDOUT)
	}
	p.block(addr, ^uint32(0), deadline, timed)
	p.cur.pi = true
	return 0
}

// futexUnlockPI releases a PI lock the caller owns: the first waiter
// becomes the owner (with FUTEX_WAITERS while more wait), else the word
// becomes 0.
func (p *Process) futexUnlockPI(addr uint64) uint64 {
	v, r := p.loadFutex(addr)
	if r != 0 {
		return r
	}
	me := sysGettid(p, [6]uint64{})
	if uint64(v&futexTidMask) != me {
		return errno(EPERM)
	}
	ws := p.waiters(addr, ^uint32(0), true)
	var nv uint64
	if len(ws) > 0 {
		nv = ws[0].tid
		if ws[0].tid == p.pid && p.selfAlias != 0 {
			nv = p.selfAlias
		}
		if len(ws) > 1 {
			nv |= futexWaiters
		}
	}
	if !p.Mem.Store(addr, 4, nv, p.order()) {
		return errno(EFAULT)
	}
	if len(ws) > 0 {
		p.wakeThread(ws[0], 0)
	}
	return 0
}
