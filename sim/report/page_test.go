package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "simrun/sim/arm64" // registers the disassemblers
	"simrun/sim/profile"
	_ "simrun/sim/s390x"
	"simrun/sim/spe"
	"simrun/sim/spe/codes"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func fn(t *testing.T, bin *profile.Binary, name string) profile.Func {
	t.Helper()
	return funcs(t, bin, name)[0]
}

// synthetic is a recording of listchase made of hand-placed samples: a
// few instructions of main and rng_below, with latencies, events, data
// sources and timestamps, so the page's every part has something to show.
func synthetic(t *testing.T, bin *profile.Binary, arch string) *profile.Recording {
	t.Helper()
	main, rng, start := fn(t, bin, "main"), fn(t, bin, "rng_below"), fn(t, bin, "_start")
	mk := func(pc uint64, chain []uint64, class uint8, sub uint8, kind string, lat [3]uint16, ev uint64, ds int, ns uint64) profile.Sample {
		s := profile.Sample{PC: pc, Op: profile.Op{Class: class, Sub: sub, Kind: kind}, Lat: lat, HasLat: [3]bool{true, true, true},
			Events: ev | codes.EvRetired, HasEvents: true, Time: ns, HasTime: true}
		pk := spe.Packet{Kind: spe.PktOpType, Index: class, Payload: uint64(sub)}
		s.Op.Desc = pk.Desc()
		if ds >= 0 {
			s.DataSource, s.HasDataSource = uint16(ds), true
		}
		s.Callchain = append([]uint64{pc}, chain...)
		for _, c := range s.Callchain {
			s.Frames = append(s.Frames, bin.Symbolize(c))
		}
		return s
	}
	inMain := []uint64{start.Start + 8}
	inRng := []uint64{main.Start + 0x20, start.Start + 8}
	var samples []profile.Sample
	for i := 0; i < 6; i++ {
		samples = append(samples, mk(main.Start+0x40, inMain, spe.ClassLdSt, 0, "load", [3]uint16{uint16(4 + 60*(i%2)), 1, 0}, codes.EvL1DAccess|codes.EvTLBAccess|uint64(codes.EvL1DRefill*(i%2)), map[bool]int{true: 0, false: 0xe}[i%2 == 0], uint64(100*i)))
	}
	samples = append(samples,
		mk(main.Start+0x44, inMain, spe.ClassBranch, 1, "branch", [3]uint16{2, 1, 0}, codes.EvMispredict, -1, 700),
		mk(main.Start+0x100, inMain, spe.ClassOther, 0, "other", [3]uint16{1, 0, 0}, 0, -1, 800),
		mk(rng.Start+4, inRng, spe.ClassOther, 1, "other", [3]uint16{300, 250, 0}, codes.EvNotTaken, -1, 900),
		mk(rng.Start+8, inRng, spe.ClassLdSt, 1, "store", [3]uint16{3, 1, 2}, codes.EvL1DAccess|codes.EvTLBAccess|codes.EvTLBWalk, -1, 1000),
	)
	// A call of rng_below and a conditional branch inside main, to show
	// their targets by name.
	call := findInsn(t, bin, main, `^(bl|brasl %r14,) ?rng_below$`)
	cond := findInsn(t, bin, main, `^(b\.[a-z]+|j[a-z]+|brct?g?|brc) .*main\+0x`)
	samples = append(samples,
		mk(call, inMain, spe.ClassBranch, 0, "branch", [3]uint16{1, 1, 0}, 0, -1, 1100),
		mk(cond, inMain, spe.ClassBranch, 1, "branch", [3]uint16{1, 1, 0}, codes.EvNotTaken, -1, 1200))
	for i := range samples {
		samples[i].Index = i
	}
	s := profile.Summary{Program: bin.Path, Args: []string{"listchase"}, Arch: arch, Comm: "listchase", ExitStatus: 36,
		CPU:          profile.CPUModel{Model: "neoverse-n1", Desc: "Neoverse-N1-like core", MHz: 3000},
		SPE:          profile.SPESetup{Version: "SPEv1p0", Event: "arm_spe/ts_enable=1/", Period: 1024, Words: []string{"Selects one operation in every 1024 (PMSIRR_EL1.INTERVAL) at EL0."}},
		Instructions: 10000, Cycles: 20000, Nanos: 6667,
		PMU:    profile.SPEPMU{SamplePop: 10000, SampleFeed: 10, SampleFiltrate: 10, SampleCollision: 1},
		Buffer: profile.Buffers{Records: 10, Events: []profile.AuxRecord{{Size: 640, Flags: []string{"collision"}}}},
	}
	return &profile.Recording{Summary: s, Samples: samples}
}

