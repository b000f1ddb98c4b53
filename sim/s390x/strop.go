package s390x

import (
	"errors"
	"fmt"

	"simrun/sim/cpu"
)

// This file has EXECUTE, the string instructions (srst, clst, mvst), the
// access registers, ipm, efpc and stfle: what glibc's start-up, string
// routines and thread-pointer code execute beyond the compiler's usual
// output.

// strLimit is the number of bytes srst and clst examine before they stop
// with condition code 3 (the "CPU-determined amount"); the program then
// repeats the instruction. qemu 7.2 stops after 8 KiB, and so does simrun:
// the registers after a partial search are then the same.
const strLimit = 0x2000

var (
	errExecuteExecute = errors.New("execute exception: the target of ex/exrl is itself ex or exrl")
	errExecuteOdd     = errors.New("specification exception: the target address of ex/exrl is odd")
	errStringChar     = errors.New("specification exception: bits 32-55 of r0 must be zero")
	errSTFLEAlign     = errors.New("specification exception: the stfle operand is not doubleword-aligned")
)

// exFast reports the targets that qemu runs inside the EXECUTE itself
// (trtr, mvc, nc, clc, oc, xc, tr, trt and svc): ex and its target then
// retire as one instruction. Any other target is a second instruction at
// the EXECUTE's address, counted and single-stepped on its own as qemu
// does; the lockstep sees the same pc twice, with the state unchanged
// between the two.
func exFast(first byte) bool {
	switch first {
	case 0xd0, 0xd2, 0xd4, 0xd5, 0xd6, 0xd7, 0xdc, 0xdd, 0x0a:
		return true
	}
	return false
}

// executeTarget fetches and decodes the target of ex or exrl at pc:
// bits 8-15 ORed with bits 56-63 of R1 (unless R1 is r0), its
// length that of the EXECUTE so that the pc advances past the EXECUTE,
// its relative offsets made relative to the EXECUTE's address.
// The target is decoded afresh every time (it depends on R1 and may be
// rewritten) and never enters the decoded-code cache. twice reports a
// target that retires as an instruction of its own (see exFast).
func (c *Core) executeTarget(in *inst, pc uint64) (t inst, twice bool, f *cpu.Fault) {
	a := c.r[in.b] + c.r[in.r2] + uint64(in.imm)
	if in.op == opEXRL {
		a = pc + uint64(in.imm)
	}
	if a&1 != 0 {
		return t, false, &cpu.Fault{PC: pc, Kind: cpu.FaultUndefined, Addr: a, Err: errExecuteOdd}
	}
	var b [6]byte
	n, f := c.fetch(a, b[:])
	if f != nil {
		f.PC = pc
		return t, false, f
	}
	if in.r1 != 0 {
		b[1] |= uint8(c.r[in.r1])
	}
	ln := insnLen(b[0])
	if n < ln {
		c.mem.Fault = cpu.MemFault{Addr: a + uint64(n), Size: ln - n, Access: cpu.AccessExec, Unmapped: true}
		return t, false, &cpu.Fault{PC: pc, Kind: cpu.FaultFetch, Addr: a + uint64(n),
			Err: fmt.Errorf("ex target at 0x%x: %w", a, truncatedError{n, ln, c.mem.Fault})}
	}
	t = decode(b[:ln])
	switch t.op {
	case opEX, opEXRL:
		return t, false, &cpu.Fault{PC: pc, Kind: cpu.FaultUndefined, Addr: a, Err: errExecuteExecute}
	case opUndef:
		if name, ok := asmName(b[:ln]); ok {
			return t, false, &cpu.Fault{PC: pc, Kind: cpu.FaultUnsupported, Addr: a,
				Err: fmt.Errorf("ex target at 0x%x: simrun does not implement %s", a, name)}
		}
		return t, false, &cpu.Fault{PC: pc, Kind: cpu.FaultUndefined, Addr: a,
			Err: fmt.Errorf("ex target at 0x%x: operation exception", a)}
	}
	t.ln = in.ln
	if pcRelative(t.op) {
		t.imm += int64(a - pc) // relative to the target, not to the EXECUTE
	}
	return t, !exFast(b[0]), nil
}

// pcRelative reports the ops whose immediate is an offset from the
// instruction's own address (relative branches, relative-long operands). As the target of an EXECUTE, such an instruction addresses
// relative to where the target lies (Principles of Operation, EXECUTE;
// qemu since 7.2.3 and 8.1), while it runs at the EXECUTE's address.
func pcRelative(o op) bool {
	if o == opJ { // brc/brcl 15
		return true
	}
	if i := o.info(); i != nil {
		switch i.format {
		case fmtRSI, fmtRIEe, fmtRIrel, fmtRIm, fmtRILrel, fmtRILm, fmtRIEb, fmtRIEc:
			return true
		}
	}
	return false
}

// fetch reads up to len(buf) instruction bytes at a from executable
// memory (fewer at its end); it fails only if the first halfword cannot
// be fetched.
func (c *Core) fetch(a uint64, buf []byte) (int, *cpu.Fault) {
	n := 0
	for n < len(buf) {
		pg, ok := c.mem.FetchPage(a + uint64(n))
		if !ok {
			if n < 2 {
				return 0, &cpu.Fault{Kind: cpu.FaultFetch, Addr: a, Err: c.mem.Fault}
			}
			break
		}
		n += copy(buf[n:], pg.Bytes()[(a+uint64(n))&cpu.PageMask:])
	}
	return n, nil
}

