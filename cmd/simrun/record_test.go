package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/programs/debian"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/record"
	"simrun/sim/spe"
)

// recordArches are the architectures whose cores feed the timing model
// and SPE unit.
var recordArches = []string{"arm64", "s390x"}

// recordProgram runs one bundled program under simrun record's wiring and
// decodes every record of the AUX stream.
func recordProgram(t *testing.T, path, event string, period uint64) (*record.Recording, []spe.Record) {
	t.Helper()
	var out bytes.Buffer
	r, err := record.Record(context.Background(), linux.Config{Args: []string{path}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Seed: 1},
		record.Options{Event: event, Period: period})
	require.NoError(t, err)
	require.Nil(t, r.Exit.Fault, "%s", path)
	require.False(t, r.Truncated)
	recs, err := spe.Records(r.AUX)
	require.NoError(t, err, "%s %s", path, event)
	require.EqualValues(t, r.Unit.Written, len(recs), "every written record decodes")
	return r, recs
}

// opType returns a record's operation-type class and subclass payload.
func opType(t *testing.T, r *spe.Record) (class uint8, sub uint64) {
	v, ok := r.Get(spe.PktOpType, 0)
	require.True(t, ok, "record at 0x%x has no operation type", r.Offset)
	return uint8(v >> 8), v & 0xff
}

func pcOf(t *testing.T, r *spe.Record) uint64 {
	pc, ok := r.Get(spe.PktAddress, 0)
	require.True(t, ok, "record at 0x%x has no PC", r.Offset)
	return pc &^ (0xff << 56) // the metadata byte
}

// TestRecordFiltersEveryProgram: for each bundled program the filters
// hold record by record, and without filters the record count follows
// from the instruction count and the period.
func TestRecordFiltersEveryProgram(t *testing.T) {
	for _, arch := range recordArches {
		for _, b := range programs.Binaries(arch) {
			t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
				const period = 1024
				r, recs := recordProgram(t, b.Path, "arm_spe//", period)
				// With no filter and no jitter every interval selects an
				// op; a selection while one is in flight collides.
				sel := r.Unit.PMU.SampleFeed + r.Unit.PMU.SampleCollision
				insns := r.Machine.Insns
				assert.InDelta(t, float64(insns/period), float64(sel), 1, "selections for %d insns", insns)
				assert.EqualValues(t, r.Unit.PMU.SampleFeed, len(recs), "no filter: every sampled op is recorded")
				assert.GreaterOrEqual(t, float64(len(recs)), 0.9*float64(insns/period))

				// The filters act on the sampled ops at completion, so
				// the same ops are selected with and without them: each
				// filtered recording is exactly the matching subset of
				// the unfiltered one, and every record satisfies it.
				isLoad := func(r *spe.Record) bool {
					class, sub := opType(t, r)
					return class == spe.ClassLdSt && sub&1 == 0
				}
				isBranch := func(r *spe.Record) bool {
					class, _ := opType(t, r)
					return class == spe.ClassBranch
				}
				latAtLeast := func(n uint64) func(r *spe.Record) bool {
					return func(r *spe.Record) bool {
						tot, ok := r.Get(spe.PktCounter, 0)
						return ok && tot >= n
					}
				}
				for _, c := range []struct {
					event string
					keep  func(r *spe.Record) bool
				}{
					{"arm_spe/load_filter=1/", isLoad},
					{"arm_spe/branch_filter=1/", isBranch},
					{"arm_spe/min_latency=8/", latAtLeast(8)},
					{"arm_spe/min_latency=40/", latAtLeast(40)},
				} {
					_, got := recordProgram(t, b.Path, c.event, period)
					for i := range got {
						if !assert.True(t, c.keep(&got[i]), "%s: record %d at 0x%x does not match:\n%s", c.event, i, got[i].Offset, got[i].Packets) {
							break
						}
					}
					var want []uint64
					for i := range recs {
						if c.keep(&recs[i]) {
							want = append(want, pcOf(t, &recs[i]))
						}
					}
					var gotPCs []uint64
					for i := range got {
						gotPCs = append(gotPCs, pcOf(t, &got[i]))
					}
					assert.Equal(t, want, gotPCs, "%s: the matching subset of the unfiltered records", c.event)
				}
			})
		}
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test ./cmd/simrun -run %s -update", t.Name())
	assert.Equal(t, string(want), got, "%s differs (go test ./cmd/simrun -run %s -update rewrites it)", path, t.Name())
}

// TestSPEDumpGolden pins the simrun spe dump text of one recording.
func TestSPEDumpGolden(t *testing.T) {
	b, err := programs.Find("aarch64-O2", "listchase")
	require.NoError(t, err)
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	// argv[0] sits on the guest's stack: a path relative to this package
	// keeps stack addresses the same wherever the repository is cloned.
	wd, err := os.Getwd()
	require.NoError(t, err)
	prog, err := filepath.Rel(wd, b.Path)
	require.NoError(t, err)
	st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1,load_filter=1/", "-c", "1024", "-o", data, prog)
	require.Equal(t, 36, st, stderr) // listchase's own exit status
	st, dump, stderr := run(t, "spe", "dump", data)
	require.Equal(t, 0, st, stderr)
	require.Contains(t, dump, "LD")
	golden(t, "listchase-aarch64-O2.spe-dump.txt", dump)
}

// TestPerfReadsRecording: stock perf reads a perf.data simrun record
// wrote: perf report -D decodes as many SPE records as simrun wrote,
// perf script and perf mem report resolve them to the guest's symbols.
func TestPerfReadsRecording(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	cases := map[string]string{"arm64": "aarch64-O2", "s390x": "s390x-O2"}
	for _, arch := range recordArches {
		b, err := programs.Find(cases[arch], "listchase")
		require.NoError(t, err)
		t.Run(arch, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "perf.data")
			st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1,pa_enable=1/", "-c", "1024", "-o", data, b.Path)
			require.Equal(t, 36, st, stderr)
			var written int
			_, err := fmt.Sscanf(stderr[strings.Index(stderr, "perf.data: ")+len("perf.data: "):], "%d SPE records", &written)
			require.NoError(t, err, stderr)
			require.Greater(t, written, 100)

			perfOut := func(args ...string) string {
				cmd := exec.Command(perf, append(args, "-i", data)...)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				require.NoError(t, cmd.Run(), "perf %v: %s", args, errb.String())
				for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
					assert.True(t, l == "" || perfBenignWarnings[l], "perf %v wrote to stderr: %q", args, l)
				}
				return out.String()
			}
			decoded := 0
			for _, l := range speDumpPacketLines(perfOut("report", "-D")) {
				if strings.HasPrefix(l, "TS ") || l == "END" {
					decoded++
				}
			}
			assert.Equal(t, written, decoded, "records perf report -D decodes")

			script := perfOut("script", "-F", "comm,event,ip,sym,addr")
			assert.Contains(t, script, "listchase")
			assert.Contains(t, script, "l1d-access")
			assert.Contains(t, script, "chase") // a function of the program
			mem := perfOut("mem", "report", "--stdio")
			assert.Contains(t, mem, "listchase")
		})
	}
}

