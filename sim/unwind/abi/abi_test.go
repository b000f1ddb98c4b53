package abi

import (
	"debug/elf"
	"encoding/binary"
	"testing"
)

func TestStripPAC(t *testing.T) {
	a, err := ForMachine(elf.EM_AARCH64, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want uint64 }{
		{0x0000_0055_0000_1234, 0x0000_0055_0000_1234}, // unsigned
		{0x003e_0055_0000_1234, 0x0000_0055_0000_1234}, // code in 54:48
		{0xab3e_0055_0000_1234, 0xab00_0055_0000_1234}, // the top byte is kept
		{0xff80_0000_0000_1000, 0xffff_0000_0000_1000}, // upper half: ones
	} {
		if got := a.StripPAC(tc.in); got != tc.want {
			t.Errorf("StripPAC(%#x) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	s, _ := ForMachine(elf.EM_S390, binary.BigEndian)
	if s.StripPAC(0x003e_0000_0000_1234) != 0x003e_0000_0000_1234 {
		t.Error("s390x has no PAC to strip")
	}
}

func TestRegLayout(t *testing.T) {
	s, _ := ForMachine(elf.EM_S390, binary.BigEndian)
	for _, tc := range []struct {
		dwarf, idx int
		vec, ok    bool
	}{
		{15, 15, false, true}, {16, 0, true, true}, {17, 2, true, true}, {20, 1, true, true},
		{24, 8, true, true}, {31, 15, true, true}, {32, 0, false, false}, {-1, 0, false, false},
	} {
		idx, vec, ok := s.Regs.Locate(tc.dwarf)
		if idx != tc.idx || vec != tc.vec || ok != tc.ok {
			t.Errorf("s390x DWARF %d: %d %v %v, want %d %v %v", tc.dwarf, idx, vec, ok, tc.idx, tc.vec, tc.ok)
		}
	}
	a, _ := ForMachine(elf.EM_AARCH64, binary.LittleEndian)
	if idx, vec, ok := a.Regs.Locate(31); idx != 31 || vec || !ok {
		t.Error("aarch64 sp is GPR 31 of the state")
	}
	if idx, vec, ok := a.Regs.Locate(72); idx != 8 || !vec || !ok || a.Regs.FPRHigh {
		t.Error("aarch64 v8 is the low half of vector 8")
	}
}
