package s390x

import (
	"simrun/sim/cpu"
	"simrun/sim/ieee"
)

// Floating-point register access. FPR n is bits 0-63 of vector register
// n; a short (32-bit) value lives in bits 0-31 and writing one leaves bits
// 32-63 as they were, as scalar writes leave bits 64-127 (qemu's
// behaviour; the architecture calls those bits unpredictable).

func (c *Core) fd(n uint8) uint64       { return c.v[n&15][0] }
func (c *Core) setFD(n uint8, v uint64) { c.v[n&15][0] = v }
func (c *Core) fe(n uint8) uint32       { return uint32(c.v[n&15][0] >> 32) }
func (c *Core) setFE(n uint8, v uint32) {
	c.v[n&15][0] = c.v[n&15][0]&0xffffffff | uint64(v)<<32
}

// fpAddr is the RXE/RXF second-operand address.
func (c *Core) fpAddr(in *inst) uint64 { return c.r[in.b] + c.r[in.r2] + uint64(in.imm) }

// fpMem64 and fpMem32 load the storage operand of an RXE/RXF instruction.
func (c *Core) fpMem64(in *inst) (uint64, *cpu.Fault) {
	v, ok := c.mem.Load64BE(c.fpAddr(in))
	if !ok {
		return 0, c.accessFault()
	}
	return v, nil
}

func (c *Core) fpMem32(in *inst) (uint32, *cpu.Fault) {
	v, ok := c.mem.Load32BE(c.fpAddr(in))
	if !ok {
		return 0, c.accessFault()
	}
	return v, nil
}

