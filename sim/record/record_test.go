package record

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	_ "simrun/sim/s390x"
	"simrun/sim/spe"
)

func config(t *testing.T, cfgName, prog string) linux.Config {
	t.Helper()
	b, err := programs.Find(cfgName, prog)
	if err != nil {
		for _, tb := range programs.ThreadBinaries("") {
			if tb.Config.Name == cfgName && tb.Name == prog {
				b, err = tb, nil
			}
		}
	}
	require.NoError(t, err)
	return linux.Config{Args: []string{b.Path}, Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Seed: 1}
}

// TestRecordAPI: a Go program records without the command: the zero
// Options are simrun record's defaults, the samples decode and symbolize,
// and perf.data carries the run — on both architectures.
func TestRecordAPI(t *testing.T) {
	for _, c := range []string{"aarch64-O2", "s390x-O2"} {
		t.Run(c, func(t *testing.T) {
			r, err := Record(context.Background(), config(t, c, "listchase"), Options{Callchain: "sframe"})
			require.NoError(t, err)
			require.Nil(t, r.Exit.Fault)
			assert.Nil(t, r.Stopped)
			assert.Empty(t, r.StopNote())
			assert.EqualValues(t, 4096, r.cfg.Period, "default period")
			assert.Equal(t, "neoverse-n1", r.preset.Name, "default model")
			recs, err := spe.Records(r.AUX)
			require.NoError(t, err)
			require.NotEmpty(t, recs)
			assert.EqualValues(t, r.Unit.Written, len(recs))
			assert.Len(t, r.Callchains, len(recs), "one callchain per record")
			prof, bin, err := r.Profile()
			require.NoError(t, err)
			require.NotNil(t, bin)
			assert.Len(t, prof.Samples, len(recs))
			assert.Equal(t, r.Insns(), prof.Summary.Instructions)
			assert.Equal(t, r.Exit.Status, prof.Summary.ExitStatus)
			named := 0
			for _, s := range prof.Samples {
				if len(s.Frames) > 0 && s.Frames[0].Func != "" {
					named++
				}
			}
			assert.Greater(t, named, len(recs)*9/10, "samples name their functions")
			pd, err := r.PerfData(prof)
			require.NoError(t, err)
			var out bytes.Buffer
			_, err = pd.WriteTo(&out)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(out.Bytes(), []byte("PERFILE2")))
		})
	}
}

// TestRecordCancel: a cancelled context stops the program at an
// instruction boundary; the recording up to there is whole, its exit
// status 128+signal of an Interrupted cause (SIGINT for any other).
func TestRecordCancel(t *testing.T) {
	for _, c := range []struct {
		cause  error
		status int
		note   string
	}{
		{Interrupted{syscall.SIGTERM}, 128 + 15, "interrupted by SIGTERM after "},
		{nil, 128 + 2, "context canceled after "},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(c.cause) // before the first instruction
		r, err := Record(ctx, config(t, "aarch64-O2", "listchase"), Options{})
		require.NoError(t, err)
		require.NotNil(t, r.Stopped)
		assert.Equal(t, c.status, r.Exit.Status)
		assert.Contains(t, r.StopNote(), c.note)
		assert.Less(t, r.Insns(), uint64(1<<25), "stopped within the first run slice")
		prof, _, err := r.Profile()
		require.NoError(t, err)
		assert.Equal(t, r.StopNote(), prof.Summary.Fault)
		assert.Equal(t, c.status, prof.Summary.ExitStatus)
	}
}

// TestRecordBadOptions: what Record is given wrong is an error that names
// it, before anything runs.
func TestRecordBadOptions(t *testing.T) {
	cfg := config(t, "aarch64-O2", "fib")
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Model: "cortex-x9"}, `unknown CPU model "cortex-x9"`},
		{Options{Event: "arm_spe/nonsense=1/"}, "nonsense"},
		{Options{Regs: []string{"PMSFCR"}}, "--spe-reg"},
		{Options{Callchain: "guess"}, "guess"},
	} {
		_, err := Record(context.Background(), cfg, c.opt)
		require.Error(t, err, "%+v", c.opt)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := Record(context.Background(), linux.Config{}, Options{})
	assert.ErrorContains(t, err, "no program")
}

