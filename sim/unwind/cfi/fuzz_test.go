package cfi_test

import (
	"encoding/binary"
	"testing"

	"simrun/programs"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/cfi"
	"simrun/sim/unwind/sframe"
)

// FuzzEHFrame: no .eh_frame makes the parser, the row builder or the
// SFrame translation panic, in either byte order.
func FuzzEHFrame(f *testing.F) {
	f.Add(ehFrame(0x1b, 0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1, 0x42, 0x0a, 0x0e, 0, 0xdd, 0x41, 0x0b), false)
	f.Add(ehFrame(0x1b, 0x41, 0x2d, 0x10, 0x06, 0x02, 0x76, 0x78), false)
	for _, name := range []string{"aarch64-O2", "s390x-O2"} {
		if b, err := programs.Find(name, "fib"); err == nil {
			if o, err := unwind.Open(b.Path); err == nil {
				if data, _, ok, err := o.Section(".eh_frame"); ok && err == nil {
					f.Add(data, name == "s390x-O2")
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, big bool) {
		opt := cfi.Options{Kind: cfi.EHFrame, Order: binary.LittleEndian, Addr: 0x400000}
		machine := abi.SFrameAArch64LE
		if big {
			opt.Order, machine = binary.BigEndian, abi.SFrameS390XBE
		}
		for _, kind := range []cfi.Kind{cfi.EHFrame, cfi.DebugFrame} {
			opt.Kind = kind
			s, err := cfi.Parse(data, opt)
			if err != nil {
				continue
			}
			for _, fde := range s.FDEs {
				s.Rows(fde)
			}
			a, _ := abi.ForSFrame(uint8(machine))
			for _, v := range []uint8{2, 3} {
				out, _, err := sframe.FromCFI(s, sframe.TranslateOptions{ABI: a, Version: v, SectionAddr: 0x400000, Sort: true})
				if err != nil {
					continue
				}
				if b, err := sframe.Encode(out, sframe.EncodeOptions{}); err == nil {
					if _, err := sframe.Decode(b); err != nil {
						t.Fatalf("emitted section does not decode: %v", err)
					}
				}
			}
		}
	})
}
