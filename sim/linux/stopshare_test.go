package linux

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
)

// TestStopWhileChildRuns: RequestStop on the first process's machine
// (simrun's SIGINT) stops the run while a forked child has the core
// and never gives it back (it loops; its parent waits for it), and the
// stop clears for the whole run.
func TestStopWhileChildRuns(t *testing.T) {
	words := []uint32{
		0xd2800220, // movz x0, #17 (SIGCHLD)
		0xd2800001, // movz x1, #0
		0xd2801b88, // movz x8, #220 (clone)
		0xd4000001, // svc #0
		0xb4000120, // cbz x0, child (+9)
		0x92800000, // movn x0, #0 (-1: any child)
		0xd2800001, // movz x1, #0
		0xd2800002, // movz x2, #0
		0xd2800003, // movz x3, #0
		0xd2802088, // movz x8, #260 (wait4)
		0xd4000001, // svc #0
		0xd2800bc8, // movz x8, #94 (exit_group)
		0xd4000001, // svc #0
		0x14000000, // child: b .
	}
	path := filepath.Join(t.TempDir(), "forkloop")
	require.NoError(t, os.WriteFile(path, elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), make([]byte, 64)), 0o755))
	m, err := Load(path, Config{Args: []string{path}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := Run(m)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	m.RequestStop()
	select {
	case err := <-done:
		require.True(t, errors.Is(err, cpu.ErrStopped), "%v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the stop did not reach the child's machine")
	}
	p := Of(m)
	require.Len(t, p.System().Stats(), 2, "the child was forked")
	require.True(t, p.Away(), "the child had the core")
	m.ClearStop()
	for _, q := range p.sys.procs {
		require.False(t, q.StopRequested())
	}
}