// findInsn is the address of fn's first instruction whose text (branch
// targets by name) matches re.
func findInsn(t *testing.T, bin *profile.Binary, fn profile.Func, re string) uint64 {
	t.Helper()
	code, ok := bin.Code(fn.Start, fn.End)
	require.True(t, ok)
	r := regexp.MustCompile(re)
	for off := 0; off < len(code); {
		text, n := bin.Arch.Disasm(code[off:], fn.Start+uint64(off))
		if r.MatchString(symbolicTargets(bin, text, fn.Start+uint64(off))) {
			return fn.Start + uint64(off)
		}
		off += max(n, int(bin.Arch.InsnAlign))
	}
	t.Fatalf("no instruction of %s matches %s", fn.Name, re)
	return 0
}

// render renders the synthetic recording of config's listchase, with the
// checkout's root written as ROOT (the golden file holds no local path).
func render(t *testing.T, config, arch string) string {
	t.Helper()
	bin, data := open(t, config, "listchase")
	var b bytes.Buffer
	require.NoError(t, Write(&b, synthetic(t, bin, arch), bin, Options{Program: data}))
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return strings.ReplaceAll(b.String(), root, "ROOT")
}

// TestPageGolden: the whole page of a synthetic recording on each
// architecture (go test -update rewrites testdata/).
func TestPageGolden(t *testing.T) {
	for _, c := range []struct{ config, arch string }{{"aarch64-O2", "arm64"}, {"s390x-O2", "s390x"}} {
		t.Run(c.arch, func(t *testing.T) {
			got := render(t, c.config, c.arch)
			golden := filepath.Join("testdata", "listchase-"+c.arch+".html")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "go test -update writes it")
			assert.Equal(t, string(want), got, "the page differs from %s (go test -update rewrites it)", golden)
		})
	}
}

// TestPageContent: what the page says, on each architecture.
func TestPageContent(t *testing.T) {
	for _, c := range []struct {
		config, arch string
		want         []string
		wantRe       []string
		not          []string
	}{
		{"aarch64-O2", "arm64",
			[]string{`<b>CPU:</b> Neoverse-N1-like core (neoverse-n1 preset, 3000 MHz)`,
				`<a href="#fn-main">main</a>`, `<h3 id="fn-main">`, `<h3 id="fn-rng_below">`,
				`(read from ROOT/programs/src/listchase.c)`, `id="chart-latency"`, `id="chart-timeline"`, `id="chart-ds"`, `id="chart-events"`},
			[]string{`<td class="ins mono">b\.[a-z]+ main&#43;0x[0-9a-f]+</td>`,
				`<td class="ins mono">bl rng_below</td>`, `<tr class="gap"><td colspan="10">… \d+ instructions …</td></tr>`},
			[]string{`.&#43;0x`, "guest, timed on"}},
		{"s390x-O2", "s390x",
			[]string{`<b>CPU:</b> s390x guest, timed on a Neoverse-N1-like model (neoverse-n1 preset, 3000 MHz)`, `<h3 id="fn-main">`},
			[]string{`<td class="ins mono">(j[a-z]+|brct?g?|brc) [^<]*main&#43;0x[0-9a-f]+</td>`, `<td class="ins mono">brasl %r14,rng_below</td>`},
			[]string{"Neoverse-N1-like core"}},
	} {
		t.Run(c.arch, func(t *testing.T) {
			got := render(t, c.config, c.arch)
			for _, w := range c.want {
				assert.Contains(t, got, w)
			}
			for _, re := range c.wantRe {
				assert.Regexp(t, re, got)
			}
			for _, n := range c.not {
				assert.NotContains(t, got, n)
			}
			// Sampled instructions only with their neighbours: main shows
			// far fewer rows than it has instructions.
			main := got[strings.Index(got, `<table class="ann dis" data-func="main">`):]
			main = main[:strings.Index(main, "</table>")]
			assert.LessOrEqual(t, strings.Count(main, "data-pc="), 5*(2*insnRadius+1))
			assert.Equal(t, 5, strings.Count(main, `class="hot"`))
		})
	}
}

