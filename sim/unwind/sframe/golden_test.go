package sframe_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/internal/shared"
	"simrun/sim/unwind/sframe"
)

type goldenSection struct {
	name, arch string
	bytes      []byte // with the FDE start relocations applied
	raw        []byte // as gas wrote them
	dump       string // objdump --sframe output
	fileName   string // the object's name in the dump header
}

var relaLine = regexp.MustCompile(`^([0-9a-f]{16})\s+[0-9a-f]+\s+R_\S+\s+[0-9a-f]+\s+\S+\s*\+\s*([0-9a-f]+)`)

// goldenSections reads every .sframe.hex gas 2.46 wrote, applies the
// relocations objdump applies (the FDE start fields of .o files), and
// pairs it with objdump's output.
func goldenSections(t *testing.T) []goldenSection {
	var out []goldenSection
	for _, sub := range []string{"gas-cfi-sframe", "extra"} {
		dir := shared.SFrame(t, "golden", sub)
		hexes, _ := filepath.Glob(filepath.Join(dir, "*.sframe.hex"))
		for _, h := range hexes {
			base := strings.TrimSuffix(filepath.Base(h), ".sframe.hex")
			i := strings.LastIndex(base, ".")
			g := goldenSection{name: base[:i], arch: base[i+1:], fileName: base + ".o"}
			if sub == "extra" {
				g.fileName = g.name + ".o"
			}
			text, err := os.ReadFile(h)
			if err != nil {
				t.Fatal(err)
			}
			if g.raw, err = shared.Xxd(string(text)); err != nil {
				t.Fatal(err)
			}
			dump, err := os.ReadFile(filepath.Join(dir, base+".objdump-sframe.txt"))
			if err != nil {
				t.Fatal(err)
			}
			g.dump = string(dump)
			g.bytes = append([]byte(nil), g.raw...)
			order := binary.ByteOrder(binary.BigEndian)
			if g.arch == "aarch64" {
				order = binary.LittleEndian
			}
			relas, err := os.ReadFile(filepath.Join(dir, base+".rela-sframe.txt"))
			if err == nil {
				for _, l := range strings.Split(string(relas), "\n") {
					if m := relaLine.FindStringSubmatch(l); m != nil {
						off, _ := strconv.ParseUint(m[1], 16, 64)
						add, _ := strconv.ParseUint(m[2], 16, 64)
						order.PutUint64(g.bytes[off:], add-off)
					}
				}
			} else if n := order.Uint32(g.bytes[8:]); n == 1 {
				// One function at 0 (the extra probes).
				order.PutUint64(g.bytes[28:], ^uint64(27)) // -28: back to the section start
			}
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		t.Fatal("no golden sections")
	}
	return out
}

func fileHeader(t *testing.T, name string, s *sframe.Section) string {
	a, err := abi.ForSFrame(s.ABI)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("\n%s:     file format %s\n\n", name, a.BFDName)
}

// TestGoldenDecodeDump decodes what gas 2.46 wrote and prints it exactly
// as objdump 2.46 did.
func TestGoldenDecodeDump(t *testing.T) {
	for _, g := range goldenSections(t) {
		t.Run(g.name+"."+g.arch, func(t *testing.T) {
			s, err := sframe.Decode(g.bytes)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			b.WriteString(fileHeader(t, g.fileName, s))
			if err := sframe.Dump(&b, s, ".sframe", 0); err != nil {
				t.Fatal(err)
			}
			if b.String() != g.dump {
				t.Errorf("dump differs:\n--- got\n%s--- want\n%s", b.String(), g.dump)
			}
		})
	}
}

// TestRoundTrip: encoding a decoded section gives its bytes back.
func TestRoundTrip(t *testing.T) {
	type input struct {
		name string
		b    []byte
	}
	var ins []input
	for _, g := range goldenSections(t) {
		ins = append(ins, input{g.name + "." + g.arch, g.bytes})
	}
	for _, f := range []string{"DATA1", "DATA2", "DATA-V2", "DATA-BE", "DATA-BE-V3"} {
		b, err := os.ReadFile(shared.SFrame(t, "libsframe-decode", f+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, input{f, b})
	}
	for _, in := range ins {
		t.Run(in.name, func(t *testing.T) {
			s, err := sframe.Decode(in.b)
			if err != nil {
				t.Fatal(err)
			}
			var opt sframe.EncodeOptions
			if s.ABI == abi.SFrameS390XBE && len(in.b)%8 == 0 {
				opt.PadTo = 8
			}
			got, err := sframe.Encode(s, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, in.b) {
				t.Errorf("re-encoded section differs:\n got  % x\n want % x", got, in.b)
			}
		})
	}
}

// TestLibsframeDecode checks the libsframe.decode inputs against what
// libsframe's tests assert about them.
func TestLibsframeDecode(t *testing.T) {
	cases := []struct {
		file         string
		version      uint8
		order        binary.ByteOrder
		fdes, perFDE int
		flags        uint8
		fixedRA      int8
	}{
		{"DATA1", 2, binary.LittleEndian, 1, 4, sframe.SFRAME_F_FDE_SORTED, -8},
		{"DATA2", 3, binary.LittleEndian, 2, 4, sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL, -8},
		{"DATA-V2", 2, binary.LittleEndian, 2, 4, sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL, -8},
		{"DATA-BE", 2, binary.BigEndian, 1, 5, 0, 0},
		{"DATA-BE-V3", 3, binary.BigEndian, 1, 5, sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL, 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(shared.SFrame(t, "libsframe-decode", c.file+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := sframe.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if s.Version != c.version || s.Order != c.order || s.Flags != c.flags || s.FixedRA != c.fixedRA {
				t.Errorf("version %d order %v flags %#x fixed RA %d; want %d %v %#x %d", s.Version, s.Order, s.Flags, s.FixedRA, c.version, c.order, c.flags, c.fixedRA)
			}
			if len(s.FDEs) != c.fdes {
				t.Fatalf("%d FDEs, want %d", len(s.FDEs), c.fdes)
			}
			for i, f := range s.FDEs {
				if len(f.FREs) != c.perFDE {
					t.Errorf("FDE %d has %d FREs, want %d", i, len(f.FREs), c.perFDE)
				}
			}
			var dump bytes.Buffer
			if err := sframe.Dump(&dump, s, ".sframe", 0); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", dump.String())
		})
	}
}

// TestBEFlippingV3 is libsframe's be-flipping-v3 test and the dump its
// README shows (objdump of the linked program: section at 0x10000d0).
func TestBEFlippingV3(t *testing.T) {
	b, err := os.ReadFile(shared.SFrame(t, "libsframe-decode", "DATA-BE-V3.bin"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sframe.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	fre := s.FDEs[0].FREs[2]
	if fre.CFA.Off != 160 || fre.RA != (sframe.Rule{Kind: sframe.RuleReg, Reg: 16}) || fre.FP != (sframe.Rule{Kind: sframe.RuleReg, Reg: 17}) {
		t.Errorf("FRE 2 = %v; want CFA sp+160, RA in r16, FP in r17", fre)
	}
	readme, err := os.ReadFile(shared.SFrame(t, "libsframe-decode", "README-be-flipping-v3"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "Contents of the SFrame section")
	j := strings.Index(text, "$ s390x-ibm-linux-gnu-objcopy")
	if i < 0 || j < i {
		t.Fatal("README-be-flipping-v3: no dump found")
	}
	var dump bytes.Buffer
	if err := sframe.Dump(&dump, s, ".sframe", 0x10000d0); err != nil {
		t.Fatal(err)
	}
	if got, want := trimLines(dump.String()), trimLines(text[i:j]); got != want {
		t.Errorf("dump differs (trailing blanks aside):\n--- got\n%s\n--- want\n%s", got, want)
	}
}

func trimLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}
