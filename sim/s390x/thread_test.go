package s390x

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// TestThreadContext: a saved thread comes back with every register, its
// thread pointer in a0:a1 and a pending EXECUTE target included.
func TestThreadContext(t *testing.T) {
	c := newCore(cpu.NewMachine(Arch)).(*Core)
	for i := range 16 {
		c.r[i] = uint64(i) * 0x1111
	}
	c.pc, c.cc, c.fpc = 0x1000100, 2, 0x70
	c.v[5] = [2]uint64{3, 4}
	c.SetTLS(0x3ff_8000_1234)
	require.Equal(t, [2]uint32{0x3ff, 0x8000_1234}, [2]uint32{c.ar[0], c.ar[1]})
	c.exPending = true
	want := *c.SaveThread(nil).(*threadContext)

	c.r[2], c.pc, c.exPending = 0, 0x1000200, false
	c.SetTLS(7)
	other := c.SaveThread(nil)
	c.LoadThread(&want)
	require.Equal(t, want, *c.SaveThread(nil).(*threadContext))
	require.True(t, c.exPending)
	c.LoadThread(other)
	require.Equal(t, uint32(7), c.ar[1])
	require.False(t, c.exPending)
}
