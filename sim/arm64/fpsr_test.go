package arm64

import (
	"math"
	"testing"
)

// TestFPSRFlags pins the arm64 parts of the IEEE flag rules (the lockstep
// with qemu compares the FPSR after every instruction; these are the
// cases where arm64 differs from s390x or from the plain operation): an
// out-of-range conversion is invalid only, only frintx signals inexact,
// fcmpe signals on a quiet NaN, fmulx of infinity by zero is exact, the
// estimates divide by zero, and round-to-odd overflows only from 2^128.
func TestFPSRFlags(t *testing.T) {
	_, c := pauthMachine(t, []uint32{0xd65f03c0}, false, 1)
	const ioc, dzc, ofc, ixc = 1, 2, 4, 16
	inf := b64(math.Inf(1))
	cases := []struct {
		name string
		run  func()
		want uint32
	}{
		{"fcvtzs of a NaN", func() { c.fpToInt(1, defNaN64, rnZero, true, 64, 0) }, ioc},
		{"fcvtzs out of range", func() { c.fpToInt(1, b64(1e300), rnZero, true, 64, 0) }, ioc},
		{"fcvtzu of -1", func() { c.fpToInt(1, b64(-1), rnZero, false, 32, 0) }, ioc},
		{"fcvtzs of 2.5", func() { c.fpToInt(1, b64(2.5), rnZero, true, 64, 0) }, ixc},
		{"fcvtzs of 2.5 with one fraction bit", func() { c.fpToInt(1, b64(2.5), rnZero, true, 64, 1) }, 0},
		{"scvtf of 2^63-1 to double", func() { c.intToFP(1, 1<<63-1, true, 0) }, ixc},
		{"scvtf of -2^40 to single", func() { c.intToFP(0, ^uint64(1<<40-1), true, 0) }, 0},
		{"frinta of 2.5", func() { c.fpRoundInt(1, b64(2.5), rnAway, false) }, 0},
		{"frintx of 2.5", func() { c.fpRoundInt(1, b64(2.5), rnEven, true) }, ixc},
		{"fcmp of a quiet NaN", func() { c.fpCompare(1, defNaN64, b64(1), false) }, 0},
		{"fcmpe of a quiet NaN", func() { c.fpCompare(1, defNaN64, b64(1), true) }, ioc},
		{"fcmp of a signaling NaN", func() { c.fpCompare(0, 0x7f800001, b32(1), false) }, ioc},
		{"fmulx of infinity by zero", func() { c.fpBinary(fMulx, 1, inf, 0) }, 0},
		{"fmul of infinity by zero", func() { c.fpBinary(fMul, 1, inf, 0) }, ioc},
		{"fabd rounds as the subtraction", func() { c.fpBinary(fAbd, 1, b64(1), b64(1e-30)) }, ixc},
		{"fdiv by zero", func() { c.fpBinary(fDiv, 0, b32(1), 0) }, dzc},
		{"fmadd of infinity times zero plus a quiet NaN", func() { c.fpFMA(1, defNaN64, inf, 0, false, false) }, ioc},
		{"frecpe of zero", func() { c.fpRecipEstimate(1, 0) }, dzc},
		{"frecpe of 2^-1030", func() { c.fpRecipEstimate(1, b64(0x1p-1030)) }, ofc | ixc},
		{"frsqrte of -1", func() { c.fpRSqrtEstimate(1, b64(-1)) }, ioc},
		{"fcvtxn of 2^128", func() { c.fcvtRoundOdd(b64(0x1p128)) }, ofc | ixc},
		{"fcvtxn just above the largest single", func() { c.fcvtRoundOdd(b64(math.MaxFloat32 + 0x1p103)) }, ixc},
		{"fcvt of a signaling NaN", func() { c.fpConvert(1, 0, 0x7ff0000000000001) }, ioc},
		{"fcvt to half of 1e5", func() { c.fpConvert(1, 3, b64(1e5)) }, ofc | ixc},
		// an infinity narrows exactly (qemu; found with gcc -O0's fcvt s0, d0 of inf)
		{"fcvt to single of -inf", func() { c.fpConvert(1, 0, b64(math.Inf(-1))) }, 0},
		{"fcvt to half of inf", func() { c.fpConvert(1, 3, b64(math.Inf(1))) }, 0},
		{"fcvt single to half of inf", func() { c.fpConvert(0, 3, uint64(b32(float32(math.Inf(1))))) }, 0},
	}
	for _, tc := range cases {
		c.fpsr = 0
		tc.run()
		if c.fpsr != tc.want {
			t.Errorf("%s: FPSR %#x, want %#x", tc.name, c.fpsr, tc.want)
		}
	}
}

