package s390x

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sync"

	"golang.org/x/arch/s390x/s390xasm"

	"simrun/sim/cpu"
)

// HWCAP bits (arch/s390/include/asm/elf.h) for the facilities simrun
// implements. qemu-s390x 7.2's default model reports 0x2b3f; simrun leaves
// out what it does not implement: STFLE (bit 2: stfle answers, but with
// qemu's list, see facilities), MSA (3, no message-security assist),
// ETF3EH (8, no extended-translation 3 enhancement) and VXRS_EXT (13, no
// vector-enhancements facility 1). The result, 0xa33, is qemu's AT_HWCAP
// under -cpu qemu,stfle=off,etf3eh=off,vxeh=off,msa-base=off
// (programs.S390xQemuCPU), the model the differential tests run.
const (
	hwcapESAN3    = 1 << 0  // ESA/390 instructions
	hwcapZARCH    = 1 << 1  // z/Architecture mode
	hwcapLDISP    = 1 << 4  // long (20-bit) displacements
	hwcapEIMM     = 1 << 5  // extended immediates (afi, llihf, ...)
	hwcapHIGHGPRS = 1 << 9  // 64-bit registers
	hwcapVXRS     = 1 << 11 // vector facility (z13)
	HWCAP         = hwcapESAN3 | hwcapZARCH | hwcapLDISP | hwcapEIMM | hwcapHIGHGPRS | hwcapVXRS
)

// hwcapNames are /proc/cpuinfo's names of the HWCAP bits, by bit (Linux's
// s390 hwcap_str).
var hwcapNames = []string{"esan3", "zarch", "stfle", "msa", "ldisp", "eimm", "dfp", "edat", "etf3eh", "highgprs", "te", "vx", "vxd", "vxe"}

// cpuInfo is /proc/cpuinfo as Linux's s390 show_cpuinfo prints it for n
// CPUs of machine type 2964 (z13, the vector facility's first): the
// summary with the HWCAP features, a line per CPU, then a section per
// CPU.
func cpuInfo(n int) []byte {
	b := fmt.Appendf(nil, "vendor_id       : IBM/S390\n# processors    : %d\nbogomips per cpu: 13370.00\nmax thread id   : 0\nfeatures\t: %s\n", n, cpu.HWCAPNames(HWCAP, hwcapNames))
	for i := range n {
		b = fmt.Appendf(b, "processor %d: version = 00,  identification = 000000,  machine = 2964\n", i)
	}
	for i := range n {
		b = fmt.Appendf(b, "\ncpu number      : %d\ncpu MHz dynamic : 5000\ncpu MHz static  : 5000\n", i)
	}
	return b
}

// Arch is the s390x descriptor. qemu's auxiliary vector for s390x has no
// AT_PLATFORM and no AT_HWCAP2, and neither has this one.
var Arch = &cpu.Arch{
	Name:         "s390x",
	GNUTriple:    "s390x-linux-gnu",
	ELFMachine:   elf.EM_S390,
	ByteOrder:    binary.BigEndian,
	UnameMachine: "s390x",
	HWCAP:        HWCAP,
	CPUInfo:      cpuInfo,
	MmapBase:     0x4000000000,
	// The page qemu maps after the stack: svc 119 (sigreturn) at its
	// start, svc 173 (rt_sigreturn) after it.
	SigTramp:      []byte{0x0a, 119, 0x0a, 173},
	Syscalls:      syscalls,
	Stat:          stat,
	OpenFlags:     cpu.OpenFlags{Directory: 0o200000, Nofollow: 0o400000, Direct: 0o40000, Largefile: 0o100000},
	GPRNames:      gprNames(),
	SyscallResult: 2, // r2
	FlagsName:     "cc",
	NumVec:        32,
	DwarfSP:       15,
	DwarfFP:       11,
	DwarfRA:       14,
	InsnAlign:     2,
	MaxInsnLen:    6,
	NewCore:       newCore,
	// svc (not through an EXECUTE)
	SyscallInsnLen: 2,
	Disasm:         Disasm,
}

func init() { cpu.Register(Arch) }

func gprNames() []string {
	n := make([]string, 16)
	for i := range n {
		n[i] = fmt.Sprintf("r%d", i)
	}
	return n
}

// x/arch's decoder sets up a package-level table on first use and panics
// on some truncated inputs: serialise calls and recover.
var asmMu sync.Mutex