// perfBenignWarnings are what perf 6.1 prints for recordings made on real
// hardware too, when they are read on another host:
var perfBenignWarnings = map[string]bool{
	// perf's libunwind has no arm64 unwinder on an x86-64 host; it says so
	// for every cross-host recording, callchains or not.
	"unwind: target platform=arm64 is not supported": true,
	// perf's default --itrace period type is nanoseconds, which the
	// arm_spe decoder does not support for its instruction samples.
	"Only instruction-based sampling period is currently supported by Arm SPE.": true,
}

// speDumpPacketLines returns the packet descriptions of the ARM SPE data
// in perf report -D output (".  OFFSET:  BYTES  DESC").
func speDumpPacketLines(out string) []string {
	var descs []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, ". ... ARM SPE data:") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if len(l) < 13 || !strings.HasPrefix(l, ".  ") || l[11] != ':' {
			in = false
			continue
		}
		// 3 leading, 8 offset, ":", 2 blanks, 3 columns per byte for up to 16 bytes
		if len(l) > 62 {
			descs = append(descs, strings.TrimSpace(l[62:]))
		}
	}
	return descs
}

// TestRecordBadInput: each mistake is a clear error in perf's words (or
// the architected buffer behaviour), never a panic or a silent default.
func TestRecordBadInput(t *testing.T) {
	b, err := programs.Find("aarch64-O2", "listchase")
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "perf.data")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-e", "arm_spe/foo=1/"}, "unknown term 'foo'"},
		{[]string{"-e", "arm_spe//x"}, "unknown event modifier 'x'"},
		{[]string{"-e", "arm_spe/ts_enable=1"}, "missing the closing '/'"},
		{[]string{"-e", "arm_spe/min_latency=4096/"}, "value 0x1000 too big for format (config2:0-11), it must fit in 12 bits"},
		{[]string{"-e", "arm_spe/float_filter=1/"}, "needs FEAT_SPE_EFT"},
		{[]string{"-e", "arm_spe/discard=1/"}, "needs SPEv1p2"},
		{[]string{"-e", "intel_pt//"}, "unknown PMU 'intel_pt'"},
		{[]string{"-c", "0"}, "period 0"},
		{[]string{"--spe-reg", "PMSFCR=0x10000000000"}, "PMSFCR_EL1 = 0x10000000000: bits 40 are RES0 on this SPEv1p0 unit"},
		{[]string{"--spe-reg", "PMSNEVFR=1"}, "not implemented by this SPEv1p0 unit"},
		{[]string{"--spe-reg", "PMSIDR=0"}, "read-only"},
		{[]string{"--spe-reg", "PMSFOO=1"}, "PMSFOO"},
		{[]string{"--spe-reg", "PMSFCR"}, "want NAME=VALUE"},
		{[]string{"--spe-reg", "PMSFCR=zz"}, "PMSFCR"},
		{[]string{"--aux-pages", "5000B"}, "not a multiple of the 4096-byte page"},
		{[]string{"--aux-pages", "1"}, "needs at least 2"},
		{[]string{"--cpu", "cortex-a53"}, "unknown CPU model \"cortex-a53\""},
	} {
		args := append([]string{"record", "-o", out}, c.args...)
		st, _, stderr := run(t, append(args, b.Path)...)
		assert.NotEqual(t, 0, st, "%v", c.args)
		assert.NotEqual(t, 36, st, "%v: the program must not have run", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.NotContains(t, stderr, "panic", "%v", c.args)
		if c.args[0] == "-e" {
			assert.Equal(t, 2, st, "%v: a bad event is a usage error", c.args)
		}
	}

	// A limit at the pointer: the first record raises buffer full before
	// any byte is written (the CONSTRAINED UNPREDICTABLE choice documented
	// in spe.Choices.BadPointer); the driver restarts as Linux's does and
	// one sample is lost.
	st, _, good := run(t, "record", "-o", out, "--stats", b.Path)
	require.Equal(t, 36, st, good)
	st, _, bad := run(t, "record", "-o", out, "--stats", "--spe-reg", "PMBLIMITR=0x1", b.Path)
	require.Equal(t, 36, st, bad)
	assert.Contains(t, bad, "SAMPLE_BUFFER_FULL 1\n")
	assert.Contains(t, good, "SAMPLE_BUFFER_FULL 0\n")
	records := func(s string) (n int) {
		_, err := fmt.Sscanf(s[strings.Index(s, "perf.data: ")+len("perf.data: "):], "%d SPE records", &n)
		require.NoError(t, err, s)
		return n
	}
	assert.Equal(t, records(good)-1, records(bad))
}

// relProgram is a bundled program's path relative to this package: argv[0]
// sits on the guest's stack, so a relative path keeps addresses (and the
// golden files) the same wherever the repository is cloned.
func relProgram(t *testing.T, config, name string) string {
	t.Helper()
	b, err := programs.Find(config, name)
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	prog, err := filepath.Rel(wd, b.Path)
	require.NoError(t, err)
	return prog
}

// TestRecordFormatsGolden pins the script and folded formats of one
// recording, and checks the JSON Lines against the schema.
func TestRecordFormatsGolden(t *testing.T) {
	prog := relProgram(t, "aarch64-O2", "listchase")
	dir := t.TempDir()
	o := filepath.Join(dir, "lc.data")
	st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "2048", "-o", o,
		"--format", "perf,script,folded", "--format", "json", "--format", "folded="+filepath.Join(dir, "lat.folded"), prog)
	require.Equal(t, 2, st, "folded given twice: %s", stderr)
	assert.Contains(t, stderr, "folded given twice")

	st, _, stderr = run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "2048", "-o", o,
		"--format", "perf,script,folded", "--format", "json", prog)
	require.Equal(t, 36, st, stderr)
	for _, f := range []string{"lc.data", "lc.script", "lc.folded", "lc.jsonl"} {
		assert.Contains(t, stderr, filepath.Join(dir, f))
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return string(b)
	}
	golden(t, "listchase-aarch64-O2.script.txt", read("lc.script"))
	golden(t, "listchase-aarch64-O2.folded", read("lc.folded"))

	st, _, stderr = run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "2048", "-o", o, "--quiet",
		"--format", "folded="+filepath.Join(dir, "total.folded"), "--weight", "total", prog)
	require.Equal(t, 36, st, stderr)
	assert.Empty(t, stderr, "--quiet")
	golden(t, "listchase-aarch64-O2.total.folded", read("total.folded"))

	js := read("lc.jsonl")
	require.NoError(t, profile.CheckJSON(strings.NewReader(js)))
	lines := strings.Split(strings.TrimSpace(js), "\n")
	assert.Equal(t, strings.Count(read("lc.script"), "\n\n")+1, len(lines), "a run line and one line per sample")
	assert.Contains(t, lines[0], `"instructions":131225`)

	// No temporary files are left behind.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp")
	}
}

