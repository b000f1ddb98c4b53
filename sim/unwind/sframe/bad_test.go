package sframe_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/sframe"
)

// sample is a small sorted s390x V3 section: a DEFAULT FDE and a FLEX one.
func sample() *sframe.Section {
	return &sframe.Section{
		Version: 3, Flags: sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL,
		ABI: abi.SFrameS390XBE, Order: binary.BigEndian,
		FDEs: []sframe.FDE{
			{Start: 0x100, Size: 40, FREs: []sframe.FRE{
				{Start: 0, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 15, Off: 160}},
				{Start: 6, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 15, Off: 320},
					RA: sframe.Rule{Kind: sframe.RuleCFA, Off: -48, Deref: true},
					FP: sframe.Rule{Kind: sframe.RuleCFA, Off: -72, Deref: true}},
			}},
			{Start: 0x200, Size: 26, Flex: true, FREs: []sframe.FRE{
				{Start: 0, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 15, Off: 160}},
				{Start: 4, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 15, Off: 160},
					RA: sframe.Rule{Kind: sframe.RuleReg, Reg: 16}},
			}},
		},
	}
}

func sampleBytes(t *testing.T) []byte {
	b, err := sframe.Encode(sample(), sframe.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeTruncated(t *testing.T) {
	b := sampleBytes(t)
	if _, err := sframe.Decode(b); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		_, err := sframe.Decode(b[:n])
		if err == nil {
			t.Errorf("%d of %d bytes decoded without error", n, len(b))
			continue
		}
		var se *sframe.Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "offset 0x") {
			t.Errorf("%d bytes: error %q does not name an offset", n, err)
		}
	}
}

