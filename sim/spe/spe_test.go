package spe

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

func features(name string) *Features {
	f := Presets[name]
	return &f
}

func TestPresetsValid(t *testing.T) {
	for name, f := range Presets {
		assert.NoError(t, f.Validate(), name)
	}
	bad := Features{Version: V1p2, MaxSize: 6}
	assert.ErrorContains(t, bad.Validate(), "requires FEAT_SPE_FnE")
}

func TestRegistersRES0(t *testing.T) {
	n1 := features("neoverse-n1")
	r := NewRegs(n1)
	r.Set(PMSFCR, 1<<19|1<<3|1<<1) // FP (EFT) and FnE are absent on v1p0
	assert.Equal(t, uint64(1<<1), r.Get(PMSFCR))
	err := r.SetChecked(PMSFCR, 1<<19)
	assert.ErrorContains(t, err, "bits 19 are RES0 on this SPEv1p0 unit")
	assert.ErrorContains(t, r.SetChecked(PMSNEVFR, 1), "not implemented")
	assert.ErrorContains(t, r.SetChecked(PMSIDR, 1), "read-only")
	r.Set(PMSIDR, 0)
	assert.Equal(t, n1.PMSIDR(), r.Get(PMSIDR), "ID registers ignore writes")
	max := features("spe-max")
	assert.NoError(t, NewRegs(max).SetChecked(PMSFCR, 1<<19|1<<51|1<<1))
	reg, err := RegByName("pmsfcr")
	require.NoError(t, err)
	assert.Equal(t, PMSFCR, reg)
	_, err = RegByName("PMSXYZ")
	assert.ErrorContains(t, err, "unknown SPE register")
}

func TestExplain(t *testing.T) {
	out := Explain(features("neoverse-n1"), PMSIRR, 0x1001)
	assert.Contains(t, out, "INTERVAL")
	assert.Contains(t, out, "0x10 = 4096 operations")
	assert.Contains(t, out, "RND")
	out = Explain(features("neoverse-n1"), PMSFCR, 1<<19|1<<17|2)
	assert.Contains(t, out, "LD ")
	assert.Contains(t, out, "RES0 on this unit")
	out = Explain(features("spe-max"), PMSIDR, features("spe-max").PMSIDR())
	assert.Contains(t, out, "16-bit saturating")
	assert.Contains(t, out, "(128 bytes)")
}

// filterCase sets registers and checks one sample.
type filterCase struct {
	name string
	f    string
	regs map[Reg]uint64
	in   FilterInput
	keep bool
}

