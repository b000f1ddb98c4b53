// Package timingtest holds the timing-model checks both cores' tests run:
// timing straight-line runs from their summaries must give exactly what
// timing every operation on its own gives; the values the cores log must
// be the same on their fast and slow paths; and the logged data addresses
// must be the ones qemu-user computes (AddressCheck).
package timingtest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/timing"
)

// DetailRecorder wants every 61st operation in detail and keeps what the
// model said about it.
type DetailRecorder struct {
	seen    int
	Details []cpu.OpTiming
	PCs     []uint64
}

func (r *DetailRecorder) Want(b *cpu.Batch) []int {
	var w []int
	for i := range b.Len() {
		if (r.seen+i)%61 == 0 {
			w = append(w, i)
		}
	}
	return w
}

func (r *DetailRecorder) Retired(_ *cpu.Machine, b *cpu.Batch, want []int, d []cpu.OpTiming) {
	for k, i := range want {
		r.PCs = append(r.PCs, b.At(i).PC)
		r.Details = append(r.Details, d[k])
	}
	r.seen += b.Len()
}

// Timed runs the program at path timed with preset, with the block
// summaries off (noBlocks) or on, and with a DetailRecorder if detail; it
// returns the statistics, the recorder and what the program printed.
func Timed(t *testing.T, path string, args []string, preset string, noBlocks, detail bool) (timing.Stats, *DetailRecorder, string) {
	t.Helper()
	p, err := timing.PresetByName(preset)
	require.NoError(t, err)
	var out bytes.Buffer
	m, err := linux.Load(path, linux.Config{Args: append([]string{path}, args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Seed: 1})
	require.NoError(t, err)
	tm, err := timing.Enable(m, p)
	require.NoError(t, err)
	tm.NoBlocks = noBlocks
	rec := &DetailRecorder{}
	if detail {
		m.Consumers = append(m.Consumers, rec)
	}
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	require.Equal(t, m.Insns, tm.Stats.Insns, "every retired instruction is timed")
	return tm.Stats, rec, out.String()
}

// TimedCores runs the program at path on cpus simulated CPUs, each a
// core of preset, with the block summaries off (noBlocks) or on; it
// returns each core's statistics and what the program printed.
func TimedCores(t *testing.T, path string, cpus int, preset string, noBlocks bool) ([]timing.Stats, string) {
	t.Helper()
	p, err := timing.PresetByName(preset)
	require.NoError(t, err)
	var out bytes.Buffer
	m, err := linux.Load(path, linux.Config{Args: []string{path}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Seed: 1, CPUs: cpus})
	require.NoError(t, err)
	cores, err := timing.EnableCores(m, p, cpus)
	require.NoError(t, err)
	for _, c := range cores {
		c.NoBlocks = noBlocks
	}
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	var stats []timing.Stats
	for _, c := range cores {
		stats = append(stats, c.Stats)
	}
	require.Equal(t, m.Insns, timing.Total(cores).Insns, "every retired instruction is timed")
	return stats, out.String()
}

// CheckExactCores runs the multi-threaded program at path on 2 and 4
// CPUs with and without block summaries: every core's cycles and
// statistics, and the output, must be the same (a core of several times
// a run with a store from its summary only when nothing in the
// coherence directory would change).
func CheckExactCores(t *testing.T, path string) {
	t.Helper()
	for _, cpus := range []int{2, 4} {
		ref, refOut := TimedCores(t, path, cpus, "neoverse-n1", true)
		got, gotOut := TimedCores(t, path, cpus, "neoverse-n1", false)
		require.Equal(t, ref, got, "%d CPUs: statistics per core", cpus)
		require.Equal(t, refOut, gotOut)
		require.NotZero(t, ref[1].L1DAccess, "%d CPUs: the second core ran", cpus)
	}
}

// CheckExact runs the program with and without block summaries, with and
// without detail requests (which force the slow path around the wanted
// operations), on a fast and a slow-memory preset: the cycles,
// statistics, per-operation details and output must be the same.
func CheckExact(t *testing.T, path string, args []string) {
	t.Helper()
	for _, preset := range []string{"neoverse-n1", "slow-memory"} {
		ref, refRec, refOut := Timed(t, path, args, preset, true, true)
		got, gotRec, gotOut := Timed(t, path, args, preset, false, true)
		require.Equal(t, ref, got, "%s: statistics", preset)
		require.Equal(t, refRec.PCs, gotRec.PCs)
		require.Equal(t, refRec.Details, gotRec.Details, "%s: details", preset)
		require.Equal(t, refOut, gotOut)
		plain, _, _ := Timed(t, path, args, preset, false, false)
		require.Equal(t, ref, plain, "%s: statistics without detail requests", preset)
		require.NotZero(t, ref.L1DAccess)
		require.NotZero(t, ref.Branches)
	}
}

// CheckLoggedValuesSelfConsistentAll runs CheckLoggedValuesSelfConsistent
// on every bundled program of arch, a subtest each.
func CheckLoggedValuesSelfConsistentAll(t *testing.T, arch string, slowPath func(m *cpu.Machine) uint64) {
	for _, b := range programs.Binaries(arch) {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) { CheckLoggedValuesSelfConsistent(t, b.Path, b.Args, slowPath) })
	}
}

