package cfi_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"simrun/sim/unwind/cfi"
)

// ehFrame builds a little-endian .eh_frame with one CIE (augmentation
// "zR", FDE encoding enc, code align 4, data align -8, RA 30, initial
// def_cfa 31, 0) and one FDE for [0x1000, 0x1040) with insns.
func ehFrame(enc byte, insns ...byte) []byte {
	le := binary.LittleEndian
	cie := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 4, 0x78, 30, 1, enc, 0x0c, 31, 0}
	for len(cie)%4 != 0 {
		cie = append(cie, 0)
	}
	b := le.AppendUint32(nil, uint32(len(cie)))
	b = append(b, cie...)
	fdeStart := len(b)
	fde := le.AppendUint32(nil, uint32(fdeStart+4)) // CIE pointer: back to 0
	pcField := fdeStart + 8
	fde = le.AppendUint32(fde, uint32(0x1000-pcField)) // pcrel sdata4
	fde = le.AppendUint32(fde, 0x40)
	fde = append(fde, 0)
	fde = append(fde, insns...)
	for (len(fde)+4)%4 != 0 {
		fde = append(fde, 0)
	}
	b = le.AppendUint32(b, uint32(len(fde)))
	b = append(b, fde...)
	return le.AppendUint32(b, 0)
}

var opt = cfi.Options{Kind: cfi.EHFrame, Order: binary.LittleEndian}

func TestParseAndRows(t *testing.T) {
	// advance 4; def_cfa_offset 16; offset 29 at cfa-16; offset 30 at cfa-8;
	// advance 8; remember; def_cfa_offset 0; restore 29; advance 4; restore_state
	b := ehFrame(0x1b, 0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1, 0x42, 0x0a, 0x0e, 0, 0xdd, 0x41, 0x0b)
	s, err := cfi.Parse(b, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.FDEs) != 1 || s.FDEs[0].PCBegin != 0x1000 || s.FDEs[0].PCRange != 0x40 {
		t.Fatalf("FDEs %+v", s.FDEs)
	}
	rows, err := s.Rows(s.FDEs[0])
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		loc    uint64
		cfaOff int64
		fp     cfi.RuleKind
	}
	wants := []want{{0x1000, 0, cfi.RuleUnspecified}, {0x1004, 16, cfi.RuleOffset}, {0x100c, 0, cfi.RuleUnspecified}, {0x1010, 16, cfi.RuleOffset}}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, w := range wants {
		r := rows[i]
		if r.Loc != w.loc || r.CFA.Off != w.cfaOff || r.CFA.Reg != 31 || r.Rule(29).Kind != w.fp {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	if got := rows[1].Rule(30); got.Kind != cfi.RuleOffset || got.Off != -8 {
		t.Errorf("RA rule %+v", got)
	}
}

func TestBigEndian(t *testing.T) {
	// The same CIE/FDE in big-endian order parses the same.
	le := ehFrame(0x1b, 0x41, 0x0e, 16)
	be := append([]byte(nil), le...)
	// Re-encode the 4-byte fields: lengths, CIE id/pointer, pc fields.
	swap := func(off int) { be[off], be[off+1], be[off+2], be[off+3] = le[off+3], le[off+2], le[off+1], le[off] }
	cieLen := int(binary.LittleEndian.Uint32(le))
	for _, off := range []int{0, 4, 4 + cieLen, 8 + cieLen, 12 + cieLen, 16 + cieLen, len(le) - 4} {
		swap(off)
	}
	s, err := cfi.Parse(be, cfi.Options{Kind: cfi.EHFrame, Order: binary.BigEndian})
	if err != nil {
		t.Fatal(err)
	}
	if s.FDEs[0].PCBegin != 0x1000 || s.FDEs[0].PCRange != 0x40 {
		t.Errorf("big-endian FDE %+v", s.FDEs[0])
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		rows bool // the error comes from decoding instructions
		want string
	}{
		{"unknown opcode", ehFrame(0x1b, 0x41, 0x3f), true, "unknown opcode 0x3f"},
		{"bad FDE pointer encoding", ehFrame(0x0e), false, "CIE FDE pointer encoding: bad pointer encoding 0xe"},
		{"indirect FDE pointer", ehFrame(0x9b), false, "bad pointer encoding 0x9b for FDE addresses"},
		{"datarel without base", ehFrame(0x3b), false, "data-relative pointer (encoding 0x3b) but no data base"},
		{"truncated operand", ehFrame(0x1b, 0x41, 0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), true, "DW_CFA_def_cfa_offset offset: ULEB128 value does not fit 64 bits"},
		{"restore_state without remember", ehFrame(0x1b, 0x0b), true, "DW_CFA_restore_state: no state remembered"},
		{"advance past the end", ehFrame(0x1b, 0x02, 0xff), true, "past the function end"},
		{"expression longer than the record", ehFrame(0x1b, 0x0f, 0x40), true, "DW_CFA_def_cfa_expression block: length 64 runs past the end"},
		{"truncated section", ehFrame(0x1b)[:6], false, "record length: length 16 runs past the end of the section"},
		{"record overruns", func() []byte { b := ehFrame(0x1b); b[0] = 0xf0; return b }(), false, "record length: length 240 runs past the end of the section"},
		{"CIE pointer to nowhere", func() []byte {
			b := ehFrame(0x1b)
			binary.LittleEndian.PutUint32(b[24:], 8)
			return b
		}(), false, "FDE CIE pointer: no CIE at offset"},
		{"CIE version 2", func() []byte { b := ehFrame(0x1b); b[8] = 2; return b }(), false, "CIE version: version 2 is not supported"},
		{"unknown augmentation", func() []byte { b := ehFrame(0x1b); b[9] = 'y'; return b }(), false, `augmentation "yR" is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := cfi.Parse(c.data, opt)
			if err == nil && c.rows {
				_, err = s.Rows(s.FDEs[0])
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ".eh_frame offset 0x") {
				t.Errorf("error %q, want %q and an offset", err, c.want)
			}
		})
	}
}