func TestFilters(t *testing.T) {
	const (
		FE, FT, FL, FnE, FDS = 1, 2, 4, 8, 16
		B, LD, ST, FPb, SIMD = 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20
		Bm, LDm, STm, FPm    = 1 << 48, 1 << 49, 1 << 50, 1 << 51
		SIMDm                = 1 << 52
	)
	load := FilterInput{Flags: FlagLD, Events: codes.EvRetired | codes.EvL1DAccess, IsLoad: true, TotalLat: 10}
	cases := []filterCase{
		{"no filter keeps", "neoverse-n1", nil, load, true},
		// event filter: every required event present
		{"event present", "neoverse-n1", map[Reg]uint64{PMSFCR: FE, PMSEVFR: codes.EvL1DAccess}, load, true},
		{"event missing", "neoverse-n1", map[Reg]uint64{PMSFCR: FE, PMSEVFR: codes.EvL1DRefill}, load, false},
		{"event filter bits beyond the mask are ignored", "neoverse-n1", map[Reg]uint64{PMSFCR: FE, PMSEVFR: codes.EvL1DAccess | 1<<40}, load, true},
		{"FE with no filterable bit: CU, filter off", "neoverse-n1", map[Reg]uint64{PMSFCR: FE, PMSEVFR: 0}, load, true},
		// inverted event filter
		{"inverted: excluded event present", "neoverse-v2", map[Reg]uint64{PMSFCR: FnE, PMSNEVFR: codes.EvL1DAccess}, load, false},
		{"inverted: excluded event absent", "neoverse-v2", map[Reg]uint64{PMSFCR: FnE, PMSNEVFR: codes.EvL1DRefill}, load, true},
		{"same bit in both filters: CU, reject", "neoverse-v2", map[Reg]uint64{PMSFCR: FE | FnE, PMSEVFR: codes.EvL1DAccess, PMSNEVFR: codes.EvL1DAccess}, load, false},
		{"FnE absent on v1p0: PMSNEVFR ignored", "neoverse-n1", map[Reg]uint64{PMSFCR: FnE, PMSNEVFR: codes.EvL1DAccess}, load, true},
		// type filter (OR of B/LD/ST without EFT)
		{"type LD keeps a load", "neoverse-n1", map[Reg]uint64{PMSFCR: FT | LD}, load, true},
		{"type B|ST drops a load", "neoverse-n1", map[Reg]uint64{PMSFCR: FT | B | ST}, load, false},
		{"type: atomic is LD and ST", "neoverse-n1", map[Reg]uint64{PMSFCR: FT | ST}, FilterInput{Flags: FlagLD | FlagST}, true},
		{"FT with no type bits, no EFT: CU, filter off", "neoverse-n1", map[Reg]uint64{PMSFCR: FT}, load, true},
		// EFT: OR group over unmasked bits, AND group over masked bits
		{"EFT: FT with nothing set rejects nothing", "spe-max", map[Reg]uint64{PMSFCR: FT}, load, true},
		{"EFT: LD OR ST keeps a load", "spe-max", map[Reg]uint64{PMSFCR: FT | LD | ST}, load, true},
		{"EFT: AND LD and FP drops a GP load", "spe-max", map[Reg]uint64{PMSFCR: FT | LD | LDm | FPb | FPm}, load, false},
		{"EFT: AND LD and FP keeps an FP load", "spe-max", map[Reg]uint64{PMSFCR: FT | LD | LDm | FPb | FPm}, FilterInput{Flags: FlagLD | FlagFP}, true},
		{"EFT: masked bit clear excludes: not SIMD", "spe-max", map[Reg]uint64{PMSFCR: FT | SIMDm}, FilterInput{Flags: FlagSIMD}, false},
		{"EFT: masked bit clear excludes: scalar passes", "spe-max", map[Reg]uint64{PMSFCR: FT | SIMDm}, FilterInput{Flags: FlagLD}, true},
		{"EFT: OR group (B|ST) and AND group (FP)", "spe-max", map[Reg]uint64{PMSFCR: FT | B | ST | FPb | FPm}, FilterInput{Flags: FlagST | FlagFP}, true},
		{"EFT: OR group fails", "spe-max", map[Reg]uint64{PMSFCR: FT | B | ST | FPb | FPm}, FilterInput{Flags: FlagLD | FlagFP}, false},
		// latency filter: total >= MINLAT
		{"latency equal to MINLAT keeps", "neoverse-n1", map[Reg]uint64{PMSFCR: FL, PMSLATFR: 10}, load, true},
		{"latency below MINLAT drops", "neoverse-n1", map[Reg]uint64{PMSFCR: FL, PMSLATFR: 11}, load, false},
		{"MINLAT 0 with FL: CU, filter off", "neoverse-n1", map[Reg]uint64{PMSFCR: FL, PMSLATFR: 0}, load, true},
		// data source filter: loads with a data source only
		{"FDS: selected source keeps", "spe-max", map[Reg]uint64{PMSFCR: FDS, PMSDSFR: 1 << 8}, FilterInput{Flags: FlagLD, IsLoad: true, DSValid: true, DS: 8}, true},
		{"FDS: other source drops", "spe-max", map[Reg]uint64{PMSFCR: FDS, PMSDSFR: 1 << 8}, FilterInput{Flags: FlagLD, IsLoad: true, DSValid: true, DS: 0}, false},
		{"FDS: stores are not filtered", "spe-max", map[Reg]uint64{PMSFCR: FDS, PMSDSFR: 0}, FilterInput{Flags: FlagST, DSValid: true, DS: 0}, true},
		{"FDS: loads without a source are not filtered", "spe-max", map[Reg]uint64{PMSFCR: FDS, PMSDSFR: 0}, FilterInput{Flags: FlagLD, IsLoad: true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := features(tc.f)
			r := NewRegs(f)
			for reg, v := range tc.regs {
				r.Set(reg, v)
			}
			ch := DefaultChoices()
			var pmu PMU
			assert.Equal(t, tc.keep, filter(f, r, &ch, tc.in, &pmu))
			if tc.keep {
				assert.Equal(t, uint64(1), pmu.SampleFiltrate)
			}
		})
	}
	// The CU choices can be flipped.
	f := features("neoverse-n1")
	r := NewRegs(f)
	r.Set(PMSFCR, FL)
	ch := Choices{ZeroMinLatency: CURejectAll}
	var pmu PMU
	assert.False(t, filter(f, r, &ch, load, &pmu))
}

