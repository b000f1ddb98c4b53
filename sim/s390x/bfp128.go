package s390x

import (
	"simrun/sim/cpu"
	"simrun/sim/ieee"
)

// Extended (128-bit) binary floating point, the format of long double.
// An extended operand designated by R is the FPR pair R, R+2: bits 0-63
// (sign, exponent, the fraction's left part) in FPR R, the rest in FPR
// R+2 (Principles of Operation, "Floating-Point-Register Pairs"). Only R
// of 0, 1, 4, 5, 8, 9, 12 or 13 designates a pair; decode turns another
// into a specification exception, as qemu does before executing. The
// arithmetic is package ieee's binary128 (no host has it); NaN, flag and
// condition-code rules are those of the short and long instructions in
// fp.go and bfp.go.

// isFX reports an extended-BFP instruction (the range insns.txt lists
// together).
func isFX(o op) bool { return o >= opLXR && o <= opCLGXBR }

// validPair reports whether r designates an FPR pair.
func validPair(r uint8) bool { return r&2 == 0 }

// fxPairs is which of R1 and R2 of an extended-BFP instruction designate
// pairs (bit 0 R1, bit 1 R2); R1 of the conversions to integers and R2
// of those from integers name general registers, R2 of the lengthening
// and long-to-extended multiply a long or short FPR.
func fxPairs(o op) uint8 {
	switch o {
	case opLZXR, opLXDBR, opLXEBR, opLXDB, opLXEB, opMXDBR, opMXDB, opTCXB,
		opCXFBRA, opCXGBRA, opCXLFBR, opCXLGBR:
		return 1
	case opLDXBRA, opLEXBRA, opCFXBRA, opCGXBRA, opCLFXBR, opCLGXBR:
		return 2
	}
	return 3
}

// refineFX checks the register pairs and the rounding-mode field of an
// extended-BFP instruction.
func (in *inst) refineFX() {
	p := fxPairs(in.op)
	if p&1 != 0 && !validPair(in.r1) || p&2 != 0 && !validPair(in.r2) {
		in.spec(specFPPair)
		return
	}
	switch in.op {
	case opLDXBRA, opLEXBRA, opFIXBRA, opCXFBRA, opCXGBRA, opCXLFBR, opCXLGBR,
		opCFXBRA, opCGXBRA, opCLFXBR, opCLGXBR:
		if !validRounding(in.m) {
			in.spec(specRounding)
		}
	}
}

func (c *Core) fx(n uint8) ieee.F128 { return ieee.F128{Hi: c.fd(n), Lo: c.fd(n + 2)} }

func (c *Core) setFX(n uint8, v ieee.F128) {
	c.setFD(n, v.Hi)
	c.setFD(n+2, v.Lo)
}

// rounding is the ieee direction of a BFP rounding-mode field (M3).
func (c *Core) rounding(m uint8) ieee.Rounding {
	switch m {
	case rmAway:
		return ieee.NearestAway
	case rmOdd:
		return ieee.ToOdd
	case rmZero:
		return ieee.TowardZero
	case rmPosInf:
		return ieee.TowardPositive
	case rmNegInf:
		return ieee.TowardNegative
	case rmFPC:
		return c.fpcRounding()
	}
	return ieee.NearestEven
}

// fpcRounding is the FPC's binary rounding mode (bits 29-31: 0 nearest,
// 1 zero, 2 +inf, 3 -inf, 7 prepare for shorter precision).
func (c *Core) fpcRounding() ieee.Rounding {
	switch c.fpc & fpcBRM {
	case 1:
		return ieee.TowardZero
	case 2:
		return ieee.TowardPositive
	case 3:
		return ieee.TowardNegative
	case 7:
		return ieee.ToOdd
	}
	return ieee.NearestEven
}

// ccFX is the condition code of an extended result: 0 zero, 1 negative,
// 2 positive, 3 NaN.
func ccFX(v ieee.F128) uint8 {
	switch {
	case v.IsNaN():
		return 3
	case v.IsZero():
		return 0
	case v.Neg():
		return 1
	}
	return 2
}

