package linux

import (
	"encoding/binary"
	"fmt"
	"io"
	"simrun/sim/cpu"
	"sort"
)

// Support is how completely simrun implements a syscall.
type Support uint8

const (
	Unsupported Support = iota // returns -ENOSYS (a fault under --strict)
	Full                       // behaves as on Linux for a single-threaded process
	Partial                    // works for the cases programs use; the note says which
	Denied                     // recognised and refused with a documented errno
)

func (s Support) String() string {
	switch s {
	case Full:
		return "full"
	case Partial:
		return "partial"
	case Denied:
		return "denied"
	}
	return "unsupported"
}

// Syscall is one entry of an architecture's syscall table.
type Syscall struct {
	Num     uint64
	Name    string
	Support Support
	Note    string
	fn      sysFunc
}

type sysFunc func(p *Process, a [6]uint64) uint64

type sysDef struct {
	support Support
	note    string
	fn      sysFunc
}

const (
	guestPID = 1000
	guestUID = 0
)

// SyscallTable returns arch's syscall table sorted by number.
func SyscallTable(a *cpu.Arch) []Syscall {
	out := make([]Syscall, 0, len(a.Syscalls))
	for name, num := range a.Syscalls {
		e := Syscall{Num: num, Name: name}
		if d, ok := sysDefs[name]; ok {
			e.Support, e.Note, e.fn = d.support, d.note, d.fn
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Num < out[j].Num })
	return out
}

// SyscallDefs lists every generic handler name with its support level (for
// documentation).
func SyscallDefs() map[string]Syscall {
	out := map[string]Syscall{}
	for n, d := range sysDefs {
		out[n] = Syscall{Name: n, Support: d.support, Note: d.note}
	}
	return out
}

// Syscall runs the syscall the core stopped at (cpu.Kernel).
func (p *Process) Syscall(m *cpu.Machine) {
	p.entries++
	nr, args := p.Core.Syscall()
	e := p.table[nr]
	name := fmt.Sprintf("syscall_%d", nr)
	if e != nil {
		name = e.Name
	}
	var call string
	if p.Cfg.Strace != nil {
		call = p.stracePrefix() + p.formatCall(name, args)
	}
	if e == nil || e.fn == nil {
		if p.Cfg.Strict {
			p.EndFault(&cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultSyscall,
				Err: fmt.Errorf("unsupported syscall %d: %s (--strict)", nr, p.formatCall(name, args))})
			return
		}
		if !p.noted[nr] {
			p.noted[nr] = true
			p.Note("%s = -1 ENOSYS (syscall %d at pc 0x%x: not implemented by simrun; reported once)", p.formatCall(name, args), nr, p.Core.PC())
		}
		if call != "" {
			fmt.Fprintf(p.Cfg.Strace, "%s = -1 ENOSYS (Function not implemented)\n", call)
		}
		p.Core.SetSyscallResult(errno(ENOSYS))
		return
	}
	p.confined = false
	p.noResult = false
	p.resched = false
	p.Mem.TakeLimitHit()
	r := e.fn(p, args)
	if p.ioProgress {
		// the call moved bytes before it waits: other waiters may go on
		p.ioProgress = false
		p.wakeIO()
		p.sys.wakeIO()
	}
	if r == errno(errRestart) && !p.Exited() && p.waitIO() {
		if call != "" {
			fmt.Fprintf(p.Cfg.Strace, "%s = ? <waiting>\n", call)
		}
		p.reschedule()
		return
	}
	if p.Mem.TakeLimitHit() && !p.Exited() {
		// A copy into guest memory needed a page past --max-memory: the
		// process ends as Linux's out-of-memory killer would end it.
		p.EndFault(&cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultOutOfMemory,
			Err: fmt.Errorf("%s needed a new page past the guest memory limit of %s", name, cpu.FormatSize(p.Mem.Limit()))})
	}
	if int64(r) < 0 && int64(r) >= -4095 && !p.Exited() {
		p.tellDenial(e.Name, args, r)
	}
	if p.Exited() {
		if call != "" {
			fmt.Fprintf(p.Cfg.Strace, "%s = ?\n", call)
		}
		return
	}
	if p.resched && p.cur.state != threadRunnable {
		// The thread waits (its result comes when it wakes) or has
		// exited: another thread runs.
		if call != "" {
			fmt.Fprintf(p.Cfg.Strace, "%s = ? <%s>\n", call, map[bool]string{true: "exited", false: "waiting"}[p.cur.state == threadExited])
		}
		p.reschedule()
		return
	}
	p.cur.hasDeadline = false // the call is over (a poll's deadline with it)
	if p.noResult {
		if call != "" {
			fmt.Fprintf(p.Cfg.Strace, "%s = ?\n", call)
		}
	} else {
		if call != "" {
			fmt.Fprintf(p.Cfg.Strace, "%s %s\n", call, formatResult(name, r))
		}
		p.setResult(p.cur, r) // a restart code waits for the signals (timer.go)
	}
	// Signals the call raised or unblocked are delivered on its way
	// back, as Linux does on return to user space.
	if len(p.sig.pending) != 0 {
		p.deliverSignals()
	}
	p.finishRestart()
	if p.ioWaiters != 0 {
		p.wakeIO()
	}
	if p.sys.nlive > 1 {
		p.sys.wakeIO()
	}
	if p.resched && !p.Exited() { // sched_yield
		p.reschedule()
	}
}