func newTestUnit(t *testing.T, name string) *Unit {
	u, err := NewUnit(Presets[name], 1)
	require.NoError(t, err)
	return u
}

func TestIntervalExactPositions(t *testing.T) {
	u := newTestUnit(t, "neoverse-n1")
	u.Regs.Set(PMSIRR, 0x400) // INTERVAL 4: 1024 members, RND 0
	var pos []uint64
	var at uint64
	for i := 0; i < 5; i++ {
		at += u.NextSelection()
		pos = append(pos, at)
	}
	// the first member after a zero PMSICR reloads; then every 1025th
	assert.Equal(t, []uint64{1025, 2050, 3075, 4100, 5125}, pos)
	assert.Equal(t, uint64(5125), u.PMU.SamplePop)
	// member-by-member agrees with the skipping version
	v := newTestUnit(t, "neoverse-n1")
	v.Regs.Set(PMSIRR, 0x400)
	n := 0
	for i := 1; i <= 3075; i++ {
		if v.s.member() {
			n++
			assert.Contains(t, pos, uint64(i))
		}
	}
	assert.Equal(t, 3, n)
}

func TestIntervalJitterMeans(t *testing.T) {
	for _, tc := range []struct {
		preset string
		want   float64
	}{
		{"neoverse-n1", 1024 + 1 + 127.5}, // random COUNT[7:0] at reload
		{"neoverse-v2", 1024 + 1},         // ERnd: delay after expiry, COUNT keeps counting
	} {
		u := newTestUnit(t, tc.preset)
		u.Regs.Set(PMSIRR, 0x400|1)
		const n = 20000
		var total uint64
		var gaps = map[uint64]bool{}
		for i := 0; i < n; i++ {
			g := u.NextSelection()
			total += g
			gaps[g] = true
		}
		mean := float64(total) / n
		assert.InDelta(t, tc.want, mean, 3, tc.preset)
		assert.Greater(t, len(gaps), 100, "jitter varies the interval (%s)", tc.preset)
	}
}

func TestCollision(t *testing.T) {
	u := newTestUnit(t, "neoverse-n1")
	assert.True(t, u.Start(100))
	u.Complete(&Sample{Op: cpu.Op{PC: 0x400000}}, 180, 180)
	assert.False(t, u.Start(150), "a sample completing at 180 is still in flight at 150")
	assert.Equal(t, uint64(1), u.PMU.SampleCollision)
	assert.NotZero(t, u.Regs.Get(PMBSR)&pmbsrCOLL)
	assert.True(t, u.Start(180))
}

