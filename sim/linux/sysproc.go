package linux

import (
	"errors"
	"syscall"
)

// Small process and file calls real programs make on their way: memory
// locking, scheduling parameters, credentials read back, personality,
// sync, close_range, flock and readahead.

// mlock, munlock, mlock2: guest memory is always resident, so locking
// changes nothing; a length that wraps is EINVAL, as Linux's checks.
func sysMlock(p *Process, a [6]uint64) uint64 {
	if a[0]+a[1] < a[0] {
		return errno(EINVAL)
	}
	return 0
}

// mlock2's only flag is MLOCK_ONFAULT (1).
func sysMlock2(p *Process, a [6]uint64) uint64 {
	if a[2]&^1 != 0 {
		return errno(EINVAL)
	}
	return sysMlock(p, a)
}

// mlockall: MCL_CURRENT (1), MCL_FUTURE (2), MCL_ONFAULT (4, only with
// one of the others).
func sysMlockall(p *Process, a [6]uint64) uint64 {
	if a[0] == 0 || a[0]&^7 != 0 || a[0] == 4 {
		return errno(EINVAL)
	}
	return 0
}

// Scheduling policies.
const (
	schedOther = 0
	schedFIFO  = 1
	schedRR    = 2
	schedBatch = 3
	schedIdle  = 5
)

// schedTarget checks a sched_* pid: 0 or a live thread of the run.
func (p *Process) schedTarget(pid uint64) uint64 {
	if int32(pid) < 0 {
		return errno(EINVAL)
	}
	if pid == 0 {
		return 0
	}
	if ts, _ := p.prioTargets(prioProcess, pid); ts == nil {
		return errno(ESRCH)
	}
	return 0
}

// sched_getscheduler: every thread runs SCHED_OTHER (the deterministic
// scheduler has no other policy).
func sysSchedGetscheduler(p *Process, a [6]uint64) uint64 {
	if e := p.schedTarget(a[0]); e != 0 {
		return e
	}
	return schedOther
}

// sched_getparam: SCHED_OTHER's priority, 0.
func sysSchedGetparam(p *Process, a [6]uint64) uint64 {
	if a[1] == 0 {
		return errno(EINVAL)
	}
	if e := p.schedTarget(a[0]); e != 0 {
		return e
	}
	if !p.Mem.Store(a[1], 4, 0, p.order()) {
		return errno(EFAULT)
	}
	return 0
}

// sched_get_priority_max and _min: 1..99 for the real-time policies, 0
// for the others, EINVAL for an unknown one (Linux's values).
func sysSchedGetPriorityMax(p *Process, a [6]uint64) uint64 {
	switch a[0] {
	case schedFIFO, schedRR:
		return 99
	case schedOther, schedBatch, schedIdle:
		return 0
	}
	return errno(EINVAL)
}

func sysSchedGetPriorityMin(p *Process, a [6]uint64) uint64 {
	switch a[0] {
	case schedFIFO, schedRR:
		return 1
	case schedOther, schedBatch, schedIdle:
		return 0
	}
	return errno(EINVAL)
}

// sched_rr_get_interval: the round-robin time slice of a thread, zero
// here. Every thread runs SCHED_OTHER, for which Linux answers its fair
// class's slice in whole jiffies: since 6.6 (EEVDF) the 0.75 ms base
// slice, which rounds down to 0 at every HZ up to 1000 (a host kernel,
// and so qemu-user, gives 0 too).
func sysSchedRRGetInterval(p *Process, a [6]uint64) uint64 {
	if e := p.schedTarget(a[0]); e != 0 {
		return e
	}
	if !p.putTimespec(a[1], 0, 1) {
		return errno(EFAULT)
	}
	return 0
}

// personality: 0xffffffff reads the persona; any other value is kept and
// the old one returned. simrun honours none of the flags (addresses are
// never randomized anyway).
func sysPersonality(p *Process, a [6]uint64) uint64 {
	old := p.sys.personality
	if uint32(a[0]) != 0xffffffff {
		p.sys.personality = uint32(a[0])
	}
	return uint64(old)
}

// sync and syncfs: the host's file system is synced.
func sysSync(p *Process, a [6]uint64) uint64 {
	syscall.Sync()
	return 0
}

func sysSyncfs(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.host != nil {
		return hostResult(f.host.Sync())
	}
	return 0
}

// sync_file_range(fd, offset, nbytes, flags): a negative offset or
// length, or a flag other than its three, is EINVAL; a pipe is ESPIPE.
func sysSyncFileRange(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if int64(a[1]) < 0 || int64(a[2]) < 0 || a[3]&^7 != 0 {
		return errno(EINVAL)
	}
	if f.kind == kindPipe {
		return errno(ESPIPE)
	}
	if f.kind == kindHost {
		return hostResult(f.host.Sync())
	}
	return 0
}

// close_range(first, last, flags): closes (or, with CLOSE_RANGE_CLOEXEC,
// marks close-on-exec) every open descriptor from first to last;
// CLOSE_RANGE_UNSHARE changes nothing (the table is the process's own).
func sysCloseRange(p *Process, a [6]uint64) uint64 {
	const unshare, cloexec = 2, 4
	first, last := uint64(uint32(a[0])), uint64(uint32(a[1]))
	if a[2]&^(unshare|cloexec) != 0 || first > last {
		return errno(EINVAL)
	}
	for fd := first; fd <= last && fd < uint64(len(p.fds)); fd++ {
		fe := p.fds[fd]
		if fe == nil || fe.reserved {
			continue
		}
		if a[2]&cloexec != 0 {
			fe.cloexec = true
		} else {
			p.closeFD(fd)
		}
	}
	return 0
}

// flock's operations.
const (
	lockSH = 1
	lockEX = 2
	lockNB = 4
	lockUN = 8
)

// flock locks the host file, so that the run's processes and the host's
// see each other's locks (per open file, as Linux's flock). The host call
// never waits: a lock another holder has makes the caller wait on the
// scheduler (EWOULDBLOCK with LOCK_NB), so that the holder can run.
func sysFlock(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	op := a[1] &^ lockNB
	if op != lockSH && op != lockEX && op != lockUN {
		return errno(EINVAL)
	}
	if f.kind == kindPath {
		return errno(EBADF)
	}
	if f.host == nil {
		return 0 // pipes, virtual files: nothing else can hold them
	}
	err := syscall.Flock(int(f.host.Fd()), int(op|lockNB))
	if errors.Is(err, syscall.EWOULDBLOCK) && a[1]&lockNB == 0 {
		return p.wouldBlock("flock held by another open file")
	}
	return hostResult(err)
}

// readahead: regular files only (EINVAL otherwise); it reads nothing
// ahead here.
func sysReadahead(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind != kindHost || !f.readable() {
		return errno(EINVAL)
	}
	return 0
}