// toldDenials are the documented denials that change what a program
// does (it cannot start a thread, a process or another program): the
// first of each is told on the notes stream, always.
var toldDenials = map[string]string{
	"clone":  "simrun starts threads and processes, not namespaces or other sharing",
	"clone3": "simrun starts threads and processes, not namespaces or other sharing",
}

// tellDenial says once, in strace's form, why a call failed when the
// failure is simrun's doing and not the program's: a denial in
// toldDenials, --read-only's EROFS, a lookup --root kept inside the root.
//
//	simrun: openat(AT_FDCWD, "/x", O_WRONLY|O_CREAT, 0644) = -1 EROFS (Read-only file system) (--read-only denies it; reported once)
func (p *Process) tellDenial(name string, args [6]uint64, r uint64) {
	var why string
	key := name
	switch {
	case toldDenials[name] != "" && r == errno(ENOSYS):
		why = "denied: " + toldDenials[name]
	case r == errno(EROFS) && p.Cfg.ReadOnly:
		why, key = "--read-only denies it", "--read-only"
	case p.confined && p.root != "":
		why, key = "--root keeps the path inside "+p.Cfg.Root+", as chroot would", "--root"
	default:
		return
	}
	if p.told[key] {
		return
	}
	p.told[key] = true
	p.Note("%s %s (%s; reported once)", p.formatCall(name, args), formatResult(name, r), why)
}

// Guest memory helpers for handlers: errors become -EFAULT.

func (p *Process) readGuest(addr uint64, n uint64) ([]byte, bool) {
	if n > 1<<30 {
		return nil, false
	}
	b, err := p.Mem.ReadBytes(addr, int(n))
	return b, err == nil
}

func (p *Process) writeGuest(addr uint64, b []byte) bool {
	return p.Mem.WriteBytes(addr, b) == nil
}

func (p *Process) order() binary.ByteOrder { return p.Arch.ByteOrder }

