// Package linux is the simulated Linux kernel around a machine: it loads
// a program (and its dynamic loader) the way qemu-user 7.2 lays it out,
// and answers its syscalls: memory, files, clocks, identity and signals.
//
// It knows no instruction set: per-architecture facts (syscall numbers,
// struct stat layout, auxv values, the signal trampoline) come from the
// cpu.Arch each ISA package registers.
package linux

import (
	"fmt"
	"io"
	"path/filepath"

	"simrun/sim/cpu"
)

// Config is how a program is started.
type Config struct {
	Args   []string  // argv, argv[0] included (defaults to the program path)
	Env    []string  // envp, passed exactly (nil = empty)
	Stdin  io.Reader // nil = empty input
	Stdout io.Writer // nil = discard
	Stderr io.Writer // nil = discard
	// Notes receives one-time notes (unsupported syscalls); nil = Stderr.
	Notes    io.Writer
	Seed     uint64 // seeds AT_RANDOM and getrandom
	MaxInsns uint64 // 0 = unlimited
	Strict   bool   // unsupported syscalls fault instead of returning -ENOSYS
	// Sysroot is where absolute guest paths are looked up first, as
	// qemu-user's -L: a path that exists under it is taken from there,
	// any other from the host. "" takes the default (DefaultSysroot).
	Sysroot string
	// NoSysroot turns the sysroot off even where a default exists.
	NoSysroot bool
	// Dir is the guest's initial working directory ("" = simrun's).
	Dir string
	// Root confines every guest path to this host directory, as a
	// chroot: "/" is Root, ".." stops there, symbolic links are followed
	// inside it. The program itself is read from the host path given.
	Root string
	// ReadOnly refuses every change to the file system with EROFS
	// (writes to stdout, stderr and /dev/null still go through).
	ReadOnly bool
	// NoHostExec makes an execve of a host program (hostproc.go) fail
	// with ENOENT instead of running it on the host.
	NoHostExec bool
	// MaxMemory bounds the host memory the address spaces of all the
	// run's processes may hold together, in bytes (0: no bound; see
	// cpu.Memory.SetLimit): past it mmap, brk, mremap and fork give ENOMEM and a write that needs a new page ends
	// the process (FaultOutOfMemory, status 137), as under Linux's
	// overcommit heuristic and out-of-memory killer.
	MaxMemory uint64
	// Strace, if set, receives one line per syscall in strace's form.
	Strace io.Writer
	// ReservedFDs keeps descriptors 3 .. 3+ReservedFDs-1 taken (EBADF to
	// the guest), so that descriptor numbers match a run under a traced
	// qemu-user, whose log holds descriptor 3 (the differential tests).
	ReservedFDs int
	// Quantum is how many instructions a thread runs before the
	// scheduler switches to the next (0: DefaultQuantum; see thread.go).
	Quantum uint64
	// RandomSched picks the next thread at random among the runnable
	// ones instead of round robin, from a generator seeded with Seed:
	// another seed, another interleaving; the same seed, the same one.
	RandomSched bool
	// RobustFutexes accepts set_robust_list as Linux does and releases a
	// dying thread's robust futexes (robust.go); off, the call gives
	// ENOSYS as under qemu-user 7.2, whose runs simrun then matches
	// instruction for instruction.
	RobustFutexes bool
	// CPUs is how many CPUs the guest sees and its threads run on, 1 to
	// MaxCPUs (0: 1; cores.go).
	CPUs int
	// CoreStep is, with several CPUs, how many instructions a thread
	// runs before the scheduler looks at the other cores' clocks (0:
	// DefaultCoreStep; cores.go).
	CoreStep uint64
	// MaxProcs bounds the processes alive at once (0: DefaultMaxProcs;
	// system.go): fork past it gives EAGAIN.
	MaxProcs int

	// Terminal makes standard streams that are host terminals terminals
	// to the guest too, the first process's controlling terminal
	// (tty.go); off, standard streams are never terminals.
	Terminal bool

	// account, set by execve, is the address space whose account the
	// new program's memory joins (one --max-memory bound for a run).
	account *cpu.Memory
}

