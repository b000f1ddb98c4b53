package s390x

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// The data image of testdata/long.s: a header, the case tables, a scratch
// area for the clock, and from longArena to longEnd eight pages of the
// pattern byte(i % longPeriod) (so that operands longPeriod bytes apart
// are equal) with one 0xff, which the pattern never has, at longDiff.
const (
	longTables = 0x100
	longArena  = 0x2000
	longEnd    = 0xa000
	longPeriod = 251
	longDiff   = 0x8000
	longKinds  = 10
)

// longCase is one execution (repeated while cc 3) of testdata/long.s:
// the operands' offsets from the data, the length registers as loaded
// (mvcl and clcl: with the pad and garbage in bits 0-39) and the register
// the pad's address is formed from.
type longCase struct {
	a1, l1, a2, l2, pad uint64
}

// padReg is the pad register that, with displacement disp, forms pad.
func padReg(pad, disp uint64) uint64 { return pad - disp }

// longMove reports the kinds that move (their first operand is summed).
func longMove(kind int) bool { return kind == 3 || kind == 4 || kind == 5 || kind == 6 || kind == 8 }

// longCases are the cases of each kind of testdata/long.s: lengths 0 and
// 1, equal and unequal lengths, padding, page crossings, more than one
// execution's worth (condition code 3), overlaps, 64-bit lengths, and
// seeded random ones.
func longCases() [longKinds][]longCase {
	const a, p = longArena, longPeriod
	var k [longKinds][]longCase
	rng := rand.New(rand.NewPCG(7, 13))
	pat := func(off uint64) uint64 { return (off - a) % p }
	// clcle (pad = low byte of R6 + 0x123).
	k[0] = []longCase{
		{a, 0, a, 0, 0},
		{a, 0, a + 1, 3, padReg(0x100, 0x123) + 1},                      // pad 1 against 1, 2, 3: low at the second
		{a + 10, 5, a + 10 + p, 5, 0},                                   // equal
		{a + 10, 5, a + 11, 5, 0},                                       // low at once
		{a + 11, 5, a + 10, 5, 0},                                       // high at once
		{a, 1, a, 1, 0},                                                 // one byte, the same
		{a, 0x5000, a, 0x5000, 0},                                       // the same bytes: 0x2000, 0x2000, 0x1000
		{a + 0x100, 0x3000, a + 0x100 + 4*p, 0x3000, 0},                 // equal, more than the limit
		{longDiff - 0x2345, 0x3000, longDiff - 0x2345 + 8*p, 0x3000, 0}, // differs after the limit
		{a + 5, 2, a + 5, 3, padReg(7, 0x123)},                          // the pad extends the first: equal
		{a + 5, 2, a + 5, 3, padReg(6, 0x123)},                          // low
		{a + 5, 2, a + 5, 3, padReg(8, 0x123)},                          // high
		{a, 0x2001, a, 0x10, padReg(16, 0x123)},                         // pad matches one byte, then high
		{a, 1 << 40, a + p, 4, padReg(0xff, 0x123)},                     // a 64-bit length: low after 4
		{a + 3, 0, a + 3, 0x2100, padReg(3, 0x123)},                     // the first operand all pad, limit then low
	}
	// clclu (pad = low halfword of R6 - 0x2468); even lengths.
	k[1] = []longCase{
		{a, 0, a, 0, 0},
		{a + 2, 8, a + 2 + 2*p, 8, 0},
		{a + 2, 8, a + 3, 8, 0},
		{a + 3, 8, a + 2, 8, 0},
		{a, 0x3000, a, 0x3000, 0}, // 0x1000 a time
		{a + 0x40, 0x1802, a + 0x40 + 2*p, 0x1802, 0},
		{longDiff - 0x1001, 0x1100, longDiff - 0x1001 + 2*p, 0x1100, 0}, // differs in the low byte after the limit
		{a + 4, 2, a + 4, 4, 0x0607 + 0x2468},                           // pad halfword equal
		{a + 4, 2, a + 4, 4, 0x0606 + 0x2468},                           // low
		{a + 4, 2, a + 4, 4, 0x0608 + 0x2468},                           // high
		{a + 4, 6, a + 4, 0, 0x0405 + 0x2468},                           // the second operand all pad
		{a, 1 << 41, a + 2*p, 2, 0xffff + 0x2468},
	}
	// clcl: 24-bit lengths in bits 40-63, the pad in bits 32-39 of R2+1,
	// bits 0-31 (and 32-39 of R1+1) ignored.
	g1, g2 := uint64(0xdeadbeef_a5000000), uint64(0x12345678_00000000)
	k[2] = []longCase{
		{a, g1, a, g2, 0},
		{a, g1 | 0x6000, a, g2 | 0x6000, 0},
		{a + 7, g1 | 0x2000, a + 7 + 3*p, g2 | 0x2000, 0},
		{a + 7, g1 | 12, a + 8, g2 | 12, 0},
		{a + 5, g1 | 2, a + 5, g2 | 7<<24 | 3, 0},
		{a + 5, g1 | 2, a + 5, g2 | 6<<24 | 3, 0},
		{a + 5, g1 | 3, a + 5, g2 | 0xff<<24 | 2, 0},
		{longDiff - 0x3456, g1 | 0x4000, longDiff - 0x3456 + p, g2 | 0x4000, 0},
		{a, ^uint64(0), a, ^uint64(0) &^ 0xffffff, 0}, // 0xffffff bytes against all pad 0xff: low at once
	}
	// mvcle (pad = low byte of R6 + 0x123).
	k[3] = []longCase{
		{a, 0, a + 0x100, 0, 0},
		{a, 0, a + 0x100, 5, 0},
		{a + 0x1000, 1, a + 0x100, 1, 0},
		{a + 0x1010, 1, a, 0, padReg(0x5a, 0x123)},
		{a + 0x1020, 5, a + 0x200, 3, padReg(0x5a, 0x123)}, // copy 3, then pad 2
		{a + 0x1030, 3, a + 0x200, 5, 0},                   // copy 3 of 5
		{a + 0x1ff0, 0x40, a + 0x3000, 0x40, 0},            // the first operand crosses a page
		{a + 0x2400, 0x20, a + 0xff8, 0x20, 0},             // the second does
		{a + 0x4123, 0x2345, a + 0x77, 0x2000, 0x123},      // both, then padding with 0
		{a + 0x5800, 0x1800, a, 0, padReg(0xee, 0x123)},    // padding only, three pages
		{a + 0x6010, 0x40, a + 0x6000, 0x40, 0},            // overlapping, first after second
		{a + 0x6100, 0x40, a + 0x6110, 0x40, 0},            // overlapping, first before second
		{a + 0x6200, 4, a + 0x300, 1 << 32, 0},             // a 64-bit second length
		{a + 0x6ffe, 0x1002, a + 0x10, 0x1002, 0},          // 2 bytes, a page, then nothing left
	}
	// mvclu (pad = low halfword of R6 + 0x7ffff).
	k[4] = []longCase{
		{a, 0, a, 0, 0},
		{a + 0x1000, 7, a, 0, padReg(0xabcd, 0x7ffff)}, // pad only, odd: cd ab cd ab cd ab cd
		{a + 0x1010, 8, a, 0, padReg(0xabcd, 0x7ffff)}, // even: ab cd ...
		{a + 0x1020, 9, a + 0x400, 4, padReg(0x1234, 0x7ffff)},
		{a + 0x1030, 4, a + 0x400, 9, 0},
		{a + 0x1ffd, 0x1011, a + 0x2ff1, 0x801, padReg(0x55aa, 0x7ffff)}, // crossings, odd lengths, padding
		{a + 0x3800, 1, a + 0x3000, 1, 0},
	}
	// mvcl: lengths and pad as clcl's.
	k[5] = []longCase{
		{a, g1, a + 0x100, g2, 0},
		{a + 0x1000, g1 | 0x2345, a + 0x200, g2 | 0x77<<24 | 0x1000, 0}, // pages, then padding
		{a + 0x3000, g1 | 3, a + 0x100, g2 | 8, 0},
		{a + 0x3010, g1 | 8, a + 0x100, g2 | 0x3c<<24 | 3, 0},
		{a + 0x3110, g1 | 0x40, a + 0x3100, g2 | 0x40, 0}, // destructive overlap: cc 3, nothing moved
		{a + 0x3110, g1 | 0x10, a + 0x3100, g2 | 0x10, 0}, // touching only: moved
		{a + 0x3200, g1 | 0x40, a + 0x3210, g2 | 0x40, 0}, // first before second: moved
		{a + 0x3300, g1 | 0x20, a + 0x3300, g2 | 0x20, 0}, // the same place
		{a + 0x3400, g1 | 0x10, a + 0x3000, g2, 0},        // padding only, pad 0
	}
	// mvcle %r2,%r2 and clcle %r4,%r4: one pair is both operands.
	k[6] = []longCase{{a + 0x10, 0x1800, 0, 0, 0}, {a + 0x7000, 0, 0, 0, 0}}
	k[7] = []longCase{{0, 0, a, 0x4800, 0}, {0, 0, a + 3, 5, 0}}
	// mvcle and clcle with r0, r1, r14 and r15.
	k[8] = []longCase{{a + 0x5000, 0x1100, a + 0x10, 0x1000, 0x61}}
	k[9] = []longCase{{a + 0x10, 0x2200, a + 0x10 + 2*p, 0x2200, 0}}

	// Seeded random cases: operands anywhere in the arena.
	span := func(n uint64) (uint64, uint64) { // an offset and a length that fit
		l := rng.Uint64N(n)
		switch rng.IntN(4) {
		case 0:
			l = rng.Uint64N(4)
		case 1:
			l = rng.Uint64N(64)
		}
		return a + rng.Uint64N(longEnd-a-l), l
	}
	for range 8 {
		x1, y1 := span(0x3000)
		x2, y2 := span(0x3000)
		k[3] = append(k[3], longCase{x1, y1, x2, y2, rng.Uint64()})
		x1, y1 = span(0x3000)
		x2, y2 = span(0x3000)
		k[4] = append(k[4], longCase{x1, y1, x2, y2, rng.Uint64()})
		x1, y1 = span(0x3000)
		x2, y2 = span(0x3000)
		k[5] = append(k[5], longCase{x1, rng.Uint64()&^0xffffff | y1, x2, rng.Uint64()&^0xffffff | y2, 0})
		// Compares: the second operand mostly a period away, so that
		// long stretches are equal.
		x1, y1 = span(0x2800)
		x2 = x1 + p*rng.Uint64N(3)
		if x2+y1 > longEnd || rng.IntN(4) == 0 {
			x2 = a + rng.Uint64N(longEnd-a-y1)
		}
		y2 = y1 - min(y1, rng.Uint64N(4))
		k[0] = append(k[0], longCase{x1, y1, x2, y2, pat(x1+y2) - 0x123 + rng.Uint64N(2)})
		k[1] = append(k[1], longCase{x1, y1 &^ 1, x2, y2 &^ 1, rng.Uint64()})
	}
	return k
}