// TestTopFunctionsAgree is the acceptance check: go tool pprof -top on
// simrun's profile, simrun's folded stacks and perf report --stdio on
// simrun's perf.data count the same samples for the same functions.
func TestTopFunctionsAgree(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "go tool pprof needs the go command")
	// s390x records bits -O0: in the other s390x programs stock perf
	// misnames functions, as it places the symbols of their bss-only
	// segment (file offset 0) over the start of .text (docs/spe.md, s390x programs).
	cases := map[string]struct {
		config, name string
		status       int
	}{"arm64": {"aarch64-O2", "listchase", 36}, "s390x": {"s390x-O0", "bits", 79}}
	for _, arch := range recordArches {
		c := cases[arch]
		b, err := programs.Find(c.config, c.name)
		require.NoError(t, err)
		t.Run(arch, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "perf.data")
			st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "1024", "-o", data,
				"--format", "perf,pprof,folded", b.Path)
			require.Equal(t, c.status, st, stderr)

			// simrun's folded stacks: samples per leaf function.
			folded, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
			require.NoError(t, err)
			fromFolded := map[string]int{}
			total := 0
			for _, l := range strings.Split(strings.TrimSpace(string(folded)), "\n") {
				i := strings.LastIndexByte(l, ' ')
				n, err := strconv.Atoi(l[i+1:])
				require.NoError(t, err, l)
				stack := strings.Split(l[:i], ";")
				fromFolded[stack[len(stack)-1]] += n
				total += n
			}
			require.Greater(t, total, 100)

			// go tool pprof -top: flat samples per function.
			cmd := exec.Command(goTool, "tool", "pprof", "-top", "-nodecount=1000", "-nodefraction=0", filepath.Join(dir, "perf.pb.gz"))
			cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			fromPprof := map[string]int{}
			var pprofOrder []string
			inTable := false
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Fields(l)
				if len(f) >= 2 && f[0] == "flat" {
					inTable = true
					continue
				}
				if !inTable || len(f) != 6 {
					continue
				}
				n, err := strconv.Atoi(f[0])
				require.NoError(t, err, l)
				if n == 0 { // only on the stacks of others
					continue
				}
				fromPprof[f[5]] = n
				pprofOrder = append(pprofOrder, f[5])
			}
			assert.Contains(t, string(out), fmt.Sprintf("Total samples = %d", total))
			assert.Equal(t, fromFolded, fromPprof, "pprof -top vs folded:\n%s", out)

			// perf report --stdio: every record as an instruction sample.
			cmd = exec.Command(perf, "report", "--stdio", "--no-children", "--itrace=i1i", "--sort", "sym", "-i", data)
			out, err = cmd.Output()
			require.NoError(t, err)
			fromPerf := map[string]string{}
			var perfOrder []string
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Fields(l)
				if len(f) == 3 && strings.HasSuffix(f[0], "%") && f[1] == "[.]" {
					fromPerf[f[2]] = f[0]
					perfOrder = append(perfOrder, f[2])
				}
			}
			assert.Contains(t, string(out), fmt.Sprintf("# Samples: %d  of event 'instructions'", total))
			want := map[string]string{}
			for fn, n := range fromFolded {
				want[fn] = fmt.Sprintf("%.2f%%", 100*float64(n)/float64(total))
			}
			assert.Equal(t, want, fromPerf, "perf report vs folded:\n%s", out)

			// The top functions in order: the ranks with distinct counts
			// agree (tools order ties differently).
			top := func(order []string, count func(string) int) []string {
				var r []string
				for i, fn := range order {
					if i > 0 && count(order[i-1]) == count(fn) || i+1 < len(order) && count(order[i+1]) == count(fn) {
						break
					}
					r = append(r, fn)
				}
				return r
			}
			pTop := top(pprofOrder, func(fn string) int { return fromPprof[fn] })
			fTop := top(perfOrder, func(fn string) int { return fromFolded[fn] })
			require.GreaterOrEqual(t, len(pTop), 3, "at least three top functions with distinct counts")
			assert.Equal(t, pTop, fTop)
			t.Logf("top functions: %v", pTop)
		})
	}
}

// TestRecordBadOutput: an unknown format or an unwritable output path is
// an error before the program runs, and nothing is left behind.
func TestRecordBadOutput(t *testing.T) {
	b, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o644))
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"--format", "xml"}, 2, `unknown format "xml" (known: perf, pprof, folded, script, json)`},
		{[]string{"--format", "pprof,pprof"}, 2, "pprof given twice"},
		{[]string{"--format", "pprof=" + filepath.Join(dir, "a"), "--format", "folded=" + filepath.Join(dir, "a")}, 2, "would both write"},
		{[]string{"--format", "perf=x.data"}, 2, "the perf.data file is -o's"},
		{[]string{"--weight", "cycles"}, 2, `unknown weight "cycles"`},
		{[]string{"-o", filepath.Join(dir, "missing", "perf.data")}, 1, "cannot write " + filepath.Join(dir, "missing", "perf.data") + ": no such file or directory"},
		{[]string{"-o", filepath.Join(notDir, "perf.data")}, 1, "not a directory"},
		{[]string{"-o", filepath.Join(dir, "ok.data"), "--format", "perf,json=" + filepath.Join(notDir, "x.jsonl")}, 1, "cannot write " + filepath.Join(notDir, "x.jsonl")},
	} {
		st, stdout, stderr := run(t, append(append([]string{"record"}, c.args...), b.Path)...)
		assert.Equal(t, c.status, st, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Empty(t, stdout, "%v: the program must not have run", c.args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the file the test made: %v", entries)
}

// TestIsTerminal: the progress line is drawn on a terminal only.
func TestIsTerminal(t *testing.T) {
	var w bytes.Buffer
	assert.False(t, isTerminal(&w), "a buffer is not a terminal")
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a file is not a terminal")
}

// TestHelp: every command's help has examples and exits 0.
func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"record", "report", "Examples:"}},
		{[]string{"record", "--help"}, []string{"-format LIST", "--weight total", "Exit status:", "simrun-samples.schema.json", "-quiet"}},
		{[]string{"report", "--help"}, []string{"Examples:", "-prog FILE", "no external assets"}},
		{[]string{"help", "report"}, []string{"Usage: simrun report"}},
	} {
		st, stdout, stderr := run(t, c.args...)
		assert.Equal(t, 0, st, "%v", c.args)
		for _, w := range c.want {
			assert.Contains(t, stdout+stderr, w, "%v", c.args)
		}
	}
}

// TestPerfReportGlibc: recordings of the glibc programs read in stock perf
// report, with samples resolved inside libc's own functions.
func TestPerfReportGlibc(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	libc := []string{"__memcpy_generic", "__memset_generic", "__vfprintf_internal", "_int_malloc", "_int_free",
		"__strlen_generic", "_IO_", "__libc_", "msort_with_tmp", "_Unwind_", "__gxx_personality_v0", "search_object"}
	for _, arch := range recordArches {
		for _, b := range programs.GlibcBinaries(arch) {
			t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
				data := filepath.Join(t.TempDir(), "perf.data")
				want, status, err := b.Expected()
				require.NoError(t, err)
				st, stdout, stderr := run(t, "record", "-c", "1024", "-o", data, b.Path)
				require.Equal(t, status, st, stderr)
				require.Equal(t, string(want), stdout)
				out, err := exec.Command(perf, "report", "--stdio", "--sort", "sym", "-i", data).Output()
				require.NoError(t, err)
				found := ""
				for _, l := range strings.Split(string(out), "\n") {
					for _, s := range libc {
						if strings.Contains(l, "[.] "+s) {
							found = l
						}
					}
				}
				assert.NotEmpty(t, found, "no libc function in perf report:\n%s", out)
			})
		}
	}
}