// Process is one simulated Linux process: the machine that runs it and
// the kernel's state for it. It is the machine's cpu.Kernel.
type Process struct {
	*cpu.Machine
	Cfg Config
	// Interp is the dynamic loader (PT_INTERP) when the program has one.
	Interp *cpu.Image
	// Sysroot is the sysroot in effect ("" = none).
	Sysroot string

	table map[uint64]*Syscall
	noted map[uint64]bool // unsupported syscalls reported
	told  map[string]bool // denials reported (see tellDenial)
	// confined is set when a lookup under --root met a ".." at the root
	// or an absolute symbolic link: a failure of that call is told.
	confined bool
	rng      *guestRandom
	exe      string // what /proc/self/exe points to
	brkStart uint64
	brk      uint64
	mmapNext uint64
	stackTop uint64
	sigTramp uint64
	auxv     [][2]uint64
	sigact   [65]sigAction // the process's signal actions (signal.go)
	sig      *sigThread    // the running thread's mask, pending signals and alternate stack (cur.sig)
	noResult bool          // the syscall set every register itself (rt_sigreturn)
	hostRun  *hostRun      // the program runs on the host (hostproc.go)
	// Resource usage (rusage.go): the run's guest memory when the process
	// ended, and the CPU time and peak memory of the children it waited
	// for.
	maxRSS, childCPU, childMaxRSS uint64
	limits                        rlimits // setrlimit's (rlimit.go)
	selfAlias                     uint64  // another id naming the process (AdoptSelfID)
	// fatal is the signal whose default action ended the process (for
	// its core dump, core.go).
	fatal *sigInfo
	// delivered counts the signals whose handlers were entered.
	delivered uint64
	clockOff  uint64 // virtual nanoseconds added by sleeps and idle waits

	// Threads (thread.go): the live ones in tid order, the running one,
	// the next tid, the quantum, and what the scheduler counts.
	threads    []*thread
	allThreads []*thread // every thread the process had, exited ones too
	cur        *thread
	quantum    uint64
	schedRng   uint64  // the random scheduler's state (0: round robin)
	locked     *thread // LockScheduler's thread (nil: none)
	switches   uint64
	entries    uint64 // syscalls and faults taken: kernel entries (a calm step, cores.go)
	runStart   uint64 // Insns when cur began to run
	waitSeq    uint64 // orders futex waiters
	spare      any    // a context clone reuses
	// resched is set by a syscall that blocked, yielded or ended the
	// running thread: the scheduler picks the next one when it returns.
	resched       bool
	membarrierReg bool   // MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED was called
	blockWhat     string // what the call that returned errRestart waits for
	msgFlags      uint64 // the MSG_ flags of the send in progress (socket.go), which writeFile passes on
	ioWaiters     int    // threads in waitIO
	ioProgress    bool   // a call that waits moved bytes first (writeFrom)
	// OnThread, when set, is told of clones, context switches, thread
	// exits and signal entries and returns (threadhook.go).
	OnThread func(ThreadEvent)

	timer timerState // timers, and the slice and restart state (timer.go)

	// The process among the others (system.go): its system, ids, parent
	// (nil: none, or gone), the signal its end sends the parent, and how
	// it ended (wait's status, and siginfo's si_code and si_status).
	sys           *System
	pid, ppid     uint64
	pgid, sid     uint64
	parent        *Process
	exitSignal    int
	ended         bool
	wstatus       uint32
	wcode, wvalue uint32
	vforkParent   *thread // the parent's thread a vfork holds
	// vmUsers counts the processes on this address space when a vfork
	// child shares it with its parent (nil: the process's own).
	vmUsers *int
	ctty    *terminal // the controlling terminal (tty.go), nil: none

	fds    []*fdEntry // the guest's descriptor table; nil = free
	cwd    string     // host path of the working directory
	root   string     // Config.Root, absolute and free of links ("" = none)
	umask  uint64
	shared []sharedMap // MAP_SHARED file mappings, written back at msync/munmap/exit
	// fileMaps are the live file mappings the guest made, by address;
	// codeMaps every executable one it made, in order (see CodeMaps).
	fileMaps []fileMap
	codeMaps []CodeMap
	mapsGen  uint64 // MapsGen
}