func TestDecodeBad(t *testing.T) {
	be := binary.BigEndian
	// Layout of sampleBytes: header 28, FDE index 2×16 at 28, FRE
	// sub-section at 60: attr(5) FRE FRE attr(5) FRE FRE.
	cases := []struct {
		name  string
		patch func(b []byte) []byte
		want  string
	}{
		{"bad magic", func(b []byte) []byte { b[0] = 0x12; return b }, "offset 0x0: sfp_magic: bad magic"},
		{"version 4", func(b []byte) []byte { b[2] = 4; return b }, "sfp_version: version 4 is not supported"},
		{"version 0", func(b []byte) []byte { b[2] = 0; return b }, "sfp_version"},
		{"unknown flag", func(b []byte) []byte { b[3] |= 0x8; return b }, "sfp_flags: flags 0xd have bits 0x8"},
		{"FRAME_POINTER in V3", func(b []byte) []byte { b[3] |= 0x2; return b }, "bits 0x2 that version 3 does not define"},
		{"unknown ABI", func(b []byte) []byte { b[4] = 9; return b }, "sfh_abi_arch: unknown SFrame ABI/arch 9"},
		{"ABI of the other byte order", func(b []byte) []byte { b[4] = abi.SFrameAArch64LE; return b }, "sfh_abi_arch: ABI aarch64"},
		{"aux header overrun", func(b []byte) []byte { b[7] = 0xff; return b }, "sfh_auxhdr_len"},
		{"FDE count overruns", func(b []byte) []byte { be.PutUint32(b[8:], 1000); return b }, "sfh_num_fdes: 1000 FDEs"},
		{"FDE count huge", func(b []byte) []byte { be.PutUint32(b[8:], 0xffffffff); return b }, "sfh_num_fdes"},
		{"FRE total wrong", func(b []byte) []byte { be.PutUint32(b[12:], 5); return b }, "sfh_num_fres: header counts 5 FREs but the FDEs hold 4"},
		{"FRE length overruns", func(b []byte) []byte { be.PutUint32(b[16:], 0x1000); return b }, "sfh_fre_len"},
		{"fdeoff after freoff", func(b []byte) []byte { be.PutUint32(b[20:], 64); return b }, "sfh_fdeoff"},
		{"FRE sub-section overlaps FDEs", func(b []byte) []byte { be.PutUint32(b[24:], 8); return b }, "sfh_freoff"},
		{"FRE offset out of range", func(b []byte) []byte { be.PutUint32(b[28+12:], 0x5000); return b }, "offset 0x28: FDE start_fre_off: FRE offset 0x5000 is outside"},
		{"FRE start past the function", func(b []byte) []byte { b[60+5] = 200; return b }, "FRE start address: 0xc8 is past the function size 0x28"},
		{"FREs out of order", func(b []byte) []byte { b[60+5+3] = 0; b[60+5] = 3; return b }, "FRE start address: 0x0 is before"},
		{"data word size 3", func(b []byte) []byte { b[60+6] |= 3 << 5; return b }, "FRE info: data word size code 3"},
		{"too many data words", func(b []byte) []byte { b[60+6] = 7 << 1; return b }, "FRE info: 7 data words"},
		{"unknown FDE type", func(b []byte) []byte { b[60+3] = 7; return b }, "FDE info2: FDE type 7"},
		{"unknown FRE type", func(b []byte) []byte { b[60+2] = 5; return b }, "FDE info: FRE type 5"},
		{"FRE count overruns", func(b []byte) []byte { be.PutUint16(b[60:], 0xffff); return b }, "FDE num_fres"},
		{"unsorted with SORTED set", func(b []byte) []byte { be.PutUint64(b[28:], 0x1000); return b }, "but SFRAME_F_FDE_SORTED is set"},
		{"garbage after the FREs", func(b []byte) []byte { return append(b, 0, 1) }, "padding: non-zero byte 0x01"},
		{"header only", func(b []byte) []byte { return b[:20] }, "header: truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.patch(sampleBytes(t))
			_, err := sframe.Decode(b)
			if err == nil {
				t.Fatalf("decoded without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
	// Zero padding after the section is fine (s390x gas pads to 8).
	if _, err := sframe.Decode(append(sampleBytes(t), 0, 0, 0)); err != nil {
		t.Errorf("zero padding: %v", err)
	}
}

func TestEncodeRejects(t *testing.T) {
	cases := []struct {
		name  string
		patch func(s *sframe.Section)
		want  string
	}{
		{"flex in V2", func(s *sframe.Section) { s.Version = 2 }, "flexible FDEs need version 3"},
		{"register RA in a default FDE", func(s *sframe.Section) {
			s.FDEs[0].FREs[1].RA = sframe.Rule{Kind: sframe.RuleReg, Reg: 16}
		}, "RA rule r16+0 needs a flexible FDE"},
		{"s390x CFA offset not 160+8n", func(s *sframe.Section) { s.FDEs[0].FREs[1].CFA.Off = 164 }, "CFA offset 164 is not 160 plus a multiple of 8"},
		{"FP without an RA word", func(s *sframe.Section) { s.FDEs[0].FREs[1].RA = sframe.Rule{} }, "FP rule without an RA word"},
		{"FRE past the function", func(s *sframe.Section) { s.FDEs[0].FREs[1].Start = 99 }, "start 0x63 is past the function size"},
		{"version 1", func(s *sframe.Section) { s.Version = 1 }, "cannot encode version 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := sample()
			c.patch(s)
			_, err := sframe.Encode(s, sframe.EncodeOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	s, err := sframe.Decode(sampleBytes(t))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pc      int64
		fde     int64
		fre     uint32
		wantErr error
	}{
		{0x100, 0x100, 0, nil}, {0x105, 0x100, 0, nil}, {0x106, 0x100, 6, nil}, {0x127, 0x100, 6, nil},
		{0x128, 0, 0, sframe.ErrNoFDE}, {0xff, 0, 0, sframe.ErrNoFDE}, {0x204, 0x200, 4, nil}, {0x300, 0, 0, sframe.ErrNoFDE},
	}
	for _, c := range cases {
		f, fre, err := s.Find(c.pc)
		if !errors.Is(err, c.wantErr) {
			t.Errorf("Find(%#x): error %v, want %v", c.pc, err, c.wantErr)
			continue
		}
		if err == nil && (f.Start != c.fde || fre.Start != c.fre) {
			t.Errorf("Find(%#x) = FDE %#x FRE %#x, want %#x %#x", c.pc, f.Start, fre.Start, c.fde, c.fre)
		}
	}
	// PC type MASK: the offset within the repeated block selects the row.
	plt := &sframe.Section{Version: 3, Flags: sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL,
		ABI: abi.SFrameAMD64LE, FixedRA: -8, Order: binary.LittleEndian,
		FDEs: []sframe.FDE{{Start: 0x1000, Size: 80, PCType: sframe.PCMask, RepSize: 16, FREs: []sframe.FRE{
			{Start: 0, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 7, Off: 1}},
			{Start: 6, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 7, Off: 2}},
			{Start: 0xc, CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 7, Off: 3}},
		}}}}
	b, err := sframe.Encode(plt, sframe.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plt, err = sframe.Decode(b); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pc  int64
		cfa int64
	}{{0x1000, 1}, {0x1006, 2}, {0x100c, 3}, {0x1030, 1}, {0x1036, 2}, {0x103c, 3}} {
		_, fre, err := plt.Find(c.pc)
		if err != nil || fre.CFA.Off != c.cfa {
			t.Errorf("plt Find(%#x): %v %v, want CFA offset %d", c.pc, fre, err, c.cfa)
		}
	}
	if _, _, err := plt.Find(0x1050); !errors.Is(err, sframe.ErrNoFDE) {
		t.Errorf("plt+80: %v, want ErrNoFDE", err)
	}
	s.Flags &^= sframe.SFRAME_F_FDE_SORTED
	if _, _, err := s.Find(0x100); !errors.Is(err, sframe.ErrNotSorted) {
		t.Errorf("unsorted: %v, want ErrNotSorted", err)
	}
}
