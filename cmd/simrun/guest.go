package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// guestFlags are the flags of every command that runs a guest program and
// shape the Linux around it.
type guestFlags struct {
	sysroot   *string
	strace    *bool
	root      *string
	readOnly  *bool
	maxMemory *sizeFlag
	cleanEnv  *bool
	setEnv    multiFlag
	unsetEnv  multiFlag
	quantum   *uint64
	cpus      *int
	cpuStep   *uint64
	robust    *bool
	sched     *string
	maxProcs  *int
	noHost    *bool
}

// hostEnviron is the environment a guest inherits (tests replace it, so
// that their outputs do not depend on the machine's).
var hostEnviron = os.Environ

func addGuestFlags(fs *flag.FlagSet) *guestFlags {
	g := &guestFlags{
		sysroot:   fs.String("L", "", "look absolute guest paths (the interpreter, libraries, files) up under `DIR` first, as qemu-user's -L (default: $SIMRUN_LD_PREFIX, else Debian's /usr/TRIPLE cross sysroot for a dynamically linked program)"),
		strace:    fs.Bool("strace", false, "print each syscall the guest makes on stderr, as strace does"),
		root:      fs.String("root", "", "confine every guest path to `DIR`, as chroot would (\"..\" and symbolic links stay inside; the program itself is read from the path given)"),
		readOnly:  fs.Bool("read-only", false, "refuse every change to the file system with EROFS (stdout, stderr and /dev/null still take writes)"),
		maxMemory: addMaxMemoryFlag(fs),
		cleanEnv:  fs.Bool("clean-env", false, "start the guest with an empty environment instead of simrun's own (--env still adds)"),
		sched:     fs.String("sched", "rr", "how the next guest thread is chosen: `POLICY` rr (round robin by tid) or random (seeded by --seed, to shake out races)"),
		robust:    fs.Bool("robust-futexes", false, "accept set_robust_list and release a dying thread's robust mutexes, as Linux does (default: ENOSYS, as qemu-user 7.2, whose instruction counts simrun then matches)"),
		maxProcs:  fs.Int("max-procs", linux.DefaultMaxProcs, "bound the guest processes alive at once to `N`: a fork past it gives EAGAIN, as RLIMIT_NPROC would"),
		noHost:    fs.Bool("no-host-exec", false, "an execve of a program built for the host (the host's /bin/sh that system() runs, say) fails with ENOENT instead of running it on the host as qemu-user does (--root and --read-only imply it)"),
		cpus:      fs.Int("cpus", 1, fmt.Sprintf("simulate `N` CPUs (1 to %d): threads run on them by affinity or thread number, interleaved by virtual time; with the timing model each is a core of the model with its own L1D, L2, TLB and predictors, sharing the last-level cache coherently, and (record) its own SPE unit (see ARCHITECTURE.md)", linux.MaxCPUs)),
		cpuStep:   fs.Uint64("cpu-step", linux.DefaultCoreStep, fmt.Sprintf("with --cpus N > 1, the cores advance in steps of `N` instructions (at least %d): cache lines bounce between cores at most once a step (shorter: more faithful contention, slower)", linux.MinCoreStep)),
		quantum:   fs.Uint64("quantum", linux.DefaultQuantum, "a guest thread runs `N` retired instructions before the next runnable one (round robin by tid); the same N gives the same interleaving"),
	}
	for _, name := range []string{"env", "E"} {
		fs.Var(&g.setEnv, name, "set `NAME=VALUE` in the guest's environment (repeatable; as qemu-user's -E)")
	}
	for _, name := range []string{"unset", "U"} {
		fs.Var(&g.unsetEnv, name, "remove `NAME` from the guest's environment (repeatable; as qemu-user's -U)")
	}
	return g
}

