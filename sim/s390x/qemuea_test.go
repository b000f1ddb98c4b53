package s390x

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"simrun/internal/oracle"
	"simrun/internal/timingtest"
	"simrun/programs"
)

// storageRule is the register rule for the s390x instructions whose
// accesses qemu 7.2's plugin interface does not show (qemu performs them
// on the host's memory directly), by the z/Architecture Principles of
// Operation (64-bit addressing mode; a base or index field of 0 means no
// register):
//   - MVC, NC, OC, XC (SS-a format: op, L, B1 D1, B2 D2): the sampled
//     access is the first operand's, at D1(B1), which they store to
//     (Chapter 7, "MOVE (character)" and the AND, OR, EXCLUSIVE OR
//     character forms);
//   - MVST (RRE, 0xb255: the first operand's address is in R1): the
//     first operand, which the string is stored to;
//   - EXECUTE (EX, RX-a: target at D2(X2,B2)) and EXECUTE RELATIVE LONG
//     (EXRL, RIL-b: target at the EXRL's address + 2*RI2): the target's
//     access, the target's bits 8-15 ORed with R1's bits 56-63 when R1
//     is not 0 (Chapter 7, "EXECUTE"), which for the SS-a targets above
//     only changes the length.
var storageRule = &timingtest.RegsRule{
	Family: func(op *timingtest.LoggedAccess) string { return ssFamily(op.Code) },
	Addr: func(op *timingtest.LoggedAccess, rec *oracle.Record, read func(uint64, int) ([]byte, error)) (uint64, error) {
		code := op.Code
		reg := func(r byte) uint64 {
			if r == 0 {
				return 0
			}
			return rec.R[r]
		}
		if f := ssFamily(code); f == "ex" || f == "exrl" {
			var target uint64
			if f == "ex" {
				target = reg(code[1]&15) + reg(code[2]>>4) + uint64(binary.BigEndian.Uint16(code[2:])&0xfff)
			} else {
				target = op.PC + 2*uint64(int64(int32(binary.BigEndian.Uint32(code[2:]))))
			}
			var err error
			for n := 6; n >= 2; n -= 2 {
				if code, err = read(target, n); err == nil {
					break
				}
			}
			if err != nil {
				return 0, fmt.Errorf("%s target %#x: %w", f, target, err)
			}
			code = append([]byte(nil), code...)
			if r1 := op.Code[1] >> 4; r1 != 0 {
				code[1] |= byte(rec.R[r1])
			}
			if f := ssFamily(code); f == "" || f == "ex" || f == "exrl" {
				return 0, fmt.Errorf("%s target % x at %#x: no rule", f, code, target)
			}
		}
		switch ssFamily(code) {
		case "mvst":
			return rec.R[code[3]>>4], nil
		default: // mvc, nc, oc, xc
			return reg(code[2]>>4) + uint64(binary.BigEndian.Uint16(code[2:])&0xfff), nil
		}
	},
}

// ssFamily names the instruction family of code among those of
// storageRule ("" = another).
func ssFamily(code []byte) string {
	switch {
	case len(code) >= 6 && code[0] == 0xd2:
		return "mvc"
	case len(code) >= 6 && code[0] == 0xd4:
		return "nc"
	case len(code) >= 6 && code[0] == 0xd6:
		return "oc"
	case len(code) >= 6 && code[0] == 0xd7:
		return "xc"
	case len(code) >= 4 && code[0] == 0xb2 && code[1] == 0x55:
		return "mvst"
	case len(code) >= 4 && code[0] == 0x44:
		return "ex"
	case len(code) >= 6 && code[0] == 0xc6 && code[1]&15 == 0:
		return "exrl"
	}
	return ""
}

