package ieee

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// q builds a binary128 from its sign, unbiased exponent and the 112-bit
// fraction's top 48 and low 64 bits (a normal number).
func q(neg bool, exp int, fh, fl uint64) F128 {
	x := F128{uint64(exp+16383)<<48 | fh, fl}
	if neg {
		x.Hi |= f128Sign
	}
	return x
}

var (
	one128      = q(false, 0, 0, 0)
	two128      = q(false, 1, 0, 0)
	three128    = q(false, 1, 1<<47, 0)
	minNormal   = q(false, -16382, 0, 0)
	minSub      = F128{0, 1}
	maxFinite   = F128{0x7ffeffffffffffff, ^uint64(0)}
	posInf      = F128{0x7fff000000000000, 0}
	negInf      = F128{0xffff000000000000, 0}
	negZero     = F128{f128Sign, 0}
	qnanPayload = F128{0x7fff800000000000, 42}
	snanPayload = F128{0x7fff000000000000, 7}
	thirdNear   = F128{0x3ffd555555555555, 0x5555555555555555}
)

func neg128(a F128) F128 { return F128{a.Hi ^ f128Sign, a.Lo} }

// TestF128Table pins results and flags that follow from the definitions:
// exact operations, 1/3 in every rounding direction, the special values,
// overflow and underflow at the format's edges in every direction.
func TestF128Table(t *testing.T) {
	third := func(lo uint64) F128 { return F128{0x3ffd555555555555, lo} }
	cases := []struct {
		name  string
		op    func(Rounding) (F128, Flags)
		rm    Rounding
		want  F128
		flags Flags
	}{
		{"1+1", func(r Rounding) (F128, Flags) { return Add128(one128, one128, r) }, NearestEven, two128, 0},
		{"3-1", func(r Rounding) (F128, Flags) { return Sub128(three128, one128, r) }, NearestEven, two128, 0},
		{"1-1 is +0", func(r Rounding) (F128, Flags) { return Sub128(one128, one128, r) }, NearestEven, F128{}, 0},
		{"1-1 toward -inf is -0", func(r Rounding) (F128, Flags) { return Sub128(one128, one128, r) }, TowardNegative, negZero, 0},
		{"-0 + -0", func(r Rounding) (F128, Flags) { return Add128(negZero, negZero, r) }, NearestEven, negZero, 0},
		{"1/3 nearest", func(r Rounding) (F128, Flags) { return Div128(one128, three128, r) }, NearestEven, third(0x5555555555555555), Inexact},
		{"1/3 zero", func(r Rounding) (F128, Flags) { return Div128(one128, three128, r) }, TowardZero, third(0x5555555555555555), Inexact},
		{"1/3 +inf", func(r Rounding) (F128, Flags) { return Div128(one128, three128, r) }, TowardPositive, third(0x5555555555555556), Inexact},
		{"1/3 odd", func(r Rounding) (F128, Flags) { return Div128(one128, three128, r) }, ToOdd, third(0x5555555555555555), Inexact},
		{"-1/3 -inf", func(r Rounding) (F128, Flags) { return Div128(neg128(one128), three128, r) }, TowardNegative, neg128(third(0x5555555555555556)), Inexact},
		{"2/3 nearest", func(r Rounding) (F128, Flags) { return Div128(two128, three128, r) }, NearestEven, F128{0x3ffe555555555555, 0x5555555555555555}, Inexact},
		{"1/0", func(r Rounding) (F128, Flags) { return Div128(one128, F128{}, r) }, NearestEven, posInf, DivByZero},
		{"-1/0", func(r Rounding) (F128, Flags) { return Div128(neg128(one128), F128{}, r) }, NearestEven, negInf, DivByZero},
		{"0/0", func(r Rounding) (F128, Flags) { return Div128(F128{}, F128{}, r) }, NearestEven, DefaultNaN128, Invalid},
		{"inf-inf", func(r Rounding) (F128, Flags) { return Sub128(posInf, posInf, r) }, NearestEven, DefaultNaN128, Invalid},
		{"inf*0", func(r Rounding) (F128, Flags) { return Mul128(posInf, negZero, r) }, NearestEven, DefaultNaN128, Invalid},
		{"sqrt -1", func(r Rounding) (F128, Flags) { return Sqrt128(neg128(one128), r) }, NearestEven, DefaultNaN128, Invalid},
		{"sqrt -0", func(r Rounding) (F128, Flags) { return Sqrt128(negZero, r) }, NearestEven, negZero, 0},
		{"sqrt 4", func(r Rounding) (F128, Flags) { return Sqrt128(q(false, 2, 0, 0), r) }, NearestEven, two128, 0},
		{"sqrt 2", func(r Rounding) (F128, Flags) { return Sqrt128(two128, r) }, NearestEven, F128{0x3fff6a09e667f3bc, 0xc908b2fb1366ea95}, Inexact},
		{"qNaN + sNaN: the sNaN, quiet", func(r Rounding) (F128, Flags) { return Add128(qnanPayload, snanPayload, r) }, NearestEven, snanPayload.Quiet(), Invalid},
		{"1 * qNaN", func(r Rounding) (F128, Flags) { return Mul128(one128, qnanPayload, r) }, NearestEven, qnanPayload, 0},
		{"max+max nearest", func(r Rounding) (F128, Flags) { return Add128(maxFinite, maxFinite, r) }, NearestEven, posInf, Overflow | Inexact},
		{"max+max zero", func(r Rounding) (F128, Flags) { return Add128(maxFinite, maxFinite, r) }, TowardZero, maxFinite, Overflow | Inexact},
		{"max+max -inf", func(r Rounding) (F128, Flags) { return Add128(maxFinite, maxFinite, r) }, TowardNegative, maxFinite, Overflow | Inexact},
		{"max+max odd", func(r Rounding) (F128, Flags) { return Add128(maxFinite, maxFinite, r) }, ToOdd, maxFinite, Overflow | Inexact},
		{"-max-max +inf", func(r Rounding) (F128, Flags) { return Sub128(neg128(maxFinite), maxFinite, r) }, TowardPositive, neg128(maxFinite), Overflow | Inexact},
		{"minSub/2 nearest: tie to even 0", func(r Rounding) (F128, Flags) { return Div128(minSub, two128, r) }, NearestEven, F128{}, Underflow | Inexact},
		{"minSub/2 away", func(r Rounding) (F128, Flags) { return Div128(minSub, two128, r) }, NearestAway, minSub, Underflow | Inexact},
		{"minSub/2 +inf", func(r Rounding) (F128, Flags) { return Div128(minSub, two128, r) }, TowardPositive, minSub, Underflow | Inexact},
		{"minSub*3/2 nearest", func(r Rounding) (F128, Flags) { return Div128(F128{0, 3}, two128, r) }, NearestEven, F128{0, 2}, Underflow | Inexact},
		{"minNormal/2 is exact: no underflow", func(r Rounding) (F128, Flags) { return Div128(minNormal, two128, r) }, NearestEven, F128{0x0000800000000000, 0}, 0},
		{"minNormal-minSub exact subnormal", func(r Rounding) (F128, Flags) { return Sub128(minNormal, minSub, r) }, NearestEven, F128{0x0000ffffffffffff, ^uint64(0)}, 0},
		{"rounding up to minNormal still underflows (tininess before rounding)",
			func(r Rounding) (F128, Flags) {
				// (minNormal - minSub) * (1 + 2^-112): exact value just below minNormal
				return Mul128(F128{0x0000ffffffffffff, ^uint64(0)}, F128{0x3fff000000000000, 1}, r)
			}, NearestEven, minNormal, Underflow | Inexact},
		{"minNormal * (1+2^-112) exact", func(r Rounding) (F128, Flags) { return Mul128(minNormal, F128{0x3fff000000000000, 1}, r) }, NearestEven, F128{0x0001000000000000, 1}, 0},
		{"1 + 2^-113 nearest ties to even", func(r Rounding) (F128, Flags) { return Add128(one128, q(false, -113, 0, 0), r) }, NearestEven, one128, Inexact},
		{"1 + 2^-113 away", func(r Rounding) (F128, Flags) { return Add128(one128, q(false, -113, 0, 0), r) }, NearestAway, F128{0x3fff000000000000, 1}, Inexact},
		{"1 + 2^-113 odd", func(r Rounding) (F128, Flags) { return Add128(one128, q(false, -113, 0, 0), r) }, ToOdd, F128{0x3fff000000000000, 1}, Inexact},
		{"1 - 2^-10000 toward zero", func(r Rounding) (F128, Flags) { return Sub128(one128, q(false, -10000, 0, 0), r) }, TowardZero, F128{0x3ffeffffffffffff, ^uint64(0)}, Inexact},
		{"1 - 2^-10000 nearest", func(r Rounding) (F128, Flags) { return Sub128(one128, q(false, -10000, 0, 0), r) }, NearestEven, one128, Inexact},
		{"round 2.5 even", func(r Rounding) (F128, Flags) { return RoundIntegral128(q(false, 1, 1<<46, 0), r) }, NearestEven, two128, Inexact},
		{"round 2.5 away", func(r Rounding) (F128, Flags) { return RoundIntegral128(q(false, 1, 1<<46, 0), r) }, NearestAway, three128, Inexact},
		{"round 2.5 odd", func(r Rounding) (F128, Flags) { return RoundIntegral128(q(false, 1, 1<<46, 0), r) }, ToOdd, three128, Inexact},
		{"round -0.5 +inf is -0", func(r Rounding) (F128, Flags) { return RoundIntegral128(q(true, -1, 0, 0), r) }, TowardPositive, negZero, Inexact},
		{"round -0.5 -inf", func(r Rounding) (F128, Flags) { return RoundIntegral128(q(true, -1, 0, 0), r) }, TowardNegative, neg128(one128), Inexact},
		{"round 3 exact", func(r Rounding) (F128, Flags) { return RoundIntegral128(three128, r) }, NearestEven, three128, 0},
		{"round sNaN", func(r Rounding) (F128, Flags) { return RoundIntegral128(snanPayload, r) }, NearestEven, snanPayload.Quiet(), Invalid},
	}
	for _, c := range cases {
		got, flags := c.op(c.rm)
		if got != c.want || flags != c.flags {
			t.Errorf("%s: got %016x_%016x flags %05b, want %016x_%016x flags %05b", c.name, got.Hi, got.Lo, flags, c.want.Hi, c.want.Lo, c.flags)
		}
	}
}