// TestRecordProgress: the progress line is drawn and cleared, and a
// recording with it is the same as without.
func TestRecordProgress(t *testing.T) {
	job := func(progress io.Writer) *Recording {
		r, err := Record(context.Background(), config(t, "aarch64-O2", "listchase"), Options{Period: 1024, Progress: progress})
		require.NoError(t, err)
		return r
	}
	var line bytes.Buffer
	with, without := job(&line), job(nil)
	assert.Equal(t, without.AUX, with.AUX, "the progress line changes nothing")
	assert.Equal(t, without.Machine.Insns, with.Machine.Insns)

	u, err := spe.NewUnit(spe.Presets["neoverse-n1"], 1)
	require.NoError(t, err)
	u.Written, u.PMU.SampleBufferFull = 12, 3
	var w bytes.Buffer
	long := time.Now().Add(-time.Second)
	p := &progress{w: &w, u: u, start: long, last: long}
	nop := cpu.NewOpInfo(4)
	p.Want(cpu.BatchOf(slices.Repeat([]cpu.Retired{{Info: &nop}}, 5000), 2))
	p.done()
	assert.Regexp(t, `^\r\x1b\[K\[ simrun record: 5000 instructions, [0-9.]+ MIPS, 12 samples, 3 buffer fills \]\r\x1b\[K$`, w.String())
}

// TestRecordCPUs: with two CPUs each has its own SPE unit: the threads
// of the false-sharing program (thread 1000+i on CPU i mod 2) are
// sampled by the unit of the CPU they run on, their CONTEXT packets name
// them there, and perf.data (its simrun section read back) keeps each
// sample's CPU. Runs are deterministic.
func TestRecordCPUs(t *testing.T) {
	for _, c := range []string{"aarch64-thr-O2", "s390x-thr-O2"} {
		t.Run(c, func(t *testing.T) {
			cfg := config(t, c, "falseshare")
			cfg.CPUs = 2
			opt := Options{Event: "arm_spe/ts_enable=1,pa_enable=1,jitter=1/", Period: 1024}
			r, err := Record(context.Background(), cfg, opt)
			require.NoError(t, err)
			require.Len(t, r.CPUs, 2)
			prof, bin, err := r.Profile()
			require.NoError(t, err)
			perCPU := map[int]int{}
			var written uint64
			for _, cpu := range r.CPUs {
				written += cpu.Unit.Written
			}
			assert.EqualValues(t, written, len(prof.Samples), "every CPU's records")
			assert.EqualValues(t, written, prof.Summary.Buffer.Records)
			inRun := 0
			for i, s := range prof.Samples {
				perCPU[s.CPU]++
				if i > 0 {
					assert.LessOrEqual(t, prof.Samples[i-1].Time, s.Time, "in time order")
				}
				if len(s.Frames) > 0 && s.Frames[0].Func == "run" {
					inRun++
					assert.Equal(t, int(s.Tid()-1000)%2, s.CPU, "thread %d runs on CPU %d", s.Tid(), (s.Tid()-1000)%2)
				}
			}
			assert.Positive(t, perCPU[0])
			assert.Positive(t, perCPU[1])
			assert.Greater(t, inRun, len(prof.Samples)/2, "the threads' loop")

			pd, err := r.PerfData(prof)
			require.NoError(t, err)
			assert.Equal(t, 2, pd.CPUs)
			var b bytes.Buffer
			_, err = pd.WriteTo(&b)
			require.NoError(t, err)
			back, err := profile.ReadRecording(b.Bytes(), bin)
			require.NoError(t, err)
			require.Len(t, back.Samples, len(prof.Samples))
			for i := range back.Samples {
				assert.Equal(t, prof.Samples[i].CPU, back.Samples[i].CPU, "sample %d", i)
				assert.Equal(t, prof.Samples[i].PC, back.Samples[i].PC, "sample %d", i)
			}

			cfg = config(t, c, "falseshare")
			cfg.CPUs = 2
			again, err := Record(context.Background(), cfg, opt)
			require.NoError(t, err)
			for i := range r.CPUs {
				assert.Equal(t, r.CPUs[i].AUX, again.CPUs[i].AUX, "CPU %d records the same again", i)
			}
		})
	}
}