// longData is the data image of testdata/long.s for cases k.
func longData(k [longKinds][]longCase) []byte {
	d := make([]byte, longEnd)
	for i := longArena; i < longEnd; i++ {
		d[i] = byte((i - longArena) % longPeriod)
	}
	d[longDiff] = 0xff
	be := binary.BigEndian
	t := uint64(longTables)
	for kind, cs := range k {
		be.PutUint64(d[8*kind:], uint64(len(cs)))
		be.PutUint64(d[0x80+8*kind:], t)
		for _, c := range cs {
			e := d[t : t+64]
			for i, v := range []uint64{c.a1, c.l1, c.a2, c.l2, c.pad} {
				be.PutUint64(e[8*i:], v)
			}
			if longMove(kind) {
				l := c.l1
				switch kind {
				case 5:
					l &= 0xffffff
				case 6:
					l = 0 // copied onto itself
				}
				start := c.a1 &^ 7
				words := min((c.a1+l-start+7)/8, (longEnd-start)/8)
				be.PutUint64(e[40:], start)
				be.PutUint64(e[48:], words)
			}
			t += 64
		}
	}
	if t > 0x1f00 {
		panic("longData: too many cases")
	}
	return d
}

// TestQemuLong runs testdata/long.s, every case of longCases, in lockstep
// with qemu: registers and condition code after every instruction, the
// moves' results through their checksums.
func TestQemuLong(t *testing.T) {
	lockstepAsm(t, "long", longData(longCases()), 1<<20)
}

