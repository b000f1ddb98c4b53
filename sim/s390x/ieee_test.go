package s390x

import (
	"math"
	"testing"
)

// TestIEEEFlags pins the flag rules qemu follows (the random differential
// tests found each): tininess before rounding, invalid and inexact for an
// out-of-range conversion, overflow of a directed narrowing that stops at
// the largest finite value, exactness across far exponents, signaling
// short NaNs seen before widening.
func TestIEEEFlags(t *testing.T) {
	f64 := math.Float64bits
	f32 := math.Float32bits
	minNormal := f64(0x1p-1022)
	tinyOdd := uint64(0x1eefe) // a subnormal: its square is far below 2^-1074
	negMaxFloat := f64(-math.MaxFloat64)
	cases := []struct {
		name      string
		got, want uint32
	}{
		{"fma rounding up to -2^-1022 underflows", fmaFlags64(tinyOdd, tinyOdd, minNormal^signBit64, minNormal^signBit64), fpcUnderflow | fpcInexact},
		{"fma exact sum of a tiny product and a huge addend", fmaFlags64(f64(0x1p-970), f64(0x1p-970), f64(0x1p993), f64(0x1p993)), fpcInexact},
		{"add of an exact normal result", arithFlags64(bfpAdd, minNormal, minNormal, f64(0x1p-1021)), 0},
		{"short add across 130 binades", arithFlags32(bfpAdd, f32(1e10), f32(1e-30), f32(1e10)), fpcInexact},
		{"short sub, exact", arithFlags32(bfpSub, f32(3), f32(1), f32(2)), 0},
		{"division, exact", arithFlags64(bfpDiv, f64(1), f64(4), f64(0.25)), 0},
		{"division, inexact", arithFlags64(bfpDiv, f64(1), f64(3), f64(1.0/3)), fpcInexact},
		{"conversion of a NaN", toIntFlags(0x7ff8000000000000, 3), fpcInvalid},
		{"conversion out of range", toIntFlags(f64(1e300), 3), fpcInvalid | fpcInexact},
		{"conversion with a fraction", toIntFlags(f64(2.5), 2), fpcInexact},
		{"narrowing to +inf rounds -max double to -max float: overflow", narrowFlags(negMaxFloat, f32(-math.MaxFloat32), 6), fpcOverflow | fpcInexact},
		{"narrowing 1e39 toward zero: overflow", narrowFlags(f64(1e39), f32(math.MaxFloat32), 5), fpcOverflow | fpcInexact},
		{"narrowing just above max float to nearest: in range", narrowFlags(f64(math.MaxFloat32+0x1p100), f32(math.MaxFloat32), 4), fpcInexact},
		{"narrowing a signaling NaN", narrowFlags(0x7ff0000000000001, 0x7fc00000, 4), fpcInvalid},
		{"compare of a short signaling NaN", compareFlags32(0x7f800001, f32(1), false), fpcInvalid},
		{"compare of a short quiet NaN", compareFlags32(0x7fc00000, f32(1), false), 0},
		{"compare and signal of a short quiet NaN", compareFlags32(0x7fc00000, f32(1), true), fpcInvalid},
		{"round to integral of a short signaling NaN", integralFlags32(0xff80ff80, 0xffc0ff80), fpcInvalid},
		{"round to integral, inexact", integralFlags64(f64(2.5), f64(2)), fpcInexact},
		{"square root of a short signaling NaN", sqrtFlags32(0x7f800001, 0x7fc00001), fpcInvalid},
		{"lengthening a short signaling NaN", lengthenFlags(0x7f800001), fpcInvalid},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: flags %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
