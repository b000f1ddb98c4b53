package s390x

import (
	"math"
	"testing"
)

// TestFPCFlags pins the s390x parts of the flag rules (qemu): where the
// flags sit in the FPC, an out-of-range conversion invalid and inexact,
// a NaN one invalid only, and a directed narrowing that stops at the
// largest finite value still overflowing.
func TestFPCFlags(t *testing.T) {
	f64 := math.Float64bits
	f32 := math.Float32bits
	cases := []struct {
		name      string
		got, want uint32
	}{
		{"conversion of a NaN", toIntFlags(0x7ff8000000000000, 3), fpcInvalid},
		{"conversion out of range", toIntFlags(f64(1e300), 3), fpcInvalid | fpcInexact},
		{"conversion with a fraction", toIntFlags(f64(2.5), 2), fpcInexact},
		{"narrowing to +inf rounds -max double to -max float: overflow", narrowFlags(f64(-math.MaxFloat64), f32(-math.MaxFloat32), 6), fpcOverflow | fpcInexact},
		{"narrowing 1e39 toward zero: overflow", narrowFlags(f64(1e39), f32(math.MaxFloat32), 5), fpcOverflow | fpcInexact},
		{"narrowing just above max float to nearest: in range", narrowFlags(f64(math.MaxFloat32+0x1p100), f32(math.MaxFloat32), 4), fpcInexact},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: flags %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
