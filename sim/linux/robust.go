package linux

// Robust futex lists (Linux's set_robust_list/get_robust_list, and the
// walk the kernel makes when a thread dies: kernel/futex/core.c
// exit_robust_list).
//
// qemu-user 7.2 refuses set_robust_list with ENOSYS and glibc then keeps
// no list; simrun does the same unless Config.RobustFutexes is set, since
// glibc's start-up takes another path (and another instruction count)
// when the call succeeds.
//
// The list a thread registers lives in guest memory:
//
//	head (24 bytes):  +0  next entry      (the head's own address: empty)
//	                  +8  futex_offset    (signed: entry + offset = futex word)
//	                  +16 list_op_pending (an entry being added or removed)
//
// Each entry's first word is the next entry; bit 0 of an entry pointer
// says the futex is a priority-inheritance one.

const (
	robustHeadSize  = 24
	robustListLimit = 2048 // Linux's ROBUST_LIST_LIMIT: a cyclic list stops here
)

func sysSetRobustList(p *Process, a [6]uint64) uint64 {
	if !p.Cfg.RobustFutexes {
		return errno(ENOSYS)
	}
	if a[1] != robustHeadSize {
		return errno(EINVAL)
	}
	p.cur.robustList = a[0]
	return 0
}

// sysGetRobustList stores the head registered by thread a[0] (0: the
// caller) at a[1] and its size at a[2].
func sysGetRobustList(p *Process, a [6]uint64) uint64 {
	if !p.Cfg.RobustFutexes {
		return errno(ENOSYS)
	}
	t := p.cur
	if a[0] != 0 {
		if t = p.threadByTid(a[0]); t == nil {
			return errno(ESRCH)
		}
	}
	if !p.Mem.Store(a[2], 8, robustHeadSize, p.order()) || !p.Mem.Store(a[1], 8, t.robustList, p.order()) {
		return errno(EFAULT)
	}
	return 0
}

// walkRobustList releases the futexes the dying current thread still
// holds, as Linux does at its exit: each word whose owner is the thread
// gets FUTEX_OWNER_DIED and one waiter is woken. A list that cannot be
// read (bad pointers, a cycle) is walked as far as it can be, silently.
func (p *Process) walkRobustList() {
	t := p.cur
	head := t.robustList
	if head == 0 {
		return
	}
	t.robustList = 0
	load := func(addr uint64) (uint64, bool) { return p.Mem.Load(addr, 8, p.order()) }
	next, ok1 := load(head)
	off, ok2 := load(head + 8)
	pending, ok3 := load(head + 16)
	if !ok1 || !ok2 || !ok3 {
		return
	}
	tid := p.visibleTid(t)
	entry := next
	for n := 0; entry&^1 != head && n < robustListLimit; n++ {
		nextEntry, ok := load(entry &^ 1)
		if entry != pending && !p.futexOwnerDied(entry&^1+off, tid, entry&1 != 0, false) {
			return
		}
		if !ok {
			return
		}
		entry = nextEntry
	}
	if pending != 0 {
		p.futexOwnerDied(pending&^1+off, tid, pending&1 != 0, true)
	}
}

// futexOwnerDied is Linux's handle_futex_death for the word at addr
// held by tid; false stops the walk (a misaligned or unreadable word).
// A pending entry whose word is still 0 was being locked: its waiter, if
// any, is woken to retry.
func (p *Process) futexOwnerDied(addr, tid uint64, pi, pendingOp bool) bool {
	if addr&3 != 0 {
		return false
	}
	v, ok := p.Mem.Load(addr, 4, p.order())
	if !ok {
		return false
	}
	if pendingOp && !pi && v == 0 {
		p.futexWake(addr, 1, ^uint32(0))
		return true
	}
	if v&futexTidMask != tid {
		return true
	}
	nv := v&futexWaiters | futexOwnerDied
	var heir *thread
	if pi {
		// The lock passes to its first waiter, marked as inherited from
		// a dead owner (Linux hands the pi_state over the same way).
		if ws := p.waiters(addr, ^uint32(0), true); len(ws) > 0 {
			heir = ws[0]
			nv = p.visibleTid(heir) | futexOwnerDied
			if len(ws) > 1 {
				nv |= futexWaiters
			}
		} else {
			nv = futexOwnerDied
		}
	}
	if !p.Mem.Store(addr, 4, nv, p.order()) {
		return false
	}
	switch {
	case heir != nil:
		p.wakeThread(heir, 0)
	case !pi && v&futexWaiters != 0:
		p.futexWake(addr, 1, ^uint32(0))
	}
	return true
}
