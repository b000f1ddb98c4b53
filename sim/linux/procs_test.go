package linux

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/sim/cpu"
)

var updateProcs = flag.Bool("update-procs", false, "rewrite testdata/procs/*.out from simrun's runs")

// procsConfigs are programs/procs's builds, by architecture.
var procsConfigs = map[string]string{"arm64": "aarch64-proc-O2", "s390x": "s390x-proc-O2"}

// procsPrograms are the bundled process programs; qemu says whether
// qemu-user can be their oracle (it runs a guest's execve on the host,
// which needs binfmt_misc for a guest program, not for system()'s host
// shell; its fork bomb meets the host's limit; and it runs vfork as fork,
// the child on a copy of the memory, where Linux shares it).
// maxMem is the --max-memory it runs with (0: none).
var procsPrograms = []struct {
	name   string
	qemu   bool
	maxMem uint64
}{{"forkwait", true, 0}, {"sigchld", true, 0}, {"pipes", true, 0}, {"forkbomb", false, 0}, {"spawn", false, 0},
	{"system", true, 0}, {"forkmem", false, 128 << 20}, {"vfork", false, 0},
	{"exectimers", false, 0}, {"fdshare", true, 0}, {"sleepers", true, 0}, {"orphans", true, 0}, {"hostclock", true, 0}, {"locks", true, 0}, {"sigqueue", true, 0}, {"pshared", true, 0}, {"sockets", true, 0}}

// runProcs runs a process program under simrun (at most 50 processes,
// maxMem bytes of memory) and returns its stdout and exit status.
func runProcs(t *testing.T, path string, maxMem uint64) (string, int) {
	t.Helper()
	var out bytes.Buffer
	m, err := Load(path, Config{Args: []string{path}, Stdout: &out, MaxProcs: 50, MaxInsns: 2e9, MaxMemory: maxMem})
	require.NoError(t, err)
	exit, err := Run(m)
	require.NoError(t, err)
	require.Nil(t, exit.Fault, "%v", exit.Fault)
	return out.String(), exit.Status
}

// TestProcsPrograms runs each bundled process program on both
// architectures: the stdout and status of testdata/procs/NAME.out, the
// same for both, and the same run after run (--stats's figures too).
func TestProcsPrograms(t *testing.T) {
	for _, prog := range procsPrograms {
		t.Run(prog.name, func(t *testing.T) {
			golden := filepath.Join("testdata", "procs", prog.name+".out")
			for _, arch := range []string{"arm64", "s390x"} {
				path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], prog.name)
				out, status := runProcs(t, path, prog.maxMem)
				got := out + "status " + itoa(status) + "\n"
				if *updateProcs && arch == "arm64" {
					require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err)
				require.Equal(t, string(want), got, arch)
			}
		})
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		return appendInt(append(b, '-'), -n)
	}
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// TestProcsCrossArch: each build of programs/procs/crossexec fork-execs
// the other architecture's build of spawn as a filter on a pipe; the
// child runs on the other architecture's machine (--stats names it).
// qemu-user cannot run this (one architecture per host process), so the
// output is stated here.
func TestProcsCrossArch(t *testing.T) {
	for arch, other := range map[string]string{"arm64": "s390x", "s390x": "arm64"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], "crossexec")
			var out bytes.Buffer
			m, err := Load(path, Config{Args: []string{path}, Stdout: &out, MaxInsns: 2e9})
			require.NoError(t, err)
			exit, err := Run(m)
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			require.Equal(t, 0, exit.Status)
			require.Equal(t, "HELLO FROM THE OTHER ARCHITECTURE\nthe other architecture's filter: exit 5\n", out.String())
			stats := Of(m).System().Stats()
			require.Len(t, stats, 2)
			require.Equal(t, uint64(guestPID+1), stats[1].Pid)
			require.Equal(t, filepath.Join(procsConfigs[other], "spawn"),
				filepath.Join(filepath.Base(filepath.Dir(stats[1].Program)), filepath.Base(stats[1].Program)))
			require.Equal(t, "exit 5", stats[1].Status)
		})
	}
}

// TestProcsDeterministic: a run with forks, pipes and waits retires the
// same instructions in every process, run after run.
func TestProcsDeterministic(t *testing.T) {
	path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs["arm64"], "pipes")
	var first []uint64
	for i := 0; i < 3; i++ {
		m, err := Load(path, Config{Args: []string{path}})
		require.NoError(t, err)
		_, err = Run(m)
		require.NoError(t, err)
		var counts []uint64
		for _, q := range Of(m).System().Stats() {
			counts = append(counts, q.Pid, q.Insns)
		}
		require.Greater(t, len(counts), 2)
		if i == 0 {
			first = counts
		}
		require.Equal(t, first, counts)
	}
}