// Load reads the program at path and prepares a machine running it.
func Load(path string, cfg Config) (*cpu.Machine, error) {
	data, err := readProgram(path)
	if err != nil {
		return nil, err
	}
	return New(path, data, cfg)
}

// New prepares a machine running the ELF image in data (read from path).
func New(path string, data []byte, cfg Config) (*cpu.Machine, error) {
	p, err := NewProcess(path, data, cfg)
	if err != nil {
		return nil, err
	}
	return p.Machine, nil
}

// Of returns the process a machine made by Load or New runs, or nil.
func Of(m *cpu.Machine) *Process {
	p, _ := m.Kernel.(*Process)
	return p
}

// NewProcess is New returning the process.
func NewProcess(path string, data []byte, cfg Config) (*Process, error) {
	if cfg.CPUs < 0 || cfg.CPUs > MaxCPUs {
		return nil, fmt.Errorf("%d CPUs: simrun simulates 1 to %d", cfg.CPUs, MaxCPUs)
	}
	cfg.CPUs = max(cfg.CPUs, 1)
	f, arch, err := cpu.ParseELF(path, data)
	if err != nil {
		return nil, err
	}
	if len(cfg.Args) == 0 {
		cfg.Args = []string{path}
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Notes == nil {
		cfg.Notes = cfg.Stderr
	}
	mem := cpu.NewMemory()
	execd := cfg.account != nil
	if execd {
		mem = cfg.account.Empty()
		cfg.account = nil
	} else {
		mem.SetLimit(cfg.MaxMemory)
	}
	p := &Process{Machine: cpu.NewMachineMem(arch, mem), Cfg: cfg, exe: exePath(path), umask: 0o022}
	p.Kernel = p
	newSystem(p)
	p.ppid = 1
	p.initThreads()
	p.MaxInsns = cfg.MaxInsns
	p.rng = newGuestRandom(cfg.Seed)
	p.cwd, _ = filepath.Abs(cfg.Dir)
	if cfg.Root != "" {
		root, err := filepath.Abs(cfg.Root)
		if err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil || !isDir(root) {
			return nil, fmt.Errorf("--root %s: not a directory", cfg.Root)
		}
		p.root, p.cwd = root, root
	}
	if p.cwd == "" {
		p.cwd = "/"
	}
	p.initFDs()
	if !execd {
		p.initTerminal()
	}
	p.table = map[uint64]*Syscall{}
	for _, e := range SyscallTable(arch) {
		e := e
		p.table[e.Num] = &e
	}
	p.noted = map[uint64]bool{}
	p.told = map[string]bool{}
	if err := p.exec(path, data, f); err != nil {
		p.Mem.Release() // what the load charged goes back to the account
		return nil, err
	}
	return p, nil
}

// exePath is the program's absolute path with symbolic links resolved,
// as qemu-user reports /proc/self/exe.
func exePath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// ExePath is the program's absolute path, as /proc/self/exe names it.
func (p *Process) ExePath() string { return p.exe }

// Auxv is the auxiliary vector the program started with, AT_NULL last.
func (p *Process) Auxv() [][2]uint64 { return p.auxv }

// Note writes a one-line note to the notes stream.
func (p *Process) Note(format string, args ...any) {
	writeNote(p.Cfg.Notes, format, args...)
}