// fp executes the binary floating-point instructions (opLD up to opVL);
// the caller fills in the fault's pc.
func (c *Core) fp(in *inst) *cpu.Fault {
	mem := c.mem
	switch in.op {
	// Loads, stores and moves.
	case opLD, opLDY:
		v, f := c.fpMem64(in)
		if f != nil {
			return f
		}
		c.setFD(in.r1, v)
	case opLE, opLEY:
		v, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		c.setFE(in.r1, v)
	case opLDE: // the short operand with 32 zero bits appended
		v, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		c.setFD(in.r1, uint64(v)<<32)
	case opSTD, opSTDY:
		if !mem.Store64BE(c.fpAddr(in), c.fd(in.r1)) {
			return c.accessFault()
		}
	case opSTE, opSTEY:
		if !mem.Store32BE(c.fpAddr(in), c.fe(in.r1)) {
			return c.accessFault()
		}
	case opLDR:
		c.setFD(in.r1, c.fd(in.r2))
	case opLER:
		c.setFE(in.r1, c.fe(in.r2))
	case opLZDR:
		c.setFD(in.r1, 0)
	case opLZER:
		c.setFE(in.r1, 0)
	case opLDGR:
		c.setFD(in.r1, c.r[in.r2])
	case opLGDR:
		c.r[in.r1] = c.fd(in.r2)

	// Sign operations.
	case opLCDBR, opLPDBR, opLNDBR, opLTDBR, opLCDFR, opLPDFR, opLNDFR:
		v := c.fd(in.r2)
		switch in.op {
		case opLCDBR, opLCDFR:
			v ^= signBit64
		case opLPDBR, opLPDFR:
			v &^= signBit64
		case opLNDBR, opLNDFR:
			v |= signBit64
		}
		c.setFD(in.r1, v)
		if in.op != opLCDFR && in.op != opLPDFR && in.op != opLNDFR {
			c.cc = ccFP64(v)
		}
	case opLCEBR, opLPEBR, opLNEBR, opLTEBR:
		v := c.fe(in.r2)
		switch in.op {
		case opLCEBR:
			v ^= signBit32
		case opLPEBR:
			v &^= signBit32
		case opLNEBR:
			v |= signBit32
		}
		c.setFE(in.r1, v)
		c.cc = ccFP32(v)
	case opCPSDR:
		c.setFD(in.r1, c.fd(in.r3)&signBit64|c.fd(in.r2)&^signBit64)

	// Lengthening and rounding.
	case opLDEBR:
		c.fpc |= fpc(ieee.Lengthen(c.fe(in.r2)))
		c.setFD(in.r1, ext32to64(c.fe(in.r2)))
	case opLDEB:
		v, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		c.fpc |= fpc(ieee.Lengthen(v))
		c.setFD(in.r1, ext32to64(v))
	case opLEDBRA:
		z := round64to32(c.fd(in.r2), in.m)
		c.fpc |= inexactControl(in, narrowFlags(c.fd(in.r2), z, in.m))
		c.setFE(in.r1, z)

	// Arithmetic: register and storage forms.
	case opADBR, opSDBR, opMDBR, opDDBR:
		kind := bfpKind(in.op)
		a, b := c.fd(in.r1), c.fd(in.r2)
		v := arith64(kind, a, b)
		c.fpc |= fpc(ieee.Arith64(ieee.Op(kind), a, b, v))
		c.setFD(in.r1, v)
		if kind <= bfpSub {
			c.cc = ccFP64(v)
		}
	case opADB, opSDB, opMDB, opDDB:
		b, f := c.fpMem64(in)
		if f != nil {
			return f
		}
		kind := bfpKind(in.op)
		a := c.fd(in.r1)
		v := arith64(kind, a, b)
		c.fpc |= fpc(ieee.Arith64(ieee.Op(kind), a, b, v))
		c.setFD(in.r1, v)
		if kind <= bfpSub {
			c.cc = ccFP64(v)
		}
	case opAEBR, opSEBR, opMEEBR, opDEBR:
		kind := bfpKind(in.op)
		a, b := c.fe(in.r1), c.fe(in.r2)
		v := arith32(kind, a, b)
		c.fpc |= fpc(ieee.Arith32(ieee.Op(kind), a, b, v))
		c.setFE(in.r1, v)
		if kind <= bfpSub {
			c.cc = ccFP32(v)
		}
	case opAEB, opSEB, opMEEB, opDEB:
		b, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		kind := bfpKind(in.op)
		a := c.fe(in.r1)
		v := arith32(kind, a, b)
		c.fpc |= fpc(ieee.Arith32(ieee.Op(kind), a, b, v))
		c.setFE(in.r1, v)
		if kind <= bfpSub {
			c.cc = ccFP32(v)
		}
	// Multiply and add/subtract: R1 = op2 * R3 ± R1.
	case opMADBR, opMSDBR:
		c.setFD(in.r1, c.fma64(c.fd(in.r2), c.fd(in.r3), c.fd(in.r1), in.op == opMSDBR))
	case opMADB, opMSDB:
		b, f := c.fpMem64(in)
		if f != nil {
			return f
		}
		c.setFD(in.r1, c.fma64(b, c.fd(in.r3), c.fd(in.r1), in.op == opMSDB))
	case opMAEBR, opMSEBR:
		c.setFE(in.r1, c.fma32(c.fe(in.r2), c.fe(in.r3), c.fe(in.r1), in.op == opMSEBR))
	case opMAEB, opMSEB:
		b, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		c.setFE(in.r1, c.fma32(b, c.fe(in.r3), c.fe(in.r1), in.op == opMSEB))
	case opSQDBR:
		a := c.fd(in.r2)
		v := sqrt64(a)
		c.fpc |= fpc(ieee.Sqrt64(a, v))
		c.setFD(in.r1, v)
	case opSQDB:
		b, f := c.fpMem64(in)
		if f != nil {
			return f
		}
		v := sqrt64(b)
		c.fpc |= fpc(ieee.Sqrt64(b, v))
		c.setFD(in.r1, v)
	case opSQEBR:
		v := sqrt32(c.fe(in.r2))
		c.fpc |= fpc(ieee.Sqrt32(c.fe(in.r2), v))
		c.setFE(in.r1, v)
	case opSQEB:
		b, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		v := sqrt32(b)
		c.fpc |= fpc(ieee.Sqrt32(b, v))
		c.setFE(in.r1, v)

	// Comparison (compare and signal differs only in IEEE flags).
	case opCDBR, opKDBR:
		c.cc = cmp64(c.fd(in.r1), c.fd(in.r2))
		c.fpc |= fpc(ieee.Compare64(c.fd(in.r1), c.fd(in.r2), in.op == opKDBR))
	case opCDB, opKDB:
		b, f := c.fpMem64(in)
		if f != nil {
			return f
		}
		c.cc = cmp64(c.fd(in.r1), b)
		c.fpc |= fpc(ieee.Compare64(c.fd(in.r1), b, in.op == opKDB))
	case opCEBR, opKEBR:
		c.cc = cmp64(ext32to64(c.fe(in.r1)), ext32to64(c.fe(in.r2)))
		c.fpc |= fpc(ieee.Compare32(c.fe(in.r1), c.fe(in.r2), in.op == opKEBR))
	case opCEB, opKEB:
		b, f := c.fpMem32(in)
		if f != nil {
			return f
		}
		c.cc = cmp64(ext32to64(c.fe(in.r1)), ext32to64(b))
		c.fpc |= fpc(ieee.Compare32(c.fe(in.r1), b, in.op == opKEB))
	case opTCDB: // the "address" is the class mask
		c.cc = b2u(uint16(c.fpAddr(in))&0xfff&dataClass(c.fd(in.r1), 52) != 0)
	case opTCEB:
		c.cc = b2u(uint16(c.fpAddr(in))&0xfff&dataClass(uint64(c.fe(in.r1)), 23) != 0)

	// Conversions from integers.
	case opCDFBRA:
		c.setFD(in.r1, signedToBFP(int64(int32(c.r[in.r2])), &double, in.m))
	case opCDGBRA:
		c.setFD(in.r1, c.signedToBFP(in, int64(c.r[in.r2]), &double))
	case opCEFBRA:
		c.setFE(in.r1, uint32(c.signedToBFP(in, int64(int32(c.r[in.r2])), &single)))
	case opCEGBRA:
		c.setFE(in.r1, uint32(c.signedToBFP(in, int64(c.r[in.r2]), &single)))
	case opCDLFBR:
		c.setFD(in.r1, intToBFP(false, uint64(uint32(c.r[in.r2])), &double, in.m))
	case opCDLGBR:
		c.setFD(in.r1, c.intToBFP(in, false, c.r[in.r2], &double))
	case opCELFBR:
		c.setFE(in.r1, uint32(c.intToBFP(in, false, uint64(uint32(c.r[in.r2])), &single)))
	case opCELGBR:
		c.setFE(in.r1, uint32(c.intToBFP(in, false, c.r[in.r2], &single)))

	// Conversions to integers.
	case opCFDBRA, opCLFDBR, opCFEBRA, opCLFEBR:
		src := c.fd(in.r2)
		if in.op == opCFEBRA || in.op == opCLFEBR {
			src = ext32to64(c.fe(in.r2))
		}
		v, cc := toInt(src, 32, in.op == opCFDBRA || in.op == opCFEBRA, in.m)
		lo32(&c.r[in.r1], uint32(v))
		c.cc = cc
		c.fpc |= inexactControl(in, toIntFlags(src, cc))
	case opCGDBRA, opCLGDBR, opCGEBRA, opCLGEBR:
		src := c.fd(in.r2)
		if in.op == opCGEBRA || in.op == opCLGEBR {
			src = ext32to64(c.fe(in.r2))
		}
		c.r[in.r1], c.cc = toInt(src, 64, in.op == opCGDBRA || in.op == opCGEBRA, in.m)
		c.fpc |= inexactControl(in, toIntFlags(src, c.cc))

	// Round to integral value.
	case opFIDBRA:
		z := roundIntegral64(c.fd(in.r2), in.m)
		c.fpc |= inexactControl(in, fpc(ieee.Integral64(c.fd(in.r2), z)))
		c.setFD(in.r1, z)
	case opFIEBRA:
		z := roundIntegral32(c.fe(in.r2), in.m)
		c.fpc |= inexactControl(in, fpc(ieee.Integral32(c.fe(in.r2), z)))
		c.setFE(in.r1, z)
	default:
		if isFX(in.op) {
			return c.bfp128(in)
		}
		return internalFault(0, in).Fault
	}
	return nil
}

