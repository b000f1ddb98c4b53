package profile

import (
	"bytes"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/spe"
	"simrun/sim/spe/codes"
)

// synthetic encodes records with the SPE encoder and returns the stream.
func synthetic(t *testing.T, samples ...spe.Sample) []byte {
	t.Helper()
	f := spe.Presets["neoverse-v2"]
	var data []byte
	for i := range samples {
		data = spe.Encode(data, &f, &samples[i])
	}
	return data
}

func TestDecodeFields(t *testing.T) {
	load := spe.Sample{Op: cpu.Op{PC: 0x400100, Class: cpu.ClassLoad, Access: 8, VA: 0x5500800980}, NS: true,
		Lat: [3]uint32{40, 3, 7}, XlatOK: true, Events: codes.EvRetired | codes.EvL1DAccess | codes.EvL1DRefill | codes.EvTLBAccess,
		DS: 0xe, DSValid: true, PA: 0x80000980, PAValid: true, TS: 1234567890, TSValid: true, Context: 1000, CtxValid: true}
	branch := spe.Sample{Op: cpu.Op{PC: 0x400200, Class: cpu.ClassBranch, Flags: cpu.OpConditional, Target: 0x400180}, NS: true,
		Taken: true, Lat: [3]uint32{1, 0, 0}, Events: codes.EvRetired | codes.EvMispredict}
	store := spe.Sample{Op: cpu.Op{PC: 0x400300, Class: cpu.ClassStore, Access: 4, VA: 0x5500801000}, NS: true,
		Lat: [3]uint32{2, 0, 1}, XlatOK: true, Events: codes.EvRetired | codes.EvL2DAccess}
	got, err := Decode(synthetic(t, load, branch, store), nil, nil)
	require.NoError(t, err)
	require.Len(t, got, 3)

	l := got[0]
	assert.Equal(t, 0, l.Index)
	assert.Equal(t, uint64(0x400100), l.PC)
	assert.True(t, l.NS)
	assert.Equal(t, "load", l.Op.Kind)
	assert.Equal(t, "LD GP-REG", l.Op.Desc)
	assert.True(t, l.HasVA)
	assert.Equal(t, uint64(0x5500800980), l.VA)
	assert.True(t, l.HasPA)
	assert.Equal(t, uint64(0x80000980), l.PA)
	assert.Equal(t, [3]uint16{40, 3, 7}, l.Lat)
	assert.Equal(t, [3]bool{true, true, true}, l.HasLat)
	assert.Equal(t, []string{"RETIRED", "L1D-ACCESS", "L1D-REFILL", "TLB-ACCESS"}, l.EventNames())
	assert.True(t, l.HasDataSource)
	assert.Equal(t, "DRAM", codes.DataSourceName(l.DataSource))
	assert.True(t, l.HasTime)
	assert.Equal(t, uint64(1234567890), l.Time)
	assert.True(t, l.HasCtx)
	assert.Equal(t, uint32(1000), l.Context)
	assert.Equal(t, []uint64{0x400100}, l.Callchain, "without a tracer the callchain is the pc")

	b := got[1]
	assert.Equal(t, "branch", b.Op.Kind)
	assert.Equal(t, "B COND", b.Op.Desc)
	assert.True(t, b.HasTarget)
	assert.Equal(t, uint64(0x400180), b.Target)
	assert.False(t, b.HasVA)
	assert.False(t, b.HasLat[LatXlat], "no translation latency without a data access")
	assert.False(t, b.HasTime, "End, not Timestamp")
	assert.Equal(t, []string{"RETIRED", "MISPRED"}, b.EventNames())

	s := got[2]
	assert.Equal(t, "store", s.Op.Kind)
	assert.Contains(t, s.EventNames(), "L2D-ACCESS", "a 4-byte events payload (bit 19)")
	assert.Greater(t, s.Offset, b.Offset)
}

