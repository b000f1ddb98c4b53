package profile

import (
	"bytes"
	"io"
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
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/spe"
	"simrun/sim/spe/codes"
)

// sampleRecords encodes records that use every packet and op-type form
// simrun emits.
func sampleRecords(f *spe.Features, pc0 uint64) []byte {
	ops := []cpu.Op{
		{Class: cpu.ClassLoad, Access: 8, VA: 0x410010},
		{Class: cpu.ClassStore, Access: 4, VA: 0x410020},
		{Class: cpu.ClassLoad, Access: 16, VA: 0x410030, Flags: cpu.OpSIMDFPReg | cpu.OpSIMD},
		{Class: cpu.ClassLoadAtomic, Access: 8, VA: 0x410040},
		{Class: cpu.ClassLoad, Access: 8, VA: 0x410050, Flags: cpu.OpExclusive | cpu.OpAcquire},
		{Class: cpu.ClassBranch, Target: pc0 + 0x40, Flags: cpu.OpConditional},
		{Class: cpu.ClassBranch, Target: pc0 + 0x80, Flags: cpu.OpIndirect | cpu.OpReturn},
		{Class: cpu.ClassOther, Flags: cpu.OpConditional},
		{Class: cpu.ClassOther, Flags: cpu.OpFP},
	}
	events := []uint64{codes.EvRetired | codes.EvL1DAccess | codes.EvTLBAccess,
		codes.EvRetired | codes.EvL1DAccess | codes.EvL1DRefill | codes.EvTLBAccess | codes.EvTLBWalk | codes.EvLLCAccess | codes.EvLLCMiss,
		codes.EvRetired | codes.EvMispredict, codes.EvRetired | codes.EvNotTaken, codes.EvRetired | codes.EvMisaligned | codes.EvRemote | codes.EvException}
	var data []byte
	for i, op := range ops {
		op.PC = pc0 + uint64(4*i)
		s := &spe.Sample{Op: op, NS: true, Taken: i != 5, Lat: [3]uint32{uint32(10 + i), 2, 1}, XlatOK: op.Access != 0,
			Events: events[i%len(events)], TS: uint64(1000 + 100*i), TSValid: true, Context: 4242, CtxValid: true}
		if op.Class == cpu.ClassLoad {
			s.DS, s.DSValid = uint16([]int{0, 8, 14}[i%3]), true
			s.PA, s.PAValid = 0x80001000+uint64(i)*8, true
		}
		data = spe.Encode(data, f, s)
	}
	return data
}

func hello(t *testing.T) programs.Binary {
	b, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	return b
}

func writeExample(t *testing.T, f *spe.Features, data []byte) string {
	bin := hello(t)
	p := &PerfData{MIDR: 0x413fd0c1, CPUDesc: "simrun Neoverse-N1", Cmdline: []string{"simrun", "record"},
		Period: 4096, PID: 4242, Comm: "hello",
		Maps:   []Map{{Start: 0x400000, Len: 0x10000, Prot: 5, Filename: bin.Path}},
		Chunks: []AuxChunk{{Offset: 0, Data: data, Time: 5000}}, Start: 0, End: 6000}
	p.Config[0] = 1
	path := filepath.Join(t.TempDir(), "perf.data")
	require.NoError(t, p.WriteFile(path))
	return path
}

// TestPerfReadsDump: stock perf's `perf report -D` prints exactly the
// packet lines simrun's own dump prints.
func TestPerfReadsDump(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	for _, preset := range []string{"neoverse-n1", "spe-max"} {
		f := spe.Presets[preset]
		data := sampleRecords(&f, 0x400100)
		path := writeExample(t, &f, data)
		out, err := exec.Command(perf, "report", "-D", "-i", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		perfLines := speDumpLines(string(out))
		var ours bytes.Buffer
		require.NoError(t, spe.Dump(&ours, padTo8(data)))
		assert.Equal(t, strings.Split(strings.TrimRight(ours.String(), "\n"), "\n"), perfLines, preset)
	}
}

func padTo8(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestPerfScriptAndMem: perf script and perf mem report read the file,
// resolve the sample pcs to symbols of the guest ELF and synthesize one
// sample per record kind.
func TestPerfScriptAndMem(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	f := spe.Presets["neoverse-n1"]
	bin := hello(t)
	syms := symbolAddr(t, bin.Path, "main")
	data := sampleRecords(&f, syms)
	path := writeExample(t, &f, data)
	out, err := exec.Command(perf, "script", "-i", path, "-F", "comm,tid,event,ip,sym").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "hello")
	assert.Contains(t, string(out), "main")
	assert.Contains(t, string(out), "l1d-access")
	out, err = exec.Command(perf, "mem", "report", "-i", path, "--stdio").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "main")
	_ = os.Remove(path)
}

