package arm64

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// TestThreadContext: a saved thread comes back with every register, its
// TPIDR_EL0 included, and with the exclusive monitor cleared, so a
// store-exclusive begun before a switch fails after it.
func TestThreadContext(t *testing.T) {
	c := newCore(cpu.NewMachine(Arch)).(*Core)
	for i := range 31 {
		c.x[i] = uint64(i) * 0x1111
	}
	c.x[rSP], c.pc, c.nzcv, c.fpcr, c.fpsr = 0x7ff0, 0x400100, 6, fpcrDN, 1
	c.v[3] = [2]uint64{1, 2}
	c.SetTLS(0xabcd00)
	c.tpidrro = 9
	a := c.SaveThread(nil)
	want := *a.(*threadContext)
	c.exclValid, c.exclAddr = true, 0x5000

	// Another thread: its own registers and thread pointer.
	c.x[0], c.x[rSP], c.pc = 0, 0x9000, 0x400200
	c.SetTLS(0x1234)
	b := c.SaveThread(a) // reuses a's context
	require.Same(t, a, b)
	require.Equal(t, uint64(0x1234), b.(*threadContext).tpidr)
	c.exclValid = true
	c.LoadThread(&want)
	require.False(t, c.exclValid, "a switch clears the exclusive monitor")
	require.Equal(t, want, *c.SaveThread(nil).(*threadContext))
	require.Equal(t, uint64(0xabcd00), c.tpidr)
	require.Equal(t, uint64(0x7ff0), c.x[rSP])
}
