package s390x_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/internal/timingtest"
	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/timing"
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

func (l *lastOp) Want(*cpu.Batch) []int { return nil }
func (l *lastOp) Retired(_ *cpu.Machine, b *cpu.Batch, _ []int, _ []cpu.OpTiming) {
	l.ops = append(l.ops[:0], b.Ops()...)
}

// TestLogAgreesWithNextOp: what the core logs for the timing model is
// what NextOp says just before the instruction runs: pc, class, flags,
// size and the data address.
func TestLogAgreesWithNextOp(t *testing.T) {
	p, _ := timing.PresetByName("neoverse-n1")
	for _, b := range append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...) {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			m, err := linux.Load(b.Path, linux.Config{Args: append([]string{b.Path}, b.Args...), Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}})
			require.NoError(t, err)
			_, err = timing.Enable(m, p)
			require.NoError(t, err)
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
					require.Equal(t, op.VA, r.Addr(), "pc 0x%x", op.PC)
				case op.Class == cpu.ClassOther && op.Flags&cpu.OpConditional != 0:
					require.Equal(t, op.Flags&cpu.OpCondPassed != 0, r.CondPassed(), "pc 0x%x: condition", op.PC)
				}
			}
		})
	}
}

// TestBlockTimingExecute: an EXECUTE whose target changes between runs
// (here its register fields: la 1,0(2) on odd passes, la 3,0(4) on even
// ones) is not timed from a summary made with the other target. (Such a
// target retires as an operation of its own at the EXECUTE's address, so
// the run ends at the EXECUTE; the targets that retire with it differ only
// in their length byte.)
func TestBlockTimingExecute(t *testing.T) {
	code := []byte{
		0xa7, 0x69, 0x00, 0x64, // lghi %r6,100
		0xa7, 0x59, 0x00, 0x12, // lghi %r5,0x12
		0xc0, 0x80, 0x00, 0x00, 0x00, 0x11, // larl %r8,target
		0xb9, 0x0c, 0x00, 0x22, // loop: msgr %r2,%r2 (la 1,0(2) waits for it)
		0x44, 0x50, 0x80, 0x00, // ex %r5,0(%r8)
		0xb9, 0x08, 0x00, 0x71, // agr %r7,%r1
		0xc0, 0x57, 0x00, 0x00, 0x00, 0x26, // xilf %r5,0x26 (0x12 <-> 0x34)
		0xa7, 0x66, 0xff, 0xf7, // brct %r6,loop
		0xa7, 0x29, 0x00, 0x00, // lghi %r2,0
		0x0a, 0x01, // svc 1 (exit)
		0x41, 0x00, 0x00, 0x00, // target: la %r0,0
	}
	checkExactCode(t, code)
}

// TestBlockTimingExecuteKind: an EXECUTE whose target retires with it and
// changes kind between runs (a load that sets the condition code, clc,
// read by the alcgr after it, on odd passes; a store, mvc, on even ones)
// in the middle of a run is not timed from a summary made with the other
// target.
func TestBlockTimingExecuteKind(t *testing.T) {
	code := []byte{
		0xa7, 0x69, 0x00, 0x64, // lghi %r6,100
		0xc0, 0x80, 0x00, 0x00, 0x00, 0x13, // larl %r8,t1
		0xc0, 0xa0, 0x00, 0x00, 0x00, 0x13, // larl %r10,t2
		0xb9, 0x82, 0x00, 0xa8, // xgr %r10,%r8 (t1^t2)
		0xb9, 0x82, 0x00, 0x8a, // loop: xgr %r8,%r10 (t2 <-> t1)
		0x44, 0x00, 0x80, 0x00, // ex %r0,0(%r8)
		0xb9, 0x88, 0x00, 0x77, // alcgr %r7,%r7
		0xa7, 0x66, 0xff, 0xfa, // brct %r6,loop
		0xa7, 0x29, 0x00, 0x00, // lghi %r2,0
		0x0a, 0x01, // svc 1 (exit)
		0xd2, 0x00, 0xf0, 0x00, 0xf0, 0x00, // t1: mvc 0(1,%r15),0(%r15)
		0xd5, 0x00, 0xf0, 0x00, 0xf0, 0x00, // t2: clc 0(1,%r15),0(%r15)
	}
	checkExactCode(t, code)
}

// checkExactCode runs s390x code (loaded at 0x400000) timed with and
// without run summaries: the statistics must be the same.
func checkExactCode(t *testing.T, code []byte) {
	t.Helper()
	f := &elftest.File{Machine: elf.EM_S390, Order: binary.BigEndian, Entry: 0x400000, Segments: []elftest.Segment{
		{Vaddr: 0x400000, Data: code, Flags: elf.PF_R | elf.PF_X}}}
	path := filepath.Join(t.TempDir(), "code")
	require.NoError(t, os.WriteFile(path, f.Bytes(), 0o755))
	ref, _, _ := timingtest.Timed(t, path, nil, "neoverse-n1", true, false)
	got, _, _ := timingtest.Timed(t, path, nil, "neoverse-n1", false, false)
	require.Equal(t, ref, got)
}

// TestBlockTimingExactCores: with several cores, runs with stores are
// timed from their summaries only where operation-by-operation timing
// would give the same: every core's statistics equal the summaries-off
// run's, on the false-sharing pair and worksplit.
func TestBlockTimingExactCores(t *testing.T) {
	for _, b := range programs.ThreadBinaries("s390x") {
		if b.Config.Name == "s390x-thr-O2" && (b.Name == "falseshare" || b.Name == "padded" || b.Name == "worksplit") {
			t.Run(b.Name, func(t *testing.T) { timingtest.CheckExactCores(t, b.Path) })
		}
	}
}
