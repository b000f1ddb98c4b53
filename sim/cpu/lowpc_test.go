package cpu_test

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// lowPCPrograms set register 0 (arm64 x0) or 1 (s390x r1) to 0 and branch
// to it.
var lowPCPrograms = []struct {
	name string
	img  []byte
}{
	{"arm64", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian,
		0xd2800000, // mov x0, #0
		0xd61f0000, // br x0
	), nil)},
	{"s390x", elftest.Code(elf.EM_S390, binary.BigEndian, []byte{
		0xa7, 0x19, 0x00, 0x00, // lghi %r1, 0
		0x07, 0xf1, // br %r1
	}, nil)},
}

// TestRunFromLowPC: a Core.Execute that starts at an address in the first
// page (a call through a null pointer as the last operation of the Execute
// before) raises the fetch fault there, like any unmapped address.
func TestRunFromLowPC(t *testing.T) {
	for _, p := range lowPCPrograms {
		for _, pc := range []uint64{0, 4, 0xffc} {
			m, err := linux.New(p.name, p.img, linux.Config{})
			require.NoError(t, err)
			m.Core.SetPC(pc)
			n, stop := m.Core.Execute(10)
			require.Equal(t, uint64(0), n, "%s pc %#x", p.name, pc)
			require.Equal(t, cpu.StopFault, stop.Kind, "%s pc %#x", p.name, pc)
			require.Equal(t, pc, stop.Fault.PC, "%s pc %#x", p.name, pc)
		}
	}
}

// TestNullCallStepped: a branch to address 0 under an observer (which
// runs the core one operation at a time, as --trace does) ends in the
// fetch fault at 0, not in a simulator error.
func TestNullCallStepped(t *testing.T) {
	for _, p := range lowPCPrograms {
		m, err := linux.New(p.name, p.img, linux.Config{MaxInsns: 100})
		require.NoError(t, err)
		m.Observer = func(*cpu.Machine) error { return nil }
		exit, err := m.Run()
		require.NoError(t, err)
		require.NotNil(t, exit.Fault, p.name)
		require.NotEqual(t, cpu.FaultInternal, exit.Fault.Kind, "%s: %v", p.name, exit.Fault)
		require.Equal(t, uint64(0), exit.Fault.PC, "%s: %v", p.name, exit.Fault)
		require.Equal(t, uint64(2), m.Insns, p.name)
	}
}