// TestF128Conversions pins the widening and narrowing of the edges:
// NaN payloads, subnormal doubles becoming normal, rounding to the
// double's subnormals and overflow by direction.
func TestF128Conversions(t *testing.T) {
	f64 := math.Float64bits
	widen := []struct {
		in    uint64
		want  F128
		flags Flags
	}{
		{f64(1), one128, 0},
		{f64(-3), neg128(three128), 0},
		{f64(math.Inf(-1)), negInf, 0},
		{1, q(false, -1074, 0, 0), 0}, // the least double subnormal is normal here
		{0x7ff0000000000001, F128{0x7fff800000000000, 1 << 60}, Invalid},
		{0xfff8000000000003, F128{0xffff800000000000, 3 << 60}, 0},
	}
	for _, c := range widen {
		if got, flags := FromFloat64(c.in); got != c.want || flags != c.flags {
			t.Errorf("FromFloat64(%016x) = %016x_%016x %05b, want %016x_%016x %05b", c.in, got.Hi, got.Lo, flags, c.want.Hi, c.want.Lo, c.flags)
		}
	}
	if got, flags := FromFloat32(0x7f800001); got != (F128{0x7fff800000000000 | 1<<25, 0}) || flags != Invalid {
		t.Errorf("FromFloat32(sNaN) = %x %05b", got, flags)
	}
	narrow := []struct {
		in    F128
		rm    Rounding
		want  uint64
		flags Flags
	}{
		{thirdNear, NearestEven, f64(1.0 / 3), Inexact},
		{thirdNear, TowardPositive, math.Float64bits(math.Nextafter(1.0/3, 1)), Inexact},
		{maxFinite, NearestEven, f64(math.Inf(1)), Overflow | Inexact},
		{maxFinite, TowardZero, f64(math.MaxFloat64), Overflow | Inexact},
		{maxFinite, ToOdd, f64(math.MaxFloat64), Overflow | Inexact},
		{q(false, -1075, 0, 0), NearestEven, 0, Underflow | Inexact},    // half the least subnormal: ties to 0
		{q(false, -1075, 1, 0), NearestEven, 1, Underflow | Inexact},    // just above half
		{q(false, -1075, 0, 0), TowardPositive, 1, Underflow | Inexact}, // up to the least subnormal
		{q(false, -1074, 0, 0), NearestEven, 1, 0},                      // exact subnormal
		{F128{0x7fff800000000000, 1 << 60}, NearestEven, 0x7ff8000000000001, 0},
		{F128{0x7fff000000000000, 1 << 60}, NearestEven, 0x7ff8000000000001, Invalid},
		{F128{0x7fff000000000000, 1}, NearestEven, 0x7ff8000000000000, Invalid}, // payload below the double's bits
	}
	for _, c := range narrow {
		if got, flags := ToFloat64(c.in, c.rm); got != c.want || flags != c.flags {
			t.Errorf("ToFloat64(%x, %d) = %016x %05b, want %016x %05b", c.in, c.rm, got, flags, c.want, c.flags)
		}
	}
	if got, flags := ToFloat32(thirdNear, NearestEven); got != math.Float32bits(1.0/3) || flags != Inexact {
		t.Errorf("ToFloat32(1/3) = %08x %05b", got, flags)
	}
	for _, v := range []uint64{0, 1, 42, 1<<53 + 1, 1<<63 + 12345, ^uint64(0)} {
		for _, neg := range []bool{false, true} {
			x := FromInt128(neg, v)
			gn, gv, ok := Integer(x)
			if !ok || gv != v || v != 0 && gn != neg {
				t.Errorf("FromInt128(%v, %d) round trip gives %v %d %v", neg, v, gn, gv, ok)
			}
		}
	}
	if _, _, ok := Integer(q(false, 64, 0, 0)); ok {
		t.Error("Integer(2^64) fits 64 bits?")
	}
}