// TestQemuLongExceptions: an odd register of a pair and clclu's odd
// length are specification exceptions in qemu too (SIGILL, status 132).
func TestQemuLongExceptions(t *testing.T) {
	oracle.Require(t, "s390x")
	for _, tt := range []struct {
		name string
		code []string
	}{
		{"mvcle odd R1", []string{"a8340000"}},
		{"mvclu odd R3", []string{"eb2300000 08e"}},
		{"clcle odd R3", []string{"a9250000"}},
		{"mvcl odd R2", []string{"0e23"}},
		{"clcl odd R1", []string{"0f32"}},
		// lghi %r3,3; clclu %r2,%r4,0 (r2 = 0: the registers are zero)
		{"clclu odd length", []string{"a7390003", "eb240000008f"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "exc")
			require.NoError(t, os.WriteFile(path, prog(mustHex(append(tt.code, "0af8")...), make([]byte, 4096)), 0o755))
			res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 100, CPU: programs.S390xQemuCPU})
			require.NoError(t, err) // the same exit status (132) and count
			require.Contains(t, res.Fault, "specification exception")
		})
	}
}

// Encodings for the unit tests (registers below 16).
func mvcleEnc(r1, r3, b2 uint8, d2 uint16) string {
	return hexBytes(0xa8, r1<<4|r3, b2<<4|uint8(d2>>8), uint8(d2))
}

