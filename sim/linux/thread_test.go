package linux_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// notQemu are the thread programs not compared with qemu-user: two
// would hang it (robust does, as qemu 7.2 keeps no robust futex lists),
// one prints what the interleaving decides, one the CPUs simrun simulates.
var notQemu = map[string]bool{"deadlock": true, "racy": true, "robust": true, "pinned": true}

// threadRun runs a thread program under simrun.
func threadRun(t *testing.T, b programs.Binary, quantum uint64) (stdout string, exit *cpu.Exit, insns uint64) {
	t.Helper()
	cfg := linux.Config{Args: []string{b.Path}, Seed: 1, Quantum: quantum, MaxInsns: 200_000_000,
		RobustFutexes: b.Name == "robust"} // (without, it waits for ever: TestRobustFutexes)
	if b.Config.Dynamic {
		sysroot := linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))
		requireSysroot(t, sysroot)
		cfg.Sysroot = sysroot
	}
	var out bytes.Buffer
	cfg.Stdout = &out
	m, err := linux.Load(b.Path, cfg)
	require.NoError(t, err)
	exit, err = m.Run()
	require.NoError(t, err)
	return out.String(), exit, m.Insns
}

// TestQemuThreadPrograms runs each bundled thread program
// (programs/threads: static, dynamic, arm64 with exclusive pairs and with
// LSE) under qemu-user and under simrun: same stdout and exit status.
// Their output does not depend on the interleaving.
func TestQemuThreadPrograms(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		oracle.Require(t, arch)
	}
	bins := programs.ThreadBinaries("")
	require.NotEmpty(t, bins)
	for _, b := range bins {
		if notQemu[b.Name] {
			continue
		}
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			opt := oracle.Options{CPU: b.Config.QemuCPU()}
			if b.Config.Dynamic {
				opt.Sysroot = linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))
				requireSysroot(t, opt.Sysroot)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := oracle.Count(ctx, b.Path, opt)
			require.NoError(t, err)
			out, exit, insns := threadRun(t, b, 0)
			require.Nil(t, exit.Fault, "%v", exit.Fault)
			require.Equal(t, string(res.Stdout), out)
			require.Equal(t, res.Status, exit.Status)
			require.NotEmpty(t, out)
			t.Logf("qemu %d instructions, simrun %d", res.Insns, insns)
		})
	}
}

// TestThreadDeterminism runs each thread program three times with the
// default quantum and once with another: the three runs give identical
// output, status and instruction counts; the other quantum interleaves
// differently (another count) and prints the same.
func TestThreadDeterminism(t *testing.T) {
	for _, b := range programs.ThreadBinaries("") {
		if b.Name == "deadlock" {
			continue
		}
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			out, exit, insns := threadRun(t, b, 0)
			require.Nil(t, exit.Fault, "%v", exit.Fault)
			for range 2 {
				o, e, n := threadRun(t, b, 0)
				require.Equal(t, out, o)
				require.Equal(t, exit.Status, e.Status)
				require.Equal(t, insns, n, "instruction count differs between two runs")
			}
			o, e, n := threadRun(t, b, 997)
			t.Logf("%d instructions; %d with quantum 997", insns, n)
			if b.Name == "racy" {
				return // what it prints is the interleaving's
			}
			require.Equal(t, out, o, "quantum 997")
			require.Equal(t, exit.Status, e.Status, "quantum 997")
		})
	}
}

// TestThreadDeadlock: the deadlocking program ends (it does not hang)
// with status 137 and a message naming each thread, what it waits on
// and where; the same every run.
func TestThreadDeadlock(t *testing.T) {
	for _, b := range programs.ThreadBinaries("") {
		if b.Name != "deadlock" {
			continue
		}
		t.Run(b.Config.Name, func(t *testing.T) {
			t.Parallel()
			out, exit, insns := threadRun(t, b, 0)
			require.Equal(t, "started\n", out)
			require.Equal(t, 137, exit.Status)
			require.NotNil(t, exit.Fault)
			msg := exit.Fault.Error()
			require.Contains(t, msg, "deadlock: every thread waits")
			for _, tid := range []string{"tid 1000 in futex wait on 0x", "tid 1001 in futex wait on 0x", "tid 1002 in futex wait on 0x"} {
				require.Contains(t, msg, tid)
			}
			_, list, ok := strings.Cut(msg, "threads: {")
			require.True(t, ok, msg)
			require.Equal(t, 3, strings.Count(list, " at pc 0x"), msg)
			_, exit2, insns2 := threadRun(t, b, 0)
			require.Equal(t, msg, exit2.Fault.Error())
			require.Equal(t, insns, insns2)
		})
	}
}