var bigModes = map[Rounding]big.RoundingMode{
	NearestEven: big.ToNearestEven, NearestAway: big.ToNearestAway, TowardZero: big.ToZero,
	TowardPositive: big.ToPositiveInf, TowardNegative: big.ToNegativeInf,
}

// toBig is a finite a exactly.
func toBig(a F128) *big.Float {
	if a.IsZero() {
		return new(big.Float)
	}
	neg, m, e := a.unpack()
	x := new(big.Float).SetInt(m)
	x.SetMantExp(x, e)
	if neg {
		x.Neg(x)
	}
	return x
}

// inNormalRange reports whether x rounds to a normal binary128 without
// overflow or underflow.
func inNormalRange(x *big.Float) bool {
	if x.Sign() == 0 {
		return false
	}
	e := x.MantExp(nil) - 1
	return e >= -16382 && e <= 16382
}

// checkOracle compares op's binary128 result and inexact flag with
// math/big's correctly rounded arithmetic (exact at high precision for
// add, subtract and multiply, rounded at 113 bits for divide) where the
// result is normal; it reports whether it compared.
func checkOracle(t testing.TB, name string, a, b, got F128, flags Flags, rm Rounding) bool {
	if a.IsNaN() || b.IsNaN() || a.IsInf() || b.IsInf() || a.IsZero() || b.IsZero() || rm == ToOdd {
		return false
	}
	x, y := toBig(a), toBig(b)
	z := new(big.Float).SetPrec(113).SetMode(bigModes[rm])
	exact := new(big.Float).SetPrec(1 << 16)
	switch name {
	case "add":
		exact.Add(x, y)
	case "sub":
		exact.Sub(x, y)
	case "mul":
		exact.Mul(x, y)
	case "div":
		z.Quo(x, y)
		exact = nil
	}
	if exact != nil {
		if exact.Sign() == 0 {
			return false
		}
		z.Set(exact)
	}
	if !inNormalRange(z) || (exact != nil && !inNormalRange(exact)) {
		return false
	}
	if toBig(got).Cmp(z) != 0 || (flags&Inexact != 0) != (z.Acc() != big.Exact) || flags&^Inexact != 0 {
		t.Errorf("%s(%016x_%016x, %016x_%016x, mode %d) = %016x_%016x %05b, want %s (%v)",
			name, a.Hi, a.Lo, b.Hi, b.Lo, rm, got.Hi, got.Lo, flags, z.Text('p', 0), z.Acc())
	}
	return true
}