// TestCallchains: every sample carries its call stack. perf script shows
// the same stacks as simrun's folded output; the SFrame and eh_frame
// stacks equal the true ones (the executed calls and returns).
func TestCallchains(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	for _, arch := range recordArches {
		b, err := programs.Find(map[string]string{"arm64": "aarch64-O2", "s390x": "s390x-O2"}[arch], "fib")
		require.NoError(t, err)
		t.Run(arch, func(t *testing.T) {
			folded := map[string]string{}
			for _, method := range []string{"truth", "sframe", "eh_frame"} {
				dir := t.TempDir()
				data := filepath.Join(dir, "perf.data")
				st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "1024", "--callchain", method,
					"-o", data, "--format", "perf,folded", b.Path)
				require.Equal(t, 1, st, stderr) // fib's own status
				f, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
				require.NoError(t, err)
				folded[method] = string(f)
				if method != "sframe" {
					continue
				}
				assert.Contains(t, string(f), "main;fib_rec;fib_rec;fib_rec")
				// perf script: one spe-callchain sample per record, its
				// frames (leaf first) on the lines after it.
				out, err := exec.Command(perf, "script", "-i", data, "-F", "event,ip,sym").Output()
				require.NoError(t, err)
				counts := map[string]int{}
				var stack []string
				flush := func() {
					if len(stack) > 0 {
						for i, j := 0, len(stack)-1; i < j; i, j = i+1, j-1 {
							stack[i], stack[j] = stack[j], stack[i]
						}
						counts[strings.Join(stack, ";")]++
					}
					stack = nil
				}
				for _, l := range strings.Split(string(out), "\n") {
					switch f := strings.Fields(l); {
					case strings.Contains(l, "spe-callchain"):
						flush()
					case strings.HasPrefix(l, "\t") && len(f) == 2: // a frame: ip sym
						stack = append(stack, f[1])
					}
				}
				flush()
				fromFolded := map[string]int{}
				for _, l := range strings.Split(strings.TrimSpace(string(f)), "\n") {
					i := strings.LastIndexByte(l, ' ')
					n, err := strconv.Atoi(l[i+1:])
					require.NoError(t, err)
					stack := l[:i]
					if arch == "s390x" {
						// Stock perf cannot name main here: it places the
						// symbols of the program's bss-only segment (file
						// offset 0) at file offsets 0-0x110, over main's,
						// and its lookup then misses main (docs/spe.md, s390x programs).
						stack = strings.ReplaceAll(stack, ";main", ";[unknown]")
					}
					fromFolded[stack] += n
				}
				assert.Equal(t, fromFolded, counts, "perf script stacks vs folded")
			}
			assert.Equal(t, folded["truth"], folded["sframe"], "SFrame stacks vs the truth")
			assert.Equal(t, folded["truth"], folded["eh_frame"], "eh_frame stacks vs the truth")
		})
	}
	st, _, stderr := run(t, "record", "--callchain", "lbr", "-o", filepath.Join(t.TempDir(), "x"), "programs/bin/aarch64-O2/fib")
	assert.Equal(t, 2, st)
	assert.Contains(t, stderr, "--callchain")
}

// attrPeriod reads sample_period of the first event attr of a perf.data
// file (the arm_spe event).
func attrPeriod(t *testing.T, path string) uint64 {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(data), 104+24)
	le := func(off int) uint64 {
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(data[off+i])
		}
		return v
	}
	attrs := int(le(24))
	return le(attrs + 16)
}

// TestRecordPeriodRange: -c outside PMSIRR.INTERVAL's range is clamped
// (not masked) to it, with a one-line note, and perf.data's attr has the
// period programmed.
func TestRecordPeriodRange(t *testing.T) {
	prog := relProgram(t, "aarch64-O2", "listchase")
	dir := t.TempDir()
	for _, c := range []struct {
		period, want string
		note         string
	}{
		{"4096", "4096", ""},
		{"4294967296", "4294967040", "sample period 4294967296 does not fit PMSIRR.INTERVAL: using the largest, 4294967040 (0xffffff00)"},
		{"18446744073709551615", "4294967040", "does not fit PMSIRR.INTERVAL"},
		{"5", "1024", "sample period 5 is below this unit's minimum interval: using 1024"},
		{"1023", "1024", "below this unit's minimum interval"},
		{"5000", "4864", "sample period 5000 rounded down to 4864"},
	} {
		data := filepath.Join(dir, "p.data")
		st, _, stderr := run(t, "record", "-c", c.period, "-o", data, prog)
		require.Equal(t, 36, st, stderr)
		if c.note == "" {
			assert.NotContains(t, stderr, "sample period", c.period)
		} else {
			assert.Contains(t, stderr, "simrun record: sample period "+c.period+" ", c.period)
			assert.Contains(t, stderr, c.note, c.period)
		}
		want, _ := strconv.ParseUint(c.want, 10, 64)
		assert.Equal(t, want, attrPeriod(t, data), "-c %s: perf.data's sample_period", c.period)
		st, _, stderr = run(t, "record", "--quiet", "-c", c.period, "-o", data, prog)
		require.Equal(t, 36, st, stderr)
		assert.NotContains(t, stderr, "sample period", "--quiet")
	}
	// The huge period samples nothing, as 0xffffff00 does (a masked one
	// would have sampled every 256 operations).
	st, _, stderr := run(t, "record", "-c", "0x1000000100", "-o", filepath.Join(dir, "h.data"), prog)
	require.Equal(t, 36, st, stderr)
	assert.Contains(t, stderr, ": 0 SPE records")
}

