package spe

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// FuzzSPEPacketDecode: any byte stream decodes packet by packet, dumps and
// splits into records without panicking; every decoded packet has a
// length within the input and a description.
func FuzzSPEPacketDecode(f *testing.F) {
	for _, preset := range []string{"neoverse-n1", "spe-max"} {
		feats := Presets[preset]
		f.Add(sampleStream(&feats))
	}
	f.Add([]byte{0x02, 0x01, 0x20, 0x05, 0x71})
	f.Add([]byte{0x20, 0x05, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		for off := 0; off < len(data); {
			p, err := DecodePacket(data[off:])
			if err != nil {
				if !errors.Is(err, ErrNeedMore) && !errors.Is(err, ErrBadPacket) {
					t.Fatalf("offset %d: unexpected error %v", off, err)
				}
				off++
				continue
			}
			if p.Len <= 0 || off+p.Len > len(data) {
				t.Fatalf("offset %d: packet length %d outside %d bytes", off, p.Len, len(data))
			}
			if p.Desc() == "" {
				t.Fatalf("offset %d: %v has no description", off, p.Kind)
			}
			off += p.Len
		}
		var out bytes.Buffer
		if err := Dump(&out, data); err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && !strings.Contains(out.String(), "ARM SPE data: size") {
			t.Fatalf("dump has no header: %q", out.String())
		}
		recs, _ := Records(data)
		for _, r := range recs {
			if len(r.Packets) == 0 || r.Offset < 0 || r.Offset >= len(data) {
				t.Fatalf("bad record %+v", r)
			}
		}
	})
}

// FuzzPerfEventConfig: any event string either parses, programs the
// registers within their writable masks and round-trips through the
// config words, or fails with a message; never a panic.
func FuzzPerfEventConfig(f *testing.F) {
	for _, s := range []string{"arm_spe//", "arm_spe/ts_enable=1,load_filter=1,min_latency=32/",
		"arm_spe_0/event_filter=0x8,inv_event_filter=2,jitter=1/", "arm_spe/float_filter=1,float_filter_mask=1/",
		"arm_spe/discard=1/", "arm_spe/foo=1/", "arm_spe/min_latency=5000/", "arm_spe/ts_enable=1"} {
		f.Add(s, uint64(4096), uint8(0))
	}
	names := []string{"neoverse-n1", "neoverse-v2", "spe-max"}
	f.Fuzz(func(t *testing.T, spec string, period uint64, model uint8) {
		feats := Presets[names[int(model)%len(names)]]
		c, err := ParseEvent(spec, &feats)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		c.Period = period
		regs, err := c.Program(&feats)
		if err != nil {
			return
		}
		r := NewRegs(&feats)
		for reg, v := range regs {
			if err := r.SetChecked(reg, v); err != nil {
				t.Fatalf("%q programs %v: %v", spec, reg, err)
			}
		}
		if regs[PMSIRR]>>8 == 0 {
			t.Fatalf("%q period %d: interval 0", spec, period)
		}
	})
}

// sampleStream encodes records of every class for the seed corpus.
func sampleStream(f *Features) []byte {
	var data []byte
	for i, op := range []cpu.Op{
		{Class: cpu.ClassLoad, Access: 8, VA: 0x410010},
		{Class: cpu.ClassStore, Access: 4, VA: 0x410020, Flags: cpu.OpSIMDFPReg},
		{Class: cpu.ClassLoadAtomic, Access: 8, VA: 0x410040, Flags: cpu.OpAcquire},
		{Class: cpu.ClassBranch, Target: 0x400100, Flags: cpu.OpConditional | cpu.OpIndirect},
		{Class: cpu.ClassOther, Flags: cpu.OpFP | cpu.OpSIMD},
	} {
		op.PC = 0x400000 + uint64(4*i)
		data = Encode(data, f, &Sample{Op: op, NS: true, Taken: true, Lat: [3]uint32{20, 3, 1}, XlatOK: op.Access != 0,
			Events: codes.EvRetired | codes.EvL1DAccess, DSValid: op.Class == cpu.ClassLoad, TS: uint64(i), TSValid: i%2 == 0,
			Context: 7, CtxValid: true, PBT: 0x400200, PBTValid: f.PBT})
	}
	return data
}

// FuzzParseRegWrite: any --spe-reg argument either names a register and a
// value, which the unit accepts or refuses with a message naming the
// register, or fails with a message; never a panic.
func FuzzParseRegWrite(f *testing.F) {
	for _, s := range []string{"PMSFCR=0x20003", "pmbptr=0", "PMSIRR_EL1=4_096", "PMBLIMITR=0xffffffffffffffff",
		"PMSIDR=1", "PMSFOO=1", "PMSFCR", "PMSFCR=zz", "=", "PMBSR=0x20000", "PMSNEVFR=-1"} {
		f.Add(s, uint8(0))
	}
	names := []string{"neoverse-n1", "neoverse-v2", "spe-max"}
	f.Fuzz(func(t *testing.T, s string, model uint8) {
		reg, v, err := ParseRegWrite(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if reg >= numRegs {
			t.Fatalf("%q: register %d out of range", s, reg)
		}
		u, err := NewUnit(Presets[names[int(model)%len(names)]], 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.WriteReg(reg, v); err != nil && !strings.Contains(err.Error(), Info(reg).Name) {
			t.Fatalf("%q: error does not name the register: %v", s, err)
		}
	})
}

// FuzzParseAuxSize: any --aux-pages argument is a power-of-two page
// count within the bounds, or an error.
func FuzzParseAuxSize(f *testing.F) {
	for _, s := range []string{"2", "128", "100", "64K", "1M", "8192B", "12K", "0x10", "5000B", "1", "2G", "99999999999G", "", "-4", "K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pages, _, err := ParseAuxSize(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if pages < 2 || pages > MaxAuxPages || pages&(pages-1) != 0 {
			t.Fatalf("%q: %d pages", s, pages)
		}
	})
}