func TestDecodeCallchains(t *testing.T) {
	data := synthetic(t, spe.Sample{Op: cpu.Op{PC: 0x400100, Class: cpu.ClassOther}}, spe.Sample{Op: cpu.Op{PC: 0x400104, Class: cpu.ClassOther}})
	got, err := Decode(data, nil, [][]uint64{{0x400100, 0x400050, 0x400010}})
	require.NoError(t, err)
	assert.Equal(t, []uint64{0x400100, 0x400050, 0x400010}, got[0].Callchain)
	assert.Equal(t, []uint64{0x400104}, got[1].Callchain, "a record without a chain gets its pc")
	assert.Equal(t, "[unknown];[unknown];[unknown]", got[0].Stack(";"))

	_, err = Decode(data, nil, [][]uint64{{0x999}})
	assert.ErrorContains(t, err, "callchain starts at 0x999, not at the sampled pc 0x400100")

	_, err = Decode([]byte{0xb0, 1, 2}, nil, nil)
	assert.ErrorContains(t, err, "SPE data offset 0x0")
	noPC := []byte{0x49, 0x00, 0x01} // an op type and an End
	_, err = Decode(noPC, nil, nil)
	assert.ErrorContains(t, err, "has no PC address packet")
}

func listchase(t *testing.T, config string) (*Binary, string) {
	t.Helper()
	b, err := programs.Find(config, "listchase")
	require.NoError(t, err)
	bin, err := OpenBinary(b.Path, 0)
	require.NoError(t, err)
	return bin, b.Path
}

// TestSymbolizeAgainstBinutils: the function and file:line of every
// instruction of every function is what binutils' addr2line says
// (addr2line prints "./src/x.c" where DWARF joins "." and "src/x.c").
// Function names are the symbol table's, which addr2line -f does not
// print for inlined code, so only lines are compared.
func TestSymbolizeAgainstBinutils(t *testing.T) {
	for _, c := range []struct{ config, tool, pkg string }{
		{"aarch64-O2", "aarch64-linux-gnu-addr2line", "binutils-aarch64-linux-gnu"},
		{"s390x-O2", "s390x-linux-gnu-addr2line", "binutils-s390x-linux-gnu"},
	} {
		t.Run(c.config, func(t *testing.T) {
			tool := oracle.RequireTool(t, c.tool, c.pkg)
			bin, prog := listchase(t, c.config)
			require.True(t, bin.HasLines)
			var pcs []string
			var frames []Frame
			for _, f := range bin.Funcs {
				for pc := f.Start; pc < f.End; pc += 2 {
					pcs = append(pcs, "0x"+strconv.FormatUint(pc, 16))
					frames = append(frames, bin.Symbolize(pc))
				}
			}
			require.Greater(t, len(pcs), 1000)
			out, err := exec.Command(tool, append([]string{"-e", prog}, pcs...)...).Output()
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Len(t, lines, len(pcs))
			bad := 0
			for i, fr := range frames {
				where := lines[i]
				where, _, _ = strings.Cut(where, " (discriminator")
				want := "??:0"
				if fr.File != "" {
					want = path.Clean(fr.File) + ":" + strconv.Itoa(fr.Line)
				}
				file, line, _ := strings.Cut(where, ":")
				if file != "??" {
					where = path.Clean(file) + ":" + line
				}
				if where != want {
					bad++
					if bad < 10 {
						t.Errorf("%s: simrun %s, addr2line %s", pcs[i], want, where)
					}
				}
			}
			assert.Zero(t, bad, "pcs that disagree")
		})
	}
}

