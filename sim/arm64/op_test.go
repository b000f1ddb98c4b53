package arm64

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// TestNextOpAfterPageReplaced: another core that decodes the same page
// of shared memory (a vfork child, which runs in its parent's memory)
// replaces the page's decoded slots; NextOp of the first core at a slot
// it has not decoded yet must look the page up again, as Execute does,
// not report that there is no instruction (which hid a call from unwind
// check's truth).
func TestNextOpAfterPageReplaced(t *testing.T) {
	code := elftest.Words(binary.LittleEndian,
		0xd503201f, // nop
		0x94000100) // bl +0x400
	m, err := linux.New("op", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, code, make([]byte, 64)), linux.Config{})
	require.NoError(t, err)
	var op cpu.Op
	require.True(t, m.Core.NextOp(&op)) // nop: its page is now in the core's cache
	other := cpu.NewMachineMem(m.Arch, m.Mem)
	other.Core.SetPC(0x400000)
	require.True(t, other.Core.NextOp(&op)) // the page gets the other core's slots
	m.Core.SetPC(0x400004)
	require.True(t, m.Core.NextOp(&op), "bl after the page was replaced")
	require.Equal(t, cpu.Op{PC: 0x400004, Size: 4, Class: cpu.ClassBranch, Target: 0x400404, Flags: cpu.OpLink | cpu.OpCondPassed}, op)
}
