package arm64

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/elftest"
)

// TestRunFromLowPC: a core Run that starts at an address in the first
// page (a call through a null pointer as the last operation of the Run
// before) raises the fetch fault there, like any unmapped address.
func TestRunFromLowPC(t *testing.T) {
	code := elftest.Words(binary.LittleEndian, 0xd4000001) // svc #0
	for _, pc := range []uint64{0, 4, 0xffc} {
		m, err := cpu.New("lowpc", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, code, nil), cpu.Config{MaxInsns: 100})
		require.NoError(t, err)
		c := m.Core.(*Core)
		c.pc = pc
		n, stop := c.Run(10)
		require.Equal(t, uint64(0), n)
		require.Equal(t, cpu.StopFault, stop.Kind, "pc %#x", pc)
		require.Equal(t, pc, stop.Fault.PC, "pc %#x", pc)
	}
}

// TestNullCallStepped: a branch to address 0 under an observer (which
// runs the core one operation at a time, as --trace does) ends in the
// fetch fault at 0, not in a simulator error.
func TestNullCallStepped(t *testing.T) {
	code := elftest.Words(binary.LittleEndian,
		0xd2800000, // mov x0, #0
		0xd61f0000, // br x0
	)
	m, err := cpu.New("null", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, code, nil), cpu.Config{MaxInsns: 100})
	require.NoError(t, err)
	m.Observer = func(*cpu.Machine) error { return nil }
	exit, err := m.Run()
	require.NoError(t, err)
	require.NotNil(t, exit.Fault)
	require.NotEqual(t, cpu.FaultInternal, exit.Fault.Kind, "%v", exit.Fault)
	require.Equal(t, uint64(0), exit.Fault.PC, "%v", exit.Fault)
	require.Equal(t, uint64(2), m.Insns)
}