func TestEncodeDecode(t *testing.T) {
	f := features("neoverse-n1")
	s := &Sample{Op: cpu.Op{PC: 0x400158, Class: cpu.ClassLoad, Access: 8, VA: 0x421fe8}, NS: true,
		Lat: [3]uint32{9, 2, 1}, XlatOK: true, Events: codes.EvRetired | codes.EvL1DAccess | codes.EvTLBAccess,
		DS: 0, DSValid: true, TS: 1101000, TSValid: true, Context: 0x1092, CtxValid: true}
	rec := Encode(nil, f, s)
	var dump bytes.Buffer
	require.NoError(t, Dump(&dump, rec))
	want := `.
. ... ARM SPE data: size 0x31 bytes
.  00000000:  64 92 10 00 00                                  CONTEXT 0x1092 el1
.  00000005:  98 09 00                                        LAT 9 TOT
.  00000008:  99 02 00                                        LAT 2 ISSUE
.  0000000b:  9a 01 00                                        LAT 1 XLAT
.  0000000e:  b0 58 01 40 00 00 00 00 80                      PC 0x400158 el0 ns=1
.  00000017:  b2 e8 1f 42 00 00 00 00 00                      VA 0x421fe8
.  00000020:  53 00 00                                        DATA-SOURCE 0
.  00000023:  49 00                                           LD GP-REG
.  00000025:  52 16 00                                        EV RETIRED L1D-ACCESS TLB-ACCESS
.  00000028:  71 c8 cc 10 00 00 00 00 00                      TS 1101000
`
	assert.Equal(t, want, dump.String())
	recs, err := Records(rec)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	pc, ok := recs[0].Get(PktAddress, AddrPC)
	require.True(t, ok)
	assert.Equal(t, uint64(0x8000000000400158), pc)
	ev, _ := recs[0].Get(PktEvents, 0)
	assert.Equal(t, uint64(codes.EvRetired|codes.EvL1DAccess|codes.EvTLBAccess), ev)
	assert.Contains(t, dump.String(), "LD GP-REG")
	assert.Contains(t, dump.String(), "PC 0x400158 el0 ns=1")
	assert.Contains(t, dump.String(), "TS 1101000")

	// Alignment: spe-max pads records to 64 bytes and keeps TS last.
	m := features("spe-max")
	rec = Encode(nil, m, &Sample{Op: cpu.Op{PC: 0x400000, Class: cpu.ClassBranch, Target: 0x400100,
		Flags: cpu.OpConditional | cpu.OpLink}, Taken: true, TSValid: true, TS: 5})
	assert.Zero(t, len(rec)%64)
	assert.Equal(t, byte(hdrTS), rec[len(rec)-9])
	recs, err = Records(rec)
	require.NoError(t, err)
	op, _ := recs[0].Get(PktOpType, 0)
	assert.Equal(t, uint64(ClassBranch<<8|1|1<<3), op, "COND and CR = branch with link")
}

func TestDecodeBad(t *testing.T) {
	for _, b := range [][]byte{{0x02}, {0xb0, 1, 2}, {0x20}, {0x20, 0x05}, {0x71, 1}} {
		_, err := DecodePacket(b)
		assert.Error(t, err, "%x", b)
	}
	var out bytes.Buffer
	require.NoError(t, Dump(&out, []byte{0x02, 0x01}))
	assert.Contains(t, out.String(), ".  00000000:  02"+strings.Repeat(" ", 46)+"Bad packet!\n")
	_, err := Records([]byte{0x49, 0x00})
	assert.ErrorContains(t, err, "no End or Timestamp")
	_, err = Records([]byte{0x01, 0x05})
	assert.ErrorContains(t, err, "offset 0x1")
}

func TestParseEvent(t *testing.T) {
	n1, v2, max := features("neoverse-n1"), features("neoverse-v2"), features("spe-max")
	c, err := ParseEvent("arm_spe/ts_enable=1,load_filter=1,min_latency=32,event_filter=0x8/", n1)
	require.NoError(t, err)
	assert.True(t, c.TSEnable && c.LoadFilter)
	assert.Equal(t, uint64(32), c.MinLatency)
	c.Period = 4096
	regs, err := c.Program(n1)
	require.NoError(t, err)
	assert.Equal(t, uint64(4096), regs[PMSIRR])
	assert.Equal(t, uint64(1<<17|1<<1|1<<0|1<<2), regs[PMSFCR])
	_, err = ParseEvent("arm_spe_0//", n1)
	require.NoError(t, err)
	for _, bad := range []struct{ spec, want string }{
		{"arm_spe/foo=1/", "unknown term 'foo'"},
		{"arm_spe/min_latency=5000/", "too big for format (config2:0-11)"},
		{"arm_spe/load_filter=x/", "is not a number"},
		{"arm_spe/discard=1/", "needs SPEv1p2"},
		{"arm_spe/inv_event_filter=2/", "needs FEAT_SPE_FnE"},
		{"arm_spe/float_filter=1/", "needs FEAT_SPE_EFT"},
		{"arm_spe/event_filter=0x10000/", "bits 16 cannot be filtered"},
		{"arm_spe/ts_enable=1", "missing the closing '/'"},
		{"cs_etm//", "unknown PMU 'cs_etm'"},
		{"arm_spe/jitter=1,jitter=0/", "given twice"},
	} {
		_, err := ParseEvent(bad.spec, n1)
		assert.ErrorContains(t, err, bad.want, bad.spec)
	}
	_, err = ParseEvent("arm_spe/discard=1,inv_event_filter=2/", v2)
	assert.NoError(t, err)
	c, err = ParseEvent("arm_spe/min_latency=5000,float_filter=1,float_filter_mask=1/", max)
	require.NoError(t, err, "16-bit counters widen min_latency")
	c.Period = 100
	regs, err = c.Program(max)
	require.NoError(t, err)
	assert.Equal(t, uint64(256), regs[PMSIRR], "period clamped to the minimum interval")
	_, err = Interval(0, n1)
	assert.ErrorContains(t, err, "period 0")
}