// TestAddressesAgainstQemu is the oracle test for the addresses simrun
// logs (and SPE samples): they are the ones qemu-user computes, for every
// load and store of the bundled programs (the freestanding ones and a
// representative part of the glibc ones).
func TestAddressesAgainstQemu(t *testing.T) {
	oracle.RequireMemTrace(t, "s390x")
	bins := programs.Binaries("s390x")
	for _, b := range programs.GlibcBinaries("s390x") {
		if b.Name == "jumps" || b.Name == "strings" {
			bins = append(bins, b)
		}
	}
	c := &timingtest.AddressCheck{Limit: 1 << 21, Regs: storageRule, RegsWithin: 1 << 17, Quota: 200}
	checked := c.CheckAll(t, bins)
	for _, f := range []string{"mvc", "xc", "ex"} {
		if c.ByRegs[f] == 0 {
			t.Errorf("no %s checked against qemu's registers", f)
		}
	}
	if checked < 100000 {
		t.Errorf("only %d addresses checked against qemu's accesses", checked)
	}
}

// TestStorageRule checks the register rule on hand-made instructions
// (the EXRL case does not occur early enough in the bundled programs).
func TestStorageRule(t *testing.T) {
	var rec oracle.Record
	rec.R[1], rec.R[2], rec.R[3], rec.R[5] = 0x1000, 0x2000, 0x3000, 0x0f
	mem := map[uint64][]byte{
		0x500000: {0xd2, 0x00, 0x30, 0x10, 0x20, 0x00}, // mvc 16(1,%r3),0(%r2)
		0x2040:   {0xd7, 0x07, 0x20, 0x08, 0x20, 0x08}, // xc 8(8,%r2),8(%r2)
		0x600000: {0xe3, 0x20, 0x10, 0x00, 0x00, 0x04}, // lg %r2,0(%r1)
	}
	read := func(addr uint64, n int) ([]byte, error) {
		if b, ok := mem[addr]; ok && n <= len(b) {
			return b[:n], nil
		}
		return nil, fmt.Errorf("unmapped %#x", addr)
	}
	for _, tc := range []struct {
		code   []byte
		pc     uint64
		family string
		want   uint64
		err    string
	}{
		{[]byte{0xd2, 0x07, 0x10, 0x08, 0x20, 0x00}, 0, "mvc", 0x1008, ""},           // mvc 8(8,%r1),0(%r2)
		{[]byte{0xd7, 0xff, 0x00, 0x40, 0x00, 0x40}, 0, "xc", 0x40, ""},              // xc 64(256),64: no base
		{[]byte{0xd4, 0x00, 0x2f, 0xff, 0x10, 0x00}, 0, "nc", 0x2fff, ""},            // nc 4095(1,%r2),0(%r1)
		{[]byte{0xd6, 0x00, 0x30, 0x00, 0x10, 0x00}, 0, "oc", 0x3000, ""},            // oc 0(1,%r3),0(%r1)
		{[]byte{0xb2, 0x55, 0x00, 0x12}, 0, "mvst", 0x1000, ""},                      // mvst %r1,%r2
		{[]byte{0x44, 0x50, 0x20, 0x40}, 0, "ex", 0x2008, ""},                        // ex %r5,64(%r2) -> xc
		{[]byte{0x44, 0x01, 0x30, 0x40}, 0, "ex", 0, "unmapped 0x4040"},              // ex %r0,64(%r1,%r3)
		{[]byte{0xc6, 0x00, 0x00, 0x00, 0x00, 0x10}, 0x4fffe0, "exrl", 0x3010, ""},   // exrl %r0,.+32 -> mvc
		{[]byte{0xc6, 0x00, 0xff, 0xff, 0xff, 0xf0}, 0x500020, "exrl", 0x3010, ""},   // exrl %r0,.-32
		{[]byte{0xc6, 0x00, 0x00, 0x00, 0x00, 0x10}, 0x5fffe0, "exrl", 0, "no rule"}, // exrl %r0,.+32 -> lg
		{[]byte{0xe3, 0x20, 0x10, 0x00, 0x00, 0x04}, 0, "", 0, ""},                   // lg: not a family of the rule
	} {
		op := &timingtest.LoggedAccess{PC: tc.pc, Code: tc.code}
		f := storageRule.Family(op)
		if f != tc.family {
			t.Errorf("% x: family %q, want %q", tc.code, f, tc.family)
			continue
		}
		if f == "" {
			continue
		}
		got, err := storageRule.Addr(op, &rec, read)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("% x: %#x, %v, want an error containing %q", tc.code, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("% x: %#x, %v, want %#x", tc.code, got, err, tc.want)
		}
	}
}
