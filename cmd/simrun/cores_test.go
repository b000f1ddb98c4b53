package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
)

// threadProgram is the bundled thread program name built for config.
func threadProgram(t *testing.T, config, name string) string {
	t.Helper()
	for _, b := range programs.ThreadBinaries("") {
		if b.Config.Name == config && b.Name == name {
			return b.Path
		}
	}
	t.Fatalf("no thread program %s/%s", config, name)
	return ""
}

// wallLines are --stats's lines that measure the host, not the guest.
var wallLines = regexp.MustCompile(`(?m)^(wall time|MIPS): .*\n`)

// TestCPUsFlag: --cpus outside 1..64 and --cpu-step outside 1..2^32
// are usage errors that say the range.
func TestCPUsFlag(t *testing.T) {
	prog := threadProgram(t, "aarch64-thr-O2", "worksplit")
	for _, args := range [][]string{{"--cpus", "0"}, {"--cpus", "100000"}, {"--cpus", "-3"}, {"--cpus", "65"}} {
		st, _, stderr := run(t, append(append([]string{"run"}, args...), prog)...)
		assert.Equal(t, 2, st, "%v", args)
		assert.Contains(t, stderr, "want 1 to 64 CPUs", "%v", args)
	}
	for _, step := range []string{"0", "5000000000"} {
		st, _, stderr := run(t, "run", "--cpus", "2", "--cpu-step", step, prog)
		assert.Equal(t, 2, st)
		assert.Contains(t, stderr, "--cpu-step "+step+": want 1 to")
	}
}

// TestCPUsRandom: --sched random with several CPUs draws which core's
// thread runs next (each core still runs its threads one at a time):
// the counts come out right, and one seed gives one run, byte for byte,
// another seed another interleaving.
func TestCPUsRandom(t *testing.T) {
	prog := threadProgram(t, "aarch64-thr-O2", "atomics")
	stats := func(seed string) string {
		st, out, stderr := run(t, "run", "--cpus", "4", "--sched", "random", "--seed", seed, "--stats", prog)
		require.Equal(t, 0, st, stderr)
		require.Equal(t, "added 200000 (want 200000)\ncasmax 79999 (want 79999)\nplain 80000 (want 80000)\n", out)
		return wallLines.ReplaceAllString(stderr, "")
	}
	a := stats("3")
	assert.Equal(t, a, stats("3"))
	assert.NotEqual(t, a, stats("4"))
	assert.Contains(t, a, "core 3:")
}

// TestCPUsSmallSteps: with steps of a few instructions, down to one (the
// cores interleaved instruction by instruction), arm64's exclusive loops
// (Armv8.0 atomics: an add, a compare-and-swap loop and an exchange spin
// lock) still make progress and get the right counts: a thread's
// exclusive monitor survives the other cores' steps unless they store to
// its bytes, and each core hands its threads round robin (the lock's
// holder, sharing a core with a spinner, gets its turn).
func TestCPUsSmallSteps(t *testing.T) {
	prog := threadProgram(t, "aarch64-thr-O2", "atomics")
	for _, step := range []string{"1", "2", "7"} {
		for _, timed := range []bool{false, true} {
			args := []string{"run", "--cpus", "2", "--cpu-step", step, "--max-insns", "50000000"}
			if timed {
				args = append(args, "--stats")
			}
			st, out, stderr := run(t, append(args, prog)...)
			require.Equal(t, 0, st, "step %s: %s", step, stderr)
			assert.Equal(t, "added 200000 (want 200000)\ncasmax 79999 (want 79999)\nplain 80000 (want 80000)\n", out, "step %s", step)
		}
	}
}

// TestCPUsOneUnchanged: --cpus 1 is the default exactly: the same
// output and --stats, cycles included.
func TestCPUsOneUnchanged(t *testing.T) {
	prog := threadProgram(t, "s390x-thr-O2", "worksplit")
	st, out, stderr := run(t, "run", "--stats", prog)
	require.Equal(t, 0, st, stderr)
	st, out1, stderr1 := run(t, "run", "--stats", "--cpus", "1", prog)
	require.Equal(t, 0, st, stderr1)
	assert.Equal(t, out, out1)
	assert.Equal(t, wallLines.ReplaceAllString(stderr, ""), wallLines.ReplaceAllString(stderr1, ""))
	assert.NotContains(t, stderr1, "core 0:")
}