func TestFuncsFromSymbols(t *testing.T) {
	bin, _ := listchase(t, "aarch64-O2")
	f, ok := bin.FuncAt(bin.Funcs[0].Start)
	require.True(t, ok)
	assert.Equal(t, bin.Funcs[0].Name, f.Name)
	names := map[string]bool{}
	for i, f := range bin.Funcs {
		names[f.Name] = true
		assert.Less(t, f.Start, f.End, f.Name)
		if i > 0 {
			assert.LessOrEqual(t, bin.Funcs[i-1].End, f.Start, "sorted, not overlapping")
		}
	}
	for _, n := range []string{"main", "_start", "rng_below", "inorder", "tree_height.part.0"} {
		assert.True(t, names[n], n)
	}
	_, ok = bin.FuncAt(0x10)
	assert.False(t, ok)
	_, err := NewBinary("x", []byte("nope"), 0)
	assert.ErrorContains(t, err, "not an ELF file")
}

func syntheticRecording(t *testing.T) *Recording {
	bin, _ := listchase(t, "aarch64-O2")
	main, ok := funcNamed(bin, "main")
	require.True(t, ok)
	rng, ok := funcNamed(bin, "rng_below")
	require.True(t, ok)
	data := synthetic(t,
		spe.Sample{Op: cpu.Op{PC: main.Start + 8, Class: cpu.ClassLoad, Access: 8, VA: 0x1000}, NS: true, Lat: [3]uint32{10, 2, 1}, XlatOK: true,
			Events: codes.EvRetired | codes.EvL1DRefill, DS: 0x8, DSValid: true},
		spe.Sample{Op: cpu.Op{PC: main.Start + 8, Class: cpu.ClassLoad, Access: 8, VA: 0x2000}, Lat: [3]uint32{30, 4, 3}, XlatOK: true,
			Events: codes.EvRetired, DS: 0x0, DSValid: true},
		spe.Sample{Op: cpu.Op{PC: rng.Start + 4, Class: cpu.ClassOther}, Lat: [3]uint32{5, 1, 0}, Events: codes.EvRetired},
	)
	samples, err := Decode(data, bin, [][]uint64{nil, nil, {rng.Start + 4, main.Start + 0x20}})
	require.NoError(t, err)
	return &Recording{Summary: Summary{Program: "/x/listchase", Arch: "arm64", Comm: "listchase", PID: 1000, SPE: SPESetup{Event: "arm_spe//", Period: 1024}}, Samples: samples}
}

func funcNamed(b *Binary, name string) (Func, bool) {
	for _, f := range b.Funcs {
		if f.Name == name {
			return f, true
		}
	}
	return Func{}, false
}

func TestFoldedWeights(t *testing.T) {
	r := syntheticRecording(t)
	for _, c := range []struct {
		w    Weight
		want string
	}{
		{WeightSamples, "main 2\nmain;rng_below 1\n"},
		{WeightTotal, "main 40\nmain;rng_below 5\n"},
		{WeightIssue, "main 6\nmain;rng_below 1\n"},
		{WeightXlat, "main 4\n"}, // rng_below's op has no translation latency: left out
	} {
		var b bytes.Buffer
		require.NoError(t, WriteFolded(&b, r.Samples, c.w))
		assert.Equal(t, c.want, b.String(), c.w.String())
	}
	_, err := ParseWeight("cycles")
	assert.ErrorContains(t, err, `unknown weight "cycles" (want samples, total, issue, xlat)`)
}

