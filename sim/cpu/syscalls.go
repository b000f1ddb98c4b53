package cpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"syscall"
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

type sysFunc func(m *Machine, a [6]uint64) uint64

type sysDef struct {
	support Support
	note    string
	fn      sysFunc
}

// Errno values (the asm-generic numbers, shared by arm64 and s390x).
const (
	EPERM   = 1
	ENOENT  = 2
	ESRCH   = 3
	EINTR   = 4
	EBADF   = 9
	EAGAIN  = 11
	ENOMEM  = 12
	EACCES  = 13
	EFAULT  = 14
	EEXIST  = 17
	ENODEV  = 19
	EINVAL  = 22
	ENOTTY  = 25
	ESPIPE  = 29
	ERANGE  = 34
	ENOSYS  = 38
	ENOTSUP = 95
)

func errno(e int) uint64 { return uint64(-int64(e)) }

const (
	guestPID = 1000
	guestUID = 0
)

// SyscallTable returns arch's syscall table sorted by number.
func SyscallTable(a *Arch) []Syscall {
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

// syscall runs the pending syscall.
func (m *Machine) syscall() {
	nr, args := m.Core.Syscall()
	e := m.os.table[nr]
	if e == nil || e.fn == nil {
		name := fmt.Sprintf("syscall %d", nr)
		if e != nil {
			name = fmt.Sprintf("syscall %d (%s)", nr, e.Name)
		}
		if m.Cfg.Strict {
			m.endFault(m.describeFault(&Fault{PC: m.Core.PC(), Kind: FaultSyscall,
				Err: fmt.Errorf("unsupported %s (--strict)", name)}))
			return
		}
		if !m.os.noted[nr] {
			m.os.noted[nr] = true
			m.Note("unsupported %s at pc 0x%x returns -ENOSYS (reported once)", name, m.Core.PC())
		}
		m.Core.SetSyscallResult(errno(ENOSYS))
		return
	}
	r := e.fn(m, args)
	if !m.exited {
		m.Core.SetSyscallResult(r)
	}
}

// linuxState is the kernel-side state of the process.
type linuxState struct {
	table    map[uint64]*Syscall
	noted    map[uint64]bool
	brkStart uint64
	brk      uint64
	mmapNext uint64
	stackTop uint64
	sigTramp uint64
	auxv     [][2]uint64
	tidAddr  uint64
	sigmask  uint64
	sigact   [65][4]uint64 // handler, flags, restorer, mask as the guest gave them
	closed   [3]bool
	clockOff uint64 // virtual nanoseconds added by sleeps
}

func (s *linuxState) init(m *Machine) {
	s.table = map[uint64]*Syscall{}
	for _, e := range SyscallTable(m.Arch) {
		e := e
		s.table[e.Num] = &e
	}
	s.noted = map[uint64]bool{}
}

// Guest memory helpers for handlers: errors become -EFAULT.

func (m *Machine) readGuest(addr uint64, n uint64) ([]byte, bool) {
	if n > 1<<30 {
		return nil, false
	}
	b, err := m.Mem.ReadBytes(addr, int(n))
	return b, err == nil
}

func (m *Machine) writeGuest(addr uint64, b []byte) bool {
	return m.Mem.WriteBytes(addr, b) == nil
}

func (m *Machine) order() binary.ByteOrder { return m.Arch.ByteOrder }

var sysDefs = map[string]sysDef{
	"read":            {Partial, "fd 0 reads simrun's stdin; other descriptors give EBADF", sysRead},
	"write":           {Partial, "fds 1 and 2 go to simrun's stdout and stderr; fd 0 and others give EBADF", sysWrite},
	"readv":           {Partial, "as read", sysReadv},
	"writev":          {Partial, "as write", sysWritev},
	"exit":            {Full, "single-threaded: ends the process", sysExit},
	"exit_group":      {Full, "", sysExit},
	"brk":             {Full, "", sysBrk},
	"mmap":            {Partial, "anonymous mappings only (private or shared); file mappings give ENODEV", sysMmap},
	"old_mmap":        {Partial, "s390x: arguments in a six-word block; anonymous mappings only", sysOldMmap},
	"munmap":          {Full, "", sysMunmap},
	"mprotect":        {Full, "", sysMprotect},
	"madvise":         {Partial, "MADV_DONTNEED zeroes anonymous pages; other advice is accepted and ignored", sysMadvise},
	"uname":           {Full, "fixed: Linux 6.1.0, nodename simrun", sysUname},
	"clock_gettime":   {Full, "virtual clock derived from retired instructions; REALTIME starts 2026-01-01", sysClockGettime},
	"clock_getres":    {Full, "1 ns", sysClockGetres},
	"gettimeofday":    {Full, "virtual clock", sysGettimeofday},
	"nanosleep":       {Full, "advances the virtual clock", sysNanosleep},
	"clock_nanosleep": {Full, "advances the virtual clock", sysClockNanosleep},
	"getrandom":       {Full, "deterministic bytes from --seed, continuing the AT_RANDOM stream (qemu-user passes getrandom to the host)", sysGetrandom},
	"set_tid_address": {Full, "", sysSetTidAddress},
	"set_robust_list": {Denied, "ENOSYS, as qemu-user 7.2 (glibc then keeps no robust futex list; single-threaded programs do not notice)", sysENOSYS},
	"getpid":          {Full, "fixed pid 1000", sysGetpid},
	"gettid":          {Full, "fixed tid 1000", sysGetpid},
	"getppid":         {Full, "fixed ppid 1", sysOne},
	"getuid":          {Full, "uid 0", sysUID},
	"geteuid":         {Full, "uid 0", sysUID},
	"getgid":          {Full, "gid 0", sysUID},
	"getegid":         {Full, "gid 0", sysUID},
	"rt_sigaction":    {Partial, "recorded and reported back; signals are never delivered", sysRtSigaction},
	"rt_sigprocmask":  {Partial, "the mask is recorded; signals are never delivered", sysRtSigprocmask},
	"sigaltstack":     {Partial, "accepted; signals are never delivered", sysZero},
	"ioctl":           {Partial, "fds 0-2 are not terminals: TCGETS, TIOCGWINSZ and the rest give ENOTTY", sysIoctl},
	"fstat":           {Partial, "fds 0-2 only: the host's file type, other fields fixed", sysFstat},
	"newfstatat":      {Partial, "fds 0-2 with AT_EMPTY_PATH only; paths give ENOENT", sysNewfstatat},
	"prlimit64":       {Partial, "reads only: STACK 8 MiB, NOFILE 1024/4096, others unlimited", sysPrlimit64},
	"getrlimit":       {Partial, "as prlimit64", sysGetrlimit},
	"close":           {Partial, "fds 0-2", sysClose},
	"lseek":           {Partial, "fds 0-2 are not seekable: ESPIPE", sysLseek},
	"openat":          {Denied, "no file system: ENOENT", sysENOENT},
	"open":            {Denied, "no file system: ENOENT", sysENOENT},
	"readlinkat":      {Partial, "/proc/self/exe: the program's absolute path, as qemu-user; other paths ENOENT (no file system)", sysReadlinkat},
	"readlink":        {Partial, "as readlinkat", sysReadlink},
	"faccessat":       {Denied, "no file system: ENOENT", sysENOENT},
	"access":          {Denied, "no file system: ENOENT", sysENOENT},
	"getcwd":          {Partial, "always \"/\"", sysGetcwd},
	"sched_yield":     {Full, "", sysZero},
	"futex":           {Partial, "single-threaded: WAKE returns 0, WAIT returns EAGAIN if the value differs, else fails the run", sysFutex},
	"tgkill":          {Partial, "to itself: ends the run with the signal's status (no handlers run)", sysTgkill},
	"tkill":           {Partial, "to itself: as tgkill", sysTkill},
	"kill":            {Partial, "to itself: as tgkill", sysKill},
	"rseq":            {Denied, "ENOSYS, as qemu-user 7.2 (glibc then runs without rseq)", sysENOSYS},
	"clone":           {Denied, "single process: ENOSYS", sysENOSYS},
	"clone3":          {Denied, "single process: ENOSYS", sysENOSYS},
	"execve":          {Denied, "single process: ENOSYS", sysENOSYS},
	"mremap":          {Denied, "ENOMEM (callers fall back to mmap+copy)", sysENOMEM},
}

func sysZero(m *Machine, a [6]uint64) uint64   { return 0 }
func sysOne(m *Machine, a [6]uint64) uint64    { return 1 }
func sysUID(m *Machine, a [6]uint64) uint64    { return guestUID }
func sysGetpid(m *Machine, a [6]uint64) uint64 { return guestPID }
func sysENOENT(m *Machine, a [6]uint64) uint64 { return errno(ENOENT) }
func sysENOSYS(m *Machine, a [6]uint64) uint64 { return errno(ENOSYS) }
func sysENOMEM(m *Machine, a [6]uint64) uint64 { return errno(ENOMEM) }

func sysExit(m *Machine, a [6]uint64) uint64 {
	m.exit(int(a[0]))
	return 0
}

func (m *Machine) outFor(fd uint64) io.Writer {
	switch {
	case fd == 1 && !m.os.closed[1]:
		return m.Cfg.Stdout
	case fd == 2 && !m.os.closed[2]:
		return m.Cfg.Stderr
	}
	return nil
}

func sysWrite(m *Machine, a [6]uint64) uint64 {
	w := m.outFor(a[0])
	if w == nil {
		return errno(EBADF)
	}
	b, ok := m.readGuest(a[1], a[2])
	if !ok {
		return errno(EFAULT)
	}
	n, err := w.Write(b)
	if err != nil && n == 0 {
		return errno(EFAULT)
	}
	return uint64(n)
}

func sysRead(m *Machine, a [6]uint64) uint64 {
	if a[0] != 0 || m.os.closed[0] {
		return errno(EBADF)
	}
	if a[2] > 1<<30 {
		a[2] = 1 << 30
	}
	buf := make([]byte, a[2])
	n := 0
	if m.Cfg.Stdin != nil && len(buf) > 0 {
		var err error
		n, err = m.Cfg.Stdin.Read(buf)
		if err != nil && !errors.Is(err, io.EOF) && n == 0 {
			return errno(EINTR)
		}
	}
	if !m.writeGuest(a[1], buf[:n]) {
		return errno(EFAULT)
	}
	return uint64(n)
}

// iovecs reads an iovec array.
func (m *Machine) iovecs(addr, cnt uint64) ([][2]uint64, bool) {
	if cnt > 1024 {
		return nil, false
	}
	b, ok := m.readGuest(addr, cnt*16)
	if !ok {
		return nil, false
	}
	o := m.order()
	v := make([][2]uint64, cnt)
	for i := range v {
		v[i] = [2]uint64{o.Uint64(b[16*i:]), o.Uint64(b[16*i+8:])}
	}
	return v, true
}

func sysWritev(m *Machine, a [6]uint64) uint64 {
	w := m.outFor(a[0])
	if w == nil {
		return errno(EBADF)
	}
	iov, ok := m.iovecs(a[1], a[2])
	if !ok {
		if a[2] > 1024 {
			return errno(EINVAL)
		}
		return errno(EFAULT)
	}
	var all []byte
	for _, v := range iov {
		b, ok := m.readGuest(v[0], v[1])
		if !ok {
			return errno(EFAULT)
		}
		all = append(all, b...)
	}
	n, err := w.Write(all)
	if err != nil && n == 0 {
		return errno(EFAULT)
	}
	return uint64(n)
}

func sysReadv(m *Machine, a [6]uint64) uint64 {
	iov, ok := m.iovecs(a[1], a[2])
	if !ok {
		return errno(EFAULT)
	}
	var total uint64
	for _, v := range iov {
		r := sysRead(m, [6]uint64{a[0], v[0], v[1]})
		if int64(r) < 0 {
			if total > 0 {
				return total
			}
			return r
		}
		total += r
		if r < v[1] {
			break
		}
	}
	return total
}

func sysBrk(m *Machine, a [6]uint64) uint64 {
	want := a[0]
	s := &m.os
	if want < s.brkStart {
		return s.brk
	}
	oldTop, newTop := alignUp(s.brk, PageSize), alignUp(want, PageSize)
	switch {
	case newTop > oldTop:
		if newTop-s.brkStart > brkReserve<<4 || !m.Mem.FreeRange(oldTop, newTop-oldTop) {
			return s.brk
		}
		if err := m.Mem.Map(oldTop, newTop-oldTop, PermRW); err != nil {
			return s.brk
		}
	case newTop < oldTop:
		m.Mem.Unmap(newTop, oldTop-newTop)
	}
	s.brk = want
	return s.brk
}

// mmap protection and flag bits (identical on arm64 and s390x).
const (
	protRead  = 1
	protWrite = 2
	protExec  = 4

	mapShared         = 0x01
	mapPrivate        = 0x02
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	mapFixedNoReplace = 0x100000
)

func protPerm(prot uint64) Perm {
	var p Perm
	if prot&protRead != 0 {
		p |= PermR
	}
	if prot&protWrite != 0 {
		p |= PermW | PermR
	}
	if prot&protExec != 0 {
		p |= PermX | PermR
	}
	return p
}

func sysMmap(m *Machine, a [6]uint64) uint64 {
	addr, length, prot, flags := a[0], a[1], a[2], a[3]
	if length == 0 || addr&PageMask != 0 || length > 1<<40 {
		return errno(EINVAL)
	}
	if flags&mapAnonymous == 0 {
		return errno(ENODEV)
	}
	if flags&(mapShared|mapPrivate) == 0 {
		return errno(EINVAL)
	}
	size := alignUp(length, PageSize)
	switch {
	case flags&mapFixedNoReplace != 0:
		if !m.Mem.FreeRange(addr, size) {
			return errno(EEXIST)
		}
	case flags&mapFixed != 0:
		if addr == 0 {
			return errno(EPERM)
		}
	default:
		from := m.os.mmapNext
		if addr != 0 && m.Mem.FreeRange(addr, size) {
			from = addr
		}
		var ok bool
		addr, ok = m.Mem.FindFree(from, size, 1<<47)
		if !ok {
			return errno(ENOMEM)
		}
		if addr >= m.os.mmapNext {
			m.os.mmapNext = addr + size
		}
	}
	if err := m.Mem.Map(addr, size, protPerm(prot)); err != nil {
		return errno(ENOMEM)
	}
	return addr
}

func sysOldMmap(m *Machine, a [6]uint64) uint64 {
	b, ok := m.readGuest(a[0], 48)
	if !ok {
		return errno(EFAULT)
	}
	var args [6]uint64
	for i := range args {
		args[i] = m.order().Uint64(b[8*i:])
	}
	return sysMmap(m, args)
}

func sysMunmap(m *Machine, a [6]uint64) uint64 {
	if a[0]&PageMask != 0 || a[1] == 0 {
		return errno(EINVAL)
	}
	m.Mem.Unmap(a[0], alignUp(a[1], PageSize))
	return 0
}

func sysMprotect(m *Machine, a [6]uint64) uint64 {
	if a[0]&PageMask != 0 {
		return errno(EINVAL)
	}
	if a[1] == 0 {
		return 0
	}
	if err := m.Mem.Protect(a[0], alignUp(a[1], PageSize), protPerm(a[2])); err != nil {
		return errno(ENOMEM)
	}
	return 0
}

func sysMadvise(m *Machine, a [6]uint64) uint64 {
	const madvDontneed = 4
	if a[0]&PageMask != 0 {
		return errno(EINVAL)
	}
	if a[2] == madvDontneed {
		size := alignUp(a[1], PageSize)
		if !m.Mem.IsMapped(a[0], size) {
			return errno(ENOMEM)
		}
		m.Mem.Discard(a[0], size)
	}
	return 0
}

func sysUname(m *Machine, a [6]uint64) uint64 {
	fields := []string{"Linux", "simrun", "6.1.0", "#1 SMP PREEMPT simrun", m.Arch.UnameMachine, "(none)"}
	b := make([]byte, 65*len(fields))
	for i, f := range fields {
		copy(b[65*i:65*i+64], f)
	}
	if !m.writeGuest(a[0], b) {
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

func (m *Machine) clockNanos(id uint64) (uint64, bool) {
	ns := m.VirtualNanos() + m.os.clockOff
	switch id {
	case clockRealtime, 8 /* REALTIME_ALARM */, 5 /* REALTIME_COARSE */ :
		return ns + epoch2026*1e9, true
	case clockMonotonic, 2 /* PROCESS_CPUTIME */, 3 /* THREAD_CPUTIME */, 4 /* MONOTONIC_RAW */, 6 /* MONOTONIC_COARSE */, 7 /* BOOTTIME */, 9:
		return ns, true
	}
	return 0, false
}

func (m *Machine) putTimespec(addr, ns uint64, div uint64) bool {
	b := appendU64(m.order(), nil, ns/1e9)
	b = appendU64(m.order(), b, ns%1e9/div)
	return m.writeGuest(addr, b)
}

func sysClockGettime(m *Machine, a [6]uint64) uint64 {
	ns, ok := m.clockNanos(a[0])
	if !ok {
		return errno(EINVAL)
	}
	if !m.putTimespec(a[1], ns, 1) {
		return errno(EFAULT)
	}
	return 0
}

func sysClockGetres(m *Machine, a [6]uint64) uint64 {
	if _, ok := m.clockNanos(a[0]); !ok {
		return errno(EINVAL)
	}
	if a[1] != 0 && !m.putTimespec(a[1], 1, 1) {
		return errno(EFAULT)
	}
	return 0
}

func sysGettimeofday(m *Machine, a [6]uint64) uint64 {
	ns, _ := m.clockNanos(clockRealtime)
	if a[0] != 0 && !m.putTimespec(a[0], ns, 1000) {
		return errno(EFAULT)
	}
	if a[1] != 0 && !m.writeGuest(a[1], make([]byte, 8)) {
		return errno(EFAULT)
	}
	return 0
}

func (m *Machine) sleep(tsAddr uint64) uint64 {
	b, ok := m.readGuest(tsAddr, 16)
	if !ok {
		return errno(EFAULT)
	}
	sec, nsec := m.order().Uint64(b), m.order().Uint64(b[8:])
	if int64(sec) < 0 || nsec >= 1e9 {
		return errno(EINVAL)
	}
	m.os.clockOff += sec*1e9 + nsec
	return 0
}

func sysNanosleep(m *Machine, a [6]uint64) uint64 { return m.sleep(a[0]) }

func sysClockNanosleep(m *Machine, a [6]uint64) uint64 {
	const timerAbstime = 1
	if a[1]&timerAbstime != 0 {
		b, ok := m.readGuest(a[2], 16)
		if !ok {
			return errno(EFAULT)
		}
		want := m.order().Uint64(b)*1e9 + m.order().Uint64(b[8:])
		if now, ok := m.clockNanos(a[0]); ok && want > now {
			m.os.clockOff += want - now
		}
		return 0
	}
	return m.sleep(a[2])
}

func sysGetrandom(m *Machine, a [6]uint64) uint64 {
	n := min(a[1], 1<<25)
	b := make([]byte, n)
	m.rng.fill(b)
	if !m.writeGuest(a[0], b) {
		return errno(EFAULT)
	}
	return n
}

func sysSetTidAddress(m *Machine, a [6]uint64) uint64 {
	m.os.tidAddr = a[0]
	return guestPID
}

func sysRtSigaction(m *Machine, a [6]uint64) uint64 {
	sig, act, old := a[0], a[1], a[2]
	if sig < 1 || sig > 64 || sig == SIGKILL || sig == 19 /* SIGSTOP */ {
		if act != 0 || sig < 1 || sig > 64 {
			return errno(EINVAL)
		}
	}
	o := m.order()
	if old != 0 {
		var b []byte
		for _, v := range m.os.sigact[sig] {
			b = appendU64(o, b, v)
		}
		if !m.writeGuest(old, b) {
			return errno(EFAULT)
		}
	}
	if act != 0 {
		b, ok := m.readGuest(act, 32)
		if !ok {
			return errno(EFAULT)
		}
		for i := range m.os.sigact[sig] {
			m.os.sigact[sig][i] = o.Uint64(b[8*i:])
		}
	}
	return 0
}

func sysRtSigprocmask(m *Machine, a [6]uint64) uint64 {
	how, set, old := a[0], a[1], a[2]
	if old != 0 && !m.writeGuest(old, appendU64(m.order(), nil, m.os.sigmask)) {
		return errno(EFAULT)
	}
	if set != 0 {
		b, ok := m.readGuest(set, 8)
		if !ok {
			return errno(EFAULT)
		}
		v := m.order().Uint64(b)
		switch how {
		case 0: // SIG_BLOCK
			m.os.sigmask |= v
		case 1: // SIG_UNBLOCK
			m.os.sigmask &^= v
		case 2: // SIG_SETMASK
			m.os.sigmask = v
		default:
			return errno(EINVAL)
		}
	}
	return 0
}

func (m *Machine) stdFD(fd uint64) bool { return fd <= 2 && !m.os.closed[fd] }

func sysIoctl(m *Machine, a [6]uint64) uint64 {
	if !m.stdFD(a[0]) {
		return errno(EBADF)
	}
	return errno(ENOTTY)
}

// Stat is the arch-neutral content of a struct stat.
type Stat struct {
	Dev, Ino, Mode, Nlink, UID, GID, Rdev, Size, Blksize, Blocks uint64
	Atime, Mtime, Ctime                                          uint64 // seconds
}

func (m *Machine) hostStat(fd uint64) Stat {
	st := Stat{Ino: fd + 1, Nlink: 1, Mode: syscall.S_IFCHR | 0o620, Blksize: 4096, Dev: 22}
	var f *os.File
	switch fd {
	case 0:
		f, _ = m.Cfg.Stdin.(*os.File)
	case 1:
		f, _ = m.Cfg.Stdout.(*os.File)
	case 2:
		f, _ = m.Cfg.Stderr.(*os.File)
	}
	if f == nil {
		st.Mode = syscall.S_IFIFO | 0o600 // a pipe to simrun
		return st
	}
	var hs syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &hs) == nil {
		st.Mode = uint64(hs.Mode&syscall.S_IFMT) | 0o600
	}
	return st
}

func (m *Machine) putStat(fd, addr uint64) uint64 {
	st := m.hostStat(fd)
	b := m.Arch.Stat(m.order(), &st)
	if !m.writeGuest(addr, b) {
		return errno(EFAULT)
	}
	return 0
}

func sysFstat(m *Machine, a [6]uint64) uint64 {
	if !m.stdFD(a[0]) {
		return errno(EBADF)
	}
	return m.putStat(a[0], a[1])
}

func sysReadlink(m *Machine, a [6]uint64) uint64 {
	return sysReadlinkat(m, [6]uint64{atFDCWD, a[0], a[1], a[2]})
}

const atFDCWD = ^uint64(99) // -100

func sysReadlinkat(m *Machine, a [6]uint64) uint64 {
	path, err := m.Mem.ReadCString(a[1], 4096)
	if err != nil {
		return errno(EFAULT)
	}
	if path != "/proc/self/exe" || int64(a[3]) <= 0 {
		if int64(a[3]) <= 0 {
			return errno(EINVAL)
		}
		return errno(ENOENT)
	}
	b := []byte(m.exe)
	if uint64(len(b)) > a[3] {
		b = b[:a[3]]
	}
	if !m.writeGuest(a[2], b) {
		return errno(EFAULT)
	}
	return uint64(len(b))
}

func sysNewfstatat(m *Machine, a [6]uint64) uint64 {
	const atEmptyPath = 0x1000
	path, err := m.Mem.ReadCString(a[1], 4096)
	if err != nil {
		return errno(EFAULT)
	}
	if path != "" || a[3]&atEmptyPath == 0 {
		return errno(ENOENT)
	}
	if !m.stdFD(a[0]) {
		return errno(EBADF)
	}
	return m.putStat(a[0], a[2])
}

func (m *Machine) rlimit(res uint64) (cur, max uint64, ok bool) {
	const inf = ^uint64(0)
	switch res {
	case 3: // RLIMIT_STACK
		return stackSize, inf, true
	case 7: // RLIMIT_NOFILE
		return 1024, 4096, true
	}
	if res < 16 {
		return inf, inf, true
	}
	return 0, 0, false
}

func sysPrlimit64(m *Machine, a [6]uint64) uint64 {
	if a[0] != 0 && a[0] != guestPID {
		return errno(ESRCH)
	}
	cur, max, ok := m.rlimit(a[1])
	if !ok {
		return errno(EINVAL)
	}
	if a[2] != 0 {
		return errno(EPERM)
	}
	if a[3] != 0 && !m.writeGuest(a[3], appendU64(m.order(), appendU64(m.order(), nil, cur), max)) {
		return errno(EFAULT)
	}
	return 0
}

func sysGetrlimit(m *Machine, a [6]uint64) uint64 {
	return sysPrlimit64(m, [6]uint64{0, a[0], 0, a[1]})
}

func sysClose(m *Machine, a [6]uint64) uint64 {
	if !m.stdFD(a[0]) {
		return errno(EBADF)
	}
	m.os.closed[a[0]] = true
	return 0
}

func sysLseek(m *Machine, a [6]uint64) uint64 {
	if !m.stdFD(a[0]) {
		return errno(EBADF)
	}
	return errno(ESPIPE)
}

func sysGetcwd(m *Machine, a [6]uint64) uint64 {
	if a[1] < 2 {
		return errno(ERANGE)
	}
	if !m.writeGuest(a[0], []byte("/\x00")) {
		return errno(EFAULT)
	}
	return 2
}

func sysFutex(m *Machine, a [6]uint64) uint64 {
	const (
		futexWait = 0
		futexWake = 1
	)
	switch a[1] & 0x7f {
	case futexWake:
		return 0
	case futexWait, 9 /* WAIT_BITSET */ :
		v, ok := m.Mem.Load(a[0], 4, m.order())
		if !ok {
			return errno(EFAULT)
		}
		if uint32(v) != uint32(a[2]) {
			return errno(EAGAIN)
		}
		m.endFault(m.describeFault(&Fault{PC: m.Core.PC(), Kind: FaultSyscall,
			Err: fmt.Errorf("futex wait on 0x%x would block forever: the process has one thread", a[0])}))
		return 0
	}
	return errno(ENOSYS)
}

// signalSelf applies the default action of sig to the process.
func (m *Machine) signalSelf(sig uint64) uint64 {
	if sig == 0 {
		return 0
	}
	if sig > 64 {
		return errno(EINVAL)
	}
	const sigIgn = 1
	if h := m.os.sigact[sig][0]; h == sigIgn {
		return 0
	}
	switch sig {
	case 17, 23, 28: // SIGCHLD, SIGURG, SIGWINCH: default is to ignore
		return 0
	}
	note := "default action"
	if m.os.sigact[sig][0] != 0 {
		note = "a handler is installed but simrun does not deliver signals"
	}
	m.endFault(m.describeFault(&Fault{PC: m.Core.PC(), Kind: FaultSignal, Sig: int(sig),
		Err: fmt.Errorf("the program sent itself signal %d (%s; %s)", sig, signalName(int(sig)), note)}))
	return 0
}

func sysTgkill(m *Machine, a [6]uint64) uint64 {
	if a[1] != guestPID {
		return errno(ESRCH)
	}
	return m.signalSelf(a[2])
}

func sysTkill(m *Machine, a [6]uint64) uint64 {
	if a[0] != guestPID {
		return errno(ESRCH)
	}
	return m.signalSelf(a[1])
}

func sysKill(m *Machine, a [6]uint64) uint64 {
	if a[0] != guestPID && a[0] != 0 {
		return errno(ESRCH)
	}
	return m.signalSelf(a[1])
}

func signalName(sig int) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
		7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
		14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 31: "SIGSYS"}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", sig)
}