// TestQemuProcsPrograms compares the programs qemu-user can run with it:
// same stdout and exit status.
func TestQemuProcsPrograms(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		oracle.Require(t, arch)
	}
	qemu := map[string]string{"arm64": "qemu-aarch64", "s390x": "qemu-s390x"}
	for _, prog := range procsPrograms {
		if !prog.qemu {
			continue
		}
		for _, arch := range []string{"arm64", "s390x"} {
			t.Run(arch+"/"+prog.name, func(t *testing.T) {
				path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], prog.name)
				out, status := runProcs(t, path, prog.maxMem)
				cmd := exec.Command(qemu[arch], path)
				var qout bytes.Buffer
				cmd.Stdout = &qout
				err := cmd.Run()
				qstatus := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					qstatus = ee.ExitCode()
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, qout.String(), out)
				require.Equal(t, qstatus, status)
			})
		}
	}
}

// TestForkMemory: a forked address space shares pages until one side
// writes; each side then sees its own bytes, and the account is charged
// once per page held.
func TestForkMemory(t *testing.T) {
	m := cpu.NewMemory()
	require.NoError(t, m.Map(0x10000, 2*cpu.PageSize, cpu.PermRW))
	require.NoError(t, m.Map(0x20000, cpu.PageSize, cpu.PermRW))
	m.MarkShared(0x20000, cpu.PageSize)
	require.True(t, m.Store64LE(0x10000, 1))
	used := m.Used()
	c, err := m.Fork()
	require.NoError(t, err)
	require.Greater(t, c.Used(), used, "the child's page tables are charged")
	v, ok := c.Load64LE(0x10000)
	require.True(t, ok)
	require.Equal(t, uint64(1), v)
	before := c.Used()
	require.True(t, c.Store64LE(0x10000, 2))
	require.Equal(t, before+cpu.PageSize, c.Used(), "the first write copies the page")
	v, _ = m.Load64LE(0x10000)
	require.Equal(t, uint64(1), v, "the parent keeps its bytes")
	v, _ = c.Load64LE(0x10000)
	require.Equal(t, uint64(2), v)
	require.True(t, m.Store64LE(0x10000, 3))
	require.Equal(t, before+cpu.PageSize, m.Used(), "the last holder takes the page without a copy")
	// The shared mapping is one set of bytes for both.
	require.True(t, c.Store64LE(0x20008, 9))
	v, _ = m.Load64LE(0x20008)
	require.Equal(t, uint64(9), v)
	c.Release()
	require.Less(t, m.Used(), before)

	// Past the limit the copy is refused whole: nothing is charged.
	used = m.Used()
	m.SetLimit(used + 1)
	_, err = m.Fork()
	require.ErrorIs(t, err, cpu.ErrMemoryLimit)
	require.Equal(t, used, m.Used())
	require.False(t, m.TakeLimitHit(), "no access failed")
	m.SetLimit(0)

	// An exec'd program's space (Empty) is on the same account.
	e := m.Empty()
	require.NoError(t, e.Map(0x10000, cpu.PageSize, cpu.PermRW))
	require.True(t, e.Store64LE(0x10000, 1))
	require.Greater(t, m.Used(), used+cpu.PageSize)
	e.Release()
	require.Equal(t, used, m.Used())
}

// FuzzShebang: the "#!" parser never panics and its results have no
// blanks at their ends.
func FuzzShebang(f *testing.F) {
	for _, s := range []string{"#!/bin/sh\n", "#! /usr/bin/env  python3 \nx", "#!", "#!\t\n", "\x7fELF", "#!/a b c d"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		interp, arg, ok := parseShebang(data)
		if !ok {
			require.False(t, bytes.HasPrefix(data, []byte("#!")))
			return
		}
		for _, s := range []string{interp, arg} {
			if s != "" {
				require.NotContains(t, " \t", s[:1])
				require.NotContains(t, " \t", s[len(s)-1:])
			}
		}
	})
}

// TestShebang: interpreter and one argument, as Linux splits them.
func TestShebang(t *testing.T) {
	for _, c := range []struct{ in, interp, arg string }{
		{"#!/bin/sh\necho", "/bin/sh", ""},
		{"#! /usr/bin/env  python3 -u \n", "/usr/bin/env", "python3 -u"},
		{"#!\n", "", ""},
	} {
		i, a, ok := parseShebang([]byte(c.in))
		require.True(t, ok)
		require.Equal(t, c.interp, i, c.in)
		require.Equal(t, c.arg, a, c.in)
	}
}