// TestGlossaryCoversPage: every SPE term the page shows (PMU events,
// event names, data sources, sampling registers, operation words) has a
// glossary entry, and the glossary lists no term the page does not use.
func TestGlossaryCoversPage(t *testing.T) {
	bin, _ := open(t, "aarch64-O2", "listchase")
	empty := synthetic(t, bin, "arm64")
	empty.Samples = nil
	var b bytes.Buffer
	require.NoError(t, Write(&b, empty, bin, Options{}))
	for i, got := range []string{render(t, "aarch64-O2", "arm64"), b.String()} {
		glossaryCovers(t, got, i == 0)
	}
}

func glossaryCovers(t *testing.T, got string, full bool) {
	t.Helper()
	g := strings.Index(got, `<h2 id="glossary">`)
	require.Positive(t, g)
	body, gloss := got[:g], got[g:]
	body = body[:strings.LastIndex(body, "</style>")+1] + body[strings.Index(body, "<body>"):] // not the CSS
	entries := map[string]bool{}
	for _, m := range regexp.MustCompile(`<dt id="g-[^"]*">([^<]*)</dt>`).FindAllStringSubmatch(gloss, -1) {
		entries[m[1]] = true
	}
	var names []string
	for n := uint(0); n < 64; n++ {
		if e := codes.EventName(n); e != "" {
			names = append(names, e)
		}
	}
	for _, ds := range []uint16{0, 8, 9, 0xa, 0xb, 0xc, 0xd, 0xe} {
		names = append(names, codes.DataSourceName(ds))
	}
	pattern := `\b(SAMPLE_[A-Z_]+|PM[SB][A-Z]+_EL1|` + strings.Join(quoteAll(names), "|") + `)\b`
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(body, -1) {
		used[m[1]] = true
		assert.True(t, entries[m[1]], "%s is on the page but not in the glossary", m[1])
	}
	assert.True(t, used["SAMPLE_FEED"] && used["L1D-REFILL"] && (used["DRAM"] || !full), "the scan sees the terms: %v", used)
	for e := range entries {
		assert.Contains(t, body, e, "the glossary explains %s, which the page does not show", e)
	}
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = regexp.QuoteMeta(x)
	}
	return out
}

func TestCPULabel(t *testing.T) {
	cpu := profile.CPUModel{Model: "neoverse-v2", Desc: "Neoverse-V2-like core", MHz: 3100}
	for _, c := range []struct{ arch, want string }{
		{"arm64", "Neoverse-V2-like core (neoverse-v2 preset, 3100 MHz)"},
		{"", "Neoverse-V2-like core (neoverse-v2 preset, 3100 MHz)"},
		{"s390x", "s390x guest, timed on a Neoverse-V2-like model (neoverse-v2 preset, 3100 MHz)"},
	} {
		assert.Equal(t, c.want, CPULabel(&profile.Summary{Arch: c.arch, CPU: cpu}), c.arch)
	}
}

