package ieee

import (
	"math"
	"testing"
)

// TestFlags pins the rules the random differential tests found against
// qemu: tininess before rounding, exactness of a tiny product plus a huge
// addend and of short sums across far exponents, signaling short NaNs
// seen before widening.
func TestFlags(t *testing.T) {
	f64 := math.Float64bits
	f32 := math.Float32bits
	minNormal := f64(0x1p-1022)
	tinyOdd := uint64(0x1eefe) // a subnormal: its square is far below 2^-1074
	nearest := func(x float64) bool { return math.IsInf(float64(float32(x)), 0) }
	cases := []struct {
		name      string
		got, want Flags
	}{
		{"fma rounding up to -2^-1022 underflows", FMA64(tinyOdd, tinyOdd, minNormal^signBit64, minNormal^signBit64), Underflow | Inexact},
		{"fma of a tiny product and a huge addend", FMA64(f64(0x1p-970), f64(0x1p-970), f64(0x1p993), f64(0x1p993)), Inexact},
		{"add of an exact normal result", Arith64(Add, minNormal, minNormal, f64(0x1p-1021)), 0},
		{"short add across 130 binades", Arith32(Add, f32(1e10), f32(1e-30), f32(1e10)), Inexact},
		{"short sub, exact", Arith32(Sub, f32(3), f32(1), f32(2)), 0},
		{"division, exact", Arith64(Div, f64(1), f64(4), f64(0.25)), 0},
		{"division, inexact", Arith64(Div, f64(1), f64(3), f64(1.0/3)), Inexact},
		{"division by zero", Arith64(Div, f64(1), 0, f64(math.Inf(1))), DivByZero},
		{"inf - inf", Arith64(Sub, f64(math.Inf(1)), f64(math.Inf(1)), 0x7ff8000000000000), Invalid},
		{"overflow", Arith64(Mul, f64(0x1p1000), f64(0x1p1000), f64(math.Inf(1))), Overflow | Inexact},
		{"narrowing 1e39 to nearest: overflow", Narrow(f64(1e39), f32(float32(math.Inf(1))), nearest), Overflow | Inexact},
		{"narrowing just above max float to nearest: in range", Narrow(f64(math.MaxFloat32+0x1p100), f32(math.MaxFloat32), nearest), Inexact},
		{"narrowing a signaling NaN", Narrow(0x7ff0000000000001, 0x7fc00000, nearest), Invalid},
		{"rounding below the smallest normal", Rounded(0x1p-127+0x1p-160, 0x1p-127, 0x1p-126, false), Underflow | Inexact},
		{"rounding an infinity is exact", Rounded(math.Inf(-1), math.Inf(-1), 0x1p-126, false), 0},
		{"rounding a finite value to an infinity overflows", Rounded(0x1p200, math.Inf(1), 0x1p-126, false), Overflow | Inexact},
		{"compare of a short signaling NaN", Compare32(0x7f800001, f32(1), false), Invalid},
		{"compare of a short quiet NaN", Compare32(0x7fc00000, f32(1), false), 0},
		{"compare and signal of a short quiet NaN", Compare32(0x7fc00000, f32(1), true), Invalid},
		{"round to integral of a short signaling NaN", Integral32(0xff80ff80, 0xffc0ff80), Invalid},
		{"round to integral, inexact", Integral64(f64(2.5), f64(2)), Inexact},
		{"square root of a short signaling NaN", Sqrt32(0x7f800001, 0x7fc00001), Invalid},
		{"square root of -1", Sqrt64(f64(-1), 0x7ff8000000000000), Invalid},
		{"lengthening a short signaling NaN", Lengthen(0x7f800001), Invalid},
		{"int64 max to double", FromInt(1<<63-1, f64(0x1p63), false), Inexact},
		{"2^40 to short", FromInt(1<<40, uint64(f32(-0x1p40)), true), 0},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: flags %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
