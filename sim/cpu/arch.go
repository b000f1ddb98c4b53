// Package cpu is the architecture-neutral machine: guest memory, ELF
// loading, the Linux user ABI (initial stack, syscalls), the run loop, the
// Arch and Core interfaces, retired-op records and typed faults. The
// timing model is sim/timing: the machine sees it as a Timer and hands
// it the log of retired operations (Batch) the cores write.
//
// An architecture package (sim/arm64, sim/s390x) registers an *Arch
// describing its ABI facts and a constructor for its Core. Everything here
// is data-driven by that descriptor, so a third ISA touches nothing in this
// package.
package cpu

import (
	"debug/elf"
	"encoding/binary"
	"sort"
	"strings"
)

// Arch describes one instruction set and its Linux user ABI.
type Arch struct {
	Name       string // "arm64", "s390x" (also Debian's architecture names)
	GNUTriple  string // "aarch64-linux-gnu": names Debian's cross sysroot /usr/TRIPLE
	ELFMachine elf.Machine
	ByteOrder  binary.ByteOrder

	// Linux ABI facts.
	UnameMachine string // utsname.machine
	Platform     string // AT_PLATFORM string ("" = no entry)
	HWCAP        uint64
	HWCAP2       uint64
	HasHWCAP2    bool
	// CPUInfo is the text of /proc/cpuinfo on a machine of n CPUs, as
	// Linux prints it for a CPU with HWCAP and the ID registers the
	// guest reads.
	CPUInfo func(n int) []byte
	// MmapBase is where the first mmap (the stack, or a static-PIE image)
	// goes; the values follow qemu-user 7.2 so addresses match its traces.
	MmapBase uint64
	// SigTramp is machine code for the page qemu and Linux map after the
	// stack (a rt_sigreturn trampoline); nil maps no page.
	SigTramp []byte
	// Syscalls maps generic syscall names to the arch's numbers; the
	// handlers are shared (see syscalls.go).
	Syscalls map[string]uint64
	// Stat encodes a struct stat in the arch's layout.
	Stat func(order binary.ByteOrder, st *Stat) []byte
	// OpenFlags are the open(2) flags whose values differ between
	// architectures.
	OpenFlags OpenFlags

	// Register facts for tracing and unwinding.
	GPRNames      []string // order of State.GPR, e.g. x0..x30, sp
	SyscallResult int      // index in State.GPR of the register a syscall returns in
	FlagsName     string   // "nzcv" or "cc"
	NumVec        int      // vector registers in State.Vec
	DwarfSP       int
	DwarfFP       int
	DwarfRA       int
	InsnAlign     uint64 // required pc alignment
	// SyscallInsnLen is the length of the syscall instruction (arm64
	// svc 4, s390x svc 2): a blocked syscall restarts that far back.
	SyscallInsnLen uint64
	MaxInsnLen     int

	// NewCore returns a CPU with all registers zero for machine m.
	NewCore func(m *Machine) Core
	// Disasm renders the instruction at the start of code (x/arch syntax);
	// it returns the instruction length, or 0 if it cannot decode.
	Disasm func(code []byte, pc uint64) (text string, n int)
}

// HWCAPNames is the list of features /proc/cpuinfo prints for hwcap:
// names[i] for each set bit i, space-separated.
func HWCAPNames(hwcap uint64, names []string) string {
	var out []string
	for i, n := range names {
		if hwcap&(1<<i) != 0 && n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, " ")
}

var arches []*Arch

// Register makes an architecture available to the loader.
func Register(a *Arch) { arches = append(arches, a) }

// ArchForMachine returns the registered arch for an ELF machine, or nil.
func ArchForMachine(m elf.Machine) *Arch {
	for _, a := range arches {
		if a.ELFMachine == m {
			return a
		}
	}
	return nil
}

