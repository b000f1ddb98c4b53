package s390x

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/ieee"
	"simrun/sim/linux"
)

// machine runs code (hex instructions, then svc 248) in a tiny machine
// after setup has set registers; the data page is at dataAddr.
func machine(t *testing.T, setup func(c *Core), data []byte, code ...string) *Core {
	t.Helper()
	if data == nil {
		data = make([]byte, 4096)
	}
	m, err := linux.New("unit", prog(mustHex(append(code, "0af8")...), data), linux.Config{})
	require.NoError(t, err)
	c := m.Core.(*Core)
	if setup != nil {
		setup(c)
	}
	exit, err := m.Run()
	require.NoError(t, err)
	if exit.Fault != nil {
		t.Fatalf("fault: %v", exit.Fault)
	}
	return c
}

func regs(vals map[int]uint64) func(c *Core) {
	return func(c *Core) {
		for r, v := range vals {
			c.r[r] = v
		}
	}
}

func TestIntegerSemantics(t *testing.T) {
	const hi = 0xdeadbeef00000000
	tests := []struct {
		name string
		code []string
		in   map[int]uint64
		want map[int]uint64 // registers after
		cc   int            // -1: not checked
	}{
		// 32-bit operations keep bits 0-31.
		{"lr keeps the high word", []string{"1834"}, map[int]uint64{3: hi | 1, 4: 0x1234_87654321}, map[int]uint64{3: hi | 0x87654321}, -1},
		{"ar overflow", []string{"1a34"}, map[int]uint64{3: hi | 0x7fffffff, 4: 1}, map[int]uint64{3: hi | 0x80000000}, 3},
		{"ar negative", []string{"1a34"}, map[int]uint64{3: 1, 4: 0xfffffffe}, map[int]uint64{3: 0xffffffff}, 1},
		{"ahi zero", []string{"a73aff00"}, map[int]uint64{3: hi | 0x100}, map[int]uint64{3: hi}, 0},
		{"sll keeps the high word", []string{"89300004"}, map[int]uint64{3: hi | 0xf000000f}, map[int]uint64{3: hi | 0xf0}, -1},
		{"sra sign", []string{"8a300004"}, map[int]uint64{3: hi | 0x80000000}, map[int]uint64{3: hi | 0xf8000000}, 1},
		{"sla overflow", []string{"8b300001"}, map[int]uint64{3: 0x40000000}, map[int]uint64{3: 0}, 3},
		// Logical add/subtract codes: bit 1 carry, bit 0 nonzero.
		{"alr carry, zero", []string{"1e34"}, map[int]uint64{3: 0xffffffff, 4: 1}, map[int]uint64{3: 0}, 2},
		{"algr no carry", []string{"b90a0034"}, map[int]uint64{3: 5, 4: 6}, map[int]uint64{3: 11}, 1},
		{"slr borrow", []string{"1f34"}, map[int]uint64{3: 1, 4: 2}, map[int]uint64{3: 0xffffffff}, 1},
		{"slgr equal", []string{"b90b0034"}, map[int]uint64{3: 7, 4: 7}, map[int]uint64{3: 0}, 2},
		{"slbgr after a borrow", []string{"b90b0056", "b9890034"}, map[int]uint64{3: 10, 4: 3, 5: 0, 6: 1}, map[int]uint64{3: 6}, 3},
		{"alcgr with carry", []string{"b90a0056", "b9880034"}, map[int]uint64{3: 10, 4: 3, 5: ^uint64(0), 6: 1}, map[int]uint64{3: 14}, 1},
		// Miscellaneous-instruction-extensions facility 3 (z15).
		{"nxrk keeps the high word", []string{"b9775034"}, map[int]uint64{3: hi, 4: 0xf0f0f0f0, 5: 0x0ff00ff0}, map[int]uint64{3: hi | 0x00ff00ff}, 1},
		{"nork of zeros", []string{"b9765034"}, map[int]uint64{3: hi, 4: hi, 5: 0}, map[int]uint64{3: hi | 0xffffffff}, 1},
		{"ncrk", []string{"b9f55034"}, map[int]uint64{4: 0xff00ff00, 5: 0xf0f0f0f0}, map[int]uint64{3: 0x0f000f00}, 1},
		{"nnrk of ones", []string{"b9745034"}, map[int]uint64{4: 0xffffffff, 5: 0xffffffff}, map[int]uint64{3: 0}, 0},
		{"ocrk", []string{"b9755034"}, map[int]uint64{4: 0, 5: 0xfffffffe}, map[int]uint64{3: 1}, 1},
		{"ncgrk to zero", []string{"b9e55034"}, map[int]uint64{4: 0xff, 5: 0xff}, map[int]uint64{3: 0}, 0},
		{"nngrk", []string{"b9645034"}, map[int]uint64{4: 1 << 63, 5: ^uint64(0)}, map[int]uint64{3: 1<<63 - 1}, 1},
		{"nogrk", []string{"b9665034"}, map[int]uint64{4: 1, 5: 2}, map[int]uint64{3: ^uint64(3)}, 1},
		{"nxgrk", []string{"b9675034"}, map[int]uint64{4: 5, 5: 5}, map[int]uint64{3: ^uint64(0)}, 1},
		{"ocgrk", []string{"b9655034"}, map[int]uint64{4: 1, 5: ^uint64(0)}, map[int]uint64{3: 1}, 1},
		{"selgr cc0 mask 8 takes r2", []string{"b9020066", "b9e35834"}, map[int]uint64{4: 44, 5: 55}, map[int]uint64{3: 44}, 0},
		{"selr cc0 mask 4 takes r3, keeps the high word", []string{"b9020066", "b9f05434"}, map[int]uint64{3: hi, 4: 44, 5: 0x1234_00000037}, map[int]uint64{3: hi | 0x37}, 0},
		// Miscellaneous-instruction-extensions facility 2 (z14).
		{"msrkc overflow keeps the low bits", []string{"b9fd5034"}, map[int]uint64{3: hi, 4: 0x7fffffff, 5: 2}, map[int]uint64{3: hi | 0xfffffffe}, 3},
		{"msrkc negative", []string{"b9fd5034"}, map[int]uint64{4: hi | 0xfffffffd, 5: 5}, map[int]uint64{3: 0xfffffff1}, 1},
		{"msgrkc overflow", []string{"b9ed5034"}, map[int]uint64{4: 1 << 62, 5: 2}, map[int]uint64{3: 1 << 63}, 3},
		{"msgrkc negative", []string{"b9ed5034"}, map[int]uint64{4: ^uint64(3), 5: 3}, map[int]uint64{3: ^uint64(11)}, 1},
		{"msgrkc most negative, no overflow", []string{"b9ed5034"}, map[int]uint64{4: 1 << 62, 5: ^uint64(1)}, map[int]uint64{3: 1 << 63}, 1},
		{"mgrk signed 128-bit product", []string{"b9ec5024"}, map[int]uint64{4: ^uint64(0), 5: 5}, map[int]uint64{2: ^uint64(0), 3: ^uint64(4)}, -1},
		{"mgrk of two negatives", []string{"b9ec5024"}, map[int]uint64{4: 1 << 63, 5: 1 << 63}, map[int]uint64{2: 1 << 62, 3: 0}, -1},
		// Compares.
		{"cr low", []string{"1934"}, map[int]uint64{3: 0xffffffff, 4: 1}, nil, 1},
		{"clr high", []string{"1534"}, map[int]uint64{3: 0xffffffff, 4: 1}, nil, 2},
		{"cgije taken skips, leaves cc", []string{"b9020055", "ec380005fe7c", "a7190009"}, map[int]uint64{3: ^uint64(1), 5: 1 << 63}, map[int]uint64{1: 0}, 1},
		// Test under mask: 0 zeros, 1 mixed leftmost 0, 2 mixed leftmost 1, 3 ones.
		{"tmll ones", []string{"a7310003"}, map[int]uint64{3: 0xff}, nil, 3},
		{"tmll mixed, leftmost one", []string{"a7310003"}, map[int]uint64{3: 2}, nil, 2},
		{"tmll mixed, leftmost zero", []string{"a7310003"}, map[int]uint64{3: 1}, nil, 1},
		{"tmhh zeros", []string{"a7320003"}, map[int]uint64{3: 0xfffc_0000_0000_0000}, nil, 0},
		// Load and test, load complement, load positive.
		{"ltgr negative", []string{"b9020034"}, map[int]uint64{4: 1 << 63}, map[int]uint64{3: 1 << 63}, 1},
		{"lcr of the most negative", []string{"1334"}, map[int]uint64{3: hi, 4: 0x80000000}, map[int]uint64{3: hi | 0x80000000}, 3},
		{"lpgr", []string{"b9000034"}, map[int]uint64{4: ^uint64(4)}, map[int]uint64{3: 5}, 2},
		// Register pairs: R1 even = high part / remainder, R1+1 = low / quotient.
		{"mlgr", []string{"b9860024"}, map[int]uint64{3: 1 << 63, 4: 4}, map[int]uint64{2: 2, 3: 0}, -1},
		{"dlgr", []string{"b9870024"}, map[int]uint64{2: 1, 3: 5, 4: 4}, map[int]uint64{2: 1, 3: 1<<62 | 1}, -1},
		{"dsgr", []string{"b90d0024"}, map[int]uint64{2: 99, 3: ^uint64(6), 4: 2}, map[int]uint64{2: ^uint64(0), 3: ^uint64(2)}, -1},
		{"dr", []string{"1d24"}, map[int]uint64{2: hi | 0xffffffff, 3: hi | 0xfffffff9, 4: 2}, map[int]uint64{2: hi | 0xffffffff, 3: hi | 0xfffffffd}, -1},
		{"mr", []string{"1c24"}, map[int]uint64{2: hi, 3: hi | 0xffffffff, 4: 0xffffffff}, map[int]uint64{2: hi, 3: hi | 1}, -1},
		// Rotate then insert/and/or/xor selected bits.
		{"risbgz: bits 48-63 of r4 rotated by 8", []string{"ec3430bf0855"}, map[int]uint64{3: ^uint64(0), 4: 0x1234}, map[int]uint64{3: 0x3400}, 2},
		{"risbg keeps unselected bits", []string{"ec3400070055"}, map[int]uint64{3: ^uint64(0), 4: 0}, map[int]uint64{3: 0x00ffffffffffffff}, 2},
		{"risbgn sets no cc", []string{"b9020055", "ec3430bf0059"}, map[int]uint64{3: 0, 4: 0xffff, 5: 1 << 63}, map[int]uint64{3: 0xffff}, 1},
		{"rxsbg", []string{"ec34303f0057"}, map[int]uint64{3: 0xff, 4: 0x0f}, map[int]uint64{3: 0xf0}, 1},
		{"rnsbg test only", []string{"ec34b03f0054"}, map[int]uint64{3: 0xff, 4: 0}, map[int]uint64{3: 0xff}, 0},
		// Counts, byte reversal, load on condition.
		{"flogr", []string{"b9830024"}, map[int]uint64{4: 0x00f0000000000000}, map[int]uint64{2: 8, 3: 0x0070000000000000}, 2},
		{"flogr zero", []string{"b9830024"}, map[int]uint64{4: 0}, map[int]uint64{2: 64, 3: 0}, 0},
		{"popcnt", []string{"b9e10034"}, map[int]uint64{4: 0xff0f030100000080}, map[int]uint64{3: 0x0804020100000001}, 1},
		{"lrvr", []string{"b91f0034"}, map[int]uint64{3: hi, 4: 0x11223344}, map[int]uint64{3: hi | 0x44332211}, -1},
		{"locgre taken", []string{"b9e28034"}, map[int]uint64{3: 1, 4: 2}, map[int]uint64{3: 2}, 0},
		{"locgrne not taken", []string{"b9e27034"}, map[int]uint64{3: 1, 4: 2}, map[int]uint64{3: 1}, 0},
		{"lochi", []string{"ec3800070042"}, map[int]uint64{3: hi}, map[int]uint64{3: hi | 7}, 0},
		// Branches and links.
		{"brasl link", []string{"c0e500000003", "0707"}, nil, map[int]uint64{14: 0x400006}, -1},
		{"brctg counts down", []string{"a7390003", "a7190005", "a7370000"}, nil, map[int]uint64{1: 5, 3: 0}, -1},
		{"la is 64-bit", []string{"41334ffc"}, map[int]uint64{3: 0xffffffff, 4: 1}, map[int]uint64{3: 0x100000ffc}, -1},
		{"llihf, oilf", []string{"c03e12345678", "c03d9abcdef0"}, nil, map[int]uint64{3: 0x123456789abcdef0}, -1},
		{"nill keeps the rest", []string{"a537000f"}, map[int]uint64{3: 0xffffffffffff1234}, map[int]uint64{3: 0xffffffffffff0004}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := machine(t, regs(tt.in), nil, tt.code...)
			for r, v := range tt.want {
				require.Equal(t, v, c.r[r], "r%d", r)
			}
			if tt.cc >= 0 {
				require.Equal(t, uint8(tt.cc), c.cc, "cc")
			}
		})
	}
}

