package linux

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/timing"
)

// TestProcessEvents: the system's hook sees each process's fork, execve,
// switches and exit, and a TaskLog turns them into the side band perf
// needs; the machines of the run share one timing model, so the virtual
// clock and the retired operations the consumers see cover every
// process. Both architectures, on spawn (fork + execve, posix_spawn).
func TestProcessEvents(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], "spawn")
			var out bytes.Buffer
			m, err := Load(path, Config{Args: []string{path}, Stdout: &out, MaxProcs: 50, MaxInsns: 2e9})
			require.NoError(t, err)
			p, err := timing.PresetByName("neoverse-n1")
			require.NoError(t, err)
			_, err = timing.Enable(m, p)
			require.NoError(t, err)
			var seen retireCount
			m.Consumers = append(m.Consumers, &seen)
			proc := Of(m)
			log := LogTasks(proc, func() uint64 { return m.Timing.Nanos(m.Timing.Cycle()) })
			var events []string
			machines := map[*cpu.Machine]bool{}
			proc.System().AddHook(func(q *Process, e ThreadEvent) {
				switch e.Kind {
				case ProcessForked, ProcessExeced, ProcessExited:
					events = append(events, fmt.Sprintf("%d %d %d", e.Kind, q.Pid(), e.Tid))
					machines[q.Machine] = true
					assert.Same(t, timing.Of(m), timing.Of(q.Machine), "one timing model")
				case ProcessSwitched:
					assert.NotEqual(t, e.Prev, e.Tid)
				}
			})
			exit, err := Run(m)
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			for _, child := range []uint64{1001, 1002, 1003} {
				assert.Contains(t, events, fmt.Sprintf("%d %d %d", ProcessForked, child, child))
				assert.Contains(t, events, fmt.Sprintf("%d %d %d", ProcessExeced, child, child))
				assert.Contains(t, events, fmt.Sprintf("%d %d %d", ProcessExited, child, child))
			}
			var total uint64
			for mm := range machines {
				total += mm.Insns
			}
			assert.Greater(t, seen.n, m.Insns, "the consumers see the children's operations too")
			assert.GreaterOrEqual(t, seen.n, total)

			var side []string
			last := uint64(0)
			for _, e := range log.Events {
				assert.GreaterOrEqual(t, e.Time, last, "time order")
				last = e.Time
				switch e.Kind {
				case TaskComm:
					side = append(side, fmt.Sprintf("comm %d %s exec=%v", e.Pid, e.Comm, e.Exec))
				case TaskFork:
					side = append(side, fmt.Sprintf("fork %d/%d from %d/%d", e.Pid, e.Tid, e.PPid, e.PTid))
				case TaskExit:
					side = append(side, fmt.Sprintf("exit %d/%d", e.Pid, e.Tid))
				case TaskMmap:
					assert.Equal(t, "spawn", filepath.Base(e.Map.Path))
				}
			}
			assert.Equal(t, strings.Join([]string{"comm 1000 spawn exec=true",
				"fork 1001/1001 from 1000/1000", "comm 1001 spawn exec=true", "exit 1001/1001",
				"fork 1002/1002 from 1000/1000", "comm 1002 spawn exec=true", "exit 1002/1002",
				"fork 1003/1003 from 1000/1000", "comm 1003 spawn exec=true", "exit 1003/1003",
				"exit 1000/1000"}, "\n"), strings.Join(side, "\n"))
		})
	}
}

// retireCount counts the operations it sees retire.
type retireCount struct{ n uint64 }

func (r *retireCount) Want(b *cpu.Batch) []int                                 { r.n += uint64(b.Len()); return nil }
func (r *retireCount) Retired(*cpu.Machine, *cpu.Batch, []int, []cpu.OpTiming) {}

// TestHostExecComm: a process that execs a host program (system's
// /bin/sh) gets the exec COMM perf shows for it, with no mappings (its
// code is the host's), and its EXIT when the host program ends.
func TestHostExecComm(t *testing.T) {
	path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs["arm64"], "system")
	var out bytes.Buffer
	m, err := Load(path, Config{Args: []string{path}, Stdout: &out, MaxInsns: 2e9})
	require.NoError(t, err)
	log := LogTasks(Of(m), func() uint64 { return 0 })
	exit, err := Run(m)
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	require.Contains(t, out.String(), "system: exited 1, status 3")
	comms := log.Comms()
	assert.Equal(t, []string{"sh"}, comms[1001], "the child of system() (forked: its parent's comm) names the host's sh")
	exited := false
	for _, e := range log.Events {
		if e.Pid == 1001 {
			assert.NotEqual(t, TaskMmap, e.Kind, "no guest mapping after the host exec: %+v", e)
		}
		if e.Kind == TaskExit && e.Pid == 1001 && e.Tid == 1001 {
			exited = true
		}
	}
	assert.True(t, exited, "the host program's end is the process's EXIT")
}

// TestForkEventStack: ProcessForked's SP tells a child on the caller's
// stack (0) from one on a stack of its own. glibc's vfork passes no stack
// on s390x but the caller's own stack pointer on arm64: both children
// return through the caller's frames, so both report 0; posix_spawn's
// child runs on the stack it was given.
func TestForkEventStack(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], "vfork")
			m, err := Load(path, Config{Args: []string{path}, Stdout: &bytes.Buffer{}, MaxInsns: 2e9})
			require.NoError(t, err)
			var stacks []uint64
			Of(m).System().AddHook(func(q *Process, e ThreadEvent) {
				if e.Kind == ProcessForked {
					stacks = append(stacks, e.SP)
				}
			})
			exit, err := Run(m)
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			require.Len(t, stacks, 3, "two vforks and a posix_spawn")
			assert.Zero(t, stacks[0], "vfork's child runs on the caller's stack")
			assert.Zero(t, stacks[1], "vfork's child runs on the caller's stack")
			assert.NotZero(t, stacks[2], "posix_spawn's child has a stack of its own")
		})
	}
}