// CheckLoggedValuesSelfConsistent is a self-consistency check of the
// core's logging, not an oracle: the core's values come from its fast
// path (stored inside the hot executor cases) or its slow path
// (dynamicValue), and slowPath is the slow path again. It runs the program
// one operation per batch and checks every logged value (Retired.Value of an
// operation whose description LogsValue) against slowPath, which computes it
// from the machine stopped just before the operation runs. (That the
// addresses are right is AddressCheck's job, against qemu's.) It then runs the program again in full
// batches, where the core begins runs only where the flow changes, and
// checks that those batches hold the same operations (pc by pc) with the
// same values. It returns how many values it checked.
func CheckLoggedValuesSelfConsistent(t *testing.T, path string, args []string, slowPath func(m *cpu.Machine) uint64) int {
	t.Helper()
	m := timedProgram(t, path, args)
	v := &valueChecker{t: t}
	m.Observer = func(m *cpu.Machine) error {
		v.pc, v.want = m.Core.PC(), slowPath(m)
		return nil
	}
	m.Consumers = append(m.Consumers, v)
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	require.NotZero(t, v.checked)

	m = timedProgram(t, path, args)
	var full opRecorder
	m.Consumers = append(m.Consumers, &full)
	exit, err = m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	require.Equal(t, len(v.ops.pcs), len(full.pcs), "operations retired")
	for i, pc := range v.ops.pcs {
		if full.pcs[i] != pc || full.vals[i] != v.ops.vals[i] {
			require.Failf(t, "a full batch differs", "operation %d: pc %#x value %#x, one by one pc %#x value %#x",
				i, full.pcs[i], full.vals[i], pc, v.ops.vals[i])
		}
	}
	return v.checked
}

// timedProgram loads the program with the timing model on.
func timedProgram(t *testing.T, path string, args []string) *cpu.Machine {
	t.Helper()
	var out bytes.Buffer
	m, err := linux.Load(path, linux.Config{Args: append([]string{path}, args...), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Seed: 1})
	require.NoError(t, err)
	p, err := timing.PresetByName("neoverse-n1")
	require.NoError(t, err)
	_, err = timing.Enable(m, p)
	require.NoError(t, err)
	return m
}

// opRecorder keeps the pc of every logged operation and its value (0 for
// one whose description logs none).
type opRecorder struct{ pcs, vals []uint64 }

func (r *opRecorder) Want(*cpu.Batch) []int { return nil }

func (r *opRecorder) Retired(_ *cpu.Machine, b *cpu.Batch, _ []int, _ []cpu.OpTiming) {
	for i := range b.Len() {
		r.add(b.At(i))
	}
}

func (r *opRecorder) add(op cpu.Retired) {
	v := uint64(0)
	if op.Info.LogsValue() {
		v = op.Value()
	}
	r.pcs, r.vals = append(r.pcs, op.PC), append(r.vals, v)
}

// valueChecker compares the value logged for the one operation of each
// batch with the slow path's, and keeps the operations.
type valueChecker struct {
	t        *testing.T
	pc, want uint64
	checked  int
	ops      opRecorder
}

func (v *valueChecker) Want(*cpu.Batch) []int { return nil }

func (v *valueChecker) Retired(_ *cpu.Machine, b *cpu.Batch, _ []int, _ []cpu.OpTiming) {
	if b.Len() != 1 {
		v.ops.Retired(nil, b, nil, nil) // the syscall-ending batches of a stopped machine
		return
	}
	r := b.At(0)
	require.Equal(v.t, v.pc, r.PC, "the batch holds the operation the slow path saw")
	if r.Info.LogsValue() {
		require.Equal(v.t, v.want, r.Value(), "the logged value of the operation at %#x", r.PC)
		v.checked++
	}
	v.ops.add(r)
}

// TimedImage makes a machine of the ELF image img (a test's hand-made
// program) with the timing model on, for tests that step its core one
// operation at a time.
func TimedImage(t *testing.T, img []byte) *cpu.Machine {
	t.Helper()
	m, err := linux.New("image", img, linux.Config{})
	require.NoError(t, err)
	p, err := timing.PresetByName("neoverse-n1")
	require.NoError(t, err)
	_, err = timing.Enable(m, p)
	require.NoError(t, err)
	return m
}

// Paths counts the operations a random test stepped by the way each
// logs its value: inside its own case or through dynamicValue.
type Paths struct{ InCase, Slow int }

// Add counts one operation.
func (p *Paths) Add(inCase bool) {
	if inCase {
		p.InCase++
	} else {
		p.Slow++
	}
}

// RequireBoth fails t unless both ways were exercised.
func (p *Paths) RequireBoth(t *testing.T) {
	t.Helper()
	require.NotZero(t, p.InCase, "operations logging in their own case")
	require.NotZero(t, p.Slow, "operations logging through dynamicValue")
}

// StepValue empties log, has step run one operation and returns the value
// the core logged for it in vals (its first entry, poisoned with ^want
// first, so that a value never stored shows).
func StepValue(log *cpu.Batch, vals *[cpu.LogBatch]uint64, want uint64, step func()) uint64 {
	log.Runs = log.Runs[:0]
	vals[0] = ^want
	step()
	return vals[0]
}

// Presets are the core models a hand-derived cycle count is given for,
// in the order RequireCycles takes them.
var Presets = []string{"neoverse-n1", "neoverse-v2", "slow-memory"}

// RequireCycles runs the program at path on each of Presets, with the
// block summaries off and on, and checks the run's cycles against want
// (one count per preset, worked out by hand from the model's rules).
func RequireCycles(t *testing.T, path string, want [3]uint64) {
	t.Helper()
	for i, preset := range Presets {
		for _, noBlocks := range []bool{true, false} {
			st, _, _ := Timed(t, path, nil, preset, noBlocks, false)
			require.Equal(t, want[i], st.Cycles, "%s (summaries off: %v): cycles", preset, noBlocks)
		}
	}
}