func TestStorageToStorage(t *testing.T) {
	data := make([]byte, 4096)
	copy(data, "abcdefgh")
	copy(data[16:], "\x01\x02\x03\x04")
	// larl %r1,data; mvc 1(7,%r1),0(%r1): replicates 'a'; xc 16(4,%r1),16(%r1): clears.
	c := machine(t, nil, data, "c01000008000", "d2061001"+"1000", "d70310101010")
	b, err := c.mem.ReadBytes(0x410000, 20)
	require.NoError(t, err)
	require.Equal(t, "aaaaaaaa", string(b[:8]))
	require.Equal(t, []byte{0, 0, 0, 0}, b[16:20])
	require.Equal(t, uint8(0), c.cc)
	// clc 0(8,%r1),16(%r1): "aaaaaaaa" > zeros
	c = machine(t, nil, data, "c01000008000", "d50710001010")
	require.Equal(t, uint8(2), c.cc)
}

func TestFPRegisters(t *testing.T) {
	// ldgr/lgdr are raw 64-bit moves; short loads keep bits 32-127.
	c := machine(t, func(c *Core) {
		c.r[3] = 0x7ff0000000000001 // a signaling NaN pattern
		c.v[2] = [2]uint64{0x1111111122222222, 0x3333333344444444}
	}, nil, "b3c10003", "b3cd0041", "b3740020") // ldgr %f0,%r3; lgdr %r4,%f1?; lzer %f2
	require.Equal(t, uint64(0x7ff0000000000001), c.v[0][0])
	require.Equal(t, [2]uint64{0x22222222, 0x3333333344444444}, c.v[2])
	require.Equal(t, uint64(0), c.r[4]) // f1 was zero

	f := math.Float64bits
	tests := []struct {
		name   string
		code   string
		f1, f2 uint64
		r1     uint64 // expected f1 (or r1 for conversions)
		gpr    bool
		cc     int
	}{
		{"adbr", "b31a0012", f(1.5), f(2.25), f(3.75), false, 2},
		{"adbr inf-inf is the positive default NaN", "b31a0012", f(math.Inf(1)), f(math.Inf(-1)), defNaN64, false, 3},
		{"adbr quiets a signaling NaN", "b31a0012", f(1), 0x7ff0000000000005, 0x7ff8000000000005, false, 3},
		{"sdbr zero", "b31b0012", f(2), f(2), 0, false, 0},
		{"cgdbr truncates (m3=5)", "b3a95012", 0, f(-2.75), uint64(1<<64 - 2), true, 1},
		{"cgdbr rounds to nearest even (m3=4)", "b3a94012", 0, f(2.5), 2, true, 2},
		{"cgdbr NaN", "b3a95012", 0, defNaN64, 1 << 63, true, 3},
		{"clgdbr negative", "b3ad5012", 0, f(-3), 0, true, 3},
		{"cfdbr overflow", "b3995012", 0, f(1e10), 0x7fffffff, true, 3},
		{"lcdbr", "b3130012", 0, f(2), f(-2), false, 1},
		{"cdbr unordered", "b3190012", defNaN64, f(1), defNaN64, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := machine(t, func(c *Core) { c.v[1][0], c.v[2][0] = tt.f1, tt.f2 }, nil, tt.code)
			if tt.gpr {
				require.Equal(t, tt.r1, c.r[1])
			} else {
				require.Equal(t, tt.r1, c.v[1][0])
			}
			require.Equal(t, uint8(tt.cc), c.cc)
		})
	}
}

