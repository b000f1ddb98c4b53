package linux

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// TestChildInternalError: a Go panic inside the run of a forked process
// (a simulator bug, caught by cpu.Machine.stepBudget) is told on stderr
// with the process's pid, and the process dies of SIGABRT, which its
// parent's waitpid sees: the parent goes on to its end. The panic is
// injected through the child machine's per-instruction observer.
func TestChildInternalError(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], "forkwait")
			var out, stderr bytes.Buffer
			m, err := Load(path, Config{Args: []string{path}, Stdout: &out, Stderr: &stderr, MaxInsns: 2e9})
			require.NoError(t, err)
			injected := false
			Of(m).System().AddHook(func(q *Process, e ThreadEvent) {
				if e.Kind == ProcessForked && !injected {
					injected = true
					q.Machine.Observer = func(*cpu.Machine) error { panic("injected for the test") }
				}
			})
			exit, err := Run(m)
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			require.Equal(t, 3, exit.Status, "the parent runs to its end")
			require.Contains(t, out.String(), "waitpid is the child: 1\nexited 0 status 0\n", "the child did not exit")
			stats := Of(m).System().Stats()
			require.GreaterOrEqual(t, len(stats), 2)
			require.Equal(t, uint64(guestPID+1), stats[1].Pid)
			require.Equal(t, "signal 6, core dumped", stats[1].Status)
			require.Regexp(t, "^simrun: .*/forkwait \\(pid 1001\\): "+arch+" fault at pc 0x", stderr.String())
			require.Contains(t, stderr.String(), "internal error: simulator bug, please report: injected for the test")
		})
	}
}

// TestSchedulerInternalError: a Go panic between the machines' runs (in
// the system's scheduler or a process's end, here a hook that panics as
// a child ends) ends the run with an error naming the bug, not a crash.
func TestSchedulerInternalError(t *testing.T) {
	path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs["arm64"], "forkwait")
	m, err := Load(path, Config{Args: []string{path}, Stdout: &bytes.Buffer{}, MaxInsns: 2e9})
	require.NoError(t, err)
	Of(m).System().AddHook(func(q *Process, e ThreadEvent) {
		if e.Kind == ProcessExited && q.Pid() != guestPID {
			panic("injected for the test")
		}
	})
	_, err = Run(m)
	require.ErrorContains(t, err, "simulator bug, please report: injected for the test")
}
