package linux

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// Syscalls in strace's notation: `openat(AT_FDCWD, "x", O_RDONLY) = 3`,
// `read(9, 0x4000a0, 16) = -1 EBADF (Bad file descriptor)`. --strace
// prints one such line per syscall, and the one-time notes about what
// simrun does not do use the same form.

// argKind says how to print one argument.
type argKind uint8

const (
	argHex   argKind = iota // 0x...
	argInt                  // signed decimal
	argFD                   // a descriptor (AT_FDCWD by name)
	argPath                 // a NUL-terminated string in guest memory
	argOct                  // a mode: 0644
	argOpen                 // open(2) flags by name
	argClone                // clone(2) flags by name, and the exit signal
)

// straceArgs lists the argument kinds of the syscalls whose arguments
// read better decoded; the rest print in hex, as many as the table's
// width (six) would be noise, so unknown ones show three.
var straceArgs = map[string][]argKind{
	"read": {argFD, argHex, argInt}, "write": {argFD, argHex, argInt},
	"pread64": {argFD, argHex, argInt, argInt}, "pwrite64": {argFD, argHex, argInt, argInt},
	"readv": {argFD, argHex, argInt}, "writev": {argFD, argHex, argInt},
	"openat": {argFD, argPath, argOpen, argOct}, "open": {argPath, argOpen, argOct},
	"close": {argFD}, "lseek": {argFD, argInt, argInt}, "fstat": {argFD, argHex},
	"newfstatat": {argFD, argPath, argHex, argHex}, "statx": {argFD, argPath, argHex, argHex, argHex},
	"stat": {argPath, argHex}, "lstat": {argPath, argHex},
	"readlinkat": {argFD, argPath, argHex, argInt}, "readlink": {argPath, argHex, argInt},
	"faccessat": {argFD, argPath, argOct}, "faccessat2": {argFD, argPath, argOct, argHex}, "access": {argPath, argOct},
	"mkdirat": {argFD, argPath, argOct}, "mkdir": {argPath, argOct},
	"unlinkat": {argFD, argPath, argHex}, "unlink": {argPath}, "rmdir": {argPath},
	"chdir": {argPath}, "fchdir": {argFD}, "getdents64": {argFD, argHex, argInt},
	"dup": {argFD}, "dup2": {argFD, argFD}, "dup3": {argFD, argFD, argHex},
	"fcntl": {argFD, argInt, argHex}, "ioctl": {argFD, argHex, argHex},
	"mmap": {argHex, argInt, argHex, argHex, argFD, argHex}, "munmap": {argHex, argInt},
	"mprotect": {argHex, argInt, argHex}, "brk": {argHex},
	"exit": {argInt}, "exit_group": {argInt},
	"renameat2": {argFD, argPath, argFD, argPath, argHex}, "renameat": {argFD, argPath, argFD, argPath},
	"rename": {argPath, argPath}, "symlinkat": {argPath, argFD, argPath}, "linkat": {argFD, argPath, argFD, argPath, argHex},
	"fchmodat": {argFD, argPath, argOct}, "chmod": {argPath, argOct}, "execve": {argPath, argHex, argHex},
	"kill": {argInt, argInt}, "tgkill": {argInt, argInt, argInt}, "tkill": {argInt, argInt},
	"clone": {argClone, argHex, argHex, argHex, argHex}, "wait4": {argInt, argHex, argHex, argHex},
}