func TestBFPHelpers(t *testing.T) {
	// fma32 rounds once: (1+2^-12)^2 + 2^-60 is just above the single
	// precision tie 1+2^-11+2^-24; rounding through double first would
	// land on the tie and round down to even.
	a := math.Float32bits(1 + 0x1p-12)
	c := math.Float32bits(0x1p-60)
	got := math.Float32frombits(fma32(a, a, c, false))
	require.Equal(t, float32(1+0x1p-11+0x1p-23), got)
	// roundToFormat in every mode.
	for _, tc := range []struct {
		rm   uint8
		neg  bool
		want float32
	}{{rmEven, false, 16777216}, {rmAway, false, 16777218}, {rmZero, false, 16777216}, {rmPosInf, false, 16777218},
		{rmNegInf, true, -16777218}, {rmOdd, false, 16777218}} {
		got := math.Float32frombits(uint32(intToBFP(tc.neg, 16777217, &single, tc.rm)))
		require.Equal(t, tc.want, got, "mode %d", tc.rm)
	}
	// A double below single's smallest subnormal rounds to zero or to it.
	require.Equal(t, uint32(0), round64to32(math.Float64bits(0x1p-160), rmEven))
	require.Equal(t, uint32(1), round64to32(math.Float64bits(0x1p-160), rmPosInf))
	require.Equal(t, uint32(0x7f7fffff), round64to32(math.Float64bits(1e300), rmZero))
	require.Equal(t, uint16(1<<7), dataClass(1, 52)) // +subnormal
	require.Equal(t, uint16(1<<0), dataClass(0xff800001, 23))
}