// bfpKind maps an arithmetic op to its operation.
func bfpKind(o op) int {
	switch o {
	case opSDBR, opSDB, opSEBR, opSEB:
		return bfpSub
	case opMDBR, opMDB, opMEEBR, opMEEB:
		return bfpMul
	case opDDBR, opDDB, opDEBR, opDEB:
		return bfpDiv
	}
	return bfpAdd
}

// fma64, fma32, intToBFP and signedToBFP are the conversions and
// multiply-and-add of bfp.go with the FPC flags they raise; the
// conversions take the rounding mode and the inexact control from in
// (M3, M4).
func (c *Core) fma64(a, b, d uint64, sub bool) uint64 {
	v := fma64(a, b, d, sub)
	if sub {
		d ^= signBit64
	}
	c.fpc |= fpc(ieee.FMA64(a, b, d, v))
	return v
}

func (c *Core) fma32(a, b, d uint32, sub bool) uint32 {
	v := fma32(a, b, d, sub)
	if sub {
		d ^= signBit32
	}
	c.fpc |= fpc(ieee.FMA32(a, b, d, v))
	return v
}

func (c *Core) intToBFP(in *inst, neg bool, mag uint64, f *bfpFormat) uint64 {
	v := intToBFP(neg, mag, f, in.m)
	c.fpc |= inexactControl(in, fpc(ieee.FromInt(mag, v, f == &single)))
	return v
}

func (c *Core) signedToBFP(in *inst, v int64, f *bfpFormat) uint64 {
	if v < 0 {
		return c.intToBFP(in, true, -uint64(v), f)
	}
	return c.intToBFP(in, false, uint64(v), f)
}

// inexactControl drops the inexact flag when the M4 field of in (an
// RRF-e conversion or rounding) has the inexact-suppression bit XxC
// (value 4). The vector forms keep it: XxC there only suppresses the
// trap (qemu).
func inexactControl(in *inst, flags uint32) uint32 {
	if in.r3&4 != 0 {
		return flags &^ fpcInexact
	}
	return flags
}
