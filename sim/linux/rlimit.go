package linux

// Resource limits (getrlimit, setrlimit, prlimit64). Each process has its
// own, inherited at fork and kept across execve, as Linux keeps them in
// the signal struct. The guest is uid 0, with CAP_SYS_RESOURCE: it may
// raise a hard limit too, up to nr_open (1048576) for RLIMIT_NOFILE.
//
// Enforced: RLIMIT_NOFILE (the descriptors a call may make, dup2's and
// F_DUPFD's bounds, poll's count; at most maxFDsCap, which bounds the
// host memory of the table). Kept and reported only: the others. Linux
// does not hold root to RLIMIT_NPROC (--max-procs bounds forks instead);
// the stack of a new program stays 8 MiB, CPU time and file sizes are
// not bounded, memory is bounded by --max-memory.

const (
	rlimitStack  = 3
	rlimitNproc  = 6
	rlimitNofile = 7
	rlimitCount  = 16 // RLIM_NLIMITS
	rlimInfinity = ^uint64(0)
	nrOpen       = 1 << 20 // fs.nr_open's default
	maxFDsCap    = 1 << 16 // the largest descriptor table simrun keeps
)

// rlimits are a process's limits that differ from the defaults, by
// resource: set[r] says rlim[r] holds {cur, max}.
type rlimits struct {
	rlim [rlimitCount][2]uint64
	set  [rlimitCount]bool
}

// defaultRlimit is a resource's limits before any setrlimit: the stack
// 8 MiB, 1024/4096 descriptors, --max-procs processes, the rest
// unlimited.
func (p *Process) defaultRlimit(res uint64) (cur, max uint64) {
	switch res {
	case rlimitStack:
		return stackSize, rlimInfinity
	case rlimitNofile:
		return 1024, 4096
	case rlimitNproc:
		n := uint64(p.sys.maxProcs())
		return n, n
	}
	return rlimInfinity, rlimInfinity
}

// rlimit returns p's limits of resource res; ok is false for an unknown
// resource.
func (p *Process) rlimit(res uint64) (cur, max uint64, ok bool) {
	if res >= rlimitCount {
		return 0, 0, false
	}
	if p.limits.set[res] {
		return p.limits.rlim[res][0], p.limits.rlim[res][1], true
	}
	cur, max = p.defaultRlimit(res)
	return cur, max, true
}

// fdLimit is the first descriptor number p may not use.
func (p *Process) fdLimit() uint64 {
	cur, _, _ := p.rlimit(rlimitNofile)
	return min(cur, maxFDsCap)
}

// setRlimit applies prlimit64's new limits to q.
func (q *Process) setRlimit(res, cur, max uint64) uint64 {
	if cur > max {
		return errno(EINVAL)
	}
	if res == rlimitNofile && max > nrOpen {
		return errno(EPERM)
	}
	q.limits.rlim[res] = [2]uint64{cur, max}
	q.limits.set[res] = true
	return 0
}

// prlimit64(pid, resource, new, old): pid 0 or any live process of the
// run.
func sysPrlimit64(p *Process, a [6]uint64) uint64 {
	q := p
	if a[0] != 0 && !p.isSelf(a[0]) {
		if q = p.sys.byPid(a[0]); q == nil || q.ended {
			return errno(ESRCH)
		}
	}
	cur, max, ok := q.rlimit(a[1])
	if !ok {
		return errno(EINVAL)
	}
	var nb []byte
	if a[2] != 0 {
		if nb, ok = p.readGuest(a[2], 16); !ok {
			return errno(EFAULT)
		}
	}
	if a[3] != 0 && !p.writeGuest(a[3], appendU64(p.order(), appendU64(p.order(), nil, cur), max)) {
		return errno(EFAULT)
	}
	if nb != nil {
		return q.setRlimit(a[1], p.order().Uint64(nb), p.order().Uint64(nb[8:]))
	}
	return 0
}

func sysGetrlimit(p *Process, a [6]uint64) uint64 {
	return sysPrlimit64(p, [6]uint64{0, a[0], 0, a[1]})
}

func sysSetrlimit(p *Process, a [6]uint64) uint64 {
	return sysPrlimit64(p, [6]uint64{0, a[0], a[1], 0})
}