// apply sets cfg's environment, sysroot, confinement, memory bound,
// scheduler and syscall trace from the flags and simrun's environment.
// The guest inherits simrun's environment, as under qemu-user, less
// --unset names, with --env settings replacing or adding (--clean-env:
// only those). A bad --sched is a usage error (status 2), said on stderr.
func (g *guestFlags) apply(cfg *linux.Config, stderr io.Writer) error {
	if *g.sched != "rr" && *g.sched != "random" {
		fmt.Fprintf(stderr, "simrun: --sched %q: want rr or random\n", *g.sched)
		return errUsage
	}
	if *g.cpus < 1 || *g.cpus > linux.MaxCPUs {
		fmt.Fprintf(stderr, "simrun: --cpus %d: want 1 to %d CPUs\n", *g.cpus, linux.MaxCPUs)
		return errUsage
	}
	if *g.cpuStep < linux.MinCoreStep || *g.cpuStep > 1<<32 {
		fmt.Fprintf(stderr, "simrun: --cpu-step %d: want %d to %d instructions\n", *g.cpuStep, linux.MinCoreStep, uint64(1)<<32)
		return errUsage
	}
	cfg.CPUs, cfg.CoreStep = *g.cpus, *g.cpuStep
	cfg.Env = g.environment()
	cfg.Sysroot = *g.sysroot
	if cfg.Sysroot == "" {
		cfg.Sysroot = os.Getenv("SIMRUN_LD_PREFIX")
	}
	cfg.Root = *g.root
	cfg.ReadOnly = *g.readOnly
	cfg.MaxMemory = uint64(*g.maxMemory)
	cfg.Quantum = *g.quantum
	cfg.MaxProcs = *g.maxProcs
	cfg.RandomSched = *g.sched == "random"
	cfg.RobustFutexes = *g.robust
	cfg.NoHostExec = *g.noHost
	if *g.strace {
		cfg.Strace = stderr
	}
	return nil
}

func (g *guestFlags) environment() []string {
	var base []string
	if !*g.cleanEnv {
		base = hostEnviron()
	}
	drop := map[string]bool{}
	for _, n := range g.unsetEnv {
		drop[n] = true
	}
	for _, kv := range g.setEnv {
		name, _, _ := strings.Cut(kv, "=")
		drop[name] = true
	}
	env := []string{}
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			env = append(env, kv)
		}
	}
	return append(env, g.setEnv...)
}

// The guest memory limit (--max-memory). Its default protects the host:
// 4 GiB, or less where the host cannot give that much,
//   - half the host's physical memory (MemTotal in /proc/meminfo), so a
//     runaway guest leaves the host room to work;
//   - half of what simrun's own address-space limit (RLIMIT_AS,
//     `ulimit -v`) leaves after the Go runtime's reservations (1.5 GiB:
//     simrun's VmSize is 1.2 GiB before it allocates anything, and its
//     heap takes about 1.3 bytes of address space per byte it holds):
//     under such a limit the guest hits its own bound, a clean ENOMEM or
//     out-of-memory end, before the Go runtime dies of it (measured by
//     TestHostile/run/touch-16G-default).
//
// 4 GiB is the cap so that on any host with 8 GiB or more a guest's run
// is the same everywhere (what a limit changes is whether mmap fails):
// runs that must be reproducible on smaller hosts pin it with
// --max-memory. The programs simrun is for (benchmarks, tests, the
// Debian tools) use a few hundred MiB at most.
const maxMemoryCap = 4 << 30

// minMaxMemory is the least default: a static program needs its stack
// (8 MiB) and a little more.
const minMaxMemory = 64 << 20

func defaultMaxMemory() uint64 {
	limit := uint64(maxMemoryCap)
	if total := hostMemTotal(); total != 0 {
		limit = min(limit, total/2)
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur != ^uint64(0) && rl.Cur != 0 {
		const goReserve = 3 << 29 // 1.5 GiB
		limit = min(limit, max(rl.Cur, goReserve+minMaxMemory*2)/2-goReserve/2)
	}
	return limit &^ cpu.PageMask
}

// hostMemTotal reads MemTotal from /proc/meminfo (0 if it cannot).
func hostMemTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err == nil && kb < 1<<50 {
				return kb << 10
			}
		}
	}
	return 0
}

// sizeFlag is a byte count flag (cpu.ParseSize's forms: 4G, 512MiB, 0).
type sizeFlag uint64

func (s *sizeFlag) String() string {
	if s == nil || *s == 0 {
		return "0"
	}
	return strings.ReplaceAll(cpu.FormatSize(uint64(*s)), " ", "")
}

func (s *sizeFlag) Set(v string) error {
	n, err := cpu.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// addMaxMemoryFlag adds --max-memory to a command that runs a guest.
func addMaxMemoryFlag(fs *flag.FlagSet) *sizeFlag {
	s := sizeFlag(defaultMaxMemory())
	fs.Var(&s, "max-memory", "bound the host memory the guest may hold to `SIZE` (K, M, G suffixes; 0: no bound): past it mmap, brk and mremap give ENOMEM and a write needing a new page ends the guest (status 137, as Linux's OOM killer); default 4G, or half the host's RAM or ulimit -v if less")
	return &s
}