var ops128 = map[string]func(a, b F128, rm Rounding) (F128, Flags){
	"add": Add128, "sub": Sub128, "mul": Mul128, "div": Div128,
}

// rand128 draws a normal binary128 of random sign and significand whose
// exponent is within spread of 0, or a nearby special value now and
// then.
func rand128(r *rand.Rand, spread int) F128 {
	switch r.IntN(20) {
	case 0:
		return F128{r.Uint64() & (f128Sign | f128FracH), r.Uint64()} // subnormal
	case 1:
		return F128{r.Uint64()&f128Sign | 0x7ffe<<48 | r.Uint64()&f128FracH, r.Uint64()}
	}
	e := r.IntN(2*spread+1) - spread
	x := q(r.IntN(2) == 0, e, r.Uint64()&f128FracH, r.Uint64())
	if r.IntN(4) == 0 { // short significands make ties and exact results
		x.Lo &^= 1<<r.IntN(64) - 1
	}
	return x
}

// TestF128Oracle checks random operands in every rounding direction
// against math/big, and square roots by squaring.
func TestF128Oracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	compared := 0
	for i := 0; i < 4000; i++ {
		spread := []int{3, 120, 16000}[i%3]
		a, b := rand128(r, spread), rand128(r, spread)
		for rm := NearestEven; rm <= TowardNegative; rm++ {
			for name, op := range ops128 {
				got, flags := op(a, b, rm)
				if checkOracle(t, name, a, b, got, flags, rm) {
					compared++
				}
			}
			checkSqrt(t, a, rm)
		}
	}
	if compared < 40000 {
		t.Fatalf("only %d results compared", compared)
	}
}