// ArchByName returns a registered arch by name, or nil.
func ArchByName(name string) *Arch {
	for _, a := range arches {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// Arches returns the registered architectures sorted by name.
func Arches() []*Arch {
	out := append([]*Arch(nil), arches...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func archNames() string {
	var n []string
	for _, a := range Arches() {
		n = append(n, a.Name)
	}
	if len(n) == 0 {
		return "no architectures (none registered)"
	}
	return strings.Join(n, " and ")
}

// Core is one simulated CPU.
type Core interface {
	// Execute executes at most budget instructions and reports how many retired
	// and why it stopped. A syscall instruction retires before Execute returns
	// StopSyscall; a faulting instruction does not retire.
	Execute(budget uint64) (retired uint64, stop Stop)
	PC() uint64
	SetPC(pc uint64)
	// SetStack sets the stack pointer for process start.
	SetStack(sp uint64)
	// Syscall returns the number and arguments of the pending syscall.
	Syscall() (nr uint64, args [6]uint64)
	// SetSyscallResult writes a syscall's return value.
	SetSyscallResult(v uint64)
	// State copies the architectural state into s (allocating slices as
	// needed).
	State(s *State)
	// NextOp describes the instruction at PC as it will execute from the
	// current state (class, access address, branch outcome); ok is false
	// when it cannot be fetched or decoded.
	NextOp(op *Op) (ok bool)
}

// GPRWriter is implemented by cores whose general registers can be set
// by State.GPR index (the differential test adopts host-dependent values).
type GPRWriter interface {
	SetGPR(i int, v uint64)
}

// StopKind says why Core.Execute returned.
type StopKind uint8

const (
	StopBudget  StopKind = iota // the instruction budget ran out
	StopSyscall                 // a syscall instruction retired
	StopFault                   // an instruction faulted (Stop.Fault)
)

// Stop is the reason Core.Execute returned.
type Stop struct {
	Kind  StopKind
	Fault *Fault
}

// State is a snapshot of architectural registers.
type State struct {
	PC    uint64
	GPR   []uint64    // Arch.GPRNames order
	Flags uint64      // NZCV (N=8 Z=4 C=2 V=1) or the condition code
	Vec   [][2]uint64 // [i][0] = bits 127:64, [i][1] = bits 63:0
	FPSR  uint64      // arm64 FPSR (the s390x FPC is not in qemu's log)
	// FPCR is the arm64 FPCR or the s390x FPC; AR are the s390x access
	// registers. Neither is in qemu's log: the kernel saves and restores
	// them in signal frames.
	FPCR uint64
	AR   [16]uint32
}

// StateWriter is implemented by cores whose whole user state can be set
// from a State (the kernel's signal delivery and rt_sigreturn). SetState
// also forgets what the core held across instructions (an exclusive
// monitor, a pending execute), as an exception return does.
type StateWriter interface {
	SetState(s *State)
}

// ThreadCore is implemented by cores that run several guest threads in
// turn (the kernel's scheduler, one core). SaveThread copies the running
// thread's whole user state — registers, the thread pointer, what an
// instruction left pending for the next run — into a context of the
// core's own type (reusing into when it is one) and returns it;
// LoadThread makes a saved context the running one and forgets what only
// the core holds across instructions (the arm64 exclusive monitor, as
// the exception return of a Linux context switch clears it). SetTLS sets
// the thread pointer as clone's CLONE_SETTLS does (arm64 TPIDR_EL0, s390x
// access registers a0:a1). SwitchThread is the scheduler's switch: from
// = SaveThread(from) unless save is false (the running thread exited),
// then LoadThread(to), or with resume ResumeThread(to) on a Resumer; it
// returns from. It may leave part of the running thread's state in to's
// storage instead of copying it into the core (the vector registers),
// until the next switch or SaveThread: meanwhile to belongs to the core
// (nobody reads a running thread's saved context; the kernel reads the
// core).
type ThreadCore interface {
	SaveThread(into any) any
	LoadThread(ctx any)
	SwitchThread(from any, save bool, to any, resume bool) any
	SetTLS(tls uint64)
}

// Resumer is implemented by ThreadCores that hold state between
// instructions a context switch clears (the arm64 exclusive monitor):
// ResumeThread is LoadThread for a thread whose core ran no other thread
// since it stopped (with several CPUs, at the end of a scheduling step),
// keeping what the core still holds for it.
type Resumer interface {
	ResumeThread(ctx any)
}

// Checkpointer is implemented by cores whose whole state between two
// instructions can be saved and set back, including what LoadThread
// forgets (the arm64 exclusive monitor): a debugger's reverse execution
// restores a checkpoint and replays, and the replay must take the same
// path. Checkpoint reuses into when it is one of its own.
type Checkpointer interface {
	Checkpoint(into any) any
	Rewind(ctx any)
}

// ContextStater is implemented by ThreadCores that can show a saved
// context (from SaveThread) as a State and change it, without touching
// the running thread: a debugger's and a core dump's view of the threads
// that are not running. ContextState also returns the thread pointer
// (arm64 TPIDR_EL0; on s390x State.AR holds it too).
type ContextStater interface {
	ContextState(ctx any, s *State) (tls uint64)
	SetContextState(ctx any, s *State)
}

// Clone returns a deep copy of s.
func (s *State) Clone() *State {
	c := *s
	c.GPR = append([]uint64(nil), s.GPR...)
	c.Vec = append([][2]uint64(nil), s.Vec...)
	return &c
}

// Stat is the arch-neutral content of a struct stat; Arch.Stat encodes it.
type Stat struct {
	Dev, Ino, Mode, Nlink, UID, GID, Rdev, Size, Blksize, Blocks uint64
	Atime, Mtime, Ctime                                          uint64 // seconds
	AtimeNsec, MtimeNsec, CtimeNsec                              uint64
}

// OpenFlags are the values of the open(2) flags that arm64 defines for
// itself (arch/arm64/include/uapi/asm/fcntl.h) and s390x takes from
// asm-generic; the other flags have one value everywhere.
type OpenFlags struct {
	Directory, Nofollow, Direct, Largefile uint64
}
