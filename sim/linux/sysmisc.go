package linux

import (
	"runtime"
	"syscall"
	"unsafe"
)

// System information, process control, file-system statistics, extended
// attributes and the socket calls that real distribution programs make on
// their way (programs/debian): coreutils' sort asks for the CPUs and the
// memory, libselinux looks for selinuxfs with statfs, ls and sed read
// extended attributes, bash asks whether stdin is a socket.

const (
	E2BIG   = 7
	ENODATA = 61
)

// The machine the guest is told it runs on, the same in sysinfo and
// /proc/meminfo: 4 GiB of RAM, 3 GiB of it free, no swap.
const (
	machineRAM  = 4 << 30
	machineFree = 3 << 30
)

// sysinfo fills struct sysinfo (include/uapi/linux/sysinfo.h, 64-bit
// layout: uptime, loads[3], six memory fields, procs, totalhigh,
// freehigh, mem_unit; 112 bytes): the fixed machine, load 0, the run's
// threads as procs (Linux's nr_threads), uptime from the virtual clock.
func sysSysinfo(p *Process, a [6]uint64) uint64 {
	o := p.order()
	ns, _ := p.clockNanos(clockMonotonic)
	b := make([]byte, 112)
	o.PutUint64(b[0:], ns/1e9)                       // uptime
	o.PutUint64(b[32:], machineRAM)                  // totalram
	o.PutUint64(b[40:], machineFree)                 // freeram
	o.PutUint16(b[80:], uint16(p.sys.threadCount())) // procs
	o.PutUint32(b[104:], 1)                          // mem_unit
	if !p.writeGuest(a[0], b) {
		return errno(EFAULT)
	}
	return 0
}

// threadCount is the threads of the run's live processes (at least the
// caller's).
func (s *System) threadCount() int {
	n := 0
	for _, q := range s.procs {
		if !q.ended {
			n += len(q.threads)
		}
	}
	return max(n, 1)
}

// sched_getaffinity: the thread's CPU mask, by default every one of the
// Config.CPUs CPUs (one, CPU 0, unless --cpus says more). The result is
// the size of the kernel's mask (8 bytes, nr_cpu_ids <= 64), as Linux
// returns it; a buffer smaller than that is EINVAL.
func sysSchedGetaffinity(p *Process, a [6]uint64) uint64 {
	t := p.cur
	if a[0] != 0 {
		if t = p.threadByTid(a[0]); t == nil {
			return errno(ESRCH)
		}
	}
	if a[1] < 8 || a[1]&7 != 0 {
		return errno(EINVAL)
	}
	if !p.writeGuest(a[2], appendU64(p.order(), nil, t.affinity)) {
		return errno(EFAULT)
	}
	return 8
}

// prctl options.
const (
	prGetDumpable = 3
	prSetDumpable = 4
	prSetName     = 15
	prGetName     = 16
)

func sysPrctl(p *Process, a [6]uint64) uint64 {
	switch a[0] {
	case prGetName:
		name := make([]byte, 16) // TASK_COMM_LEN, NUL-padded
		copy(name, p.comm())
		if !p.writeGuest(a[1], name) {
			return errno(EFAULT)
		}
		return 0
	case prSetName:
		if _, ok := p.readGuest(a[1], 1); !ok {
			return errno(EFAULT)
		}
		return 0
	case prGetDumpable:
		return 1
	case prSetDumpable:
		if a[1] > 1 {
			return errno(EINVAL)
		}
		return 0
	}
	return errno(EINVAL)
}

