package cpu_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// stateCore is what TestSwitchThread asks of a core besides ThreadCore.
type stateCore interface {
	cpu.ThreadCore
	State(s *cpu.State)
	SetState(s *cpu.State)
}

// TestSwitchThread: a scheduler's switch (SwitchThread, which may run a
// thread in its own context's storage) and the copying SaveThread and
// LoadThread agree. A thread's context is its state when it stopped;
// what SaveThread returns stays what it was while the core runs on, even
// when it is the running thread's storage; and a thread that comes back
// has every register it left with, its vector registers included.
func TestSwitchThread(t *testing.T) {
	for _, arch := range cpu.Arches() {
		t.Run(arch.Name, func(t *testing.T) {
			c := cpu.NewMachine(arch).Core.(stateCore)
			state := func() *cpu.State {
				var s cpu.State
				c.State(&s)
				return s.Clone()
			}
			// set gives register and vector register i the value x.
			set := func(i int, x uint64) {
				s := state()
				s.GPR[i], s.Vec[i] = x, [2]uint64{x, ^x}
				c.SetState(s)
			}
			set(3, 0xa)
			a, aState := c.SaveThread(nil), state()
			set(3, 0xb)
			b, bState := c.SaveThread(nil), state()
			c.LoadThread(a)
			require.Equal(t, aState, state())

			// a runs and changes; the switch saves it and b runs from
			// its own context
			set(5, 0xa5)
			aState = state()
			require.Same(t, a, c.SwitchThread(a, true, b, false))
			require.Equal(t, bState, state())
			set(5, 0xb5)
			bState = state()

			// a snapshot of the running b, into b's own context, stays
			// one as b runs on
			require.Same(t, b, c.SaveThread(b))
			set(6, 0xb6)
			c.LoadThread(c.SaveThread(nil)) // (the core's own storage again)
			require.Equal(t, bState, func() *cpu.State {
				keep := state()
				c.LoadThread(b)
				s := state()
				c.SetState(keep)
				return s
			}())
			set(7, 0xb7)
			bState = state()

			// b goes, a comes back as it was; the switch back finds b as
			// it was
			c.SwitchThread(b, true, a, true)
			require.Equal(t, aState, state())
			set(8, 0xa8)
			aState = state()
			c.SwitchThread(a, true, b, false)
			require.Equal(t, bState, state())
			c.SwitchThread(b, true, a, false)
			require.Equal(t, aState, state())

			// a thread that exited is not saved
			require.Nil(t, c.SwitchThread(nil, false, b, false))
			require.Equal(t, bState, state())
		})
	}
}
