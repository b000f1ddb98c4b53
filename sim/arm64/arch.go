package arm64

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/arch/arm64/arm64asm"

	"simrun/sim/cpu"
)

// HWCAP bits (arch/arm64/include/uapi/asm/hwcap.h). The guest sees the
// CPU qemu-user calls cortex-a72 (Armv8.0-A with CRC32 and the
// Cryptographic Extension; HWCAP2 empty), so that glibc picks the same
// routines under simrun and under the oracle. simrun also executes LSE
// atomics, LDAPR and other later instructions (the random differential
// tests check them against qemu's max CPU); it does not advertise them.
const (
	hwcapFP    = 1 << 0
	hwcapASIMD = 1 << 1
	hwcapAES   = 1 << 3
	hwcapPMULL = 1 << 4
	hwcapSHA1  = 1 << 5
	hwcapSHA2  = 1 << 6
	hwcapCRC32 = 1 << 7
	hwcapCPUID = 1 << 11
	HWCAP      = hwcapFP | hwcapASIMD | hwcapAES | hwcapPMULL | hwcapSHA1 | hwcapSHA2 | hwcapCRC32 | hwcapCPUID
)

// hwcapNames are /proc/cpuinfo's names of the HWCAP bits above, by bit
// (Linux's arm64 hwcap_str).
var hwcapNames = []string{"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp", "asimdhp", "cpuid"}

// cpuInfo is /proc/cpuinfo as Linux's arm64 c_show prints it: per CPU,
// BogoMIPS from the counter frequency (2 × CNTFRQ / 10^6), the HWCAP
// features and the fields of MIDR_EL1.
//
//	MIDR_EL1  31     24 23   20 19    16 15        4 3      0
//	         | implem. | var.  | arch.  | part      | rev.   |
func cpuInfo(n int) []byte {
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, "processor\t: %d\nBogoMIPS\t: %d.00\nFeatures\t: %s\nCPU implementer\t: %#02x\nCPU architecture: 8\nCPU variant\t: %#x\nCPU part\t: %#03x\nCPU revision\t: %d\n\n",
			i, 2*cntFreq/1000000, cpu.HWCAPNames(HWCAP, hwcapNames), valMIDR>>24, valMIDR>>20&0xf, valMIDR>>4&0xfff, valMIDR&0xf)
	}
	return b
}

// Arch is the arm64 descriptor.
var Arch = &cpu.Arch{
	Name:         "arm64",
	GNUTriple:    "aarch64-linux-gnu",
	ELFMachine:   elf.EM_AARCH64,
	ByteOrder:    binary.LittleEndian,
	UnameMachine: "aarch64",
	Platform:     "aarch64",
	HWCAP:        HWCAP,
	HWCAP2:       0,
	HasHWCAP2:    true,
	CPUInfo:      cpuInfo,
	MmapBase:     0x5500000000,
	// mov x8, #139 (rt_sigreturn); svc #0
	SigTramp:   []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4},
	Syscalls:   syscalls,
	Stat:       statGeneric,
	OpenFlags:  cpu.OpenFlags{Directory: 0o40000, Nofollow: 0o100000, Direct: 0o200000, Largefile: 0o400000},
	GPRNames:   gprNames(),
	FlagsName:  "nzcv",
	NumVec:     32,
	DwarfSP:    31,
	DwarfFP:    29,
	DwarfRA:    30,
	InsnAlign:  4,
	MaxInsnLen: 4,
	NewCore:    newCore,
	// svc
	SyscallInsnLen: 4,
	Disasm:         Disasm,
}

func init() { cpu.Register(Arch) }