// TestCPUsDeterminism: a --cpus 4 run of a multi-threaded program is the
// same three times, --stats (per-core cycles) included, on both
// architectures; the threads' work spreads over the four cores.
func TestCPUsDeterminism(t *testing.T) {
	for _, config := range []string{"aarch64-thr-O2", "s390x-thr-O2"} {
		t.Run(config, func(t *testing.T) {
			prog := threadProgram(t, config, "worksplit")
			var first string
			for i := range 3 {
				st, out, stderr := run(t, "run", "--stats", "--cpus", "4", prog)
				require.Equal(t, 0, st, stderr)
				got := out + wallLines.ReplaceAllString(stderr, "")
				if i == 0 {
					first = got
					for c := range 4 {
						var cycles, insns uint64
						_, err := fmt.Sscanf(line(stderr, fmt.Sprintf("core %d: ", c)), "core %d: %d cycles, %d instructions", new(int), &cycles, &insns)
						require.NoError(t, err, stderr)
						assert.Greater(t, insns, uint64(400000), "core %d: %s", c, stderr)
					}
					continue
				}
				require.Equal(t, first, got, "run %d", i+1)
			}
		})
	}
}

// line is the first line of s that starts with prefix ("" if none).
func line(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestFalseSharing: the teaching pair (programs/threads/src/falseshare.c
// and padded.c) does the same work, but with two or four cores the
// counters sharing one cache line cost clearly more cycles than the
// padded ones, and the cores meet peer-core hits there; with one core
// they cost the same. The line bounces at most once per --cpu-step (on
// hardware, where it can bounce at every increment, the difference is
// larger).
func TestFalseSharing(t *testing.T) {
	stat := func(t *testing.T, prog string, args ...string) (cycles, peer uint64) {
		st, out, stderr := run(t, append(append([]string{"run", "--stats"}, args...), prog)...)
		require.Equal(t, 0, st, stderr)
		require.Contains(t, out, "total 200000")
		_, err := fmt.Sscanf(line(stderr, "cycles: "), "cycles: %d", &cycles)
		require.NoError(t, err, stderr)
		for _, l := range strings.Split(stderr, "\n") {
			var c int
			var n, p, u uint64
			if _, err := fmt.Sscanf(l, "core %d: %d cycles, %d instructions, IPC %f, peer-core hits %d, upgrades %d", &c, &n, new(uint64), new(float64), &p, &u); err == nil {
				peer += p
			}
		}
		return cycles, peer
	}
	for _, config := range []string{"aarch64-thr-O2", "s390x-thr-O2"} {
		t.Run(config, func(t *testing.T) {
			shared, padded := threadProgram(t, config, "falseshare"), threadProgram(t, config, "padded")
			c1s, _ := stat(t, shared)
			c1p, _ := stat(t, padded)
			assert.InEpsilon(t, c1p, c1s, 0.01, "one core: no sharing to pay for")
			// the default step (50 instructions) and the finest, which
			// lets the line bounce more often (1.2 to 1.7 times the
			// cycles: where a step ends in the loop moves the figure)
			for _, c := range []struct {
				cpus, step string
				ratio      float64
			}{{"2", "50", 1.15}, {"4", "50", 1.15}, {"2", "32", 1.25}, {"4", "32", 1.25}} {
				cs, ps := stat(t, shared, "--cpus", c.cpus, "--cpu-step", c.step)
				cp, pp := stat(t, padded, "--cpus", c.cpus, "--cpu-step", c.step)
				t.Logf("--cpus %s --cpu-step %s: false sharing %d cycles (%d peer-core hits), padded %d (%d): %.2fx",
					c.cpus, c.step, cs, ps, cp, pp, float64(cs)/float64(cp))
				assert.Greater(t, float64(cs), c.ratio*float64(cp), "%+v", c)
				assert.Greater(t, ps, 20*max(pp, 1), "%+v", c)
			}
		})
	}
}

// TestCPUsOneThreadExact: a single-threaded program runs on core 0 of
// two alone, whose caches are private to it: the coherence code and the
// stepped runs (stores timed one by one) must give exactly one core's
// cycles and counts.
func TestCPUsOneThreadExact(t *testing.T) {
	counts := regexp.MustCompile(`(?m)^(cycles|issue stall cycles|L1D accesses|L2 accesses|LLC accesses|DTLB accesses|branches): .*$`)
	for _, config := range []string{"aarch64-O2", "s390x-O2"} {
		for _, name := range []string{"sort", "listchase", "memloops", "strings"} {
			b, err := programs.Find(config, name)
			require.NoError(t, err)
			var want string
			for _, n := range []string{"1", "2"} {
				st, _, stderr := run(t, append([]string{"run", "--stats", "--cpus", n, b.Path}, b.Args...)...)
				require.Less(t, st, 128, stderr)
				got := strings.Join(counts.FindAllString(stderr, -1), "\n")
				require.Contains(t, got, "cycles: ")
				if n == "1" {
					want = got
					continue
				}
				assert.Equal(t, want, got, "%s/%s", config, name)
			}
		}
	}
}

// TestCPUsAffinity: a program that pins (programs/threads/src/pinned.c) its threads with
// pthread_setaffinity_np finds them on the CPUs it asked for
// (sched_getcpu), sees --cpus N CPUs in its mask, and gets EINVAL for a
// mask naming only an absent CPU; on both architectures, static and
// dynamic.
func TestCPUsAffinity(t *testing.T) {
	want := map[string]string{
		"1":  "1 CPUs\nthread 0: asked for CPU 0, runs on CPU 0\nthread 1: asked for CPU 0, runs on CPU 0\nthread 2: asked for CPU 0, runs on CPU 0\nCPU 63 only: EINVAL\n",
		"2":  "2 CPUs\nthread 0: asked for CPU 1, runs on CPU 1\nthread 1: asked for CPU 0, runs on CPU 0\nthread 2: asked for CPU 1, runs on CPU 1\nCPU 63 only: EINVAL\n",
		"4":  "4 CPUs\nthread 0: asked for CPU 1, runs on CPU 1\nthread 1: asked for CPU 2, runs on CPU 2\nthread 2: asked for CPU 3, runs on CPU 3\nCPU 63 only: EINVAL\n",
		"64": "64 CPUs\nthread 0: asked for CPU 1, runs on CPU 1\nthread 1: asked for CPU 2, runs on CPU 2\nthread 2: asked for CPU 3, runs on CPU 3\nCPU 63 only: accepted\n",
	}
	for _, b := range programs.ThreadBinaries("") {
		if b.Name != "pinned" {
			continue
		}
		t.Run(b.Config.Name, func(t *testing.T) {
			for n, w := range want {
				st, out, stderr := run(t, "run", "--cpus", n, b.Path)
				require.Equal(t, 0, st, stderr)
				assert.Equal(t, w, out, "--cpus %s", n)
			}
		})
	}
}

// TestC2C: perf c2c report (the oracle) on recordings of two CPUs finds
// the false-sharing program's contended cache line, with the loads and
// stores of its loop at each counter's offset, and finds no shared line
// in the padded program; both architectures as guests.
func TestC2C(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	event := "arm_spe/ts_enable=1,pa_enable=1,jitter=1,load_filter=1,store_filter=1/"
	for _, config := range []string{"aarch64-thr-O2", "s390x-thr-O2"} {
		t.Run(config, func(t *testing.T) {
			// The programs run from a directory with one name in every
			// checkout: argv[0] is on the guest's stack, and a path of
			// another length moved which operations the sampler took
			// (a clone one letter longer lost 0x18's only load sample).
			dir := filepath.Join(os.TempDir(), "simrun-c2c", config)
			require.NoError(t, os.RemoveAll(dir))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			t.Cleanup(func() { os.RemoveAll(dir) })
			report := func(name string) string {
				data := filepath.Join(dir, name+".data")
				prog := filepath.Join(dir, name)
				b, err := os.ReadFile(threadProgram(t, config, name))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(prog, b, 0o755))
				st, _, stderr := run(t, "record", "--quiet", "--cpus", "2", "-e", event, "-c", "1024", "-o", data, prog)
				require.Equal(t, 0, st, stderr)
				out, err := exec.Command(perf, "c2c", "report", "-i", data, "--stdio", "-d", "peer").CombinedOutput()
				require.NoError(t, err, "%s", out)
				return string(out)
			}
			shared := report("falseshare")
			assert.Regexp(t, `Total Shared Cache Lines\s+:\s+1\n`, shared)
			assert.Regexp(t, `Load HIT Local Peer\s+:\s+[1-9]\d*\n`, shared)
			pareto := shared[strings.Index(shared, "Shared Cache Line Distribution Pareto"):]
			// Stores are a quarter of the samples at each counter; the
			// peer-core loads are a handful in all (one interval of
			// 1024 operations, the unit's least), so which counters'
			// loads were taken moves with the run's layout (argv[0]
			// is on the stack): at least two of the four.
			loads := 0
			for _, off := range []string{"0x0", "0x8", "0x10", "0x18"} {
				if regexp.MustCompile(`(?m)^\s+0\.00%\s+[1-9][0-9.]*%\s+0\.00%\s+0\.00%\s+0\.00%\s+` + off + `\s.*\[\.\] run\s+falseshare\s+falseshare\.c:\d+`).MatchString(pareto) {
					loads++
				}
				assert.Regexp(t, `(?m)^\s+0\.00%\s+0\.00%\s+0\.00%\s+0\.00%\s+[1-9][0-9.]*%\s+`+off+`\s.*\[\.\] run\s+falseshare`, pareto, "stores of counter %s in run", off)
			}
			assert.GreaterOrEqual(t, loads, 2, "counters with peer-core loads in run:\n%s", pareto)
			padded := report("padded")
			assert.Regexp(t, `Total Shared Cache Lines\s+:\s+0\n`, padded)
			assert.Regexp(t, `Load HIT Local Peer\s+:\s+0\n`, padded)
		})
	}
}
