package sframe_test

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/shareddata"
	"simrun/programs"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/cfi"
	"simrun/sim/unwind/internal/shared"
	"simrun/sim/unwind/sframe"
)

// FuzzSFrameDecode: no input makes the decoder, dumper, lookup or
// encoder panic, and what decodes and re-encodes decodes again.
func FuzzSFrameDecode(f *testing.F) {
	s := sample()
	if b, err := sframe.Encode(s, sframe.EncodeOptions{}); err == nil {
		f.Add(b)
	}
	s.Version = 2
	s.FDEs = s.FDEs[:1]
	if b, err := sframe.Encode(s, sframe.EncodeOptions{}); err == nil {
		f.Add(b)
	}
	if dir := sharedDir(); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "sframe", "libsframe-decode", "*.bin"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
		hexes, _ := filepath.Glob(filepath.Join(dir, "sframe", "golden", "gas-cfi-sframe", "*.sframe.hex"))
		for _, h := range hexes {
			text, _ := os.ReadFile(h)
			if b, err := shared.Xxd(string(text)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := sframe.Decode(b)
		if err != nil {
			return
		}
		if err := sframe.Dump(io.Discard, s, ".sframe", 0x1000); err != nil {
			t.Fatalf("dump: %v", err)
		}
		if s.Flags&sframe.SFRAME_F_FDE_SORTED != 0 {
			for _, f := range s.FDEs {
				s.Find(f.Start)
				s.Find(f.Start + int64(f.Size) - 1)
			}
		}
		if s.Version == sframe.SFRAME_VERSION_1 {
			return
		}
		out, err := sframe.Encode(s, sframe.EncodeOptions{})
		if err != nil {
			return // a decodable rule the encoder refuses (e.g. RA = CFA+0)
		}
		if _, err := sframe.Decode(out); err != nil {
			t.Fatalf("re-encoded section does not decode: %v", err)
		}
	})
}

// sharedDir returns the test-data folder found beside the repository
// (../shared) if it is there: its binutils SFrame test inputs (libsframe
// decode inputs, gas cfi-sframe outputs) only add fuzz seeds, so their
// absence is no reason to skip or fail.
func sharedDir() string {
	d, err := shareddata.Root()
	if err != nil {
		return ""
	}
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// ehFrame is an .eh_frame (little-endian, at 0x400000) of one CIE (code
// align 4, data align -8, RA x30, CFA sp+0) and an FDE for each list of
// instructions given, the k-th for 0x40 bytes at 0x400000 + k*0x40.
func ehFrame(fdes ...[]byte) []byte {
	cie := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 4, 0x78, 30, 1, 0x1b, 0x0c, 31, 0}
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(cie)))
	b = append(b, cie...)
	for k, insns := range fdes {
		pos := len(b)
		fde := binary.LittleEndian.AppendUint32(nil, uint32(pos+4))         // CIE pointer
		fde = binary.LittleEndian.AppendUint32(fde, uint32(k*0x40-(pos+8))) // pc_begin, pc-relative
		fde = binary.LittleEndian.AppendUint32(fde, 0x40)                   // pc_range
		fde = append(fde, 0)                                                // no augmentation data
		fde = append(fde, insns...)
		for len(fde)%4 != 0 {
			fde = append(fde, 0)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(fde)))
		b = append(b, fde...)
	}
	return append(b, 0, 0, 0, 0)
}