func TestPprofContents(t *testing.T) {
	r := syntheticRecording(t)
	bin, _ := listchase(t, "aarch64-O2")
	var b bytes.Buffer
	require.NoError(t, WritePprof(&b, r, bin))
	p, err := profile.Parse(&b)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	assert.Equal(t, []string{"samples/count", "total_latency/cycles", "issue_latency/cycles", "translation_latency/cycles"}, types)
	assert.Equal(t, "samples", p.DefaultSampleType)
	require.Len(t, p.Sample, 3)
	s0 := p.Sample[0]
	assert.Equal(t, []int64{1, 10, 2, 1}, s0.Value)
	assert.Equal(t, []string{"load"}, s0.Label["op"])
	assert.Equal(t, []string{"L2"}, s0.Label["data_source"])
	assert.Equal(t, []string{"RETIRED", "L1D-REFILL"}, s0.Label["event"])
	assert.Equal(t, []int64{0x1000}, s0.NumLabel["va"])
	require.Len(t, s0.Location, 1)
	assert.Equal(t, "main", s0.Location[0].Line[0].Function.Name)
	file, line, ok := bin.LineAt(s0.Location[0].Address)
	require.True(t, ok)
	assert.Equal(t, file, s0.Location[0].Line[0].Function.Filename)
	assert.EqualValues(t, line, s0.Location[0].Line[0].Line)
	assert.Same(t, s0.Location[0], p.Sample[1].Location[0], "one location per pc")
	s2 := p.Sample[2]
	require.Len(t, s2.Location, 2, "the callchain, leaf first")
	assert.Equal(t, "rng_below", s2.Location[0].Line[0].Function.Name)
	assert.Equal(t, "main", s2.Location[1].Line[0].Function.Name)
	require.NotNil(t, s2.Location[0].Mapping)
	assert.True(t, s2.Location[0].Mapping.HasFunctions)
	assert.Equal(t, r.Summary.Program, s2.Location[0].Mapping.File)
	assert.Equal(t, "operations", p.PeriodType.Type)
	assert.EqualValues(t, r.Summary.SPE.Period, p.Period)
	assert.EqualValues(t, r.Summary.Nanos, p.DurationNanos)
	require.Len(t, p.Comments, 2)
	assert.Contains(t, p.Comments[0], "simrun record -e ")

	// Equal recordings give equal bytes (no map order leaks out).
	var again bytes.Buffer
	require.NoError(t, WritePprof(&again, r, bin))
	var first bytes.Buffer
	require.NoError(t, WritePprof(&first, r, bin))
	assert.Equal(t, first.Bytes(), again.Bytes())
}

func TestScriptBlock(t *testing.T) {
	r := syntheticRecording(t)
	var b bytes.Buffer
	require.NoError(t, WriteScript(&b, r))
	blocks := strings.Split(strings.TrimSuffix(b.String(), "\n\n"), "\n\n")
	require.Len(t, blocks, 3)
	first := strings.Split(blocks[0], "\n")
	assert.Equal(t, "listchase  1000 [000]                -: #0 load LD GP-REG", first[0])
	assert.Regexp(t, `^    pc          0x[0-9a-f]+ main\+0x8 src/listchase\.c:\d+ el0 ns=1$`, first[1])
	assert.Equal(t, "    va          0x1000", first[2])
	assert.Equal(t, "    latency     total 10 issue 2 xlat 1", first[3])
	assert.Equal(t, "    data-source L2 (0x8)", first[4])
	assert.Equal(t, "    events      RETIRED L1D-REFILL", first[5])
	assert.Equal(t, "    callchain", first[6])
	third := strings.Split(blocks[2], "\n")
	assert.Len(t, third, 7, "pc, latency, events, callchain and two frames")
	assert.Contains(t, third[5], "rng_below+0x4")
	assert.Contains(t, third[6], "main+0x20")
}

// TestCheckJSON: the output validates, and the checker catches what the
// schema forbids (so a passing check means something).
func TestCheckJSON(t *testing.T) {
	r := syntheticRecording(t)
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, r))
	require.NoError(t, CheckJSON(bytes.NewReader(b.Bytes())))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	for _, c := range []struct{ from, to, want string }{
		{`"pc":"0x`, `"pc":"12`, "does not match"},
		{`"kind":"load"`, `"kind":"lode"`, "is not one of"},
		{`"index":0`, `"index":-1`, "below the minimum"},
		{`"cpu":0`, `"cpu":0,"extra":1`, `member "extra" is not in the schema`},
		{`"callchain":[`, `"chain":[`, `required member "callchain" is missing`},
		{`"offset":"0x8"`, `"offset":8`, "is not of type string"},
	} {
		bad := strings.Replace(lines[1], c.from, c.to, 1)
		require.NotEqual(t, lines[1], bad, c.from)
		err := CheckJSON(strings.NewReader(lines[0] + "\n" + bad + "\n"))
		assert.ErrorContains(t, err, c.want, c.to)
	}
	assert.ErrorContains(t, CheckJSON(strings.NewReader(lines[1]+"\n")), "the first line is the run")
	assert.ErrorContains(t, CheckJSON(strings.NewReader(lines[0]+"\n"+lines[0]+"\n")), "the first line is the run")
	assert.ErrorContains(t, CheckJSON(strings.NewReader(strings.Replace(lines[0], `"version":1`, `"version":2`, 1))), "is not 1")
}