// TestRecordSPERegisterWalk: simrun record with --spe-reg walking each
// SPE register through 0, 1, its fields' lowest and highest bits and
// all-ones values, and all-ones: each run finishes within a time bound and
// an allocation bound with either a clear refusal naming the register or
// a recording, never a panic. Values the issue reported are pinned.
func TestRecordSPERegisterWalk(t *testing.T) {
	prog := relProgram(t, "aarch64-O2", "listchase")
	dir := t.TempDir()
	type result struct {
		st     int
		stderr string
		alloc  uint64
	}
	record := func(t *testing.T, args ...string) result {
		t.Helper()
		done := make(chan result, 1)
		go func() {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			st, _, stderr := run(t, append(append([]string{"record", "-c", "1024", "--max-insns", "60000", "-o", filepath.Join(dir, "w.data")}, args...), prog)...)
			runtime.ReadMemStats(&after)
			done <- result{st, stderr, after.TotalAlloc - before.TotalAlloc}
		}()
		select {
		case r := <-done:
			assert.Less(t, r.alloc, uint64(512<<20), "%v: allocations", args)
			assert.NotContains(t, r.stderr, "panic", "%v", args)
			return r
		case <-time.After(60 * time.Second):
			t.Fatalf("%v: no result in 60s", args)
		}
		return result{}
	}
	for _, model := range []string{"neoverse-n1", "spe-max"} {
		f := spe.Presets[model]
		for _, ri := range spe.Registers {
			if ri.ReadOnly {
				continue
			}
			vals := []uint64{0, 1, ^uint64(0)}
			for _, fl := range ri.Fields {
				lo, hi := uint64(1)<<fl.Lo, uint64(1)<<fl.Hi
				vals = append(vals, lo, hi, hi-lo+hi)
			}
			for _, v := range slices.Compact(slices.Sorted(slices.Values(vals))) {
				arg := fmt.Sprintf("%s=%#x", ri.Name, v)
				t.Run(model+"/"+arg, func(t *testing.T) {
					r := record(t, "--cpu", model, "--spe-reg", arg)
					if r.st == 1 && strings.Contains(r.stderr, "--spe-reg") {
						assert.Contains(t, r.stderr, ri.Name)
						assert.True(t, v&^ri.WritableMask(&f) != 0 || (ri.Present != nil && !ri.Present(&f)),
							"refused without a RES0 bit: %s", r.stderr)
						return
					}
					assert.Contains(t, r.stderr, "[ simrun record: wrote ", "the run finished")
				})
			}
		}
	}
	// The cases and the syndromes they get.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--spe-reg", "PMBPTR=0"}, []string{"arm_spe_pmu: Unexpected buffer fault on CPU 0 [PMBSR=0x0000000090020007, PMBPTR=0x0000000000000000"}},
		{[]string{"--spe-reg", "PMBPTR=0xffffffffffffffff"}, []string{"arm_spe_pmu: Buffer pointer outside the AUX transaction on CPU 0 [PMBSR=0x0000000000020001"}},
		{[]string{"--cpu", "spe-max", "--spe-reg", "PMBPTR=0xffff800010000001"}, []string{"PMBSR=0x0000000090020021"}},
		{[]string{"--spe-reg", "PMBLIMITR=0"}, []string{": 0 SPE records"}},
		{[]string{"--spe-reg", "PMBSR=0x20000"}, []string{"arm_spe_pmu: Unknown buffer status code on CPU 0 [PMBSR=0x0000000000020000"}},
	} {
		r := record(t, c.args...)
		for _, w := range c.want {
			assert.Contains(t, r.stderr, w, "%v", c.args)
		}
	}
	// INTERVAL = 0 samples at the minimum interval, 1024 on neoverse-n1:
	// as -c 1024 does (and as INTERVAL = 4 written by hand).
	written := func(s string) (n int) {
		_, err := fmt.Sscanf(s[strings.Index(s, "w.data: ")+len("w.data: "):], "%d SPE records", &n)
		require.NoError(t, err, s)
		return n
	}
	base := written(record(t).stderr)
	assert.Greater(t, base, 10)
	assert.Equal(t, base, written(record(t, "--spe-reg", "PMSIRR=0").stderr), "PMSIRR=0")
	assert.Equal(t, base, written(record(t, "--spe-reg", "PMSIRR=0x400").stderr), "PMSIRR=0x400")
}

