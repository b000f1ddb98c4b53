package cpu_test

import (
	"debug/elf"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/timing"
)

// TestRequestStop: a guest looping without syscalls stops at an
// instruction boundary soon after RequestStop from another goroutine,
// with and without the timing model, and can run on.
func TestRequestStop(t *testing.T) {
	loop := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian,
		0x14000000, // b .
	), nil)
	for _, timed := range []bool{false, true} {
		m, err := linux.New("loop", loop, linux.Config{})
		require.NoError(t, err)
		if timed {
			p, err := timing.PresetByName("neoverse-n1")
			require.NoError(t, err)
			_, err = timing.Enable(m, p)
			require.NoError(t, err)
		}
		go func() {
			time.Sleep(20 * time.Millisecond)
			m.RequestStop()
		}()
		exit, err := m.Run()
		assert.ErrorIs(t, err, cpu.ErrStopped, "timed %v", timed)
		assert.Nil(t, exit)
		assert.False(t, m.Exited())
		assert.NotZero(t, m.Insns)
		assert.Equal(t, uint64(0x400000), m.Core.PC(), "between two instructions")
		_, err = m.RunFor(10)
		assert.ErrorIs(t, err, cpu.ErrStopped, "the request stays")
		n := m.Insns
		m.ClearStop()
		_, err = m.RunFor(10)
		assert.NoError(t, err, "cleared, the guest runs on")
		assert.Equal(t, n+10, m.Insns)
	}
}
