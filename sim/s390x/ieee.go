package s390x

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"simrun/sim/cpu"
	"simrun/sim/ieee"
)

// IEEE exception flags of the FPC (bits 8-12). Linux runs programs with
// every exception masked, so an exception only sets its flag, which stays
// set until the program changes the FPC (sfpc); efpc shows them (glibc's
// printf reads the rounding mode with it). Every BFP instruction simrun
// implements, scalar and vector, raises its flags as qemu does; the
// random differential tests read the FPC after each one (fpcProbe).
const (
	fpcInvalid   = 0x80 << 16
	fpcDivZero   = 0x40 << 16
	fpcOverflow  = 0x20 << 16
	fpcUnderflow = 0x10 << 16
	fpcInexact   = 0x08 << 16
)

// The FPC's fields:
//
//	 0       8       16      24  25-27 29-31
//	+-------+-------+-------+---+-----+-----+
//	| masks | flags |  DXC  |   | DRM | BRM |
//	+-------+-------+-------+---+-----+-----+
//
// masks and flags: invalid, divide by zero, overflow, underflow, inexact
// (bits 0-4, 8-12); DRM and BRM the decimal and binary rounding modes.
const (
	fpcMasks    = 0xf8 << 24
	fpcReserved = 0x03030088 // bits 6-7, 14-15, 24, 28
	fpcBRM      = 0x7
)

var (
	errFPCReserved = errors.New("specification exception: the new FPC has a reserved bit set or an invalid rounding mode")
	errFPCTraps    = errors.New("simrun runs with the IEEE exceptions masked: the new FPC would enable IEEE traps")
	errFPCRounding = errors.New("simrun rounds binary floating point to nearest only: the new FPC would set another mode")
)

// setFPC is sfpc (and lfpc, srnm, srnmb): a reserved bit or a binary
// rounding mode of 4-6 is a specification exception (qemu's test);
// enabling an IEEE trap or another binary rounding mode is refused as
// unsupported, since simrun implements neither.
func (c *Core) setFPC(v uint32) *cpu.Fault {
	switch {
	case v&fpcReserved != 0 || v&fpcBRM >= 4 && v&fpcBRM <= 6:
		return &cpu.Fault{Kind: cpu.FaultUndefined, Err: fmt.Errorf("%w (0x%08x)", errFPCReserved, v)}
	case v&fpcMasks != 0:
		return &cpu.Fault{Kind: cpu.FaultUnsupported, Err: fmt.Errorf("%w (0x%08x)", errFPCTraps, v)}
	case v&fpcBRM != 0:
		return &cpu.Fault{Kind: cpu.FaultUnsupported, Err: fmt.Errorf("%w (0x%08x)", errFPCRounding, v)}
	}
	c.fpc = v
	return nil
}

// setRoundingMode is srnm and srnmb: the low two (srnm) or three (srnmb)
// bits of the second-operand address become the FPC's binary rounding
// mode, srnm clearing the mode's high bit; the rest of the address is
// ignored and no storage is accessed (Principles of Operation, SET BFP
// ROUNDING MODE), except that srnmb's address bits 56-60 must be zero,
// else a specification exception (as qemu). setFPC then refuses what
// sfpc would: srnmb's modes 4-6, and any mode but to-nearest. glibc's
// fesetround is srnm.
func (c *Core) setRoundingMode(in *inst) *cpu.Fault {
	a := c.r[in.b] + uint64(in.imm)
	mode := a & 3
	if in.op == opSRNMB {
		if a&0xf8 != 0 {
			return &cpu.Fault{Kind: cpu.FaultUndefined, Err: fmt.Errorf("specification exception: srnmb operand address 0x%x has bits 56-60 set", a)}
		}
		mode = a & fpcBRM
	}
	return c.setFPC(c.fpc&^fpcBRM | uint32(mode))
}

// loadStoreFPC is lfpc (the FPC from the word at the second-operand
// address, checked as sfpc checks it) and stfpc (the FPC to that word).
func (c *Core) loadStoreFPC(in *inst) *cpu.Fault {
	a := c.r[in.b] + uint64(in.imm)
	if in.op == opSTFPC {
		if !c.mem.Store32BE(a, c.fpc) {
			return c.accessFault()
		}
		return nil
	}
	v, ok := c.mem.Load32BE(a)
	if !ok {
		return c.accessFault()
	}
	return c.setFPC(v)
}

// fpc places flags in the FPC's flag byte (bits 8-12, invalid first).
func fpc(f ieee.Flags) uint32 { return uint32(bits.Reverse8(uint8(f))) << 16 }

// toIntFlags are the flags of converting b (widened to double) to an
// integer whose condition code was cc: invalid for a NaN, invalid and
// inexact for a number out of range (cc 3 both; qemu), inexact for a
// fraction rounded off.
func toIntFlags(b uint64, cc uint8) uint32 {
	switch {
	case cc == 3 && isNaN64(b):
		return fpcInvalid
	case cc == 3:
		return fpcInvalid | fpcInexact
	}
	x := math.Float64frombits(b)
	if x != math.Trunc(x) {
		return fpcInexact
	}
	return 0
}

// narrowFlags are the flags of rounding the double a to the short z with
// rounding mode rm. A directed mode can round a value beyond the short
// range to the largest finite one: it overflows when its rounding with
// an unbounded exponent does (the value scaled down by 2^64, which is
// exact, rounds in range).
func narrowFlags(a uint64, z uint32, rm uint8) uint32 {
	return fpc(ieee.Narrow(a, z, func(x float64) bool {
		scaled := round64to32(math.Float64bits(x*0x1p-64), rm)
		return math.Abs(float64(math.Float32frombits(scaled)))*0x1p64 > math.MaxFloat32
	}))
}