// TestRecordDeepCallchain: a 20000-deep recursion recorded with the true
// call stacks gives a perf.data stock perf reads: callchains are capped
// at --max-stack frames (Linux's kernel.perf_event_max_stack, 127 by
// default; the kernel marks no truncation, so simrun notes it on stderr
// and perf evlist -v shows sample_max_stack), and a cap that would not
// fit one perf record is a usage error.
func TestRecordDeepCallchain(t *testing.T) {
	gcc := oracle.RequireTool(t, "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	dir := t.TempDir()
	src := filepath.Join(dir, "deep.c")
	require.NoError(t, os.WriteFile(src, []byte(`__attribute__((noinline)) static long rec(long n) {
	if (n == 0)
		return 0;
	return rec(n - 1) + 1;
}

void _start(void) {
	register long x0 __asm__("x0") = rec(20000) == 20000 ? 0 : 1;
	register long x8 __asm__("x8") = 93; /* exit */
	__asm__ volatile("svc #0" : : "r"(x0), "r"(x8));
	for (;;) {
	}
}
`), 0o644))
	prog := filepath.Join(dir, "deep")
	out, err := exec.Command(gcc, "-O0", "-static", "-nostdlib", "-fno-omit-frame-pointer", "-o", prog, src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, c := range []struct {
		maxStack string
		frames   int
	}{{"", 127}, {"1000", 1000}, {"8183", 8183}} {
		data := filepath.Join(dir, "deep"+c.maxStack+".data")
		args := []string{"record", "--callchain", "truth", "-c", "1024", "--format", "perf,json", "-o", data}
		if c.maxStack != "" {
			args = append(args, "--max-stack", c.maxStack)
		}
		st, _, stderr := run(t, append(args, prog)...)
		require.Equal(t, 0, st, stderr)
		assert.Regexp(t, fmt.Sprintf(`simrun record: \d+ callchains were deeper than --max-stack %d: kept their %d innermost frames\n`, c.frames, c.frames), stderr)
		// The JSON samples carry the capped stacks: none longer, some at the cap.
		js, err := os.ReadFile(strings.TrimSuffix(data, ".data") + ".jsonl")
		require.NoError(t, err)
		longest := 0
		for _, line := range strings.Split(strings.TrimSpace(string(js)), "\n")[1:] {
			longest = max(longest, strings.Count(line, `"pc":`)-1) // the sample's own pc, then its frames
		}
		assert.Equal(t, c.frames, longest, "the deepest callchain")
		for _, pargs := range [][]string{{"report", "-D"}, {"script"}, {"evlist", "-v"}} {
			cmd := exec.Command(perf, append(pargs, "-i", data)...)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			require.NoError(t, cmd.Run(), "perf %v: %s", pargs, e.String())
			assert.NotContains(t, e.String(), "failed to process", "perf %v", pargs)
			if pargs[0] == "evlist" {
				assert.Contains(t, o.String(), fmt.Sprintf("sample_max_stack: %d", c.frames))
			}
			if pargs[0] == "report" {
				assert.Contains(t, o.String(), fmt.Sprintf("FP chain: nr:%d", c.frames+1), "the capped chain and its PERF_CONTEXT_USER")
			}
		}
	}
	for _, bad := range []string{"0", "8184", "-1"} {
		st, _, stderr := run(t, "record", "--callchain", "truth", "--max-stack", bad, "-o", filepath.Join(dir, "x.data"), prog)
		assert.Equal(t, 2, st, bad)
		assert.Contains(t, stderr, "--max-stack "+bad+": want 1 to 8183", bad)
	}
}

// TestRecordDynamic: record and unwind check run a dynamically linked
// program (its interpreter and libc from the cross toolchain's sysroot);
// the perf.data names the interpreter and the shared objects it mapped,
// so stock perf attributes their samples to the files (and symbolizes
// what they export).
func TestRecordDynamic(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	forDynamic(t, "wc", func(t *testing.T, b programs.Binary) {
		data := filepath.Join(t.TempDir(), "perf.data")
		st, out, stderr := run(t, "record", "-o", data, "--format", "perf,folded,pprof", b.Path, programs.DynamicSource("wc"))
		require.Equal(t, 0, st, stderr)
		require.Contains(t, out, programs.DynamicSource("wc"))
		// pprof: each object is a Mapping of its own, with its file
		// and build-id; libc's samples are in libc's.
		prof := readPprof(t, data)
		inObj := map[string]int{}
		for _, s := range prof.Sample {
			if m := s.Location[0].Mapping; m != nil {
				inObj[filepath.Base(m.File)]++
				assert.NotEmpty(t, m.BuildID, "%s has a build-id", m.File)
			}
			if l := s.Location[0]; l.Mapping != nil && filepath.Base(l.Mapping.File) == "libc.so.6" && len(l.Line) > 0 {
				assert.NotEqual(t, "main", l.Line[0].Function.Name)
			}
		}
		assert.Positive(t, inObj["wc"], "samples in the program's mapping: %v", inObj)
		assert.Positive(t, inObj["libc.so.6"], "samples in libc's mapping: %v", inObj)
		// simrun's own outputs name libc's exported functions too.
		folded, err := os.ReadFile(strings.TrimSuffix(data, ".data") + ".folded")
		require.NoError(t, err)
		assert.Contains(t, string(folded), "__libc_start_main;")
		assert.Regexp(t, `;main;(_IO_)?getc `, string(folded))

		cmd := exec.Command(perf, "script", "-F", "ip,dso", "-i", data)
		var so bytes.Buffer
		cmd.Stdout = &so
		require.NoError(t, cmd.Run())
		dsos := map[string]int{}
		for _, l := range strings.Split(so.String(), "\n") {
			if i := strings.LastIndex(l, "("); i >= 0 {
				dsos[filepath.Base(strings.TrimSuffix(strings.TrimSpace(l[i+1:]), ")"))]++
			}
		}
		assert.Positive(t, dsos["wc"], "samples in the program: %v", dsos)
		assert.Positive(t, dsos["libc.so.6"], "samples in libc: %v", dsos)
		assert.Zero(t, dsos["[unknown]"], "samples outside every mapping: %v", dsos)

		// unwind check walks every object too: most checks are
		// covered; ld.so's lazy-binding trampoline, whose CFI leaves
		// out PLT0's push, diverges (status 1 says so).
		st, out, stderr = run(t, "unwind", "check", b.Path, programs.DynamicSource("wc"))
		assert.Contains(t, []int{0, 1}, st, stderr)
		m := regexp.MustCompile(`sframe: .*\n  agree [0-9.]+%, coverage ([0-9.]+)% of checks`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		cov, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.Greater(t, cov, 80.0, "SFrame coverage across the objects")
	})
}

// TestDynamicCallchains: the SFrame and eh_frame walks of a dynamically
// linked program look each frame up in the object that maps it (the
// program, ld.so, libc), so their stacks cross into libc's qsort and back
// and equal the truth. What they may not follow, as a kernel would not:
// a sample in a PLT stub (no CFI) or in ld.so's lazy-binding trampoline.
func TestDynamicCallchains(t *testing.T) {
	for _, b := range programs.DynamicBinaries("") {
		if b.Name != "sortsearch" {
			continue
		}
		t.Run(b.Config.Arch, func(t *testing.T) {
			if _, err := os.Stat(linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))); err != nil {
				t.Skipf("no %s cross libc to load the program with", b.Config.Arch)
			}
			chains := map[string][][]string{}
			for _, method := range []string{"truth", "sframe", "eh_frame"} {
				dir := t.TempDir()
				data := filepath.Join(dir, "perf.data")
				_, _, stderr := run(t, "record", "-c", "1024", "--callchain", method, "--format", "perf,json", "-o", data, b.Path)
				f, err := os.Open(filepath.Join(dir, "perf.jsonl"))
				require.NoError(t, err, stderr)
				dec := json.NewDecoder(f)
				for {
					var s struct {
						Callchain []struct{ PC string } `json:"callchain"`
					}
					if err := dec.Decode(&s); err != nil {
						break
					}
					if s.Callchain == nil {
						continue
					}
					var pcs []string
					for _, fr := range s.Callchain {
						pcs = append(pcs, fr.PC)
					}
					chains[method] = append(chains[method], pcs)
				}
				f.Close()
			}
			truth := chains["truth"]
			require.Greater(t, len(truth), 1000)
			for _, method := range []string{"sframe", "eh_frame"} {
				got := chains[method]
				require.Len(t, got, len(truth), method)
				differ, deep := 0, 0
				for i := range truth {
					if !slices.Equal(truth[i], got[i]) {
						differ++
					}
					if len(got[i]) >= 5 {
						deep++
					}
				}
				t.Logf("%s: %d of %d stacks differ from the truth", method, differ, len(truth))
				assert.LessOrEqual(t, differ, len(truth)/100, "%s stacks vs the truth", method)
				assert.Greater(t, deep, len(truth)/2, "%s: most stacks reach main through libc", method)
			}
		})
	}
}

// TestEventModifiers: perf's modifiers after the closing '/' choose the
// privilege levels: u (the default for a user) samples the program, k
// alone samples nothing of it (PMSCR.E0SPE clear), and perf.data's
// attr says which (exclude_user, exclude_kernel).
func TestEventModifiers(t *testing.T) {
	b, err := programs.Find("aarch64-O2", "listchase")
	require.NoError(t, err)
	dir := t.TempDir()
	records := func(event string) (int, []byte) {
		out := filepath.Join(dir, "m.data")
		st, _, stderr := run(t, "record", "-e", event, "-c", "1024", "-o", out, b.Path)
		require.Equal(t, 36, st, stderr)
		var n int
		_, err := fmt.Sscanf(stderr[strings.Index(stderr, "m.data: ")+len("m.data: "):], "%d SPE records", &n)
		require.NoError(t, err, stderr)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		return n, data
	}
	plain, _ := records("arm_spe//")
	u, _ := records("arm_spe//u")
	uk, _ := records("arm_spe//uk")
	k, kdata := records("arm_spe//k")
	assert.Positive(t, plain)
	assert.Equal(t, plain, u)
	assert.Equal(t, plain, uk)
	assert.Zero(t, k, "only the kernel: nothing of a user program")
	// The first attr (the SPE event) in the attrs section: flags at 40.
	attrs := binary.LittleEndian.Uint64(kdata[24:])
	flags := binary.LittleEndian.Uint64(kdata[attrs+40:])
	assert.Equal(t, uint64(1<<4), flags&(1<<4|1<<5), "exclude_user set, exclude_kernel clear")
}

// TestSPEDumpNotSPE: a file that is neither a perf.data nor an SPE byte
// stream is one error, not a "Bad packet!" per byte.
func TestSPEDumpNotSPE(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("# notes\nnot SPE at all\n"), 0o644))
	st, out, stderr := run(t, "spe", "dump", text)
	assert.Equal(t, 1, st)
	assert.Empty(t, out)
	assert.Contains(t, stderr, text+": neither a perf.data file (no PERFILE2 magic) nor an SPE byte stream")
}