func TestSymbolicTargets(t *testing.T) {
	a64, _ := open(t, "aarch64-O2", "listchase")
	s390, _ := open(t, "s390x-O2", "listchase")
	m64, r64 := fn(t, a64, "main"), fn(t, a64, "rng_below")
	ms, rs := fn(t, s390, "main"), fn(t, s390, "rng_below")
	hex := func(v uint64) string { return fmt.Sprintf("0x%x", v) }
	for _, c := range []struct {
		name     string
		bin      *profile.Binary
		text     string
		pc       uint64
		want     string
		isTarget bool
	}{
		{"backward b.ne", a64, "b.ne .+0xffffffffffffffe8", m64.Start + 0x58, "b.ne main+0x40", true},
		{"forward b", a64, "b .+0x10", m64.Start, "b main+0x10", true},
		{"bl to a function", a64, "bl " + ".+" + hex(r64.Start-m64.Start-4), m64.Start + 4, "bl rng_below", true},
		{"cbz", a64, "cbz x0, .+0x8", m64.Start + 8, "cbz x0, main+0x10", true},
		{"adrp is a page", a64, "adrp x0, .+0x1000", m64.Start + 0x14, "adrp x0, " + hex((m64.Start+0x14)&^0xfff+0x1000), false},
		{"no target", a64, "add x0, x1, #0x8", m64.Start, "add x0, x1, #0x8", false},
		{"outside every function", a64, "b .+0x10000000", m64.Start, "b " + hex(m64.Start+0x10000000), false},
		{"s390x brasl", s390, "brasl %r14," + hex(rs.Start), ms.Start, "brasl %r14,rng_below", true},
		{"s390x j", s390, "j " + hex(ms.Start+0x40), ms.Start, "j main+0x40", true},
		{"s390x brctg", s390, "brctg %r11," + hex(ms.Start+0x8), ms.Start, "brctg %r11,main+0x8", true},
		{"s390x larl to data", s390, "larl %r1,0x3000000", ms.Start, "larl %r1,0x3000000", false},
		{"s390x shift", s390, "srl %r1," + hex(ms.Start), ms.Start, "srl %r1," + hex(ms.Start), false},
		{"s390x immediate", s390, "lghi %r1," + hex(ms.Start), ms.Start, "lghi %r1," + hex(ms.Start), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, symbolicTargets(c.bin, c.text, c.pc))
		})
	}
}

func TestWindows(t *testing.T) {
	for _, c := range []struct {
		n, radius int
		hot       []int
		want      string
	}{
		{10, 1, []int{0}, "0 1 …8"},
		{10, 1, []int{5}, "…4 4 5 6 …3"},
		{10, 1, []int{2, 4}, "…1 1 2 3 4 5 …4"},
		{10, 1, []int{1, 8}, "0 1 2 …4 7 8 9"},
		{10, 3, []int{9}, "…6 6 7 8 9"},
		{5, 2, nil, ""},
	} {
		hot := map[int]bool{}
		for _, h := range c.hot {
			hot[h] = true
		}
		got := windows(c.n, c.radius, func(i int) bool { return hot[i] },
			strconv.Itoa, func(k int) string { return "…" + strconv.Itoa(k) })
		assert.Equal(t, c.want, strings.Join(got, " "), "%+v", c)
	}
}

func TestReadSource(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "cfg")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "a.c"), []byte("int x;\n\tint y;\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "src", "dir.c"), 0o755))

	text, path, err := readSource("src/a.c", []string{bin})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(bin, "../../src/a.c"), path)
	assert.Equal(t, []string{"int x;", "    int y;"}, text)

	text, path, err = readSource(filepath.Join(dir, "src", "a.c"), nil)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "src", "a.c"), path)
	assert.Len(t, text, 2)

	for _, name := range []string{"src/missing.c", "src/dir.c"} {
		_, _, err = readSource(name, []string{bin})
		assert.ErrorContains(t, err, "not on this host: line numbers and counts only", name)
	}
}

// FuzzSymbolicTargets: any instruction text (the disassemblers' output
// is trusted but not assumed) is rewritten without panicking, and text
// without an address comes back unchanged.
func FuzzSymbolicTargets(f *testing.F) {
	for _, s := range []string{"b.ne .+0xffffffffffffffe8", "adrp x0, .-0x1000", "brasl %r14,0x1000d00", "j 0x", "b .+0xfffffffffffffffffffff", "nop"} {
		f.Add(s, uint64(0x400000), true)
		f.Add(s, uint64(0x1000000), false)
	}
	a64, _ := open(f, "aarch64-O2", "listchase")
	s390, _ := open(f, "s390x-O2", "listchase")
	f.Fuzz(func(t *testing.T, text string, pc uint64, arm bool) {
		bin := s390
		if arm {
			bin = a64
		}
		got := symbolicTargets(bin, text, pc)
		if !strings.Contains(text, "0x") && got != text {
			t.Fatalf("%q became %q", text, got)
		}
	})
}