func asmDecode(b []byte) (in s390xasm.Inst, ok bool) {
	if len(b) < 2 || len(b) < insnLen(b[0]) {
		return in, false
	}
	asmMu.Lock()
	defer asmMu.Unlock()
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	in, err := s390xasm.Decode(b[:insnLen(b[0])])
	return in, err == nil && in.Op != 0
}

// asmName is the mnemonic x/arch knows for the instruction at the start
// of b.
func asmName(b []byte) (string, bool) {
	in, ok := asmDecode(b)
	if !ok {
		return "", false
	}
	return in.Op.String(), true
}

// Disasm renders one instruction in GNU syntax with x/arch.
func Disasm(code []byte, pc uint64) (text string, n int) {
	if len(code) < 2 || len(code) < insnLen(code[0]) {
		return "", 0
	}
	n = insnLen(code[0])
	in, ok := asmDecode(code)
	if !ok {
		return fmt.Sprintf(".long 0x%x", leftAligned(code[:n])>>(64-8*n)), n
	}
	asmMu.Lock()
	defer asmMu.Unlock()
	defer func() {
		if recover() != nil {
			text = in.Op.String()
		}
	}()
	return s390xasm.GNUSyntax(in, pc), n
}

// stat encodes struct stat in the s390x 64-bit layout: 144 bytes.
func stat(o binary.ByteOrder, st *cpu.Stat) []byte {
	b := make([]byte, 144)
	o.PutUint64(b[0:], st.Dev)
	o.PutUint64(b[8:], st.Ino)
	o.PutUint64(b[16:], st.Nlink)
	o.PutUint32(b[24:], uint32(st.Mode))
	o.PutUint32(b[28:], uint32(st.UID))
	o.PutUint32(b[32:], uint32(st.GID))
	o.PutUint64(b[40:], st.Rdev)
	o.PutUint64(b[48:], st.Size)
	o.PutUint64(b[56:], st.Atime)
	o.PutUint64(b[72:], st.Mtime)
	o.PutUint64(b[88:], st.Ctime)
	o.PutUint64(b[64:], st.AtimeNsec)
	o.PutUint64(b[80:], st.MtimeNsec)
	o.PutUint64(b[96:], st.CtimeNsec)
	o.PutUint64(b[104:], st.Blksize)
	o.PutUint64(b[112:], st.Blocks)
	return b
}

