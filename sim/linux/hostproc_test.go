package linux

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// startHostChild forks p and makes the child a host run of the host
// program argv, as execHost would, without bridges.
func startHostChild(t *testing.T, p *Process, argv ...string) *Process {
	t.Helper()
	pid := call(t, p, "clone", sigCHLD)
	require.Less(t, pid, uint64(1<<32), "clone: %d", int64(pid))
	q := p.sys.byPid(pid)
	require.NotNil(t, q)
	hpid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{})
	require.NoError(t, err)
	p.sys.startHost(q, &hostRun{path: argv[0], pid: hpid, pidfd: -1})
	for _, th := range q.threads {
		th.state = threadExited
	}
	return q
}

// TestHostRunEndsOnce: a host run is counted once and uncounted once,
// however it ends and however often the run's end kills host programs
// (a stopped run kills them, and may go on and stop again).
func TestHostRunEndsOnce(t *testing.T) {
	p, _ := testProcess(t, "arm64")
	s := p.sys

	q := startHostChild(t, p, "/bin/sleep", "10")
	require.Equal(t, 1, s.hosts)
	s.killHosts()
	require.Equal(t, 0, s.hosts)
	require.True(t, q.ended, "the process of a killed host program ends")
	require.Equal(t, "signal 9", q.StatusString())
	s.killHosts()
	require.Equal(t, 0, s.hosts, "a second kill counts nothing again")
	require.False(t, s.pumpHost(0))
	require.Equal(t, 0, s.hosts)

	q = startHostChild(t, p, "/bin/true")
	require.Equal(t, 1, s.hosts)
	for i := 0; i < 100 && !q.ended; i++ {
		s.pumpHost(hostWait)
	}
	require.True(t, q.ended)
	require.Equal(t, "exit 0", q.StatusString())
	require.Equal(t, 0, s.hosts)
	s.killHosts()
	require.Equal(t, 0, s.hosts)
}
