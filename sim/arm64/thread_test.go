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

// TestResumeThread: a thread resumed on a core that ran nothing else
// (cpu.Resumer) keeps its exclusive monitor while the marked bytes hold
// what its load-exclusive read, so its store-exclusive succeeds; another
// core's store there (a different value) clears it; LoadThread, a context
// switch on the core, always clears it.
func TestResumeThread(t *testing.T) {
	m := cpu.NewMachine(Arch)
	const page = 0x10000
	require.NoError(t, m.Mem.Map(page, cpu.PageSize, cpu.PermR|cpu.PermW))
	c := newCore(m).(*Core)
	for _, tc := range []struct {
		name   string
		width  int    // bytes the load-exclusive marks (16: an ldxp of two x registers)
		other  uint64 // what another core stores over the first 8 bytes (0: nothing)
		resume bool
		want   bool // the monitor still armed
	}{
		{"resumed, untouched", 8, 0, true, true},
		{"resumed, pair untouched", 16, 0, true, true},
		{"resumed, another core stored", 8, 0x77, true, false},
		{"resumed, pair's first half stored", 16, 0x77, true, false},
		{"context switch", 8, 0, false, false},
	} {
		require.True(t, m.Mem.Store64LE(page, 0x1111))
		require.True(t, m.Mem.Store64LE(page+8, 0x2222))
		c.exclAddr, c.exclSize, c.exclValid, c.exclVal = page, uint8(tc.width), true, [2]uint64{0x1111, 0}
		if tc.width == 16 {
			c.exclVal[1] = 0x2222
		}
		ctx := c.SaveThread(nil)
		c.LoadThread(&threadContext{}) // another thread runs, on another core or this one
		if tc.other != 0 {
			require.True(t, m.Mem.Store64LE(page, tc.other))
		}
		if tc.resume {
			c.ResumeThread(ctx)
		} else {
			c.LoadThread(ctx)
		}
		require.Equal(t, tc.want, c.exclValid, tc.name)
	}
}