// formatCall renders a syscall and its arguments.
func (p *Process) formatCall(name string, a [6]uint64) string {
	kinds, ok := straceArgs[name]
	if !ok {
		kinds = []argKind{argHex, argHex, argHex}
	}
	if name == "clone" && p.Arch.Name == "s390x" {
		kinds = []argKind{argHex, argClone, argHex, argHex, argHex} // the stack comes first there
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = p.formatArg(k, a[i])
		if k == argOpen && a[i]&(oCreat|oTmpfile) == 0 && i+1 == len(kinds)-1 {
			// strace shows the mode only when the call creates a file.
			parts = parts[:i+1]
			break
		}
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

func (p *Process) formatArg(k argKind, v uint64) string {
	switch k {
	case argInt:
		return strconv.FormatInt(int64(v), 10)
	case argFD:
		if int32(v) == -100 {
			return "AT_FDCWD"
		}
		return strconv.FormatInt(int64(int32(v)), 10)
	case argPath:
		s, err := p.Mem.ReadCString(v, 256)
		if err != nil {
			return fmt.Sprintf("0x%x", v)
		}
		return strconv.Quote(s)
	case argOct:
		return fmt.Sprintf("%#o", v)
	case argOpen:
		return p.openFlagNames(v)
	case argClone:
		return cloneFlagNames(v)
	}
	return fmt.Sprintf("0x%x", v)
}

func (p *Process) openFlagNames(v uint64) string {
	names := []string{"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"}
	out := []string{names[v&oAccmode]}
	of := p.Arch.OpenFlags
	rest := v &^ oAccmode
	for _, f := range []struct {
		bit  uint64
		name string
	}{{oCreat, "O_CREAT"}, {oExcl, "O_EXCL"}, {oNoctty, "O_NOCTTY"}, {oTrunc, "O_TRUNC"}, {oAppend, "O_APPEND"},
		{oNonblock, "O_NONBLOCK"}, {oCloexec, "O_CLOEXEC"}, {oPath, "O_PATH"}, {of.Directory, "O_DIRECTORY"},
		{of.Nofollow, "O_NOFOLLOW"}, {of.Direct, "O_DIRECT"}, {of.Largefile, "O_LARGEFILE"}, {oNoatime, "O_NOATIME"}} {
		if f.bit != 0 && rest&f.bit == f.bit {
			out = append(out, f.name)
			rest &^= f.bit
		}
	}
	if rest != 0 {
		out = append(out, fmt.Sprintf("%#o", rest))
	}
	return strings.Join(out, "|")
}

// formatResult renders a return value: `= 3`, `= 0x5500001000` for
// addresses, `= -1 ENOENT (No such file or directory)`.
func formatResult(name string, r uint64) string {
	if e := int64(r); e < 0 && e >= -4095 {
		n := syscall.Errno(-e)
		return fmt.Sprintf("= -1 %s (%s)", errnoName(int(-e)), capitalize(n.Error()))
	}
	switch name {
	case "mmap", "old_mmap", "mremap", "brk":
		return fmt.Sprintf("= 0x%x", r)
	}
	return "= " + strconv.FormatInt(int64(r), 10)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// errnoName is the symbolic name of an errno value (asm-generic numbers).
func errnoName(e int) string {
	names := map[int]string{EPERM: "EPERM", ENOENT: "ENOENT", ESRCH: "ESRCH", EINTR: "EINTR", EIO: "EIO",
		ENXIO: "ENXIO", 7: "E2BIG", 8: "ENOEXEC", EBADF: "EBADF", 10: "ECHILD", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM",
		EACCES: "EACCES", EFAULT: "EFAULT", 16: "EBUSY", EEXIST: "EEXIST", EXDEV: "EXDEV", ENODEV: "ENODEV",
		ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EINVAL: "EINVAL", 23: "ENFILE", EMFILE: "EMFILE", ENOTTY: "ENOTTY",
		26: "ETXTBSY", EFBIG: "EFBIG", 28: "ENOSPC", ESPIPE: "ESPIPE", EROFS: "EROFS", 31: "EMLINK", EPIPE: "EPIPE",
		ERANGE: "ERANGE", ENAMETOOLONG: "ENAMETOOLONG", ENOSYS: "ENOSYS", 39: "ENOTEMPTY", ELOOP: "ELOOP",
		35: "EDEADLK", 61: "ENODATA", 75: "EOVERFLOW", ENOTSUP: "EOPNOTSUPP", 110: "ETIMEDOUT",
		errRestart: "ERESTARTSYS", errRestartNoIntr: "ERESTARTNOINTR", errRestartNoHand: "ERESTARTNOHAND",
		errRestartBlock: "ERESTART_RESTARTBLOCK"}
	if n, ok := names[e]; ok {
		return n
	}
	return "E" + strconv.Itoa(e)
}

// cloneFlags are the CLONE_* bits (include/uapi/linux/sched.h).
var cloneFlags = []struct {
	bit  uint64
	name string
}{
	{0x100, "CLONE_VM"}, {0x200, "CLONE_FS"}, {0x400, "CLONE_FILES"}, {0x800, "CLONE_SIGHAND"},
	{0x1000, "CLONE_PIDFD"}, {0x2000, "CLONE_PTRACE"}, {0x4000, "CLONE_VFORK"}, {0x8000, "CLONE_PARENT"},
	{0x10000, "CLONE_THREAD"}, {0x20000, "CLONE_NEWNS"}, {0x40000, "CLONE_SYSVSEM"}, {0x80000, "CLONE_SETTLS"},
	{0x100000, "CLONE_PARENT_SETTID"}, {0x200000, "CLONE_CHILD_CLEARTID"}, {0x400000, "CLONE_DETACHED"},
	{0x800000, "CLONE_UNTRACED"}, {0x1000000, "CLONE_CHILD_SETTID"},
}

// cloneFlagNames renders clone flags as strace does:
// CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD.
func cloneFlagNames(v uint64) string {
	var out []string
	rest := v &^ 0xff
	for _, f := range cloneFlags {
		if rest&f.bit != 0 {
			out = append(out, f.name)
			rest &^= f.bit
		}
	}
	if rest != 0 {
		out = append(out, fmt.Sprintf("%#x", rest))
	}
	if sig := v & 0xff; sig != 0 {
		out = append(out, SignalName(int(sig)))
	}
	if len(out) == 0 {
		return "0"
	}
	return strings.Join(out, "|")
}
