package s390x

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// opByKeyInfo is the table entry the bytes select, if any.
func opByKeyInfo(code []byte) *opInfo {
	o, ok := opByKey[opcodeKey(leftAligned(code[:insnLen(code[0])]))]
	if !ok {
		return nil
	}
	return o.info()
}

// FuzzDecodeS390x decodes arbitrary bytes and executes them once in a tiny
// machine whose registers point into a data page. The bytes end the code
// segment, so an instruction longer than the input is a fetch fault.
// Decoding never panics; execution completes or ends in a fault value that
// is not a simulator bug; and whatever simrun decodes, x/arch must know
// (simrun must not invent encodings) once the reserved fields, which
// qemu and simrun ignore, are cleared.
func FuzzDecodeS390x(f *testing.F) {
	for _, s := range []string{"0af8", "e33020000004", "b9040012", "ec1230bf1055", "d203f0082000",
		"e71020000806", "e7123000 24f3", "b3950000", "e310", "0000", "07f1", "b9870034", "c0e5fffffffe",
		"44405000", "c61000000000", "c600fffffffd", "b25e0012", "b25d0012", "b2550012", "b2b0f000", "b24f0010", "b24e0010", "b2220030", "b38c0030",
		"e71230302080", "e71230f00082", "e7120010205c", "e7123230408a", // vfeezfs, vfaezbs 15, vistrfs, vstrczbs
		"a8240000", "a9240000", "eb240000008e", "eb240000008f", "0e24", "0f24", "b205f000", "b278f000", "eb700000004c"} { // move/compare long, stck, stcke, ecag
		f.Add(mustHex(s), uint64(0x410100))
	}
	f.Fuzz(func(t *testing.T, code []byte, reg uint64) {
		if len(code) == 0 || len(code) > 6 {
			return
		}
		if len(code) >= insnLen(code[0]) {
			in := decode(code)
			if info := opByKeyInfo(code); info != nil {
				clean := make([]byte, insnLen(code[0]))
				w := leftAligned(code[:len(clean)]) &^ info.reserved
				for i := range clean {
					clean[i] = byte(w >> (56 - 8*i))
				}
				if _, ok := asmName(clean); !ok {
					t.Fatalf("simrun decodes % x (%v) but x/arch does not know % x", code, in.op, clean)
				}
			}
		}
		page := make([]byte, 4096)
		copy(page[4096-len(code):], code)
		file := &elftest.File{Machine: elf.EM_S390, Order: binary.BigEndian, Entry: 0x401000 - uint64(len(code)),
			Segments: []elftest.Segment{
				{Vaddr: 0x400000, Data: page, Flags: elf.PF_R | elf.PF_X},
				{Vaddr: 0x410000, Data: make([]byte, 8192), Flags: elf.PF_R | elf.PF_W},
			}}
		m, err := linux.New("fuzz", file.Bytes(), linux.Config{MaxInsns: 3})
		if err != nil {
			t.Fatal(err)
		}
		c := m.Core.(*Core)
		for i := 0; i < 16; i++ {
			c.r[i] = reg + uint64(i)*8
		}
		for i := range c.v {
			c.v[i] = [2]uint64{reg * uint64(i), ^reg}
		}
		exit, err := m.Run()
		if err != nil {
			t.Fatal(err)
		}
		if exit.Fault != nil && exit.Fault.Kind == cpu.FaultInternal {
			t.Fatalf("% x: %v", code, exit.Fault)
		}
	})
}