// TestDriverSmallAUX fills a small AUX area many times over: every record
// decodes, none is split, and the count equals the samples that passed the
// filters.
func TestDriverSmallAUX(t *testing.T) {
	for _, preset := range []string{"neoverse-n1", "spe-max"} {
		u := newTestUnit(t, preset)
		c, err := ParseEvent("arm_spe/ts_enable=1/", &u.Features)
		require.NoError(t, err)
		c.Period = 256
		var cycle uint64
		d, err := NewDriver(u, c, 2, func() uint64 { return cycle })
		require.NoError(t, err)
		kept := 0
		for i := 0; i < 2000; i++ {
			cycle += u.NextSelection()
			if !u.Enabled() {
				t.Fatalf("profiling stopped at sample %d: %v", i, d.Errors)
			}
			require.True(t, u.Start(cycle))
			s := &Sample{Op: cpu.Op{PC: 0x400000 + uint64(i)*4, Class: cpu.ClassStore, Access: 8, VA: 0x10000}, Lat: [3]uint32{3, 1, 1}}
			before := u.PMU.SampleFiltrate
			u.Complete(s, cycle+3, cycle)
			kept += int(u.PMU.SampleFiltrate - before)
		}
		d.Stop()
		data, truncated := d.Data()
		assert.False(t, truncated)
		recs, err := Records(data)
		require.NoError(t, err, preset)
		assert.Equal(t, kept, len(recs), preset)
		assert.Equal(t, 2000, kept)
		assert.Greater(t, u.PMU.SampleBufferFull, uint64(10), "the 8 KiB area filled repeatedly")
		assert.Empty(t, d.Errors)
		for i, r := range recs {
			pc, _ := r.Get(PktAddress, AddrPC)
			require.Equal(t, uint64(0x400000+i*4), pc&0xffffffffffff, "record %d in order", i)
		}
	}
}

func TestDriverTruncatesWithoutConsumer(t *testing.T) {
	u := newTestUnit(t, "neoverse-n1")
	c, _ := ParseEvent("arm_spe//", &u.Features)
	c.Period = 256
	d, err := NewDriver(u, c, 2, nil)
	require.NoError(t, err)
	d.Drain = false
	n := 0
	for i := 0; i < 1000 && u.Enabled(); i++ {
		u.NextSelection()
		u.Start(uint64(i) * 1000)
		u.Complete(&Sample{Op: cpu.Op{PC: 0x400000}}, uint64(i)*1000+5, 0)
		n++
	}
	d.Stop()
	data, truncated := d.Data()
	assert.True(t, truncated)
	assert.Less(t, n, 1000, "profiling stops when the area is full")
	recs, err := Records(data)
	require.NoError(t, err)
	assert.Equal(t, int(u.Written), len(recs))
	assert.Equal(t, uint64(AuxTruncated), d.Events[len(d.Events)-1].Flags&AuxTruncated)
}

