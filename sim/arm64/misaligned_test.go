package arm64

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/timing"
)

// TestBranchToMisalignedPC: a register branch to an address that is not a
// multiple of 4 on the same page raises the PC alignment fault there (it
// must not run the instruction at the address rounded down).
func TestBranchToMisalignedPC(t *testing.T) {
	code := elftest.Words(binary.LittleEndian,
		0x50000020, // adr x0, #6 (0x400006)
		0xd61f0000, // br x0
		0xd4000001, // svc #0
	)
	for _, timed := range []bool{false, true} {
		m, err := linux.New("misaligned", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, code, nil), linux.Config{MaxInsns: 100})
		require.NoError(t, err)
		if timed {
			p, err := timing.PresetByName("neoverse-n1")
			require.NoError(t, err)
			_, err = timing.Enable(m, p)
			require.NoError(t, err)
		}
		exit, err := m.Run()
		require.NoError(t, err)
		require.NotNil(t, exit.Fault, "timed %v", timed)
		require.Equal(t, cpu.FaultAlignment, exit.Fault.Kind, "timed %v: %v", timed, exit.Fault)
		require.Equal(t, uint64(0x400006), exit.Fault.PC, "timed %v", timed)
		require.Equal(t, uint64(2), m.Insns, "timed %v: adr and br retire", timed)
	}
}
