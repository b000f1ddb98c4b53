package arm64_test

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

func timedRun(t *testing.T, path string, preset string, noBlocks, detail bool) (cpu.TimingStats, *detailRecorder) {
	p, err := cpu.PresetByName(preset)
	require.NoError(t, err)
	var out bytes.Buffer
	m, err := cpu.Load(path, cpu.Config{Args: []string{path}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Seed: 1})
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
	return m.Timing.Stats, rec
}

// TestBlockTimingExact: timing straight-line runs from their summaries
// gives exactly the cycles, statistics and per-operation details of
// timing every operation on its own, with and without detail requests
// (which force the slow path around the wanted operations).
func TestBlockTimingExact(t *testing.T) {
	for _, b := range programs.Binaries("arm64") {
		for _, preset := range []string{"neoverse-n1", "slow-memory"} {
			ref, refRec := timedRun(t, b.Path, preset, true, true)
			got, gotRec := timedRun(t, b.Path, preset, false, true)
			require.Equal(t, ref, got, "%s %s: statistics", b.Path, preset)
			require.Equal(t, refRec.pcs, gotRec.pcs)
			require.Equal(t, refRec.details, gotRec.details, "%s %s: details", b.Path, preset)
			plain, _ := timedRun(t, b.Path, preset, false, false)
			require.Equal(t, ref, plain, "%s %s: statistics without detail requests", b.Path, preset)
		}
	}
}