// TestRobustFutexes: with Config.RobustFutexes a thread that dies
// holding a robust mutex leaves it to the next locker with EOWNERDEAD,
// both to a waiter that slept through the death and to a later one, as
// on Linux; without it (qemu-user 7.2's ENOSYS) glibc keeps no list and
// the waiter waits for ever: simrun's deadlock report.
func TestRobustFutexes(t *testing.T) {
	var want strings.Builder
	for round := range 2 {
		fmt.Fprintf(&want, "round %d: lock after the owner died: EOWNERDEAD\nround %d: consistent: 0\n"+
			"round %d: unlock: 0\nround %d: lock again: 0\n", round, round, round, round)
	}
	for _, b := range programs.ThreadBinaries("") {
		if b.Name != "robust" {
			continue
		}
		t.Run(b.Config.Name, func(t *testing.T) {
			t.Parallel()
			run := func(robust bool) (string, *cpu.Exit) {
				cfg := linux.Config{Args: []string{b.Path}, Seed: 1, MaxInsns: 200_000_000, RobustFutexes: robust}
				if b.Config.Dynamic {
					cfg.Sysroot = linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))
					requireSysroot(t, cfg.Sysroot)
				}
				var out bytes.Buffer
				cfg.Stdout = &out
				m, err := linux.Load(b.Path, cfg)
				require.NoError(t, err)
				exit, err := m.Run()
				require.NoError(t, err)
				return out.String(), exit
			}
			out, exit := run(true)
			require.Equal(t, want.String(), out)
			require.Equal(t, 0, exit.Status)
			out, exit = run(false)
			require.Empty(t, out)
			require.Equal(t, 137, exit.Status)
			require.Contains(t, exit.Fault.Error(), "deadlock: every thread waits")
		})
	}
}

// TestThreadMaxInsns: a multi-threaded run that ends at --max-insns
// names every thread's pc.
func TestThreadMaxInsns(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		b := programs.ThreadBinaries(arch)[0]
		require.Equal(t, "atomics", b.Name)
		m, err := linux.Load(b.Path, linux.Config{Args: []string{b.Path}, MaxInsns: 300_000})
		require.NoError(t, err)
		exit, err := m.Run()
		require.NoError(t, err)
		require.NotNil(t, exit.Fault)
		require.Equal(t, cpu.FaultInsnLimit, exit.Fault.Kind)
		msg := exit.Fault.Error()
		for tid := 1000; tid <= 1004; tid++ {
			require.Contains(t, msg, fmt.Sprintf("tid %d ", tid), msg)
		}
		_, list, ok := strings.Cut(msg, "threads: {")
		require.True(t, ok, msg)
		require.Equal(t, 5, strings.Count(list, " at pc 0x"), msg)
	}
}

// TestThreadPrograms checks the list of thread programs the tests run.
func TestThreadPrograms(t *testing.T) {
	var names []string
	for _, b := range programs.ThreadBinaries("s390x") {
		if b.Config.Name == "s390x-thr-O2" {
			names = append(names, filepath.Base(b.Path))
		}
	}
	require.Equal(t, []string{"atomics", "barrier", "deadlock", "epoll", "falseshare", "padded", "pinned", "pipe", "prodcons", "racy", "robust", "signalfd", "timerfd", "timers", "tls", "worksplit", "cxxthreads"}, names)
}

// TestRandomSched: with the random scheduler the racy program's output
// depends on the seed, and one seed gives one output and instruction
// count every time.
func TestRandomSched(t *testing.T) {
	for _, b := range programs.ThreadBinaries("") {
		if b.Name != "racy" || b.Config.Dynamic {
			continue
		}
		t.Run(b.Config.Name, func(t *testing.T) {
			t.Parallel()
			runSeed := func(seed uint64) (string, uint64) {
				var out bytes.Buffer
				m, err := linux.Load(b.Path, linux.Config{Args: []string{b.Path}, Stdout: &out, Seed: seed, RandomSched: true})
				require.NoError(t, err)
				exit, err := m.Run()
				require.NoError(t, err)
				require.Equal(t, 0, exit.Status)
				return out.String(), m.Insns
			}
			seen := map[string]bool{}
			for seed := uint64(1); seed <= 6; seed++ {
				out, n := runSeed(seed)
				out2, n2 := runSeed(seed)
				require.Equal(t, out, out2, "seed %d", seed)
				require.Equal(t, n, n2, "seed %d", seed)
				seen[out] = true
			}
			require.Greater(t, len(seen), 1, "six seeds, one order: %v", seen)
		})
	}
}