func TestVectorSemantics(t *testing.T) {
	set := func(c *Core) {
		c.v[2] = [2]uint64{0x0102030405060708, 0x090a0b0c0d0e0f10}
		c.v[3] = [2]uint64{0xfffffffe00000001, 0x7fffffff80000000}
		c.v[4] = [2]uint64{0x1f1e1d1c03020100, 0x0011223344556677}
		c.v[5] = [2]uint64{0x0404040404040404, 0x0404040404040404}
	}
	tests := []struct {
		name string
		code string
		want [2]uint64
	}{
		{"vaf %v1,%v2,%v3", "e712300020f3", [2]uint64{0x0102030205060709, 0x890a0b0b8d0e0f10}},
		{"vgmf %v1,8,15", "e710080f2046", [2]uint64{0x00ff000000ff0000, 0x00ff000000ff0000}},
		{"vuplhb %v1,%v2", "e712000000d5", [2]uint64{0x0001000200030004, 0x0005000600070008}},
		{"vpkg %v1,%v2,%v3", "e71230003094", [2]uint64{0x050607080d0e0f10, 0x0000000180000000}},
		{"vperm %v1,%v2,%v3,%v4", "e7123000408c", [2]uint64{0x0000008004030201, 0x01ff03fe05000701}},
		{"vsrl %v1,%v2,%v5 (4 in every byte)", "e7125000007c", [2]uint64{0x0010203040506070, 0x8090a0b0c0d0e0f1}},
		{"vrepb %v1,%v2,15", "e712000f004d", [2]uint64{0x1010101010101010, 0x1010101010101010}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, machine(t, set, nil, tt.code).v[1])
		})
	}
	// vcksm: the architecture's end-around-carry sum (qemu 7.2 differs).
	c := machine(t, func(c *Core) { c.v[2] = [2]uint64{1<<32 | 2, 3<<32 | 4} }, nil, "e71230000066")
	require.Equal(t, [2]uint64{10, 0}, c.v[1])
	// The single-element BFP forms clear element 1 (qemu), scalar ones
	// leave bits 64-127 alone.
	c = machine(t, func(c *Core) {
		c.v[1] = [2]uint64{0, 0xaaaa}
		c.v[2] = [2]uint64{math.Float64bits(1), 5}
		c.v[3] = [2]uint64{math.Float64bits(2), 6}
	}, nil, "e712300830e3") // wfadb %v1,%v2,%v3
	require.Equal(t, [2]uint64{math.Float64bits(3), 0}, c.v[1])
	c = machine(t, func(c *Core) {
		c.v[1] = [2]uint64{math.Float64bits(1), 0xaaaa}
		c.v[2] = [2]uint64{math.Float64bits(2), 5}
	}, nil, "b31a0012") // adbr %f1,%f2
	require.Equal(t, [2]uint64{math.Float64bits(3), 0xaaaa}, c.v[1])
}