// statfs and fstatfs pass the host's answer through, as qemu-user does.
// The layouts (include/uapi/asm-generic/statfs.h): arm64's struct statfs
// has 64-bit fields throughout (120 bytes); s390x's has 32-bit type, block
// size, name length, fragment size, flags and spare words around 64-bit
// counts (arch/s390/include/uapi/asm/statfs.h, 88 bytes).
func (p *Process) putStatfs(st *syscall.Statfs_t, addr uint64) uint64 {
	o := p.order()
	var b []byte
	if p.Arch.Name == "s390x" {
		b = make([]byte, 88)
		o.PutUint32(b[0:], uint32(st.Type))
		o.PutUint32(b[4:], uint32(st.Bsize))
		for i, v := range []uint64{st.Blocks, st.Bfree, st.Bavail, st.Files, st.Ffree} {
			o.PutUint64(b[8+8*i:], v)
		}
		o.PutUint32(b[48:], uint32(st.Fsid.X__val[0]))
		o.PutUint32(b[52:], uint32(st.Fsid.X__val[1]))
		o.PutUint32(b[56:], uint32(st.Namelen))
		o.PutUint32(b[60:], uint32(st.Frsize))
		o.PutUint32(b[64:], uint32(st.Flags))
	} else {
		b = make([]byte, 120)
		for i, v := range []uint64{uint64(st.Type), uint64(st.Bsize), st.Blocks, st.Bfree, st.Bavail, st.Files, st.Ffree} {
			o.PutUint64(b[8*i:], v)
		}
		o.PutUint32(b[56:], uint32(st.Fsid.X__val[0]))
		o.PutUint32(b[60:], uint32(st.Fsid.X__val[1]))
		o.PutUint64(b[64:], uint64(st.Namelen))
		o.PutUint64(b[72:], uint64(st.Frsize))
		o.PutUint64(b[80:], uint64(st.Flags))
	}
	if !p.writeGuest(addr, b) {
		return errno(EFAULT)
	}
	return 0
}