var sysDefs = map[string]sysDef{
	// Files (files.go): the host's files with simrun's rights, as under
	// qemu-user; absolute paths through the sysroot first.
	"read":            {Full, "", sysRead},
	"write":           {Full, "", sysWrite},
	"readv":           {Full, "", sysReadv},
	"writev":          {Full, "", sysWritev},
	"pread64":         {Full, "", sysPread64},
	"pwrite64":        {Full, "", sysPwrite64},
	"preadv":          {Full, "", sysPreadv},
	"pwritev":         {Full, "", sysPwritev},
	"open":            {Full, "as openat", sysOpen},
	"creat":           {Full, "as openat", sysCreat},
	"openat":          {Partial, "host files through the sysroot; a virtual /proc/self and /dev; O_TMPFILE makes a host unnamed file", sysOpenat},
	"close":           {Full, "", sysClose},
	"lseek":           {Full, "", sysLseek},
	"fstat":           {Full, "", sysFstat},
	"newfstatat":      {Full, "", sysNewfstatat},
	"stat":            {Full, "", sysStat},
	"lstat":           {Full, "", sysLstat},
	"statx":           {Partial, "the basic fields (STATX_BASIC_STATS), no birth time", sysStatx},
	"getdents64":      {Full, "", sysGetdents64},
	"readlinkat":      {Full, "/proc/self/exe is the program's absolute path, as qemu-user", sysReadlinkat},
	"readlink":        {Full, "as readlinkat", sysReadlink},
	"faccessat":       {Full, "", sysFaccessat},
	"faccessat2":      {Full, "", sysFaccessat2},
	"access":          {Full, "", sysAccess},
	"fcntl":           {Partial, "descriptor and status flags, dup; record locks (F_GETLK, F_SETLK, F_SETLKW and the F_OFD_ forms) between the run's processes and open files, not seen by host programs; no EDEADLK detection (reclock.go)", sysFcntl},
	"dup":             {Full, "", sysDup},
	"dup2":            {Full, "", sysDup2},
	"dup3":            {Full, "", sysDup3},
	"ioctl":           {Partial, "FIONREAD, FIONBIO, FIOCLEX; on a host terminal (see Files): TCGETS, TCSETS*, TIOCGWINSZ, TIOCSWINSZ, TCSBRK, TCFLSH, and the controlling terminal's TIOCGPGRP, TIOCSPGRP, TIOCGSID, TIOCSCTTY, TIOCNOTTY; the rest, and everything on what is not a terminal, give ENOTTY", sysIoctl},
	"getcwd":          {Full, "", sysGetcwd},
	"chdir":           {Full, "", sysChdir},
	"fchdir":          {Full, "", sysFchdir},
	"mkdirat":         {Full, "", sysMkdirat},
	"mkdir":           {Full, "", sysMkdir},
	"mknodat":         {Partial, "FIFOs, regular files and socket nodes on the host; device nodes give EPERM (simrun makes none); a FIFO's data stays inside the run, shared by its processes with Linux's open, EOF and SIGPIPE rules (fifo.go)", sysMknodat},
	"mknod":           {Partial, "s390x: as mknodat", sysMknod},
	"unlinkat":        {Full, "", sysUnlinkat},
	"unlink":          {Full, "", sysUnlink},
	"rmdir":           {Full, "", sysRmdir},
	"renameat2":       {Partial, "RENAME_NOREPLACE; RENAME_EXCHANGE and RENAME_WHITEOUT give EINVAL", sysRenameat2},
	"renameat":        {Full, "", sysRenameat},
	"rename":          {Full, "", sysRename},
	"linkat":          {Full, "", sysLinkat},
	"link":            {Full, "", sysLink},
	"symlinkat":       {Full, "", sysSymlinkat},
	"symlink":         {Full, "", sysSymlink},
	"fchmodat":        {Full, "", sysFchmodat},
	"chmod":           {Full, "", sysChmod},
	"fchmod":          {Full, "", sysFchmod},
	"fchownat":        {Full, "", sysFchownat},
	"chown":           {Full, "", sysChown},
	"lchown":          {Full, "", sysLchown},
	"fchown":          {Full, "", sysFchown},
	"utimensat":       {Partial, "a symbolic link's own times are left as they are", sysUtimensat},
	"ftruncate":       {Full, "", sysFtruncate},
	"truncate":        {Full, "", sysTruncate},
	"fallocate":       {Partial, "mode 0 and FALLOC_FL_KEEP_SIZE", sysFallocate},
	"fsync":           {Full, "", sysFsync},
	"fdatasync":       {Full, "", sysFsync},
	"fadvise64":       {Full, "advice accepted", sysFadvise64},
	"umask":           {Full, "", sysUmask},
	"pipe2":           {Partial, "within the process: a read from an empty pipe with a writer, or a write to a full one, waits for another thread (the call runs again after another thread's syscall); with no other thread it would wait for ever and ends the run", sysPipe2},
	"pipe":            {Partial, "as pipe2", sysPipe},
	"sendfile":        {Full, "", sysSendfile},
	"copy_file_range": {Full, "", sysCopyFileRange},
	"ppoll":           {Partial, "files are always ready; pipes as their contents say; with none ready the thread waits for another thread's syscall, a signal (EINTR, never restarted after a handler) or its timeout on the virtual clock (the time left is written back); the signal mask given holds for the call", sysPpoll},
	"poll":            {Partial, "as ppoll, the timeout in milliseconds", sysPoll},
	"pselect6":        {Partial, "as ppoll; nothing is exceptional", sysPselect6},

	// Memory (mmap.go).
	"brk":      {Full, "", sysBrk},
	"mmap":     {Full, "anonymous and file mappings; MAP_SHARED writable file mappings are written back at msync, munmap and exit", sysMmap},
	"old_mmap": {Full, "s390x: arguments in a six-word block; as mmap", sysOldMmap},
	"munmap":   {Full, "", sysMunmap},
	"mprotect": {Full, "", sysMprotect},
	"madvise":  {Partial, "MADV_DONTNEED zeroes anonymous pages; other advice is accepted and ignored", sysMadvise},
	"mremap":   {Partial, "grows in place or moves (MREMAP_MAYMOVE); MREMAP_FIXED and MREMAP_DONTUNMAP give EINVAL", sysMremap},
	"msync":    {Full, "", sysMsync},

	"exit":              {Full, "ends the calling thread; the last one ends the process", sysExit},
	"exit_group":        {Full, "", sysExitGroup},
	"uname":             {Full, "fixed: Linux 6.1.0, nodename simrun", sysUname},
	"clock_gettime":     {Full, "virtual clock derived from retired instructions; REALTIME starts 2026-01-01; the CPU clocks (PROCESS_CPUTIME, THREAD_CPUTIME, clock_getcpuclockid's) count retired instructions, 1 ns each", sysClockGettime},
	"clock_getres":      {Full, "1 ns", sysClockGetres},
	"gettimeofday":      {Full, "virtual clock", sysGettimeofday},
	"nanosleep":         {Full, "the thread waits on the virtual clock while the others run (alone, the clock jumps on); a handled signal ends it with EINTR and the time left", sysNanosleep},
	"clock_nanosleep":   {Full, "as nanosleep, on REALTIME, MONOTONIC and BOOTTIME, relative or TIMER_ABSTIME; or on a CPU clock: the process's or another thread's (the thread waits while the others run); THREAD_CPUTIME gives EOPNOTSUPP and the caller's own thread clock EINVAL, as Linux; a relative sleep a signal interrupts and no handler settles runs on for the time left", sysClockNanosleep},
	"alarm":             {Full, "ITIMER_REAL in seconds", sysAlarm},
	"setitimer":         {Full, "ITIMER_REAL on the virtual clock; ITIMER_VIRTUAL and ITIMER_PROF count the process's retired instructions (1 ns each, user and system time alike); the signal comes at the instruction where the timer expires", sysSetitimer},
	"getitimer":         {Full, "", sysGetitimer},
	"timer_create":      {Full, "REALTIME, MONOTONIC, BOOTTIME and the CPU clocks; SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID (glibc's SIGEV_THREAD is built on it); ids 0, 1, 2, ...", sysTimerCreate},
	"timer_settime":     {Full, "relative or TIMER_ABSTIME; an expiry while the signal is pending counts as an overrun", sysTimerSettime},
	"timer_gettime":     {Full, "", sysTimerGettime},
	"timer_getoverrun":  {Full, "", sysTimerGetoverrun},
	"timer_delete":      {Full, "", sysTimerDelete},
	"timerfd_create":    {Full, "REALTIME, MONOTONIC, BOOTTIME (and their _ALARM forms) on the virtual clock; TFD_NONBLOCK, TFD_CLOEXEC", sysTimerfdCreate},
	"timerfd_settime":   {Full, "relative or TFD_TIMER_ABSTIME; TFD_TIMER_CANCEL_ON_SET is accepted (the clock is never set); read gives the expiry count, blocks the thread until the next expiry (EAGAIN with TFD_NONBLOCK); poll and select report POLLIN", sysTimerfdSettime},
	"timerfd_gettime":   {Full, "", sysTimerfdGettime},
	"pause":             {Full, "the thread waits for a signal that runs a handler; with nothing that could send one, the deadlock report", sysPause},
	"rt_sigsuspend":     {Full, "as pause, with the mask given; the handler's frame holds the old mask", sysRtSigsuspend},
	"rt_sigtimedwait":   {Full, "takes a pending signal of the set (sigwait, sigwaitinfo, sigtimedwait), or waits for one: EAGAIN at the timeout, EINTR for another signal's handler", sysRtSigtimedwait},
	"restart_syscall":   {Full, "EINTR: simrun runs interrupted calls again itself", sysRestartSyscall},
	"getrandom":         {Full, "deterministic bytes from --seed, continuing the AT_RANDOM stream (qemu-user passes getrandom to the host)", sysGetrandom},
	"set_tid_address":   {Full, "", sysSetTidAddress},
	"set_robust_list":   {Partial, "ENOSYS, as qemu-user 7.2 (glibc then keeps no robust futex list), unless --robust-futexes: then accepted, and a dying thread's robust futexes get FUTEX_OWNER_DIED and wake a waiter, as Linux", sysSetRobustList},
	"get_robust_list":   {Partial, "as set_robust_list: ENOSYS unless --robust-futexes", sysGetRobustList},
	"getpid":            {Full, "the first process is 1000; later processes and threads take the next ids (system.go)", sysGetpid},
	"gettid":            {Full, "the main thread's is the pid, 1000; others 1001, 1002, ... in creation order", sysGettid},
	"getppid":           {Full, "the parent's pid; 1 for the first process, or once the parent is gone", sysGetppid},
	"getuid":            {Full, "uid 0", sysUID},
	"geteuid":           {Full, "uid 0", sysUID},
	"getgid":            {Full, "gid 0", sysUID},
	"getegid":           {Full, "gid 0", sysUID},
	"getpgid":           {Full, "the first process leads group and session 1000; children inherit them", sysGetpgid},
	"getpgrp":           {Full, "", sysGetpgrp},
	"getsid":            {Full, "", sysGetsid},
	"setpgid":           {Full, "the caller or a child, into a group of its session", sysSetpgid},
	"setsid":            {Full, "", sysSetsid},
	"wait4":             {Full, "children's exits (WNOHANG; WUNTRACED and WCONTINUED accepted, nothing stops; __WALL, __WCLONE); the rusage is zeros", sysWait4},
	"waitid":            {Full, "P_ALL, P_PID, P_PGID; WEXITED, WNOHANG, WNOWAIT", sysWaitid},
	"fork":              {Full, "a new process: its memory copied on write, descriptors (naming the same open files: one offset, one pipe, timerfd, eventfd or epoll instance for both) and signal actions inherited", sysFork},
	"vfork":             {Full, "a new process in the parent's memory (shared, not copied), the parent suspended until the child execs or ends", sysVfork},
	"getgroups":         {Full, "no supplementary groups", sysZero},
	"setuid":            {Partial, "to uid 0 only (the guest stays root); another gives EPERM", sysSetIDs(1)},
	"setgid":            {Partial, "as setuid, for gid 0", sysSetIDs(1)},
	"setreuid":          {Partial, "as setuid: each id 0 or -1", sysSetIDs(2)},
	"setregid":          {Partial, "as setuid: each id 0 or -1", sysSetIDs(2)},
	"setresuid":         {Partial, "as setuid: each id 0 or -1", sysSetIDs(3)},
	"setresgid":         {Partial, "as setuid: each id 0 or -1", sysSetIDs(3)},
	"getresuid":         {Full, "0, 0, 0", sysGetresID},
	"getresgid":         {Full, "0, 0, 0", sysGetresID},
	"setfsuid":          {Partial, "returns the old fsuid, 0; the fsuid stays 0", sysZero},
	"setfsgid":          {Partial, "returns the old fsgid, 0; the fsgid stays 0", sysZero},
	"setgroups":         {Partial, "an empty list only (EPERM for another: the guest's ids do not change)", sysSetgroups},
	"rt_sigaction":      {Full, "handlers run with qemu-user 7.2's frames; SA_SIGINFO, SA_ONSTACK, SA_NODEFER, SA_RESETHAND, SA_RESTORER, SA_RESTART (a call a handler interrupts returns EINTR or runs again by Linux's rules: pipe reads and writes and futex waits restart with SA_RESTART; sleeps, poll, select, pause and sigsuspend never do)", sysRtSigaction},
	"rt_sigprocmask":    {Full, "", sysRtSigprocmask},
	"rt_sigpending":     {Full, "", sysRtSigpending},
	"sigaltstack":       {Full, "", sysSigaltstack},
	"rt_sigreturn":      {Full, "a bad frame raises SIGSEGV, as on Linux", sysRtSigreturn},
	"sigreturn":         {Full, "s390x: returns from a handler without SA_SIGINFO", sysSigreturn},
	"rt_sigqueueinfo":   {Full, "to any process of the run; a kernel or kill si_code to another process is EPERM", sysRtSigqueueinfo},
	"rt_tgsigqueueinfo": {Full, "to a thread of any process of the run", sysRtTgsigqueueinfo},
	"prlimit64":         {Partial, "per process, inherited and kept across execve (defaults: STACK 8 MiB, NOFILE 1024/4096, NPROC --max-procs, others unlimited); NOFILE enforced; the others kept and reported only (root is not held to NPROC, --max-procs bounds forks) (rlimit.go)", sysPrlimit64},
	"getrlimit":         {Partial, "as prlimit64", sysGetrlimit},
	"setrlimit":         {Partial, "as prlimit64", sysSetrlimit},
	"sched_yield":       {Full, "the next runnable thread runs (round robin by tid)", sysSchedYield},
	"futex":             {Partial, "WAIT, WAKE, WAIT_BITSET, WAKE_BITSET, REQUEUE, CMP_REQUEUE, WAKE_OP, LOCK_PI, LOCK_PI2, TRYLOCK_PI, UNLOCK_PI; timeouts on the virtual clock; a handled signal ends a wait with EINTR (a wait without timeout restarts with SA_RESTART, LOCK_PI always); a shared (not FUTEX_PRIVATE) WAKE also wakes other processes waiting in a MAP_SHARED page they share; no FUTEX_FD or requeue-PI", sysFutex},
	"tgkill":            {Full, "to any thread of the run's processes", sysTgkill},
	"tkill":             {Full, "to any thread of the run's processes", sysTkill},
	"getcpu":            {Full, "the running thread's CPU (0 unless --cpus places it elsewhere), node 0", sysGetcpu},
	"membarrier":        {Full, "one core: every barrier holds already; QUERY, GLOBAL, GLOBAL_EXPEDITED and PRIVATE_EXPEDITED (after its registration)", sysMembarrier},
	"getrusage":         {Full, "user time from the virtual CPU clock (1 ns per instruction), system time 0; RUSAGE_CHILDREN adds the waited-for children's; ru_maxrss is the run's guest memory; the other fields 0 (rusage.go)", sysGetrusage},
	"times":             {Full, "as getrusage, in clock ticks (USER_HZ 100); returns the virtual monotonic clock's ticks", sysTimes},
	"getpriority":       {Full, "nice values per thread, as Linux keeps them (PRIO_PROCESS, PRIO_PGRP, PRIO_USER); the scheduler does not weigh them", sysGetpriority},
	"setpriority":       {Full, "as getpriority; clamped to -20..19, lowering allowed (uid 0)", sysSetpriority},
	"sched_setaffinity": {Full, "the CPUs of --cpus N (default 1): the thread runs on the mask's CPUs (moving at the next scheduling point); a mask naming none of them gives EINVAL", sysSchedSetaffinity},
	"kill":              {Full, "to a process, the caller's group (0), a group (-pgid) or every other process (-1)", sysKill},
	"rseq":              {Denied, "ENOSYS, as qemu-user 7.2 (glibc then runs without rseq)", sysENOSYS},
	"clone":             {Partial, "threads (CLONE_VM, FS, FILES, SIGHAND and THREAD; SETTLS, PARENT_SETTID, CHILD_SETTID, CHILD_CLEARTID honoured) and processes (no CLONE_VM: fork; CLONE_VM|CLONE_VFORK: vfork, memory shared until the child execs or ends); Linux's invalid combinations give EINVAL; namespaces and other sharing give ENOSYS", sysClone},
	"clone3":            {Partial, "as clone, from struct clone_args", sysClone3},
	"execve":            {Full, "any ELF simrun runs (either architecture, static or dynamic through the sysroot) and #! scripts (4 nested at most, as Linux); a program built for the host runs on the host, as under qemu-user (hostproc.go; ENOENT with --no-host-exec, --root or --read-only); ENOEXEC, ENOENT, EACCES as Linux; other threads end, handlers reset, close-on-exec descriptors close, interval timers (setitimer, alarm) kept and POSIX timers deleted as Linux", sysExecve},
	"execveat":          {Full, "as execve, relative to a descriptor (AT_SYMLINK_NOFOLLOW)", sysExecveat},

	// Memory locking, scheduling parameters, credentials read back,
	// personality, sync, close_range, flock (sysproc.go).
	"mlock":                  {Full, "guest memory is always resident: nothing to do", sysMlock},
	"munlock":                {Full, "as mlock", sysMlock},
	"mlock2":                 {Full, "as mlock (MLOCK_ONFAULT)", sysMlock2},
	"mlockall":               {Full, "as mlock (MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT)", sysMlockall},
	"munlockall":             {Full, "as mlock", sysZero},
	"sched_getscheduler":     {Full, "SCHED_OTHER for every thread", sysSchedGetscheduler},
	"memfd_create":           {Full, "a host memfd: sizes, mappings and seals as Linux's; MFD_HUGETLB gives EINVAL", sysMemfdCreate},
	"sched_getparam":         {Full, "priority 0 (SCHED_OTHER)", sysSchedGetparam},
	"sched_get_priority_max": {Full, "Linux's values: 99 for FIFO and RR, 0 for the others", sysSchedGetPriorityMax},
	"sched_get_priority_min": {Full, "Linux's values: 1 for FIFO and RR, 0 for the others", sysSchedGetPriorityMin},
	"sched_rr_get_interval":  {Full, "0: SCHED_OTHER's slice in whole jiffies, as Linux 6.6 and later give it", sysSchedRRGetInterval},
	"personality":            {Partial, "the persona is kept and read back; none of its flags changes what simrun does", sysPersonality},
	"readahead":              {Full, "regular files; nothing is read ahead", sysReadahead},
	"sync":                   {Full, "the host's sync", sysSync},
	"syncfs":                 {Full, "the host file's sync", sysSyncfs},
	"sync_file_range":        {Full, "the host file's sync", sysSyncFileRange},
	"close_range":            {Full, "CLOSE_RANGE_CLOEXEC, CLOSE_RANGE_UNSHARE", sysCloseRange},
	"flock":                  {Full, "on the host file (the run's processes and the host's see each other's locks); a held lock makes the caller wait on the scheduler", sysFlock},

	// epoll and eventfd (epoll.go).
	"epoll_create1": {Full, "EPOLL_CLOEXEC", sysEpollCreate1},
	"epoll_create":  {Full, "s390x: a positive size, otherwise ignored", sysEpollCreate},
	"epoll_ctl":     {Full, "ADD, MOD, DEL; regular files and directories EPERM, loops ELOOP; EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE; EPOLLRDHUP reported for a socket whose receiving side is shut down", sysEpollCtl},
	"epoll_pwait":   {Full, "readiness as poll's, level-triggered unless EPOLLET; ready items in the order they were added; waits on the virtual clock; the mask as ppoll's", sysEpollPwait},
	"epoll_wait":    {Full, "s390x: as epoll_pwait without a mask", sysEpollWait},
	"eventfd2":      {Full, "EFD_SEMAPHORE, EFD_CLOEXEC, EFD_NONBLOCK; reads and writes of 8 bytes that wait or give EAGAIN, as Linux", sysEventfd2},
	"eventfd":       {Full, "s390x: eventfd2 without flags", sysEventfd},
	"signalfd4":     {Full, "SFD_CLOEXEC, SFD_NONBLOCK; reads take the pending signals of the mask as rt_sigtimedwait does, as struct signalfd_siginfo; poll and epoll see them", sysSignalfd4},
	"signalfd":      {Full, "s390x: signalfd4 without flags", sysSignalfd},

	// System information, process control, file systems, extended
	// attributes and sockets (sysmisc.go).
	"sysinfo":           {Partial, "a fixed machine: 4 GiB of RAM, 3 GiB free (as /proc/meminfo), no swap, load 0; procs is the run's threads; uptime from the virtual clock", sysSysinfo},
	"sched_getaffinity": {Full, "the thread's mask: CPUs 0 to N-1 of --cpus N (default 1: CPU 0) unless sched_setaffinity narrowed it", sysSchedGetaffinity},
	"prctl":             {Partial, "PR_GET_NAME (the program's name), PR_SET_NAME (accepted, not kept), PR_GET_DUMPABLE, PR_SET_DUMPABLE; others give EINVAL", sysPrctl},
	"statfs":            {Full, "the host's answer, as qemu-user", sysStatfs},
	"fstatfs":           {Full, "the host's answer; pipes and virtual files answer as pipefs", sysFstatfs},
	"statfs64":          {Full, "s390x: as statfs, with the structure's size", sysStatfs64},
	"fstatfs64":         {Full, "s390x: as fstatfs, with the structure's size", sysFstatfs64},
	"getxattr":          {Full, "the host file's attributes, as qemu-user", sysGetxattr},
	"lgetxattr":         {Full, "the host file's attributes", sysLgetxattr},
	"fgetxattr":         {Full, "the host file's attributes; other descriptors have none (EOPNOTSUPP)", sysFgetxattr},
	"listxattr":         {Full, "the host file's attributes", sysListxattr},
	"llistxattr":        {Full, "the host file's attributes", sysLlistxattr},
	"flistxattr":        {Full, "the host file's attributes; other descriptors have none (EOPNOTSUPP)", sysFlistxattr},
	"setxattr":          {Full, "set on the host file with simrun's rights", sysSetxattr},
	"lsetxattr":         {Full, "set on the host file with simrun's rights", sysLsetxattr},
	"fsetxattr":         {Full, "set on the host file; other descriptors have none (EOPNOTSUPP)", sysFsetxattr},
	"removexattr":       {Full, "on the host file with simrun's rights", sysRemovexattr},
	"lremovexattr":      {Full, "on the host file with simrun's rights", sysLremovexattr},
	"fremovexattr":      {Full, "on the host file; other descriptors have none (EOPNOTSUPP)", sysFremovexattr},
	"socket":            {Partial, "AF_UNIX SOCK_STREAM and SOCK_SEQPACKET (SOCK_NONBLOCK, SOCK_CLOEXEC) for bind, listen, connect and accept inside the run; SOCK_DGRAM ESOCKTNOSUPPORT (socketpair makes datagram pairs); no network: other families EAFNOSUPPORT", sysSocket},
	"socketpair":        {Partial, "AF_UNIX SOCK_STREAM, SOCK_SEQPACKET and SOCK_DGRAM pairs inside the run (SOCK_NONBLOCK, SOCK_CLOEXEC): read, write, poll and epoll as on Linux, EOF and EPIPE/SIGPIPE after the peer's close or shutdown, message boundaries kept; AF_INET and AF_INET6 EOPNOTSUPP, other families EAFNOSUPPORT", sysSocketpair},
	"socketcall":        {Partial, "s390x: every call by number, as the direct calls; SYS_RECVMMSG and SYS_SENDMMSG ENOSYS", sysSocketcall},
	"bind":              {Partial, "AF_UNIX path names (a socket node on the host, EADDRINUSE if the path exists) and abstract names, kept in the run; no autobind (a 2-byte address is EINVAL)", sysBind},
	"listen":            {Full, "a bound socket; the backlog as Linux counts it (up to SOMAXCONN 4096)", sysListen},
	"accept":            {Full, "as accept4 without flags", sysAccept},
	"accept4":           {Full, "the oldest waiting connection (blocking, or EAGAIN with O_NONBLOCK); SOCK_NONBLOCK, SOCK_CLOEXEC; the peer's address", sysAccept4},
	"connect":           {Partial, "to a listening socket of the run (a full queue blocks, or EAGAIN); a host program's socket or a socket not listening ECONNREFUSED, a missing path ENOENT, another type EPROTOTYPE", sysConnect},
	"getsockname":       {Full, "the bound address, or AF_UNIX unnamed (2 bytes); ENOTSOCK on any other descriptor (bash asks it of stdin)", sysGetsockname},
	"getpeername":       {Full, "the peer's address (unnamed: 2 bytes); ENOTCONN unconnected", sysGetpeername},
	"sendto":            {Full, "MSG_DONTWAIT, MSG_NOSIGNAL (MSG_MORE, MSG_EOR accepted); a destination address is EISCONN; MSG_OOB EOPNOTSUPP", sysSendto},
	"recvfrom":          {Full, "MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL (up to the 64 KiB the peer's buffer holds), MSG_TRUNC; the unnamed peer's address length 0", sysRecvfrom},
	"setsockopt":        {Partial, "SOL_SOCKET options accepted and not applied (the buffers stay 64 KiB); other levels EOPNOTSUPP", sysSetsockopt},
	"getsockopt":        {Full, "SOL_SOCKET: SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ERROR, SO_SNDBUF, SO_RCVBUF, SO_ACCEPTCONN, SO_PEERCRED; other options ENOPROTOOPT, other levels EOPNOTSUPP", sysGetsockopt},
	"shutdown":          {Full, "SHUT_RD, SHUT_WR, SHUT_RDWR, seen by the connected peer", sysShutdown},
	"sendmsg":           {Partial, "the iovecs as one send, flags as sendto's; ancillary data (SCM_RIGHTS, SCM_CREDENTIALS) is not carried: a message with some gives EOPNOTSUPP", sysSendmsg},
	"recvmsg":           {Partial, "as recvfrom into the iovecs; MSG_TRUNC in msg_flags for a message cut short; never ancillary data (msg_controllen 0)", sysRecvmsg},
}

