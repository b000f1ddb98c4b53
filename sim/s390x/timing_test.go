package s390x_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
)

// detailRecorder wants every 61st operation in detail and keeps what the
// model said about it.
type detailRecorder struct {
	seen    int
	details []cpu.OpTiming
	pcs     []uint64
}

func (r *detailRecorder) Want(ops []cpu.Retired) []int {
	var w []int
	for i := range ops {
		if (r.seen+i)%61 == 0 {
			w = append(w, i)
		}
	}
	return w
}

func (r *detailRecorder) Retired(m *cpu.Machine, ops []cpu.Retired, want []int, d []cpu.OpTiming) {
	for k, i := range want {
		r.pcs = append(r.pcs, ops[i].PC)
		r.details = append(r.details, d[k])
	}
	r.seen += len(ops)
}

func timedRun(t *testing.T, b programs.Binary, preset string, noBlocks, detail bool) (cpu.TimingStats, *detailRecorder, string) {
	p, err := cpu.PresetByName(preset)
	require.NoError(t, err)
	var out bytes.Buffer
	m, err := cpu.Load(b.Path, cpu.Config{Args: append([]string{b.Path}, b.Args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Seed: 1})
	require.NoError(t, err)
	require.NoError(t, m.EnableTiming(p))
	m.Timing.NoBlocks = noBlocks
	rec := &detailRecorder{}
	if detail {
		m.Consumers = append(m.Consumers, rec)
	}
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	require.Equal(t, m.Insns, m.Timing.Stats.Insns, "every retired instruction is timed")
	return m.Timing.Stats, rec, out.String()
}

// TestBlockTimingExact: timing straight-line runs of 2-, 4- and 6-byte
// instructions from their summaries gives exactly the cycles, statistics
// and per-operation details of timing every operation on its own, with
// and without detail requests; and the timed run prints what the plain
// run prints.
func TestBlockTimingExact(t *testing.T) {
	for _, b := range append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...) {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			for _, preset := range []string{"neoverse-n1", "slow-memory"} {
				ref, refRec, refOut := timedRun(t, b, preset, true, true)
				got, gotRec, gotOut := timedRun(t, b, preset, false, true)
				require.Equal(t, ref, got, "%s: statistics", preset)
				require.Equal(t, refRec.pcs, gotRec.pcs)
				require.Equal(t, refRec.details, gotRec.details, "%s: details", preset)
				require.Equal(t, refOut, gotOut)
				plain, _, _ := timedRun(t, b, preset, false, false)
				require.Equal(t, ref, plain, "%s: statistics without detail requests", preset)
				require.NotZero(t, ref.L1DAccess)
				require.NotZero(t, ref.Branches)
			}
		})
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
