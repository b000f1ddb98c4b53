package s390x_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/cpu/timingtest"
)

// TestBlockTimingExact: timing straight-line runs of 2-, 4- and 6-byte
// instructions from their summaries gives exactly the cycles, statistics
// and per-operation details of timing every operation on its own, with
// and without detail requests; and the timed run prints what the plain
// run prints.
func TestBlockTimingExact(t *testing.T) {
	for _, b := range append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...) {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) { timingtest.CheckExact(t, b.Path, b.Args) })
	}
}

// lastOp keeps the operations of the latest batch.
type lastOp struct{ ops []cpu.Retired }

func (l *lastOp) Want([]cpu.Retired) []int { return nil }
func (l *lastOp) Retired(_ *cpu.Machine, ops []cpu.Retired, _ []int, _ []cpu.OpTiming) {
	l.ops = append(l.ops[:0], ops...)
}

// TestLogAgreesWithNextOp: what the core logs for the timing model is
// what NextOp says just before the instruction runs: pc, class, flags,
// size and the data address.
func TestLogAgreesWithNextOp(t *testing.T) {
	p, _ := cpu.PresetByName("neoverse-n1")
	for _, b := range append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...) {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			m, err := cpu.Load(b.Path, cpu.Config{Args: append([]string{b.Path}, b.Args...), Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}})
			require.NoError(t, err)
			require.NoError(t, m.EnableTiming(p))
			l := &lastOp{}
			m.Consumers = append(m.Consumers, l)
			var op cpu.Op
			for i := 0; i < 100000 && !m.Exited(); i++ {
				require.True(t, m.Core.NextOp(&op), "pc 0x%x", m.Core.PC())
				_, err := m.RunFor(1)
				require.NoError(t, err)
				if m.Exited() {
					break
				}
				require.Len(t, l.ops, 1)
				r := l.ops[0]
				require.Equal(t, op.PC, r.PC)
				require.Equal(t, op.Size, r.Info.Size, "pc 0x%x", op.PC)
				require.Equal(t, op.Class, r.Info.Class, "pc 0x%x", op.PC)
				require.Equal(t, op.Flags&^cpu.OpCondPassed, r.Info.Flags, "pc 0x%x", op.PC)
				switch {
				case op.Class != cpu.ClassOther && op.Class != cpu.ClassBranch:
					require.Equal(t, op.VA, r.EA, "pc 0x%x", op.PC)
				case op.Class == cpu.ClassOther && op.Flags&cpu.OpConditional != 0:
					require.Equal(t, op.Flags&cpu.OpCondPassed != 0, r.EA != 0, "pc 0x%x: condition", op.PC)
				}
			}
		})
	}
}