func sysZero(p *Process, a [6]uint64) uint64   { return 0 }
func sysUID(p *Process, a [6]uint64) uint64    { return guestUID }
func sysENOSYS(p *Process, a [6]uint64) uint64 { return errno(ENOSYS) }

// sysExit ends the calling thread; the last thread's exit ends the
// process with its status, as exit_group does.
func sysExit(p *Process, a [6]uint64) uint64 {
	if len(p.threads) > 1 {
		p.exitThread()
		return 0
	}
	return sysExitGroup(p, a)
}

// sysExitGroup ends the process and every thread.
func sysExitGroup(p *Process, a [6]uint64) uint64 {
	p.syncShared(0, ^uint64(0))
	p.closeAll()
	p.Exit(int(a[0]))
	return 0
}

func sysUname(p *Process, a [6]uint64) uint64 {
	fields := []string{"Linux", "simrun", "6.1.0", "#1 SMP PREEMPT simrun", p.Arch.UnameMachine, "(none)"}
	b := make([]byte, 65*len(fields))
	for i, f := range fields {
		copy(b[65*i:65*i+64], f)
	}
	if !p.writeGuest(a[0], b) {
		return errno(EFAULT)
	}
	return 0
}

// Clock ids.
const (
	clockRealtime  = 0
	clockMonotonic = 1
	epoch2026      = 1767225600 // 2026-01-01T00:00:00Z
)