func symbolAddr(t *testing.T, path, name string) uint64 {
	m, err := linux.Load(path, linux.Config{})
	require.NoError(t, err)
	for _, s := range m.Image.Symbols {
		if s.Name == name {
			return s.Addr
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// speDumpLines extracts the ARM SPE data dump from perf report -D output:
// the "." line before it, its header and the packet lines.
func speDumpLines(out string) []string {
	var lines []string
	all := strings.Split(out, "\n")
	for i, l := range all {
		if !strings.HasPrefix(l, ". ... ARM SPE data:") {
			continue
		}
		lines = append(lines, ".", l)
		for _, p := range all[i+1:] {
			if len(p) < 13 || !strings.HasPrefix(p, ".  ") || p[11] != ':' {
				break
			}
			lines = append(lines, p)
		}
	}
	return lines
}

// TestRecordSizeLimit: a record that would not fit perf_event_header's
// 16-bit size is an error naming it, never a wrapped size; the largest
// callchain that fits is written and stock perf reads it.
func TestRecordSizeLimit(t *testing.T) {
	bin := hello(t)
	chain := func(n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = 0x400100 + uint64(i%16)*4
		}
		return s
	}
	mk := func() *PerfData {
		return &PerfData{Comm: "hello", PID: 7, Period: 4096, MaxStack: MaxCallchainFrames,
			Maps: []Map{{Start: 0x400000, Len: 0x10000, Prot: 5, Filename: bin.Path}}}
	}
	for _, c := range []struct {
		name string
		edit func(p *PerfData)
		want string // "" = fits
	}{
		{"largest callchain", func(p *PerfData) { p.Samples = []Callchain{{IP: 0x400100, Stack: chain(MaxCallchainFrames)}} }, ""},
		{"one frame more", func(p *PerfData) { p.Samples = []Callchain{{IP: 0x400100, Stack: chain(MaxCallchainFrames + 1)}} },
			"callchain sample 0 has 8184 frames: over perf's 65535-byte record limit (at most 8183 frames fit"},
		{"20000 frames", func(p *PerfData) { p.Samples = []Callchain{{IP: 1}, {IP: 0x400100, Stack: chain(20000)}} }, "callchain sample 1 has 20000 frames"},
		{"comm", func(p *PerfData) { p.Comm = strings.Repeat("c", 70000) }, "PERF_RECORD_COMM of 70056 bytes is over perf's 65535-byte record limit"},
		{"mmap2 file name", func(p *PerfData) { p.Maps[0].Filename = strings.Repeat("f", 65536) }, "PERF_RECORD_MMAP2 of"},
	} {
		p := mk()
		c.edit(p)
		var b bytes.Buffer
		_, err := p.WriteTo(&b)
		if c.want != "" {
			assert.ErrorContains(t, err, c.want, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		// every record's size matches what follows it
		data := b.Bytes()
		recs := 0
		le := func(off uint64, n int) uint64 {
			var v uint64
			for i := n - 1; i >= 0; i-- {
				v = v<<8 | uint64(data[off+uint64(i)])
			}
			return v
		}
		off, end := le(40, 8), le(40, 8)+le(48, 8)
		for off < end {
			size := le(off+6, 2)
			require.GreaterOrEqual(t, size, uint64(8), c.name)
			if le(off, 4) == recSAMPLE {
				assert.EqualValues(t, 64+8*MaxCallchainFrames, size, "%s: the sample fills the limit", c.name)
			}
			off += size
			recs++
		}
		assert.Equal(t, end, off, c.name)
		path := filepath.Join(t.TempDir(), "perf.data")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		perf := oracle.RequireTool(t, "perf", "linux-perf")
		out, err := exec.Command(perf, "report", "-D", "-i", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.NotContains(t, string(out), "failed to process type", c.name)
		assert.Contains(t, string(out), "PERF_RECORD_SAMPLE", c.name)
	}
}

// TestPerfDataCPUs: a recording of two CPUs, as perf record -a writes
// one: the SPE event opened on each (its own id), each CPU's AUX data in
// its own queue, and the topology of two cores. Stock perf reads each
// chunk on its CPU (perf report -D), attributes the samples decoded
// from it to that CPU (perf script's [001]), and perf c2c report reads
// the file. A chunk of a CPU past CPUs is an error.
func TestPerfDataCPUs(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	f := spe.Presets["neoverse-n1"]
	bin := hello(t)
	pc := symbolAddr(t, bin.Path, "main")
	p := &PerfData{MIDR: 0x413fd0c1, CPUDesc: "simrun Neoverse-N1", Cmdline: []string{"simrun", "record"},
		Period: 4096, PID: 4242, Comm: "hello", CPUs: 2,
		Maps: []Map{{Start: 0x400000, Len: 0x10000, Prot: 5, Filename: bin.Path}},
		Chunks: []AuxChunk{{Offset: 0, Data: padTo8(sampleRecords(&f, pc)), Time: 5000, CPU: 0},
			{Offset: 0, Data: padTo8(sampleRecords(&f, pc+0x10)), Time: 5100, CPU: 1}},
		Samples: []Callchain{{IP: pc, Time: 1000, Stack: []uint64{pc}, CPU: 1}},
		Start:   0, End: 6000}
	p.Config[0] = 1
	path := filepath.Join(t.TempDir(), "perf.data")
	require.NoError(t, p.WriteFile(path))

	out, err := exec.Command(perf, "report", "-D", "-i", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `PERF_RECORD_AUXTRACE size: 0x[0-9a-f]+  offset: 0  ref: 0x1  idx: 0  tid: -1  cpu: 0`, string(out))
	assert.Regexp(t, `PERF_RECORD_AUXTRACE size: 0x[0-9a-f]+  offset: 0  ref: 0x2  idx: 1  tid: -1  cpu: 1`, string(out))
	assert.Len(t, speDumpLines(string(out)), 2*len(strings.Split(strings.TrimSpace(dumpOf(t, sampleRecords(&f, pc))), "\n")), "both CPUs' packets")

	out, err = exec.Command(perf, "script", "-i", path, "-F", "cpu,event,ip").CombinedOutput()
	require.NoError(t, err, "%s", out)
	perCPU := map[string]int{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := regexp.MustCompile(`^\s*\[(\d+)\]\s+memory:`).FindStringSubmatch(l); m != nil {
			perCPU[m[1]]++
		}
	}
	assert.Equal(t, perCPU["000"], perCPU["001"], "as many memory samples on each CPU: %v\n%s", perCPU, out)
	assert.Positive(t, perCPU["001"], "%s", out)

	hdr, err := exec.Command(perf, "report", "--header-only", "-I", "-i", path).CombinedOutput()
	require.NoError(t, err, "%s", hdr)
	for _, want := range []string{"# nrcpus online : 2", "# nrcpus avail : 2", "# node0 cpu list : 0-1",
		"# CPU 0: Core ID 0, Die ID 0, Socket ID 0", "# CPU 1: Core ID 1, Die ID 0, Socket ID 0",
		"id = { 17, 101 }"} {
		assert.Contains(t, string(hdr), want)
	}
	c2c, err := exec.Command(perf, "c2c", "report", "--stdio", "-i", path).CombinedOutput()
	require.NoError(t, err, "%s", c2c)
	assert.NotContains(t, string(c2c), "failed")

	p.Chunks[1].CPU = 2
	_, err = p.WriteTo(io.Discard)
	assert.ErrorContains(t, err, "AUX chunk 1 is CPU 2's, of 2 CPUs")
	p.Chunks[1].CPU, p.CPUs = 1, 65
	_, err = p.WriteTo(io.Discard)
	assert.ErrorContains(t, err, "65 CPUs")
}

func dumpOf(t *testing.T, data []byte) string {
	var b bytes.Buffer
	require.NoError(t, spe.Dump(&b, padTo8(data)))
	return b.String()
}