// checkSqrt checks the square root of a positive finite a: with z the
// result and u, d its neighbours up and down, the exact root lies
// between the midpoints (nearest) or in [z, u) (toward zero, -inf) or
// (d, z] (+inf).
func checkSqrt(t testing.TB, a F128, rm Rounding) {
	if a.IsNaN() || a.IsInf() || a.IsZero() || a.Neg() || rm == ToOdd {
		return
	}
	z, flags := Sqrt128(a, rm)
	x := toBig(a)
	zb := toBig(z)
	ulp := new(big.Float).SetMantExp(big.NewFloat(1), zb.MantExp(nil)-113)
	sq := func(v *big.Float) *big.Float { return new(big.Float).SetPrec(1000).Mul(v, v) }
	at := func(k float64) *big.Float { // z + k*ulp, exactly
		d := new(big.Float).SetPrec(1000).Mul(ulp, big.NewFloat(k))
		return d.Add(d, zb)
	}
	var lo, hi *big.Float
	switch rm {
	case NearestEven, NearestAway:
		lo, hi = at(-0.5), at(0.5)
	case TowardZero, TowardNegative:
		lo, hi = at(0), at(1)
	default:
		lo, hi = at(-1), at(0)
	}
	ok := sq(lo).Cmp(x) <= 0 && sq(hi).Cmp(x) >= 0
	exact := sq(zb).Cmp(x) == 0
	if !ok || (flags == 0) != exact || flags&^Inexact != 0 {
		t.Errorf("sqrt(%016x_%016x, %d) = %016x_%016x %05b (exact %v)", a.Hi, a.Lo, rm, z.Hi, z.Lo, flags, exact)
	}
}