func clcleEnc(r1, r3, b2 uint8, d2 uint16) string {
	return hexBytes(0xa9, r1<<4|r3, b2<<4|uint8(d2>>8), uint8(d2))
}

func rsyEnc(opc byte, r1, r3, b2 uint8, d2 uint16) string {
	return hexBytes(0xeb, r1<<4|r3, b2<<4|uint8(d2>>8&0xf), uint8(d2), uint8(d2>>12), opc)
}

// TestLongSemantics checks single executions against results worked out
// from the Principles of Operation: registers, condition code and the
// bytes of the first operand.
func TestLongSemantics(t *testing.T) {
	data := make([]byte, 0x3000)
	for i := range data {
		data[i] = byte(i)
	}
	const d = dataAddr
	type want struct {
		r  map[int]uint64
		cc uint8
		at uint64 // offset of mem in the data
		m  []byte
	}
	for _, tt := range []struct {
		name string
		code string
		set  map[int]uint64
		want want
	}{
		{"mvcle copies up to the nearer page end", mvcleEnc(2, 4, 0, 0),
			map[int]uint64{2: d + 0xffc, 3: 10, 4: d + 0x2000, 5: 10},
			want{map[int]uint64{2: d + 0x1000, 3: 6, 4: d + 0x2004, 5: 6}, 3, 0xffa, []byte{0xfa, 0xfb, 0, 1, 2, 3, 0, 1}}},
		{"mvcle pads with the address's low byte", mvcleEnc(2, 4, 6, 0x0a1),
			map[int]uint64{2: d + 0x10, 3: 3, 4: d + 0x2000, 5: 0, 6: 0x1234_5600},
			want{map[int]uint64{2: d + 0x13, 3: 0, 4: d + 0x2000, 5: 0}, 2, 0x10, []byte{0xa1, 0xa1, 0xa1, 0x13}}},
		{"mvcle moves before padding, cc from the lengths", mvcleEnc(2, 4, 0, 0x0ee),
			map[int]uint64{2: d + 0x10, 3: 4, 4: d + 0x2000, 5: 2},
			want{map[int]uint64{2: d + 0x12, 3: 2, 4: d + 0x2002, 5: 0}, 3, 0x10, []byte{0, 1, 0x12, 0x13}}},
		{"mvcle of length 0: cc 1 if the second is longer", mvcleEnc(2, 4, 0, 0),
			map[int]uint64{2: d + 0x10, 3: 0, 4: d + 0x2000, 5: 1},
			want{map[int]uint64{2: d + 0x10, 3: 0, 4: d + 0x2000, 5: 1}, 1, 0x10, []byte{0x10}}},
		{"mvcle with one pair: R3's values are written last", mvcleEnc(2, 2, 0, 0),
			map[int]uint64{2: d + 0x10, 3: 4},
			want{map[int]uint64{2: d + 0x14, 3: 0}, 0, 0x10, []byte{0x10, 0x11, 0x12, 0x13}}},
		{"mvclu pads by the remaining length's parity", rsyEnc(0x8e, 2, 4, 0, 0x1234),
			map[int]uint64{2: d + 0x10, 3: 5, 4: d, 5: 0},
			want{map[int]uint64{2: d + 0x15, 3: 0}, 2, 0x10, []byte{0x34, 0x12, 0x34, 0x12, 0x34, 0x15}}},
		{"mvcl completes across pages", "0e24",
			map[int]uint64{2: d + 0xffe, 3: 0xaa_000004, 4: d + 0x1ffe, 5: 0xbb_000003},
			want{map[int]uint64{2: d + 0x1002, 3: 0xaa_000000, 4: d + 0x2001, 5: 0xbb_000000}, 2, 0xffe, []byte{0xfe, 0xff, 0x00, 0xbb}}},
		{"mvcl destructive overlap: cc 3, nothing moved", "0e24",
			map[int]uint64{2: d + 0x11, 3: 4, 4: d + 0x10, 5: 4},
			want{map[int]uint64{2: d + 0x11, 3: 4, 4: d + 0x10, 5: 4}, 3, 0x10, []byte{0x10, 0x11, 0x12}}},
		{"clcle: low at the first difference", clcleEnc(2, 4, 0, 0),
			map[int]uint64{2: d + 0x10, 3: 8, 4: d + 0x111, 5: 8},
			want{map[int]uint64{2: d + 0x10, 3: 8, 4: d + 0x111, 5: 8}, 1, 0, nil}},
		{"clcle: the pad decides after the shorter", clcleEnc(2, 4, 0, 0x12),
			map[int]uint64{2: d + 0x10, 3: 4, 4: d + 0x10, 5: 2},
			want{map[int]uint64{2: d + 0x13, 3: 1, 4: d + 0x12, 5: 0}, 2, 0, nil}},
		{"clcle stops after 0x2000 equal bytes", clcleEnc(2, 4, 0, 0),
			map[int]uint64{2: d, 3: 0x2800, 4: d, 5: 0x2800},
			want{map[int]uint64{2: d + 0x2000, 3: 0x800, 4: d + 0x2000, 5: 0x800}, 3, 0, nil}},
		{"clclu stops after 0x1000", rsyEnc(0x8f, 2, 4, 0, 0),
			map[int]uint64{2: d, 3: 0x1002, 4: d, 5: 0x1002},
			want{map[int]uint64{2: d + 0x1000, 3: 2, 4: d + 0x1000, 5: 2}, 3, 0, nil}},
		{"clclu compares halfwords with the pad", rsyEnc(0x8f, 2, 4, 0, 0x0203),
			map[int]uint64{2: d, 3: 4, 4: d, 5: 2},
			want{map[int]uint64{2: d + 4, 3: 0, 4: d + 2, 5: 0}, 0, 0, nil}},
		{"clcl: 24-bit lengths, bits 0-39 kept", "0f24",
			map[int]uint64{2: d, 3: 0xffff_ffff_ff00_0003, 4: d + 1, 5: 0x1_0000_0003},
			want{map[int]uint64{2: d, 3: 0xffff_ffff_ff00_0003, 4: d + 1, 5: 0x1_0000_0003}, 1, 0, nil}},
		{"clcl: equal, both registers advanced", "0f24",
			map[int]uint64{2: d + 5, 3: 0x77_000003, 4: d + 5, 5: 0x08_000004},
			want{map[int]uint64{2: d + 8, 3: 0x77_000000, 4: d + 9, 5: 0x08_000000}, 0, 0, nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := machine(t, regs(tt.set), data, tt.code)
			for r, v := range tt.want.r {
				require.Equal(t, v, c.r[r], "r%d", r)
			}
			require.Equal(t, tt.want.cc, c.cc)
			if tt.want.m != nil {
				got, err := c.mem.ReadBytes(d+tt.want.at, len(tt.want.m))
				require.NoError(t, err)
				require.Equal(t, tt.want.m, got)
			}
		})
	}
}