// bfp128 executes the extended-BFP instructions.
func (c *Core) bfp128(in *inst) *cpu.Fault {
	switch in.op {
	case opLXR:
		c.setFX(in.r1, c.fx(in.r2))
	case opLZXR:
		c.setFX(in.r1, ieee.F128{})
	case opLTXBR, opLCXBR, opLPXBR, opLNXBR:
		v := c.fx(in.r2)
		switch in.op {
		case opLCXBR:
			v.Hi ^= signBit64
		case opLPXBR:
			v.Hi &^= signBit64
		case opLNXBR:
			v.Hi |= signBit64
		}
		c.setFX(in.r1, v)
		c.cc = ccFX(v)

	case opAXBR, opSXBR, opMXBR, opDXBR:
		a, b := c.fx(in.r1), c.fx(in.r2)
		var v ieee.F128
		var fl ieee.Flags
		rm := c.fpcRounding()
		switch in.op {
		case opAXBR:
			v, fl = ieee.Add128(a, b, rm)
		case opSXBR:
			v, fl = ieee.Sub128(a, b, rm)
		case opMXBR:
			v, fl = ieee.Mul128(a, b, rm)
		default:
			v, fl = ieee.Div128(a, b, rm)
		}
		c.fpc |= fpc(fl)
		c.setFX(in.r1, v)
		if in.op == opAXBR || in.op == opSXBR {
			c.cc = ccFX(v)
		}
	case opSQXBR:
		v, fl := ieee.Sqrt128(c.fx(in.r2), c.fpcRounding())
		c.fpc |= fpc(fl)
		c.setFX(in.r1, v)
	case opMXDBR, opMXDB:
		b := c.fd(in.r2)
		if in.op == opMXDB {
			var f *cpu.Fault
			if b, f = c.fpMem64(in); f != nil {
				return f
			}
		}
		c.setFX(in.r1, c.mulLongToExtended(c.fd(in.r1), b))

	case opCXBR, opKXBR:
		ord, unordered, fl := ieee.Compare128(c.fx(in.r1), c.fx(in.r2), in.op == opKXBR)
		c.fpc |= fpc(fl)
		switch {
		case unordered:
			c.cc = 3
		case ord < 0:
			c.cc = 1
		case ord > 0:
			c.cc = 2
		default:
			c.cc = 0
		}
	case opTCXB: // the "address" is the class mask
		c.cc = b2u(uint16(c.fpAddr(in))&0xfff&(1<<(11-ieee.Class128(c.fx(in.r1)))) != 0)

	// Lengthening and rounding.
	case opLXDBR, opLXDB:
		b := c.fd(in.r2)
		if in.op == opLXDB {
			var f *cpu.Fault
			if b, f = c.fpMem64(in); f != nil {
				return f
			}
		}
		v, fl := ieee.FromFloat64(b)
		c.fpc |= fpc(fl)
		c.setFX(in.r1, v)
	case opLXEBR, opLXEB:
		b := c.fe(in.r2)
		if in.op == opLXEB {
			var f *cpu.Fault
			if b, f = c.fpMem32(in); f != nil {
				return f
			}
		}
		v, fl := ieee.FromFloat32(b)
		c.fpc |= fpc(fl)
		c.setFX(in.r1, v)
	case opLDXBRA:
		v, fl := ieee.ToFloat64(c.fx(in.r2), c.rounding(in.m))
		c.fpc |= inexactControl(in, fpc(fl))
		c.setFD(in.r1, v)
	case opLEXBRA:
		v, fl := ieee.ToFloat32(c.fx(in.r2), c.rounding(in.m))
		c.fpc |= inexactControl(in, fpc(fl))
		c.setFE(in.r1, v)
	case opFIXBRA:
		v, fl := ieee.RoundIntegral128(c.fx(in.r2), c.rounding(in.m))
		c.fpc |= inexactControl(in, fpc(fl))
		c.setFX(in.r1, v)

	// Conversions from integers: exact (any 64-bit integer fits the
	// 113-bit significand).
	case opCXFBRA:
		c.setFX(in.r1, signedToFX(int64(int32(c.r[in.r2]))))
	case opCXGBRA:
		c.setFX(in.r1, signedToFX(int64(c.r[in.r2])))
	case opCXLFBR:
		c.setFX(in.r1, ieee.FromInt128(false, uint64(uint32(c.r[in.r2]))))
	case opCXLGBR:
		c.setFX(in.r1, ieee.FromInt128(false, c.r[in.r2]))

	// Conversions to integers.
	case opCFXBRA, opCLFXBR:
		v, cc, fl := fxToInt(c.fx(in.r2), 32, in.op == opCFXBRA, c.rounding(in.m))
		lo32(&c.r[in.r1], uint32(v))
		c.cc = cc
		c.fpc |= inexactControl(in, fl)
	case opCGXBRA, opCLGXBR:
		v, cc, fl := fxToInt(c.fx(in.r2), 64, in.op == opCGXBRA, c.rounding(in.m))
		c.r[in.r1] = v
		c.cc = cc
		c.fpc |= inexactControl(in, fl)
	default:
		return internalFault(0, in).Fault
	}
	return nil
}

// mulLongToExtended is mxdbr: both long operands are lengthened (a
// signaling NaN made quiet, invalid) and multiplied in extended
// precision, where their product is exact; a NaN result is then the
// first NaN of the lengthened operands.
func (c *Core) mulLongToExtended(a, b uint64) ieee.F128 {
	x, fx := ieee.FromFloat64(a)
	y, fy := ieee.FromFloat64(b)
	v, fl := ieee.Mul128(x, y, c.fpcRounding())
	c.fpc |= fpc(fx | fy | fl)
	return v
}

func signedToFX(v int64) ieee.F128 {
	if v < 0 {
		return ieee.FromInt128(true, -uint64(v))
	}
	return ieee.FromInt128(false, uint64(v))
}

// fxToInt converts an extended value to an integer of the given width
// and signedness with rounding rm, as toInt does the long ones: a NaN
// gives the most negative signed value or unsigned 0, a value out of
// range the nearest limit, both with condition code 3 (invalid; out of
// range inexact too); otherwise the code is the sign of the source and
// a rounded-off fraction is inexact.
func fxToInt(a ieee.F128, width uint, signed bool, rm ieee.Rounding) (uint64, uint8, uint32) {
	if a.IsNaN() {
		if signed {
			return 1 << (width - 1), 3, fpcInvalid
		}
		return 0, 3, fpcInvalid
	}
	t, fl := ieee.RoundIntegral128(a, rm)
	neg, mag, ok := ieee.Integer(t)
	if a.IsInf() {
		ok = false
	}
	const outOfRange = fpcInvalid | fpcInexact
	if signed {
		half := uint64(1) << (width - 1)
		switch {
		case neg && (!ok || mag > half):
			return half, 3, outOfRange
		case !neg && (!ok || mag >= half):
			return half - 1, 3, outOfRange
		case neg:
			return -mag, ccFX(a), fpc(fl)
		}
		return mag, ccFX(a), fpc(fl)
	}
	lim := ^uint64(0) >> (64 - width)
	switch {
	case neg && (!ok || mag != 0):
		return 0, 3, outOfRange
	case !neg && (!ok || mag > lim):
		return lim, 3, outOfRange
	}
	return mag, ccFX(a), fpc(fl)
}