// TestEmitCorruptFDE: a function whose CFI the translation lets through
// but the encoder cannot write (here: rows past the function's end) is
// left out with a warning; the other functions are emitted and the
// section decodes.
func TestEmitCorruptFDE(t *testing.T) {
	good := []byte{0x41, 0x0e, 16} // advance 4; def_cfa_offset 16
	tests := []struct {
		name string
		bad  []byte
		warn string
	}{
		{"advance past the end", []byte{0x41, 0x0e, 16, 0x7f, 0x0e, 32}, "FRE 2: start 0x100 is past the function size 0x40"},
		{"advance4 past the end", []byte{0x04, 0, 1, 0, 0, 0x0e, 32}, "start 0x400 is past the function size 0x40"},
		{"a CFA offset gas refuses", []byte{0x41, 0x0c, 31, 0xff, 0xff, 0xff, 0xff, 0x0f}, ".cfi_def_cfa with unsupported offset value"},
	}
	a, err := abi.ForSFrame(abi.SFrameAArch64LE)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec, err := cfi.Parse(ehFrame(good, tt.bad, good), cfi.Options{Kind: cfi.EHFrame, Order: binary.LittleEndian, AddrSize: 8, Addr: 0x400000})
			require.NoError(t, err)
			for _, v := range []uint8{2, 3} {
				s, warns, err := sframe.FromCFI(sec, sframe.TranslateOptions{ABI: a, Version: v, SectionAddr: 0x400000, Sort: true})
				require.NoError(t, err)
				require.Len(t, warns, 1)
				assert.Equal(t, uint64(0x400040), warns[0].PC)
				assert.Contains(t, warns[0].String(), tt.warn)
				require.Len(t, s.FDEs, 2)
				assert.Equal(t, []int64{0, 0x80}, []int64{s.FDEs[0].Start, s.FDEs[1].Start})
				b, err := sframe.Encode(s, sframe.EncodeOptions{})
				require.NoError(t, err)
				_, err = sframe.Decode(b)
				require.NoError(t, err)
			}
		})
	}
}

// FuzzEmitFromEHFrame: random and corrupt .eh_frame (and .debug_frame)
// bytes go through the gas translation and the encoder the way `simrun
// sframe` emits a section, in both versions and byte orders; every
// section the encoder writes decodes, and the decoded section dumps
// exactly as the emitted one (nothing was silently changed on the way).
func FuzzEmitFromEHFrame(f *testing.F) {
	f.Add(ehFrame([]byte{0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1, 0x42, 0x0a, 0x0e, 0, 0xdd, 0x41, 0x0b}), false)
	f.Add(ehFrame([]byte{0x41, 0x2d, 0x10, 0x06, 0x02, 0x76, 0x78}, []byte{0x41, 0x0e, 16}), false)
	f.Add(ehFrame([]byte{0x01, 0x00, 0x00, 0x40, 0x00, 0x0e, 0x20, 0x01, 0x10, 0x00, 0x40, 0x00}), false) // set_loc
	f.Add(ehFrame([]byte{0x44, 0x0c, 31, 0xff, 0xff, 0xff, 0xff, 0x0f}), false)                           // a huge CFA offset
	f.Add(ehFrame([]byte{0x41, 0x0e, 16, 0x7f, 0x0e, 32}), false)                                         // past the function's end
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
		opt := cfi.Options{Kind: cfi.EHFrame, Order: binary.LittleEndian, AddrSize: 8, Addr: 0x400000}
		machine := abi.SFrameAArch64LE
		if big {
			opt.Order, machine = binary.BigEndian, abi.SFrameS390XBE
		}
		a, err := abi.ForSFrame(uint8(machine))
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []cfi.Kind{cfi.EHFrame, cfi.DebugFrame} {
			opt.Kind = kind
			sec, err := cfi.Parse(data, opt)
			if err != nil {
				continue
			}
			for _, v := range []uint8{2, 3} {
				for _, sorted := range []bool{false, true} {
					addr := uint64(0x400000)
					if !sorted {
						addr = 0 // a relocatable object's section
					}
					s, _, err := sframe.FromCFI(sec, sframe.TranslateOptions{ABI: a, Version: v, SectionAddr: addr, Sort: sorted})
					if err != nil {
						continue
					}
					b, err := sframe.Encode(s, sframe.EncodeOptions{PadTo: 8})
					if err != nil {
						t.Fatalf("v%d: the translation made a section the encoder refuses: %v", v, err)
					}
					back, err := sframe.Decode(b)
					if err != nil {
						t.Fatalf("v%d: emitted section does not decode: %v", v, err)
					}
					var want, got strings.Builder
					if err := sframe.Dump(&want, s, ".sframe", addr); err != nil {
						t.Fatal(err)
					}
					if err := sframe.Dump(&got, back, ".sframe", addr); err != nil {
						t.Fatalf("v%d: decoded section does not dump: %v", v, err)
					}
					if want.String() != got.String() {
						t.Fatalf("v%d: the decoded section differs from the emitted one:\nemitted:\n%s\ndecoded:\n%s", v, want.String(), got.String())
					}
				}
			}
		}
	})
}