// TestLongFaults: an operand that cannot be accessed is SIGSEGV with
// the registers as they were; an odd pair register or clclu length is
// SIGILL.
func TestLongFaults(t *testing.T) {
	for _, tt := range []struct {
		name string
		code string
		set  map[int]uint64
		sig  int
	}{
		{"mvcle to unmapped memory", mvcleEnc(2, 4, 0, 0), map[int]uint64{2: 0x7000_0000, 3: 8, 4: dataAddr, 5: 8}, cpu.SIGSEGV},
		{"mvcle from unmapped memory", mvcleEnc(2, 4, 0, 0), map[int]uint64{2: dataAddr, 3: 8, 4: 0x7000_0000, 5: 8}, cpu.SIGSEGV},
		{"clcle of unmapped memory", clcleEnc(2, 4, 0, 0), map[int]uint64{2: dataAddr, 3: 8, 4: 0x7000_0000, 5: 8}, cpu.SIGSEGV},
		{"mvcl into the code (read-only)", "0e24", map[int]uint64{2: codeAddr, 3: 8, 4: dataAddr, 5: 8}, cpu.SIGSEGV},
		{"mvcle odd R1", mvcleEnc(3, 4, 0, 0), nil, cpu.SIGILL},
		{"clclu odd length", rsyEnc(0x8f, 2, 4, 0, 0), map[int]uint64{3: 1}, cpu.SIGILL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := linux.New("unit", prog(mustHex(tt.code, "0af8"), make([]byte, 4096)), linux.Config{})
			require.NoError(t, err)
			c := m.Core.(*Core)
			for r, v := range tt.set {
				c.r[r] = v
			}
			before := c.r
			exit, err := m.Run()
			require.NoError(t, err)
			require.NotNil(t, exit.Fault)
			require.Equal(t, tt.sig, exit.Fault.Signal(), "%v", exit.Fault)
			require.Equal(t, uint64(codeAddr), exit.Fault.PC)
			require.Equal(t, before, c.r, "registers unchanged")
		})
	}
}