func sysStatfs(p *Process, a [6]uint64) uint64 {
	host, e := p.pathAt(atFDCWD, a[0], true)
	if e != 0 {
		return e
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(host, &st); err != nil {
		return hostErrno(err)
	}
	return p.putStatfs(&st, a[1])
}

// statfs64 and fstatfs64 (s390x) take the size of the structure
// between the path or descriptor and the buffer: it must be the 88 bytes
// of struct statfs64, which has struct statfs's layout there.
func sysStatfs64(p *Process, a [6]uint64) uint64 {
	if a[1] != 88 {
		return errno(EINVAL)
	}
	return sysStatfs(p, [6]uint64{a[0], a[2]})
}

func sysFstatfs64(p *Process, a [6]uint64) uint64 {
	if a[1] != 88 {
		return errno(EINVAL)
	}
	return sysFstatfs(p, [6]uint64{a[0], a[2]})
}

func sysFstatfs(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	var st syscall.Statfs_t
	switch f.kind {
	case kindHost, kindDir:
		if err := syscall.Fstatfs(int(f.host.Fd()), &st); err != nil {
			return hostErrno(err)
		}
	case kindPath:
		if err := syscall.Statfs(f.path, &st); err != nil {
			return hostErrno(err)
		}
	default:
		// Pipes, the standard streams and the virtual files: a pseudo
		// file system's answer (pipefs' magic, 4 KiB blocks, no counts).
		st = syscall.Statfs_t{Type: 0x50495045, Bsize: 4096, Namelen: 255, Frsize: 4096}
	}
	return p.putStatfs(&st, a[1])
}

// Extended attributes pass through to the host's files, as under
// qemu-user: the guest reads and writes them with simrun's rights. A
// descriptor that is no host file (a pipe, a standard stream, a virtual
// file) has none: EOPNOTSUPP.

const (
	xattrNameMax = 255   // XATTR_NAME_MAX
	xattrSizeMax = 65536 // XATTR_SIZE_MAX
)

// xattrTarget is where an xattr call works: a host path (with or without
// following a final symbolic link) or a host descriptor.
type xattrTarget struct {
	path   string
	follow bool
	fd     int // >= 0: a descriptor
}

func (p *Process) xattrPath(addr uint64, follow bool) (xattrTarget, uint64) {
	if path, e := p.readPath(addr); e == 0 && p.isVirtualPath(p.specialPath(atFDCWD, path)) {
		return xattrTarget{}, errno(ENOTSUP) // as the virtual descriptors
	}
	host, e := p.pathAt(atFDCWD, addr, follow)
	return xattrTarget{path: host, follow: follow, fd: -1}, e
}

func (p *Process) xattrFD(fd uint64) (xattrTarget, uint64) {
	f, e := p.file(fd)
	if e != 0 {
		return xattrTarget{}, e
	}
	if (f.kind != kindHost && f.kind != kindDir) || f.host == nil {
		return xattrTarget{}, errno(ENOTSUP)
	}
	return xattrTarget{fd: int(f.host.Fd())}, 0
}

// xattrName reads an attribute name: ERANGE when it is empty or longer
// than XATTR_NAME_MAX.
func (p *Process) xattrName(addr uint64) ([]byte, uint64) {
	s, err := p.Mem.ReadCString(addr, xattrNameMax+1)
	if err != nil {
		if _, ok := p.readGuest(addr, 1); !ok {
			return nil, errno(EFAULT)
		}
		return nil, errno(ERANGE)
	}
	if s == "" {
		return nil, errno(ERANGE)
	}
	return append([]byte(s), 0), 0
}

// hostXattr makes the host call: nr is the path form, lnr the no-follow
// path form, fnr the descriptor form; the target goes first, the other
// arguments after it.
func hostXattr(t xattrTarget, nr, lnr, fnr uintptr, args ...uintptr) (uintptr, syscall.Errno) {
	var first uintptr
	var path []byte
	switch {
	case t.fd >= 0:
		nr, first = fnr, uintptr(t.fd)
	default:
		if !t.follow {
			nr = lnr
		}
		path = append([]byte(t.path), 0)
		first = uintptr(unsafe.Pointer(&path[0]))
	}
	var a [5]uintptr
	copy(a[:], args)
	r, _, err := syscall.Syscall6(nr, first, a[0], a[1], a[2], a[3], a[4])
	runtime.KeepAlive(path)
	return r, err
}

func (p *Process) getxattr(t xattrTarget, e uint64, nameAddr, buf, size uint64) uint64 {
	if e != 0 {
		return e
	}
	name, e := p.xattrName(nameAddr)
	if e != 0 {
		return e
	}
	size = min(size, xattrSizeMax)
	val := make([]byte, max(size, 1))
	r, err := hostXattr(t, syscall.SYS_GETXATTR, syscall.SYS_LGETXATTR, syscall.SYS_FGETXATTR,
		uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&val[0])), uintptr(size))
	runtime.KeepAlive(name)
	runtime.KeepAlive(val)
	if err != 0 {
		return errno(int(err))
	}
	if size != 0 && !p.writeGuest(buf, val[:r]) {
		return errno(EFAULT)
	}
	return uint64(r)
}

func (p *Process) listxattr(t xattrTarget, e uint64, buf, size uint64) uint64 {
	if e != 0 {
		return e
	}
	size = min(size, xattrSizeMax)
	list := make([]byte, max(size, 1))
	r, err := hostXattr(t, syscall.SYS_LISTXATTR, syscall.SYS_LLISTXATTR, syscall.SYS_FLISTXATTR,
		uintptr(unsafe.Pointer(&list[0])), uintptr(size))
	runtime.KeepAlive(list)
	if err != 0 {
		return errno(int(err))
	}
	if size != 0 && !p.writeGuest(buf, list[:r]) {
		return errno(EFAULT)
	}
	return uint64(r)
}

// xattrChange checks a change of an attribute (EROFS under --read-only)
// and reads its name.
func (p *Process) xattrChange(e, nameAddr uint64) ([]byte, uint64) {
	if e == 0 && p.Cfg.ReadOnly {
		e = errno(EROFS)
	}
	if e != 0 {
		return nil, e
	}
	return p.xattrName(nameAddr)
}

