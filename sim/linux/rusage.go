package linux

// Resource usage: getrusage(2), times(2) and the rusage wait4 and waitid
// fill. CPU time is the virtual CPU clock's: a retired instruction is
// 1 ns of user time (as CLOCK_PROCESS_CPUTIME_ID counts); system time is
// zero, the kernel's work being free here. A process's children's times
// are those of the children it waited for, with their own waited-for
// children's, as Linux adds them at the reaping wait. ru_maxrss is the
// run's guest memory in KiB (the processes share one account), at the
// call or at the child's end; the other fields are zero.

// getrusage's who.
const (
	rusageSelf     = 0
	rusageChildren = ^uint64(0) // -1
	rusageThread   = 1
)

// rusage encodes struct rusage (144 bytes on both 64-bit ABIs):
//
//	0 ru_utime (timeval)  16 ru_stime  32 ru_maxrss  40..143 the rest
func (p *Process) rusage(cpuNanos, maxRSS uint64) []byte {
	o := p.order()
	b := make([]byte, 0, 144)
	b = appendU64(o, b, cpuNanos/1e9)
	b = appendU64(o, b, cpuNanos%1e9/1e3)
	b = append(b, make([]byte, 16)...) // ru_stime
	b = appendU64(o, b, maxRSS)
	return append(b, make([]byte, 144-len(b))...)
}

// memKiB is the run's guest memory in KiB.
func (p *Process) memKiB() uint64 { return p.Mem.Used() >> 10 }

func sysGetrusage(p *Process, a [6]uint64) uint64 {
	var cpu, rss uint64
	switch a[0] {
	case rusageSelf:
		cpu, rss = p.Insns, p.memKiB()
	case rusageThread:
		cpu, rss = p.threadCPU(p.cur), p.memKiB()
	case rusageChildren:
		cpu, rss = p.childCPU, p.childMaxRSS
	default:
		return errno(EINVAL)
	}
	if !p.writeGuest(a[1], p.rusage(cpu, rss)) {
		return errno(EFAULT)
	}
	return 0
}

// ticksPerSecond is USER_HZ, the unit of times(2)'s clock_t values.
const ticksPerSecond = 100

// times fills struct tms (utime, stime, cutime, cstime, in clock ticks)
// when buf is not NULL and returns the ticks since boot (the virtual
// monotonic clock).
func sysTimes(p *Process, a [6]uint64) uint64 {
	if a[0] != 0 {
		o := p.order()
		b := appendU64(o, nil, p.Insns*ticksPerSecond/1e9)
		b = appendU64(o, b, 0)
		b = appendU64(o, b, p.childCPU*ticksPerSecond/1e9)
		b = appendU64(o, b, 0)
		if !p.writeGuest(a[0], b) {
			return errno(EFAULT)
		}
	}
	return p.monoNow() * ticksPerSecond / 1e9
}

// reaped adds the times of child c, which a wait collects, to p's
// children's, and returns c's rusage for the wait's caller.
func (p *Process) reaped(c *Process) []byte {
	cpu := c.Insns + c.childCPU
	p.childCPU += cpu
	p.childMaxRSS = max(p.childMaxRSS, c.maxRSS, c.childMaxRSS)
	return p.rusage(cpu, max(c.maxRSS, c.childMaxRSS))
}