// TestRSqrtStepRange: frsqrts rounds (3 - a*b)/2 once, so a product whose
// difference from 3 overflows while its half does not gives the finite
// half (qemu; the random tests found it at 300 programs).
func TestRSqrtStepRange(t *testing.T) {
	_, c := pauthMachine(t, []uint32{0xd65f03c0}, false, 1)
	x := b32(0x1p64)
	if got, want := c.fpStep(0, x, x, true), b32(-0x1p127); got != want {
		t.Errorf("frsqrts 2^64, 2^64 = %#x, want %#x", got, want)
	}
	x = b64(0x1p512)
	if got, want := c.fpStep(1, x, x, true), b64(-0x1p1023); got != want {
		t.Errorf("frsqrts 2^512, 2^512 (double) = %#x, want %#x", got, want)
	}
}

// TestFlushToZero: with FPCR.FZ a denormal single or double operand is a
// zero of its sign and raises IDC; a result below the normal range,
// however it would round, is a zero of its sign raising UFC alone; half
// precision is not flushed (TestQemuRandomFlushToZero holds the rest to
// qemu).
func TestFlushToZero(t *testing.T) {
	_, c := pauthMachine(t, []uint32{0xd65f03c0}, false, 1)
	const ufc, ixc, idc = 8, 16, 0x80
	den64, den32 := uint64(1), uint64(0x80000001) // 2^-1074, -2^-149
	cases := []struct {
		name  string
		run   func() uint64
		want  uint64
		flags uint32
	}{
		{"fadd of two denormals", func() uint64 { return c.fpBinary(fAdd, 1, den64, den64) }, 0, idc},
		{"fmul of a denormal single keeps its sign", func() uint64 { return c.fpBinary(fMul, 0, den32, uint64(b32(3))) }, 1 << 31, idc},
		{"fmul to below the normal range", func() uint64 { return c.fpBinary(fMul, 1, b64(0x1p-600), b64(0x1p-500)) }, 0, ufc},
		{"fmul to an exact denormal", func() uint64 { return c.fpBinary(fMul, 1, b64(-0x1p-1000), b64(0x1p-30)) }, 1 << 63, ufc},
		{"fmul rounding up to the smallest normal", func() uint64 {
			return c.fpBinary(fMul, 0, uint64(b32(0x1.fffffep-1)), uint64(b32(0x1p-126)))
		}, 0, ufc},
		{"fmadd with a tiny product and a zero addend", func() uint64 {
			return c.fpFMA(0, 0, uint64(b32(0x1p-126)), uint64(b32(0x1p-3)), true, true)
		}, 1 << 31, ufc},
		{"fcvt of a denormal double", func() uint64 { return c.fpConvert(1, 0, den64) }, 0, idc},
		{"fcvt of a tiny double to single", func() uint64 { return c.fpConvert(1, 0, b64(0x1p-130)) }, 0, ufc},
		{"fcvt of a denormal half is not flushed", func() uint64 { return c.fpConvert(3, 0, 1) }, uint64(b32(0x1p-24)), 0},
		{"fcvtzs of a denormal", func() uint64 { return c.fpToInt(1, den64, rnZero, true, 64, 0) }, 0, idc},
		{"fcmp of a denormal against zero", func() uint64 { return uint64(c.fpCompare(1, den64, 0, false)) }, 0b0110, idc},
		{"frecpe of 2^127", func() uint64 { return c.fpRecipEstimate(0, uint64(b32(0x1p127))) }, 0, ufc},
		{"normal operands", func() uint64 { return c.fpBinary(fAdd, 1, b64(1), b64(0x1p-60)) }, b64(1), ixc},
	}
	for _, tc := range cases {
		c.fpcr, c.fpsr = fpcrFZ, 0
		got := tc.run()
		if got != tc.want || c.fpsr != tc.flags {
			t.Errorf("%s: %#x, FPSR %#x; want %#x, FPSR %#x", tc.name, got, c.fpsr, tc.want, tc.flags)
		}
	}
	c.fpcr, c.fpsr = 0, 0
	if got := c.fpBinary(fMul, 1, b64(0x1p-600), b64(0x1p-450)); got != b64(0x1p-1050) || c.fpsr != 0 {
		t.Errorf("without FZ: %#x, FPSR %#x; want the exact denormal, no flag", got, c.fpsr)
	}
}