func TestBufferFault(t *testing.T) {
	u := newTestUnit(t, "neoverse-n1")
	c, _ := ParseEvent("arm_spe//", &u.Features)
	c.Period = 256
	d, err := NewDriver(u, c, 4, nil)
	require.NoError(t, err)
	// Unmap the middle of the area: the write faults with a stage 1
	// translation fault, the driver reports it in its words.
	u.Mem.Unmap(d.Base+4096, 4096)
	for i := 0; i < 400 && u.Enabled(); i++ {
		u.NextSelection()
		u.Start(uint64(i) * 100)
		u.Complete(&Sample{Op: cpu.Op{PC: 0x400000}}, uint64(i)*100+1, 0)
	}
	require.Len(t, d.Errors, 1)
	assert.True(t, strings.HasPrefix(d.Errors[0], "Unexpected buffer fault on CPU 0 [PMBSR=0x"), d.Errors[0])
	assert.False(t, u.Enabled())
	last := d.Events[len(d.Events)-1]
	assert.Equal(t, uint64(AuxTruncated|AuxPartial), last.Flags, "the record was split at the fault")
	assert.Contains(t, Syndrome(0x24<<26|1<<17|0x07), "FSC 0x07")
}

// TestBufferPointerRestrictions: a limit below the pointer (the pointer
// restrictions of Arm ARM D17.7.4, Choices.BadPointer) raises buffer full before any byte is written, or with the other
// choice discards the record silently; a bad limit via SetChecked is
// accepted (it is not a reserved-bit error) and so reaches this path.
func TestBufferPointerRestrictions(t *testing.T) {
	for _, choice := range []CU{CUFilterOff, CURejectAll} {
		u := newTestUnit(t, "neoverse-n1")
		u.Choices.BadPointer = choice
		c, _ := ParseEvent("arm_spe//", &u.Features)
		c.Period = 256
		_, err := NewDriver(u, c, 4, nil)
		require.NoError(t, err)
		u.OnManagement = nil // the unit alone: no driver restart
		ptr := u.Regs.Get(PMBPTR)
		require.NoError(t, u.Regs.SetChecked(PMBLIMITR, ptr|pmblimitrE), "limit == pointer")
		u.NextSelection()
		u.Start(10)
		u.Complete(&Sample{Op: cpu.Op{PC: 0x400000}}, 11, 0)
		assert.Equal(t, ptr, u.Regs.Get(PMBPTR), "nothing written")
		assert.Zero(t, u.Written)
		bsr := u.Regs.Get(PMBSR)
		if choice == CUFilterOff {
			assert.Equal(t, uint64(pmbsrS|bscFull), bsr, Syndrome(bsr))
			assert.Equal(t, "buffer full", Syndrome(bsr))
			assert.Equal(t, uint64(1), u.PMU.SampleBufferFull)
		} else {
			assert.Zero(t, bsr)
			assert.True(t, u.Enabled(), "discarding keeps profiling on")
		}
	}
	// a limit of 0 with E=1 does not wrap around
	u := newTestUnit(t, "neoverse-n1")
	u.Regs.Set(PMBLIMITR, pmblimitrE)
	assert.True(t, u.full(0))
}

func TestParseAuxSize(t *testing.T) {
	for _, c := range []struct {
		in    string
		pages int
		note  bool
	}{{"2", 2, false}, {"128", 128, false}, {"100", 128, true}, {"64K", 16, false}, {"1M", 256, false},
		{"8192B", 2, false}, {"12K", 4, true}, {"0x10", 16, false}} {
		p, note, err := ParseAuxSize(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.pages, p, c.in)
		assert.Equal(t, c.note, note != "", "%s: %q", c.in, note)
	}
	for _, c := range []struct{ in, want string }{
		{"5000B", "not a multiple of the 4096-byte page"},
		{"6K", "not a multiple of the 4096-byte page"},
		{"1", "needs at least 2"},
		{"4K", "needs at least 2"},
		{"0", "want a number of pages"},
		{"x", "want a number of pages"},
		{"", "want a number of pages"},
		{"-4", "want a number of pages"},
		{"2G", "larger than simrun's 1024 MiB"},
		{"99999999999G", "larger than"},
		{"1000000", "larger than simrun's"},
	} {
		_, _, err := ParseAuxSize(c.in)
		assert.ErrorContains(t, err, c.want, c.in)
	}
	_, err := NewDriver(newTestUnit(t, "neoverse-n1"), &Config{Period: 4096}, 3, nil)
	assert.ErrorContains(t, err, "power of two")
}
