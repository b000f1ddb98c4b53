package s390x

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/ieee"
	"simrun/sim/linux"
)

// bfp128Case is one case of testdata/bfp128.s: extended operands a and
// b, a long c, a short d and a 64-bit integer g.
type bfp128Case struct {
	a, b ieee.F128
	c    uint64
	d    uint32
	g    uint64
}

// f128 is the extended value of a float64 (exact).
func f128(x float64) ieee.F128 {
	v, _ := ieee.FromFloat64(math.Float64bits(x))
	return v
}

// bfp128Specials are the edge values of the extended format: signed
// zeros, infinities, quiet and signaling NaNs with payloads in either
// half, the largest finite, the smallest normal and subnormal, a
// subnormal with all fraction bits set, integers at the limits of the
// 32- and 64-bit conversions and halfway cases of rounding to integral.
var bfp128Specials = []ieee.F128{
	{}, {Hi: 1 << 63},
	f128(1), f128(-1), f128(3), f128(0.5), f128(1.5), f128(2.5), f128(-2.5), f128(-0.5),
	{Hi: 0x7fff_0000_0000_0000}, {Hi: 0xffff_0000_0000_0000},
	{Hi: 0x7fff_8000_0000_0000, Lo: 1}, {Hi: 0xffff_8000_1234_0000},
	{Hi: 0x7fff_0000_0000_0000, Lo: 5}, {Hi: 0xffff_4000_0000_0000},
	{Hi: 0x7ffe_ffff_ffff_ffff, Lo: ^uint64(0)}, {Hi: 0x0001_0000_0000_0000}, {Lo: 1},
	{Hi: 0x8000_ffff_ffff_ffff, Lo: ^uint64(0)},
	f128(1 << 31), f128(-(1 << 31)), f128(-(1 << 31) - 1), f128((1 << 32) - 1), f128(1 << 32),
	f128(1 << 63), f128(-(1 << 63)), f128(1 << 64),
	{Hi: 0x403e_ffff_ffff_ffff, Lo: 0xfffe_0000_0000_0000}, // 2^64-1
	{Hi: 0x403d_ffff_ffff_ffff, Lo: 0xfffe_0000_0000_0000}, // 2^63-1... shifted: 2^63-0.5
	f128(1e300), f128(math.SmallestNonzeroFloat64), f128(math.MaxFloat32), f128(1.0000001),
}

// bfp128Cases pairs the specials with each other and adds seeded random
// operands: near each other (cancellation in subtraction), far apart
// (sticky bits), and anywhere, with random long, short and integer
// operands.
func bfp128Cases() []bfp128Case {
	rng := rand.New(rand.NewPCG(128, 3))
	ints := []uint64{0, 1, ^uint64(0), 1 << 63, 1<<63 - 1, 1 << 31, 0xffff_ffff, 0x7fff_ffff_ffff_fff3, 12345}
	longs := []uint64{0, 1 << 63, math.Float64bits(1), math.Float64bits(-3.5), 0x7ff0_0000_0000_0000,
		0x7ff8_0000_0000_0001, 0x7ff0_0000_0000_0001, 1, math.Float64bits(math.MaxFloat64)}
	shorts := []uint32{0, 1 << 31, math.Float32bits(1), 0x7f80_0000, 0x7fc0_0001, 0x7f80_0001, 1, math.Float32bits(-0.1)}
	var cs []bfp128Case
	add := func(a, b ieee.F128) {
		i := len(cs)
		cs = append(cs, bfp128Case{a, b, longs[i%len(longs)], shorts[i%len(shorts)], ints[i%len(ints)]})
	}
	for i, a := range bfp128Specials {
		for j, b := range bfp128Specials {
			if (i+j)%3 == 0 || i < 10 && j < 10 {
				add(a, b)
			}
		}
	}
	random := func(exp uint64) ieee.F128 {
		return ieee.F128{Hi: rng.Uint64()&(1<<63|0xffff_ffff_ffff) | exp<<48, Lo: rng.Uint64()}
	}
	for range 40 {
		e := 0x3f00 + rng.Uint64N(0x200)
		add(random(e), random(e+rng.Uint64N(3)))
		add(random(e), random(e+40+rng.Uint64N(100)))
		add(random(rng.Uint64N(0x7fff)), random(rng.Uint64N(0x7fff)))
		// Long, short and integer operands of every size.
		i := len(cs) - 1
		cs[i].c, cs[i].d, cs[i].g = rng.Uint64(), rng.Uint32(), rng.Uint64()>>rng.UintN(64)
	}
	return cs
}

// bfp128Modes are the FPC rounding modes section 1 of testdata/bfp128.s
// runs in: simrun refuses the others (sfpc: fp.go), so that a directed
// FPC mode is covered by the M3 fields of section 2.
var bfp128Modes = []uint64{0}