func TestPerfDataSimrunSection(t *testing.T) {
	pd := &PerfData{Comm: "x", PID: 1, Simrun: []byte(`{"format":"simrun-recording"}`)}
	var b bytes.Buffer
	_, err := pd.WriteTo(&b)
	require.NoError(t, err)
	got, err := ReadFeature(b.Bytes(), FeatSimrun)
	require.NoError(t, err)
	assert.Equal(t, pd.Simrun, got)
	host, err := ReadFeature(b.Bytes(), featHostname)
	require.NoError(t, err)
	assert.Contains(t, string(host), "simrun", "the sections before it are where they were")

	pd.Simrun = nil
	b.Reset()
	_, err = pd.WriteTo(&b)
	require.NoError(t, err)
	got, err = ReadFeature(b.Bytes(), FeatSimrun)
	require.NoError(t, err)
	assert.Nil(t, got)
	_, err = RecordingSummary(b.Bytes())
	assert.ErrorIs(t, err, ErrNotSimrun)
	_, err = ReadFeature([]byte("not perf"), FeatSimrun)
	assert.ErrorContains(t, err, "not a perf.data file")
}

// TestThreadLabels: a recording of one thread keeps its outputs as they
// were (no tid label, folded stacks unprefixed); one of several threads
// labels each pprof sample with its tid, pid and comm, and folded stacks
// are rooted at COMM-TID.
func TestThreadLabels(t *testing.T) {
	r := syntheticRecording(t)
	bin, _ := listchase(t, "aarch64-O2")
	assert.False(t, Threaded(r.Samples))
	var b bytes.Buffer
	require.NoError(t, WritePprof(&b, r, bin))
	p, err := profile.Parse(&b)
	require.NoError(t, err)
	for _, s := range p.Sample {
		assert.NotContains(t, s.NumLabel, "tid")
		assert.NotContains(t, s.Label, "comm")
	}

	r.Summary.Comm, r.Summary.PID = "lc", 1000
	r.Samples[1].Context, r.Samples[1].HasCtx = 1001, true
	r.Samples[2].Context, r.Samples[2].HasCtx = 1002, true
	assert.True(t, Threaded(r.Samples))
	assert.Equal(t, uint32(MainTid), r.Samples[0].Tid(), "no CONTEXT packet: the main thread")
	b.Reset()
	require.NoError(t, WritePprof(&b, r, bin))
	p, err = profile.Parse(&b)
	require.NoError(t, err)
	require.NoError(t, p.CheckValid())
	for i, tid := range []int64{1000, 1001, 1002} {
		assert.Equal(t, []int64{tid}, p.Sample[i].NumLabel["tid"])
		assert.Equal(t, []int64{1000}, p.Sample[i].NumLabel["pid"])
		assert.Equal(t, []string{"lc"}, p.Sample[i].Label["comm"])
	}
	var f bytes.Buffer
	require.NoError(t, WriteFoldedThreads(&f, r.Samples, WeightSamples, "lc"))
	assert.Equal(t, "lc-1000;main 1\nlc-1001;main 1\nlc-1002;main;rng_below 1\n", f.String())
	f.Reset()
	require.NoError(t, WriteFolded(&f, r.Samples, WeightSamples))
	assert.Equal(t, "main 2\nmain;rng_below 1\n", f.String(), "without a comm: the threads' stacks merged")
}
