package arm64

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// FuzzDecodeA64 decodes an arbitrary word and executes it once in a tiny
// machine whose registers point into a data page: decoding never panics,
// and execution either completes or ends in a fault value that is not a
// simulator bug. Words the decoder accepts must also be known to x/arch
// (simrun must not invent encodings).
func FuzzDecodeA64(f *testing.F) {
	for _, w := range []uint32{0xd2800bc8, 0xd4000001, 0xf9400020, 0x4e208400, 0x1e602820, 0x00000000,
		0x88dffc00, 0xb8200020, 0x4cdf7000, 0x9b207c00, 0xd53b4200, 0x6e20d400, 0x0f000400} {
		f.Add(w, uint64(0x410100))
	}
	f.Fuzz(func(t *testing.T, w uint32, reg uint64) {
		in := decode(w, 0x400000)
		if in.op != opUndef && !newerThanXArch(w, in) {
			if _, err := asmDecode(binary.LittleEndian.AppendUint32(nil, w)); err != nil {
				t.Fatalf("simrun decodes %08x (op %v) but x/arch does not: %v", w, in.op, err)
			}
		}
		code := elftest.Words(binary.LittleEndian, w, 0xd2800bc8, 0xd4000001)
		m, err := linux.New("fuzz", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, code, make([]byte, 8192)), linux.Config{MaxInsns: 3})
		if err != nil {
			t.Fatal(err)
		}
		c := m.Core.(*Core)
		for i := 0; i < 31; i++ {
			c.x[i] = reg + uint64(i)*8
			c.v[i] = [2]uint64{reg * uint64(i), ^reg}
		}
		exit, err := m.Run()
		if err != nil {
			t.Fatal(err)
		}
		if exit.Fault != nil && exit.Fault.Kind == cpu.FaultInternal {
			t.Fatalf("%08x: %v", w, exit.Fault)
		}
	})
}

// newerThanXArch reports instructions x/arch's tables (Armv8.0) lack:
// LSE atomics and CAS, LORegion and RCpc ordered accesses, the dc cvap
// family (checked against binutils objdump instead).
func newerThanXArch(w uint32, in inst) bool {
	switch in.op {
	case opCas, opCasp, opAtom, opSwp, opLdar, opStlr, opSysNop:
		return true
	case opLdSt, opLdrXo, opLdrWo, opLdrBo, opStrXo, opStrWo, opStrBo:
		return field(w, 24, 6) == 0b011001 // ldapur/stlur
	}
	return false
}