// TestArithFlagsSpecial: the IEEE flags of the special cases, both widths.
func TestArithFlagsSpecial(t *testing.T) {
	const (
		sNaN64 = 0x7ff4000000000000
		qNaN64 = 0x7ff8000000000000
		inf64  = 0x7ff0000000000000
		one64  = 0x3ff0000000000000
		sNaN32 = 0x7fa00000
		qNaN32 = 0x7fc00000
		inf32  = 0x7f800000
		one32  = 0x3f800000
	)
	for _, c := range []struct {
		name       string
		kind       int
		a, b, z    uint64 // double precision
		a3, b3, z3 uint32 // single precision
		want       uint32
	}{
		{"signalling NaN operand", bfpAdd, sNaN64, one64, qNaN64, sNaN32, one32, qNaN32, fpcInvalid},
		{"quiet NaN operand", bfpMul, one64, qNaN64, qNaN64, one32, qNaN32, qNaN32, 0},
		{"invalid operation (inf-inf)", bfpSub, inf64, inf64, qNaN64, inf32, inf32, qNaN32, fpcInvalid},
		{"NaN result of finite operands", bfpAdd, one64, one64, qNaN64, one32, one32, qNaN32, fpcInvalid},
		{"infinite operand", bfpDiv, inf64, one64, inf64, inf32, one32, inf32, 0},
		{"division by zero", bfpDiv, one64, 0, inf64, one32, 0, inf32, fpcDivZero},
		{"exact", bfpAdd, one64, one64, 0x4000000000000000, one32, one32, 0x40000000, 0},
	} {
		require.Equal(t, c.want, fpc(ieee.Arith64(ieee.Op(c.kind), c.a, c.b, c.z)), "%s (double)", c.name)
		require.Equal(t, c.want, fpc(ieee.Arith32(ieee.Op(c.kind), c.a3, c.b3, c.z3)), "%s (single)", c.name)
	}
}