// TestRecordThreads records the four-worker worksplit program (static,
// both architectures; and arm64 dynamic) and reads the recording with
// stock perf: every worker's samples carry its tid (the CONTEXT packet,
// as Linux writes CONTEXTIDR_EL1 at each context switch) and the
// process's comm and pid (perf learns each thread from its FORK record);
// the truth callchain of a worker's sample is that worker's stack
// (thread_start, start_thread, work: nothing of main's); simrun's folded
// stacks are rooted at COMM-TID and pprof labels each sample's tid. The
// side-band records perf report -D prints are pinned in a golden file.
func TestRecordThreads(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	for _, config := range []string{"aarch64-thr-O2", "s390x-thr-O2", "aarch64-thrdyn-O2"} {
		t.Run(config, func(t *testing.T) {
			var b programs.Binary
			for _, c := range programs.ThreadBinaries("") {
				if c.Config.Name == config && c.Name == "worksplit" {
					b = c
				}
			}
			require.NotEmpty(t, b.Path)
			if b.Config.Dynamic {
				if _, err := os.Stat(linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))); err != nil {
					t.Skipf("no %s cross libc to load the program with", b.Config.Arch)
				}
			}
			dir := t.TempDir()
			data := filepath.Join(dir, "perf.data")
			// The program by a relative path, so that argv (and with it the
			// instruction counts of the golden records) does not depend on
			// where the repository is checked out.
			wd, err := os.Getwd()
			require.NoError(t, err)
			prog, err := filepath.Rel(wd, b.Path)
			require.NoError(t, err)
			st, _, stderr := run(t, "record", "-o", data, "--callchain", "truth", "--format", "perf,folded,pprof", prog)
			require.Equal(t, 0, st, stderr)

			out, err := exec.Command(perf, "script", "-F", "comm,pid,tid,ip,sym", "--no-inline", "-G", "-i", data).Output()
			require.NoError(t, err)
			perTid := map[string]int{}
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Fields(l)
				if len(f) >= 2 && strings.Contains(f[1], "/") {
					assert.Equal(t, "worksplit", f[0], "every thread has the process's comm: %q", l)
					perTid[f[1]]++
				}
			}
			for _, tid := range []string{"1001", "1002", "1003", "1004"} {
				assert.Positive(t, perTid["1000/"+tid], "samples of thread %s: %v", tid, perTid)
			}
			for k := range perTid {
				assert.Regexp(t, `^1000/100[0-4]$`, k)
			}

			rep, err := exec.Command(perf, "report", "--stdio", "--no-children", "--sort", "pid", "-g", "none", "-i", data).Output()
			require.NoError(t, err)
			for _, tid := range []string{"1001", "1002", "1003", "1004"} {
				assert.Regexp(t, `(?m)\d+\.\d+% +`+tid+`:worksplit$`, string(rep))
			}

			folded, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
			require.NoError(t, err)
			for _, tid := range []string{"1001", "1002", "1003", "1004"} {
				// (Debian's libc.so.6 has no .symtab: its local
				// thread_start and start_thread are [unknown] there.)
				assert.Regexp(t, `(?m)^worksplit-`+tid+`;(thread_start|\[unknown\]);(start_thread|\[unknown\]);work \d+$`, string(folded))
			}
			for _, l := range strings.Split(string(folded), "\n") {
				if strings.HasPrefix(l, "worksplit-100") && !strings.HasPrefix(l, "worksplit-1000;") {
					assert.NotContains(t, l, ";main;", "a worker's stack is its own")
				}
			}

			// The stack tracer walks the sampled thread's registers:
			// the same worker stacks as the truth.
			workers := func(folded string) []string {
				var out []string
				for _, l := range strings.Split(folded, "\n") {
					if strings.HasPrefix(l, "worksplit-100") && !strings.HasPrefix(l, "worksplit-1000;") {
						out = append(out, l)
					}
				}
				return out
			}
			sfData := filepath.Join(dir, "sframe.data")
			st, _, stderr = run(t, "record", "-o", sfData, "--callchain", "sframe", "--format", "folded", prog)
			require.Equal(t, 0, st, stderr)
			sfFolded, err := os.ReadFile(filepath.Join(dir, "sframe.folded"))
			require.NoError(t, err)
			assert.Equal(t, workers(string(folded)), workers(string(sfFolded)))

			dump, err := exec.Command(perf, "report", "-D", "-i", data).Output()
			require.NoError(t, err)
			var side []string
			for _, l := range strings.Split(string(dump), "\n") {
				if strings.Contains(l, "PERF_RECORD_COMM") || strings.Contains(l, "PERF_RECORD_FORK") || strings.Contains(l, "PERF_RECORD_EXIT") {
					// Kept: the CPU and the record; dropped: the time and
					// the file offset, which follow the host path of the
					// program in the MMAP records and the cache behaviour
					// of the guest's stack addresses.
					if f := strings.Fields(l); len(f) > 3 {
						l = f[0] + " " + strings.Join(f[3:], " ")
					}
					side = append(side, l)
				}
			}
			golden(t, "record-threads-"+config+".txt", strings.Join(side, "\n")+"\n")
		})
	}
}

// TestPerfHeaders: the headers perf record writes beside the data are
// there for the tools that need them: HEADER_BUILD_ID for every mapped
// file (perf buildid-list, the oracle, lists each with its own build-id)
// and the CPU, NUMA and memory topology without which perf c2c report
// refuses the file ("Failed setup nodes") or cannot place physical
// addresses.
func TestPerfHeaders(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	forDynamic(t, "wc", func(t *testing.T, b programs.Binary) {
		data := filepath.Join(t.TempDir(), "perf.data")
		st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1/", "-c", "512",
			"-o", data, b.Path, programs.DynamicSource("wc"))
		require.Equal(t, 0, st, stderr)
		out, err := exec.Command(perf, "buildid-list", "-i", data).CombinedOutput()
		require.NoError(t, err, "%s", out)
		ids := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			id, file, ok := strings.Cut(l, " ")
			require.True(t, ok, l)
			ids[filepath.Base(file)] = id
			f, err := os.Open(file)
			require.NoError(t, err)
			assert.Equal(t, hex.EncodeToString(profile.ReadBuildID(f)), id, "%s", file)
			f.Close()
		}
		assert.Contains(t, ids, "wc")
		assert.Contains(t, ids, "libc.so.6")
		assert.Len(t, ids, 3, "the program, ld.so and libc: %v", ids)

		hdr, err := exec.Command(perf, "report", "--header-only", "-I", "-i", data).CombinedOutput()
		require.NoError(t, err, "%s", hdr)
		assert.Contains(t, string(hdr), "# node0 cpu list : 0")
		assert.Contains(t, string(hdr), "# CPU 0: Core ID 0, Die ID 0, Socket ID 0")
		assert.Regexp(t, `# memory nodes \(nr 1, block size 0x8000000\):\n#\s+0 \[4G\]: 16-47`, string(hdr))

		c2c, err := exec.Command(perf, "c2c", "report", "--stdio", "-i", data).CombinedOutput()
		require.NoError(t, err, "%s", c2c)
		assert.NotContains(t, string(c2c), "failed to find node")
		m := regexp.MustCompile(`Load Operations\s+:\s+(\d+)`).FindStringSubmatch(string(c2c))
		require.NotNil(t, m, "%s", c2c)
		assert.NotEqual(t, "0", m[1], "c2c reads the sampled loads")
	})
}

