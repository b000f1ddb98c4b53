package linux_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/linux"
)

// TestThreadHook: the hook sees each clone (by the creating thread),
// each context switch (from the thread that ran, with the pc it resumes
// at), each thread's exit, and each signal handler's entry and return;
// the running thread is always the last one switched to.
func TestThreadHook(t *testing.T) {
	for _, c := range []struct {
		config, name string
		threads      bool
	}{
		{"aarch64-thr-O2", "worksplit", true},
		{"s390x-thr-O2", "worksplit", true},
		{"aarch64-sig-O2", "handler", false},
		{"s390x-sig-O2", "handler", false},
	} {
		t.Run(c.config+"/"+c.name, func(t *testing.T) {
			var b programs.Binary
			for _, x := range append(programs.ThreadBinaries(""), programs.SignalBinaries("")...) {
				if x.Config.Name == c.config && x.Name == c.name {
					b = x
				}
			}
			require.NotEmpty(t, b.Path)
			m, err := linux.Load(b.Path, linux.Config{Args: []string{b.Path}, Seed: 1, Stdout: io.Discard, Stderr: io.Discard})
			require.NoError(t, err)
			p := linux.Of(m)
			var created, gone []uint64
			var switches, entered, returned int
			running := uint64(1000)
			var depth int // handlers running
			p.AddThreadHook(func(e linux.ThreadEvent) {
				switch e.Kind {
				case linux.ThreadCreated:
					assert.Equal(t, running, e.Prev)
					created = append(created, e.Tid)
				case linux.ThreadSwitched:
					assert.Equal(t, running, e.Prev)
					assert.NotEqual(t, e.Prev, e.Tid)
					running = e.Tid
					switches++
				case linux.ThreadGone:
					assert.Equal(t, running, e.Tid)
					gone = append(gone, e.Tid)
				case linux.SignalEntered:
					assert.NotZero(t, e.PC)
					assert.NotZero(t, e.SP)
					assert.NotEqual(t, e.PC, m.Core.PC(), "the core is at the handler")
					entered++
					depth++
				case linux.SignalReturned:
					assert.Positive(t, depth)
					depth--
					returned++
				}
				assert.Equal(t, running, p.Tid())
			})
			second := 0
			p.AddThreadHook(func(linux.ThreadEvent) { second++ }) // hooks chain
			exit, err := m.Run()
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			if c.threads {
				assert.Equal(t, []uint64{1001, 1002, 1003, 1004}, created)
				assert.ElementsMatch(t, created, gone)
				assert.Equal(t, int(p.ThreadStats().Switches), switches)
				assert.Zero(t, entered)
			} else {
				assert.Empty(t, created)
				assert.Zero(t, switches)
				assert.Positive(t, entered)
				assert.Equal(t, entered, returned)
			}
			assert.Equal(t, len(created)+switches+len(gone)+entered+returned, second)
		})
	}
}