// TestF128ViaDouble checks operations on doubles against the host:
// rounding to odd in binary128 and then to nearest double is the
// double-precision result (113 >= 53+2), with subnormal and huge
// doubles.
func TestF128ViaDouble(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	randDouble := func() float64 {
		switch r.IntN(6) {
		case 0:
			return math.Float64frombits(r.Uint64() & (1<<52 - 1)) // subnormal
		case 1:
			return math.Float64frombits(r.Uint64())
		}
		return math.Ldexp(r.Float64()+0.5, r.IntN(200)-100) * float64(1-2*r.IntN(2))
	}
	for range 20000 {
		x, y := randDouble(), randDouble()
		checkViaDouble(t, x, y)
	}
}

func checkViaDouble(t testing.TB, x, y float64) {
	a, _ := FromFloat64(math.Float64bits(x))
	b, _ := FromFloat64(math.Float64bits(y))
	host := map[string]float64{"add": x + y, "sub": x - y, "mul": x * y, "div": x / y}
	for name, op := range ops128 {
		z, _ := op(a, b, ToOdd)
		got, _ := ToFloat64(z, NearestEven)
		want := host[name]
		if got != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(math.Float64frombits(got))) {
			t.Errorf("%s(%v, %v) via binary128 = %v, host %v", name, x, y, math.Float64frombits(got), want)
		}
	}
	z, _ := Sqrt128(a, ToOdd)
	got, _ := ToFloat64(z, NearestEven)
	if want := math.Sqrt(x); got != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(math.Float64frombits(got))) {
		t.Errorf("sqrt(%v) via binary128 = %v, host %v", x, math.Float64frombits(got), want)
	}
	c, unordered, _ := Compare128(a, b, false)
	hc := 0
	if x < y {
		hc = -1
	} else if x > y {
		hc = 1
	}
	if unordered != (math.IsNaN(x) || math.IsNaN(y)) || !unordered && c != hc {
		t.Errorf("compare(%v, %v) = %d %v", x, y, c, unordered)
	}
}

// FuzzF128 runs every operation on arbitrary bits in every direction:
// no panic, math/big agrees where the result is normal, and results
// through doubles match the host.
func FuzzF128(f *testing.F) {
	f.Add(one128.Hi, one128.Lo, three128.Hi, three128.Lo, uint8(0))
	f.Add(minSub.Hi, minSub.Lo, maxFinite.Hi, maxFinite.Lo, uint8(5))
	f.Add(snanPayload.Hi, snanPayload.Lo, posInf.Hi, posInf.Lo, uint8(3))
	f.Fuzz(func(t *testing.T, ah, al, bh, bl uint64, m uint8) {
		a, b := F128{ah, al}, F128{bh, bl}
		rm := Rounding(m % 6)
		for name, op := range ops128 {
			z, flags := op(a, b, rm)
			checkOracle(t, name, a, b, z, flags, rm)
			if z.IsNaN() && z != DefaultNaN128 && z != a.Quiet() && z != b.Quiet() {
				t.Errorf("%s: NaN %x from neither operand", name, z)
			}
		}
		checkSqrt(t, a, rm)
		RoundIntegral128(a, rm)
		ToFloat64(a, rm)
		ToFloat32(a, rm)
		Integer(a)
		Class128(a)
		checkViaDouble(t, math.Float64frombits(ah), math.Float64frombits(bl))
	})
}