func gprNames() []string {
	n := make([]string, 32)
	for i := 0; i < 31; i++ {
		n[i] = "x" + itoa(i)
	}
	n[31] = "sp"
	return n
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// x/arch's decoder updates a package-level coverage table; serialise calls.
var asmMu sync.Mutex

func asmDecode(b []byte) (arm64asm.Inst, error) {
	asmMu.Lock()
	defer asmMu.Unlock()
	return arm64asm.Decode(b)
}

// Disasm renders one instruction in GNU syntax with x/arch.
func Disasm(code []byte, pc uint64) (string, int) {
	if len(code) < 4 {
		return "", 0
	}
	w := binary.LittleEndian.Uint32(code)
	if w>>16 == 0 { // permanently undefined; x/arch has no name for it
		return "udf #" + strconv.Itoa(int(w&0xffff)), 4
	}
	in, err := asmDecode(code[:4])
	if err != nil {
		return ".inst 0x" + hex32(binary.LittleEndian.Uint32(code)), 4
	}
	return arm64asm.GNUSyntax(in), 4
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

// statGeneric encodes struct stat as arm64 (asm-generic) lays it out:
// 128 bytes.
func statGeneric(o binary.ByteOrder, st *cpu.Stat) []byte {
	b := make([]byte, 128)
	o.PutUint64(b[0:], st.Dev)
	o.PutUint64(b[8:], st.Ino)
	o.PutUint32(b[16:], uint32(st.Mode))
	o.PutUint32(b[20:], uint32(st.Nlink))
	o.PutUint32(b[24:], uint32(st.UID))
	o.PutUint32(b[28:], uint32(st.GID))
	o.PutUint64(b[32:], st.Rdev)
	o.PutUint64(b[48:], st.Size)
	o.PutUint32(b[56:], uint32(st.Blksize))
	o.PutUint64(b[64:], st.Blocks)
	o.PutUint64(b[72:], st.Atime)
	o.PutUint64(b[88:], st.Mtime)
	o.PutUint64(b[104:], st.Ctime)
	o.PutUint64(b[80:], st.AtimeNsec)
	o.PutUint64(b[96:], st.MtimeNsec)
	o.PutUint64(b[112:], st.CtimeNsec)
	return b
}

// syscalls are the arm64 (asm-generic) numbers.
var syscalls = map[string]uint64{
	"getcwd":            17,
	"dup":               23,
	"dup3":              24,
	"fcntl":             25,
	"ioctl":             29,
	"mknodat":           33,
	"mkdirat":           34,
	"unlinkat":          35,
	"statfs":            43,
	"fstatfs":           44,
	"truncate":          45,
	"ftruncate":         46,
	"faccessat":         48,
	"fchmod":            52,
	"fchown":            55,
	"openat":            56,
	"close":             57,
	"pipe2":             59,
	"getdents64":        61,
	"lseek":             62,
	"read":              63,
	"write":             64,
	"readv":             65,
	"writev":            66,
	"pread64":           67,
	"pwrite64":          68,
	"pselect6":          72,
	"ppoll":             73,
	"readlinkat":        78,
	"newfstatat":        79,
	"fstat":             80,
	"fsync":             82,
	"exit":              93,
	"exit_group":        94,
	"set_tid_address":   96,
	"futex":             98,
	"set_robust_list":   99,
	"get_robust_list":   100,
	"nanosleep":         101,
	"getitimer":         102,
	"setitimer":         103,
	"timer_create":      107,
	"timer_gettime":     108,
	"timer_getoverrun":  109,
	"timer_settime":     110,
	"timer_delete":      111,
	"timerfd_create":    85,
	"timerfd_settime":   86,
	"timerfd_gettime":   87,
	"restart_syscall":   128,
	"rt_sigsuspend":     133,
	"rt_sigtimedwait":   137,
	"clock_gettime":     113,
	"clock_getres":      114,
	"clock_nanosleep":   115,
	"sched_getaffinity": 123,
	"sched_setaffinity": 122,
	"getcpu":            168,
	"sched_yield":       124,
	"kill":              129,
	"tkill":             130,
	"tgkill":            131,
	"sigaltstack":       132,
	"rt_sigaction":      134,
	"rt_sigprocmask":    135,
	"rt_sigpending":     136,
	"rt_sigqueueinfo":   138,
	"rt_sigreturn":      139,
	"rt_tgsigqueueinfo": 240,
	"setpriority":       140,
	"getpriority":       141,
	"times":             153,
	"setpgid":           154,
	"getpgid":           155,
	"setsid":            157,
	"uname":             160,
	"getrlimit":         163,
	"setrlimit":         164,
	"getrusage":         165,
	"umask":             166,
	"prctl":             167,
	"gettimeofday":      169,
	"getpid":            172,
	"getppid":           173,
	"getuid":            174,
	"geteuid":           175,
	"getgid":            176,
	"getegid":           177,
	"gettid":            178,
	"sysinfo":           179,
	"socket":            198,
	"brk":               214,
	"munmap":            215,
	"mremap":            216,
	"clone":             220,
	"execve":            221,
	"waitid":            95,
	"execveat":          281,
	"mmap":              222,
	"mprotect":          226,
	"mlock":             228,
	"madvise":           233,
	"wait4":             260,
	"prlimit64":         261,
	"getrandom":         278,
	"membarrier":        283,
	"statx":             291,
	"rseq":              293,
	"clone3":            435,
	"symlinkat":         36,
	"linkat":            37,
	"renameat":          38,
	"fallocate":         47,
	"chdir":             49,
	"fchdir":            50,
	"fchmodat":          53,
	"fchownat":          54,
	"preadv":            69,
	"pwritev":           70,
	"sendfile":          71,
	"fdatasync":         83,
	"utimensat":         88,
	"getsid":            156,
	"getgroups":         158,
	"setregid":          143,
	"setgid":            144,
	"setreuid":          145,
	"setuid":            146,
	"setresuid":         147,
	"getresuid":         148,
	"setresgid":         149,
	"getresgid":         150,
	"setfsuid":          151,
	"setfsgid":          152,
	"setgroups":         159,
	"fadvise64":         223,
	"msync":             227,
	"renameat2":         276,
	"copy_file_range":   285,
	"faccessat2":        439,
	"setxattr":          5,
	"lsetxattr":         6,
	"fsetxattr":         7,
	"getxattr":          8,
	"lgetxattr":         9,
	"fgetxattr":         10,
	"listxattr":         11,
	"llistxattr":        12,
	"flistxattr":        13,
	"removexattr":       14,
	"lremovexattr":      15,
	"fremovexattr":      16,
	"socketpair":        199,
	"bind":              200,
	"listen":            201,
	"accept":            202,
	"connect":           203,
	"getsockname":       204,
	"getpeername":       205,
	"sendto":            206,
	"recvfrom":          207,
	"setsockopt":        208,
	"getsockopt":        209,
	"shutdown":          210,
	"sendmsg":           211,
	"recvmsg":           212,
	"accept4":           242,

	// Memory locking, scheduling parameters, credentials, sync, flock (sysproc.go).
	"sync":                   81,
	"syncfs":                 267,
	"sync_file_range":        84,
	"munlock":                229,
	"mlockall":               230,
	"munlockall":             231,
	"mlock2":                 284,
	"sched_getscheduler":     120,
	"sched_getparam":         121,
	"sched_get_priority_max": 125,
	"sched_get_priority_min": 126,
	"sched_rr_get_interval":  127,
	"memfd_create":           279,
	"close_range":            436,
	"personality":            92,
	"flock":                  32,
	"readahead":              213,

	// epoll and eventfd (epoll.go).
	"epoll_create1": 20,
	"epoll_ctl":     21,
	"epoll_pwait":   22,
	"eventfd2":      19,

	// signalfd (signalfd.go).
	"signalfd4": 74,
}