// searchString is srst: look for the character in bits 56-63 of r0 from
// the address in R2 up to (not including) the one in R1. cc 1: found, R1
// = its address; cc 2: not found; cc 3: strLimit bytes examined, R2
// advanced past them.
func (c *Core) searchString(in *inst) *cpu.Fault {
	if c.r[0]&0xffffff00 != 0 {
		return &cpu.Fault{Kind: cpu.FaultUndefined, Err: errStringChar}
	}
	ch := uint8(c.r[0])
	end, s := c.r[in.r1], c.r[in.r2]
	for i := uint64(0); i < strLimit; i++ {
		if s+i == end {
			c.cc = 2
			return nil
		}
		v, ok := c.mem.Load8(s + i)
		if !ok {
			return c.accessFault()
		}
		if v == ch {
			c.r[in.r1], c.cc = s+i, 1
			return nil
		}
	}
	c.r[in.r2], c.cc = s+strLimit, 3
	return nil
}

// compareString is clst: compare the strings at R1 and R2, each ended by
// the character in bits 56-63 of r0. cc 0: equal (registers unchanged);
// cc 1 or 2: the first operand is low or high, both registers at the
// first difference (a string that ends there is the low one); cc 3:
// strLimit bytes equal, both advanced past them. Like qemu, simrun does
// not check that bits 32-55 of r0 are zero.
func (c *Core) compareString(in *inst) *cpu.Fault {
	ch := uint8(c.r[0])
	s1, s2 := c.r[in.r1], c.r[in.r2]
	for i := uint64(0); i < strLimit; i++ {
		v1, ok := c.mem.Load8(s1 + i)
		if !ok {
			return c.accessFault()
		}
		v2, ok := c.mem.Load8(s2 + i)
		if !ok {
			return c.accessFault()
		}
		if v1 == v2 {
			if v1 == ch {
				c.cc = 0
				return nil
			}
			continue
		}
		switch {
		case v1 == ch:
			c.cc = 1
		case v2 == ch:
			c.cc = 2
		default:
			c.cc = 1 + b2u(v1 > v2)
		}
		c.r[in.r1], c.r[in.r2] = s1+i, s2+i
		return nil
	}
	c.r[in.r1], c.r[in.r2], c.cc = s1+strLimit, s2+strLimit, 3
	return nil
}

// moveString is mvst: copy the string at R2, up to and including the
// character in bits 56-63 of r0, to R1. cc 1: done, R1 = the address of
// the character copied to the first operand; cc 3: the copy stopped at
// the nearer of the two operands' page ends (qemu's CPU-determined
// amount), both registers advanced past the bytes moved.
func (c *Core) moveString(in *inst) *cpu.Fault {
	if c.r[0]&0xffffff00 != 0 {
		return &cpu.Fault{Kind: cpu.FaultUndefined, Err: errStringChar}
	}
	ch := uint8(c.r[0])
	d, s := c.r[in.r1], c.r[in.r2]
	n := min(cpu.PageSize-d&cpu.PageMask, cpu.PageSize-s&cpu.PageMask)
	for i := uint64(0); i < n; i++ {
		v, ok := c.mem.Load8(s + i)
		if !ok {
			return c.accessFault()
		}
		if !c.mem.Store8(d+i, v) {
			return c.accessFault()
		}
		if v == ch {
			c.r[in.r1], c.cc = d+i, 1
			return nil
		}
	}
	c.r[in.r1], c.r[in.r2], c.cc = d+n, s+n, 3
	return nil
}

// facilities is the facility list stfle stores: qemu 7.2's for the -cpu
// model of programs.Config.QemuCPU (qemu,stfle=off,etf3eh=off,vxeh=off,
// msa-base=off), which keeps answering stfle although the model has no
// STFLE facility bit. HWCAP has no STFLE bit either, so glibc never asks.
var facilities = [...]uint64{0xf840b6d1f4c45c64, 0x059c000000000000, 0x7020280000000000}

// storeFacilities is stfle: store up to bits 56-63 of r0 plus one
// doublewords of the facility list, set those bits of r0 to the list's
// length minus one; cc 0 if the whole list fitted, else 3.
func (c *Core) storeFacilities(in *inst) *cpu.Fault {
	a := c.r[in.b] + uint64(in.imm)
	if a&7 != 0 {
		return &cpu.Fault{Kind: cpu.FaultUndefined, Addr: a, Err: errSTFLEAlign}
	}
	want := uint64(uint8(c.r[0])) + 1
	n := min(want, uint64(len(facilities)))
	for i := uint64(0); i < n; i++ {
		if !c.mem.Store64BE(a+8*i, facilities[i]) {
			return c.accessFault()
		}
	}
	c.r[0] = c.r[0]&^0xff | uint64(len(facilities)-1)
	c.cc = 0
	if want < uint64(len(facilities)) {
		c.cc = 3
	}
	return nil
}

// insertProgramMask is ipm: bits 32-33 of R1 become zero, 34-35 the
// condition code and 36-39 the program mask (0: Linux runs programs with
// every program-mask exception off); bits 0-31 and 40-63 stay.
func (c *Core) insertProgramMask(in *inst) {
	c.r[in.r1] = c.r[in.r1]&^(0xff<<24) | uint64(c.cc)<<28
}