// clockNanos is clock id's time: the wall clocks on the virtual clock,
// the CPU clocks in retired instructions (see timer.go).
func (p *Process) clockNanos(id uint64) (uint64, bool) {
	if kind, th, ok, valid := p.cpuClock(id); ok {
		if !valid {
			return 0, false
		}
		return p.cpuNanos(kind, th), true
	}
	ns := p.VirtualNanos() + p.clockOff
	switch id {
	case clockRealtime, 8 /* REALTIME_ALARM */, 5 /* REALTIME_COARSE */ :
		return ns + epoch2026*1e9, true
	case clockMonotonic, 4 /* MONOTONIC_RAW */, 6 /* MONOTONIC_COARSE */, 7 /* BOOTTIME */, 9:
		return ns, true
	}
	return 0, false
}

func (p *Process) putTimespec(addr, ns uint64, div uint64) bool {
	b := appendU64(p.order(), nil, ns/1e9)
	b = appendU64(p.order(), b, ns%1e9/div)
	return p.writeGuest(addr, b)
}

func sysClockGettime(p *Process, a [6]uint64) uint64 {
	ns, ok := p.clockNanos(a[0])
	if !ok {
		return errno(EINVAL)
	}
	if !p.putTimespec(a[1], ns, 1) {
		return errno(EFAULT)
	}
	return 0
}

