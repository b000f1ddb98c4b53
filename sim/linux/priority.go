package linux

// Nice values, as getpriority(2) and setpriority(2) read and set them.
// Linux keeps one per thread (the task's static priority); fork and clone
// copy the caller's, execve keeps it. The deterministic scheduler does not
// weigh them: they are kept and reported only.

// getpriority's and setpriority's "which".
const (
	prioProcess = 0 // who: a thread id (0: the caller)
	prioPgrp    = 1 // who: a process group (0: the caller's)
	prioUser    = 2 // who: a user id (0: the caller's)
)

// prioTargets returns the live threads which and who name, or an errno.
func (p *Process) prioTargets(which, who uint64) ([]*thread, uint64) {
	who = uint64(uint32(who)) // id_t
	var out []*thread
	switch which {
	case prioProcess:
		if who == 0 {
			return []*thread{p.cur}, 0
		}
	case prioPgrp:
		if who == 0 {
			who = p.pgid
		}
	case prioUser:
		if who == 0 {
			who = guestUID
		}
	default:
		return nil, errno(EINVAL)
	}
	for _, q := range p.sys.procs {
		if q.ended {
			continue
		}
		for _, t := range q.threads {
			switch {
			case which == prioProcess && t.tid == who,
				which == prioPgrp && q.pgid == who,
				which == prioUser && who == guestUID: // every guest process runs as guestUID
				out = append(out, t)
			}
		}
	}
	if len(out) == 0 {
		return nil, errno(ESRCH)
	}
	return out, 0
}

// getpriority returns 20 - nice of the highest-priority (lowest nice)
// thread named, as the raw syscall does (glibc turns it into the nice
// value).
func sysGetpriority(p *Process, a [6]uint64) uint64 {
	ts, e := p.prioTargets(a[0], a[1])
	if e != 0 {
		return e
	}
	best := int64(19)
	for _, t := range ts {
		best = min(best, int64(t.nice))
	}
	return uint64(20 - best)
}

// setpriority sets the nice value of every thread named, clamped to
// -20..19 as Linux clamps it. Lowering it needs CAP_SYS_NICE, which the
// guest (uid 0) has.
func sysSetpriority(p *Process, a [6]uint64) uint64 {
	ts, e := p.prioTargets(a[0], a[1])
	if e != 0 {
		return e
	}
	nice := int8(max(-20, min(19, int64(int32(a[2])))))
	for _, t := range ts {
		t.nice = nice
	}
	return 0
}
