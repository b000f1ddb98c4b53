package s390x

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// TestRunFromLowPC: a core Run that starts at an address in the first
// page (a branch through a null pointer as the last operation of the Run
// before) raises the fetch fault there, like any unmapped address; an
// odd one the specification exception.
func TestRunFromLowPC(t *testing.T) {
	for _, pc := range []uint64{0, 2, 0xffe, 1} {
		m, err := cpu.New("lowpc", prog(mustHex("0af8"), nil), cpu.Config{MaxInsns: 100})
		require.NoError(t, err)
		c := m.Core.(*Core)
		c.pc = pc
		n, stop := c.Run(10)
		require.Equal(t, uint64(0), n)
		require.Equal(t, cpu.StopFault, stop.Kind, "pc %#x", pc)
		require.Equal(t, pc, stop.Fault.PC, "pc %#x", pc)
		if pc&1 != 0 {
			require.Equal(t, cpu.FaultAlignment, stop.Fault.Kind, "pc %#x", pc)
		}
	}
}

// TestNullCallStepped: a branch to address 0 under an observer (which
// runs the core one operation at a time, as --trace does) ends in the
// fetch fault at 0, not in a simulator error.
func TestNullCallStepped(t *testing.T) {
	m, err := cpu.New("null", prog(mustHex("a7190000", "07f1"), nil), cpu.Config{MaxInsns: 100}) // lghi %r1,0; br %r1
	require.NoError(t, err)
	m.Observer = func(*cpu.Machine) error { return nil }
	exit, err := m.Run()
	require.NoError(t, err)
	require.NotNil(t, exit.Fault)
	require.NotEqual(t, cpu.FaultInternal, exit.Fault.Kind, "%v", exit.Fault)
	require.Equal(t, uint64(0), exit.Fault.PC, "%v", exit.Fault)
	require.Equal(t, uint64(2), m.Insns)
}