// TestRecordBadObjects: a recording of a dynamically linked program
// whose libc has a corrupt .eh_frame (its bytes overwritten, the file
// still loads) and whose own file has no build-id: nothing panics, the
// walks that reach libc stop there with a reason while the program's own
// frames still unwind, and the outputs leave the build-id out for the
// file without one.
func TestRecordBadObjects(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	objcopy := oracle.RequireTool(t, "aarch64-linux-gnu-objcopy", "binutils-aarch64-linux-gnu")
	cross := linux.DefaultSysroot(cpu.ArchByName("arm64"))
	if _, err := os.Stat(cross); err != nil {
		t.Skipf("no arm64 cross libc: %v", err)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "lib"), 0o755))
	for _, f := range []string{"ld-linux-aarch64.so.1", "libc.so.6"} {
		data, err := os.ReadFile(filepath.Join(cross, "lib", f))
		require.NoError(t, err)
		if f == "libc.so.6" {
			ef, err := elf.NewFile(bytes.NewReader(data))
			require.NoError(t, err)
			s := ef.Section(".eh_frame")
			require.NotNil(t, s)
			for i := s.Offset + 64; i < s.Offset+s.Size; i++ {
				data[i] = 0xff // every CIE and FDE after the first bytes: lengths of 4 GiB
			}
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, "lib", f), data, 0o755))
	}
	prog := filepath.Join(dir, "sortsearch")
	out, err := exec.Command(objcopy, "--remove-section", ".note.gnu.build-id",
		filepath.Join("..", "..", "programs", "dynamic", "bin", "aarch64-dyn-O2", "sortsearch"), prog).CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, method := range []string{"sframe", "eh_frame"} {
		t.Run(method, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "perf.data")
			st, _, stderr := run(t, "record", "-c", "256", "--callchain", method, "-L", root, "--format", "perf,folded,pprof", "-o", data, prog)
			require.Contains(t, []int{0, 2}, st, stderr) // sortsearch's own status
			assert.NotContains(t, stderr, "panic")
			folded, err := os.ReadFile(strings.TrimSuffix(data, ".data") + ".folded")
			require.NoError(t, err)
			// The program's frames unwind up to the first libc frame, a
			// return address into libc (__libc_start_call_main, msort:
			// internal, unnamed); the walk stops there. A sample in libc
			// is its pc alone.
			assert.Regexp(t, `(?m)^\[unknown\];main \d+$`, string(folded))
			assert.Regexp(t, `(?m)^\[unknown\];cmp_int \d+$`, string(folded))
			assert.Regexp(t, `(?m)^(qsort_r|strcmp) \d+$`, string(folded))
			ids, err := exec.Command(perf, "buildid-list", "-i", data).CombinedOutput()
			require.NoError(t, err, "%s", ids)
			assert.NotContains(t, string(ids), "sortsearch", "no build-id, no entry")
			assert.Contains(t, string(ids), "libc.so.6")
		})
	}
	st, out2, stderr := run(t, "unwind", "check", "--every", "7", "-L", root, prog)
	assert.Contains(t, []int{0, 1}, st, stderr)
	assert.NotContains(t, stderr, "panic")
	assert.Regexp(t, `(?m)^    sortsearch +\d+ checked +[1-9]\d* agree`, out2, "the program's checks still agree")
}

// forDynamic runs f on each architecture's build of the bundled
// dynamically linked program name, skipping one without its cross libc.
func forDynamic(t *testing.T, name string, f func(t *testing.T, b programs.Binary)) {
	for _, b := range programs.DynamicBinaries("") {
		if b.Name != name {
			continue
		}
		t.Run(b.Config.Arch, func(t *testing.T) {
			if _, err := os.Stat(linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))); err != nil {
				t.Skipf("no %s cross libc (Debian's libc6-dev-*-cross) to load the program with", b.Config.Arch)
			}
			f(t, b)
		})
	}
}

// TestRecordPlugin: a program that loads libplug.so with dlopen, runs
// its loop (a callback into the program), unloads it, loads it again
// (elsewhere) and at last unloads it from a callback the library called.
// Both loads' samples are named (pprof: a Mapping for each place); once
// the library is gone, a walk that meets its return address stops there,
// as the kernel's unwinder finds no mapping (never data of the unmapped
// object, never a panic); unwind check (Debian's sysroot, whose debug
// files name ld.so's functions for unwind.expect) counts those walks as
// stopped for want of data, with no divergence.
func TestRecordPlugin(t *testing.T) {
	forDynamic(t, "plugin", func(t *testing.T, b programs.Binary) {
		for _, method := range []string{"sframe", "eh_frame"} {
			data := filepath.Join(t.TempDir(), "perf.data")
			st, out, stderr := run(t, "record", "-c", "1024", "--callchain", method, "-o", data, "--format", "perf,folded,pprof", b.Path)
			require.Equal(t, 0, st, stderr)
			require.Contains(t, out, "after unload: 49805727413")
			folded, err := os.ReadFile(strings.TrimSuffix(data, ".data") + ".folded")
			require.NoError(t, err)
			assert.Regexp(t, `(?m);main;plug_work;square_mod \d+$`, string(folded), method)
			// the walk stops at the unmapped library's return address
			assert.Regexp(t, `(?m)^plug_drive;unload;square_mod \d+$`, string(folded), method)
			assert.NotContains(t, string(folded), "main;plug_drive;unload;square_mod", method)

			prof := readPprof(t, data)
			perMapping := map[uint64]int{}
			for _, s := range prof.Sample {
				if m := s.Location[0].Mapping; m != nil && filepath.Base(m.File) == "libplug.so" {
					perMapping[m.Start]++
				}
			}
			assert.Len(t, perMapping, 2, "%s: libplug.so's samples in a Mapping for each place it was loaded: %v", method, perMapping)
		}

		sysroot, err := debian.Sysroot(b.Config.Arch)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		expect := filepath.Join("..", "..", "programs", "debian", "unwind.expect")
		st, out, stderr := run(t, "unwind", "check", "--every", "7", "-L", sysroot, "--expect", expect, b.Path)
		require.Equal(t, 0, st, "%s\n%s", out, stderr)
		assert.NotContains(t, stderr, "panic")
		assert.Regexp(t, `(?m)^    libplug\.so +\d+ checked +\d+ agree +0 diverge`, out)
		m := regexp.MustCompile(`no coverage: (\d+) checks stopped by no unwind data`).FindStringSubmatch(out)
		require.NotNil(t, m, out)
		n, _ := strconv.Atoi(m[1])
		assert.Greater(t, n, 100000, "the walks after the library was unloaded stop at its return address")
	})
}

// readPprof parses and checks the pprof profile record wrote beside the
// perf.data at data (its .pb.gz).
func readPprof(t *testing.T, data string) *pprofile.Profile {
	t.Helper()
	pb, err := os.Open(strings.TrimSuffix(data, ".data") + ".pb.gz")
	require.NoError(t, err)
	defer pb.Close()
	prof, err := pprofile.Parse(pb)
	require.NoError(t, err)
	require.NoError(t, prof.CheckValid())
	return prof
}