// syscalls are the s390x numbers (arch/s390/kernel/syscalls/syscall.tbl,
// 64-bit column) for the names the generic handlers know. mmap (90) is
// the old form whose six arguments are in memory.
var syscalls = map[string]uint64{
	"exit":              1,
	"read":              3,
	"write":             4,
	"open":              5,
	"close":             6,
	"execve":            11,
	"fork":              2,
	"vfork":             190,
	"waitid":            281,
	"execveat":          354,
	"lseek":             19,
	"getpid":            20,
	"access":            33,
	"kill":              37,
	"dup":               41,
	"times":             43,
	"brk":               45,
	"ioctl":             54,
	"fcntl":             55,
	"setpgid":           57,
	"umask":             60,
	"getppid":           64,
	"setsid":            66,
	"getrusage":         77,
	"gettimeofday":      78,
	"readlink":          85,
	"old_mmap":          90,
	"munmap":            91,
	"truncate":          92,
	"ftruncate":         93,
	"fchmod":            94,
	"getpriority":       96,
	"setpriority":       97,
	"statfs":            99,
	"fstatfs":           100,
	"fstat":             108,
	"wait4":             114,
	"sysinfo":           116,
	"fsync":             118,
	"sigreturn":         119,
	"clone":             120,
	"uname":             122,
	"mprotect":          125,
	"getpgid":           132,
	"readv":             145,
	"writev":            146,
	"mlock":             150,
	"sched_yield":       158,
	"nanosleep":         162,
	"restart_syscall":   7,
	"alarm":             27,
	"pause":             29,
	"setitimer":         104,
	"getitimer":         105,
	"rt_sigtimedwait":   177,
	"rt_sigsuspend":     179,
	"timer_create":      254,
	"timer_settime":     255,
	"timer_gettime":     256,
	"timer_getoverrun":  257,
	"timer_delete":      258,
	"timerfd_create":    319,
	"timerfd_settime":   320,
	"timerfd_gettime":   321,
	"mremap":            163,
	"prctl":             172,
	"rt_sigreturn":      173,
	"rt_sigaction":      174,
	"rt_sigprocmask":    175,
	"rt_sigpending":     176,
	"rt_sigqueueinfo":   178,
	"rt_tgsigqueueinfo": 330,
	"pread64":           180,
	"pwrite64":          181,
	"getcwd":            183,
	"sigaltstack":       186,
	"getrlimit":         191,
	"setrlimit":         75,
	"getuid":            199,
	"getgid":            200,
	"geteuid":           201,
	"getegid":           202,
	"fchown":            207,
	"madvise":           219,
	"getdents64":        220,
	"gettid":            236,
	"tkill":             237,
	"futex":             238,
	"sched_getaffinity": 240,
	"sched_setaffinity": 239,
	"getcpu":            311,
	"tgkill":            241,
	"exit_group":        248,
	"set_tid_address":   252,
	"clock_gettime":     260,
	"clock_getres":      261,
	"clock_nanosleep":   262,
	"openat":            288,
	"mkdirat":           289,
	"mknodat":           290,
	"newfstatat":        293,
	"unlinkat":          294,
	"readlinkat":        298,
	"faccessat":         300,
	"pselect6":          301,
	"ppoll":             302,
	"set_robust_list":   304,
	"get_robust_list":   305,
	"pipe2":             325,
	"dup3":              326,
	"prlimit64":         334,
	"getrandom":         349,
	"membarrier":        356,
	"socket":            359,
	"statx":             379,
	"rseq":              383,
	"clone3":            435,
	"creat":             8,
	"link":              9,
	"unlink":            10,
	"chdir":             12,
	"chmod":             15,
	"rename":            38,
	"mkdir":             39,
	"mknod":             14,
	"rmdir":             40,
	"pipe":              42,
	"dup2":              63,
	"getpgrp":           65,
	"symlink":           83,
	"stat":              106,
	"lstat":             107,
	"fchdir":            133,
	"msync":             144,
	"getsid":            147,
	"fdatasync":         148,
	"poll":              168,
	"sendfile":          187,
	"lchown":            198,
	"getgroups":         205,
	"setreuid":          203,
	"setregid":          204,
	"setgroups":         206,
	"setresuid":         208,
	"getresuid":         209,
	"setresgid":         210,
	"getresgid":         211,
	"setuid":            213,
	"setgid":            214,
	"setfsuid":          215,
	"setfsgid":          216,
	"chown":             212,
	"fadvise64":         253,
	"fchownat":          291,
	"renameat":          295,
	"linkat":            296,
	"symlinkat":         297,
	"fchmodat":          299,
	"fallocate":         314,
	"utimensat":         315,
	"preadv":            328,
	"pwritev":           329,
	"renameat2":         347,
	"copy_file_range":   375,
	"faccessat2":        439,
	"setxattr":          224,
	"lsetxattr":         225,
	"fsetxattr":         226,
	"getxattr":          227,
	"lgetxattr":         228,
	"fgetxattr":         229,
	"listxattr":         230,
	"llistxattr":        231,
	"flistxattr":        232,
	"removexattr":       233,
	"lremovexattr":      234,
	"fremovexattr":      235,
	"statfs64":          265,
	"fstatfs64":         266,
	"socketcall":        102,
	"socketpair":        360,
	"bind":              361,
	"connect":           362,
	"listen":            363,
	"accept4":           364,
	"getsockopt":        365,
	"setsockopt":        366,
	"getsockname":       367,
	"getpeername":       368,
	"sendto":            369,
	"sendmsg":           370,
	"recvfrom":          371,
	"recvmsg":           372,
	"shutdown":          373,

	// Memory locking, scheduling parameters, credentials, sync, flock (sysproc.go).
	"sync":                   36,
	"syncfs":                 338,
	"sync_file_range":        307,
	"munlock":                151,
	"mlockall":               152,
	"munlockall":             153,
	"mlock2":                 374,
	"sched_getscheduler":     157,
	"sched_getparam":         155,
	"sched_get_priority_max": 159,
	"sched_get_priority_min": 160,
	"sched_rr_get_interval":  161,
	"memfd_create":           350,
	"close_range":            436,
	"personality":            136,
	"flock":                  143,
	"readahead":              222,

	// epoll and eventfd (epoll.go).
	"epoll_create1": 327,
	"epoll_create":  249,
	"epoll_ctl":     250,
	"epoll_pwait":   312,
	"epoll_wait":    251,
	"eventfd2":      323,
	"eventfd":       318,

	// signalfd (signalfd.go).
	"signalfd4": 322,
	"signalfd":  316,
}