func sysClockGetres(p *Process, a [6]uint64) uint64 {
	if _, ok := p.clockNanos(a[0]); !ok {
		return errno(EINVAL)
	}
	if a[1] != 0 && !p.putTimespec(a[1], 1, 1) {
		return errno(EFAULT)
	}
	return 0
}

func sysGettimeofday(p *Process, a [6]uint64) uint64 {
	ns, _ := p.clockNanos(clockRealtime)
	if a[0] != 0 && !p.putTimespec(a[0], ns, 1000) {
		return errno(EFAULT)
	}
	if a[1] != 0 && !p.writeGuest(a[1], make([]byte, 8)) {
		return errno(EFAULT)
	}
	return 0
}

func sysGetrandom(p *Process, a [6]uint64) uint64 {
	n := min(a[1], 1<<25)
	b := make([]byte, n)
	p.rng.fill(b)
	if !p.writeGuest(a[0], b) {
		return errno(EFAULT)
	}
	return n
}

// signalNames are the Linux signals' names as kill -l prints them, with
// the SIG (the generic numbering both architectures use).
var signalNames = map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
	7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 24: "SIGXCPU", 31: "SIGSYS"}

// SignalName is signal sig's name ("SIGINT"), or "signal N".
func SignalName(sig int) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", sig)
}

// realtimeNanos is CLOCK_REALTIME in nanoseconds since the Unix epoch.
func (p *Process) realtimeNanos() uint64 {
	ns, _ := p.clockNanos(clockRealtime)
	return ns
}

// endSyscallFault ends the run at the current syscall with a message.
func (p *Process) endSyscallFault(format string, args ...any) {
	p.EndFault(&cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultSyscall, Err: fmt.Errorf(format, args...)})
}

func writeNote(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "simrun: "+format+"\n", args...)
}