func (p *Process) setxattr(t xattrTarget, e uint64, nameAddr, val, size, flags uint64) uint64 {
	name, e := p.xattrChange(e, nameAddr)
	if e != 0 {
		return e
	}
	if size > xattrSizeMax {
		return errno(E2BIG)
	}
	if flags&^3 != 0 { // XATTR_CREATE | XATTR_REPLACE
		return errno(EINVAL)
	}
	v, ok := p.readGuest(val, size)
	if !ok {
		return errno(EFAULT)
	}
	v = append(v, 0) // a valid pointer also for an empty value
	_, err := hostXattr(t, syscall.SYS_SETXATTR, syscall.SYS_LSETXATTR, syscall.SYS_FSETXATTR,
		uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&v[0])), uintptr(size), uintptr(flags))
	runtime.KeepAlive(name)
	runtime.KeepAlive(v)
	if err != 0 {
		return errno(int(err))
	}
	return 0
}

func (p *Process) removexattr(t xattrTarget, e uint64, nameAddr uint64) uint64 {
	name, e := p.xattrChange(e, nameAddr)
	if e != 0 {
		return e
	}
	_, err := hostXattr(t, syscall.SYS_REMOVEXATTR, syscall.SYS_LREMOVEXATTR, syscall.SYS_FREMOVEXATTR,
		uintptr(unsafe.Pointer(&name[0])))
	runtime.KeepAlive(name)
	if err != 0 {
		return errno(int(err))
	}
	return 0
}

func sysGetxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], true)
	return p.getxattr(t, e, a[1], a[2], a[3])
}

func sysLgetxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], false)
	return p.getxattr(t, e, a[1], a[2], a[3])
}

func sysFgetxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrFD(a[0])
	return p.getxattr(t, e, a[1], a[2], a[3])
}

func sysListxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], true)
	return p.listxattr(t, e, a[1], a[2])
}

func sysLlistxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], false)
	return p.listxattr(t, e, a[1], a[2])
}

func sysFlistxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrFD(a[0])
	return p.listxattr(t, e, a[1], a[2])
}

func sysSetxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], true)
	return p.setxattr(t, e, a[1], a[2], a[3], a[4])
}

func sysLsetxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], false)
	return p.setxattr(t, e, a[1], a[2], a[3], a[4])
}

func sysFsetxattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrFD(a[0])
	return p.setxattr(t, e, a[1], a[2], a[3], a[4])
}

func sysRemovexattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], true)
	return p.removexattr(t, e, a[1])
}

func sysLremovexattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrPath(a[0], false)
	return p.removexattr(t, e, a[1])
}

func sysFremovexattr(p *Process, a [6]uint64) uint64 {
	t, e := p.xattrFD(a[0])
	return p.removexattr(t, e, a[1])
}

// sysSetIDs is setuid, setgid, setreuid, setregid, setresuid and
// setresgid: the guest is root and stays root, so every id must be 0 or
// -1 (unchanged); changing to another gives EPERM, where Linux would let
// root change (the only ids simrun shows are 0).
// n is how many ids the call takes.
func sysSetIDs(n int) func(p *Process, a [6]uint64) uint64 {
	return func(p *Process, a [6]uint64) uint64 {
		for _, v := range a[:n] {
			if id := int32(v); id != 0 && id != -1 {
				return errno(EPERM)
			}
		}
		return 0
	}
}

// sysGetresID is getresuid and getresgid: three zeros.
func sysGetresID(p *Process, a [6]uint64) uint64 {
	for i := 0; i < 3; i++ {
		if !p.Mem.Store(a[i], 4, 0, p.order()) {
			return errno(EFAULT)
		}
	}
	return 0
}

// sysSetgroups accepts the empty list of supplementary groups that
// getgroups reports.
func sysSetgroups(p *Process, a [6]uint64) uint64 {
	if int32(a[0]) < 0 || a[0] > 65536 {
		return errno(EINVAL)
	}
	if a[0] != 0 {
		return errno(EPERM)
	}
	return 0
}