// bfp128Data is the data image of testdata/bfp128.s.
func bfp128Data(cs []bfp128Case) []byte {
	d := make([]byte, 64+64*len(cs))
	binary.BigEndian.PutUint64(d, uint64(len(cs)))
	binary.BigEndian.PutUint64(d[8:], uint64(len(bfp128Modes)))
	for i, m := range bfp128Modes {
		binary.BigEndian.PutUint64(d[16+8*i:], m)
	}
	for i, c := range cs {
		p := d[64+64*i:]
		for j, v := range []uint64{c.a.Hi, c.a.Lo, c.b.Hi, c.b.Lo, c.c} {
			binary.BigEndian.PutUint64(p[8*j:], v)
		}
		binary.BigEndian.PutUint32(p[40:], c.d)
		binary.BigEndian.PutUint64(p[48:], c.g)
	}
	return d
}

// TestQemuBFP128 runs testdata/bfp128.s, every extended-BFP instruction
// in each rounding mode on every case of bfp128Cases, in lockstep with
// qemu, the FPC's flags included.
func TestQemuBFP128(t *testing.T) {
	lockstepAsm(t, "bfp128", bfp128Data(bfp128Cases()), 1<<22)
}

// TestBFP128Specification checks that an extended operand must name a
// register pair and a rounding-mode field a mode: each is a
// specification exception (SIGILL), before anything changes.
func TestBFP128Specification(t *testing.T) {
	for _, tt := range []struct {
		name, insn string
	}{
		{"axbr f2,f1", "b34a0021"},
		{"axbr f0,f3", "b34a0003"},
		{"lxdbr f6,f4", "b3050064"},
		{"ldxbra f4,0,f2,0", "b3450042"},
		{"cfxbra r2,0,f14,0", "b39a002e"},
		{"cxlgbr f10,0,r8,0", "b3a200a8"},
		{"fixbra f4,2,f0,0", "b3472040"},
		{"lzxr f7", "b3760070"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := linux.New("unit", prog(mustHex(tt.insn, "0af8"), make([]byte, 4096)), linux.Config{})
			require.NoError(t, err)
			exit, err := m.Run()
			require.NoError(t, err)
			require.NotNil(t, exit.Fault)
			require.Equal(t, cpu.FaultUndefined, exit.Fault.Kind, "%v", exit.Fault)
			require.Equal(t, uint64(0x400000), exit.Fault.PC)
		})
	}
	// A valid pair runs: lzxr f13 zeroes f13 and f15.
	c := machine(t, func(c *Core) { c.setFD(13, 7); c.setFD(15, 9) }, nil, "b37600d0")
	require.Equal(t, ieee.F128{}, c.fx(13))
}

// TestMultiplyLongToExtended checks mxdbr and mxdb against exact
// products: two long significands multiply exactly in the extended one,
// so the result is the lengthened product with no flag; NaNs are the
// first operand's made quiet (invalid if signaling). qemu 7.2 is no
// oracle here (testdata/bfp128.s says why).
func TestMultiplyLongToExtended(t *testing.T) {
	bits := math.Float64bits
	rng := rand.New(rand.NewPCG(5, 6))
	type tc struct{ a, b uint64 }
	cases := []tc{{bits(1.5), bits(-3)}, {bits(math.MaxFloat64), bits(math.MaxFloat64)},
		{bits(math.SmallestNonzeroFloat64), bits(0.25)}, {0, bits(-1)}, {1 << 63, 0x7ff0_0000_0000_0000}}
	for range 50 {
		cases = append(cases, tc{rng.Uint64()&^(0x7ff<<52) | rng.Uint64N(0x7ff)<<52, rng.Uint64()&^(0x7ff<<52) | rng.Uint64N(0x7ff)<<52})
	}
	for _, tt := range cases {
		x, _ := ieee.FromFloat64(tt.a)
		y, _ := ieee.FromFloat64(tt.b)
		want, fl := ieee.Mul128(x, y, ieee.NearestEven)
		if math.IsInf(math.Float64frombits(tt.a), 0) && math.Float64frombits(tt.b) == 0 || tt.a&^(1<<63) == 0 && math.IsInf(math.Float64frombits(tt.b), 0) {
			require.NotZero(t, fl) // inf * 0 is invalid
		} else {
			require.Zero(t, fl, "the product of two longs is exact in extended")
		}
		data := make([]byte, 4096)
		binary.BigEndian.PutUint64(data, tt.b)
		// mxdbr %f0,%f4 ; mxdb %f1,0(%r13) with r13 = the data.
		c := machine(t, func(c *Core) {
			c.setFD(0, tt.a)
			c.setFD(2, ^uint64(0)) // not an operand: overwritten
			c.setFD(4, tt.b)
			c.setFD(1, tt.a)
			c.r[13] = 0x410000
		}, data, "b3070004", "ed10d0000007")
		require.Equal(t, want, c.fx(0), "mxdbr %#x * %#x", tt.a, tt.b)
		require.Equal(t, want, c.fx(1), "mxdb %#x * %#x", tt.a, tt.b)
	}
	// A signaling NaN: quiet, and invalid in the FPC.
	c := machine(t, func(c *Core) { c.setFD(0, 0x7ff0_0000_0000_0001); c.setFD(4, bits(2)) }, nil, "b3070004")
	require.Equal(t, ieee.F128{Hi: 0x7fff_8000_0000_0000, Lo: 0x1000_0000_0000_0000}, c.fx(0))
	require.Equal(t, uint32(fpcInvalid), c.fpc, "fpc %#x: the invalid flag alone", c.fpc)
}
