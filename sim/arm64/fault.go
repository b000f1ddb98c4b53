package arm64

import (
	"errors"
	"fmt"

	"golang.org/x/arch/arm64/arm64asm"

	"simrun/sim/cpu"
)

// The faults the core stops with: memory faults (the memory's last failure
// or a pending alignment fault), undefined and unimplemented encodings,
// brk, and ops without an executor.

var errMisalignedPC = errors.New("pc is not a multiple of 4")

func errNoExec(o op) error { return fmt.Errorf("decoded op %v has no executor", o) }

func brkError(imm uint64) error { return fmt.Errorf("brk #0x%x", imm) }

func (c *Core) stopFault(pc uint64, kind cpu.FaultKind, err error) cpu.Stop {
	return cpu.Stop{Kind: cpu.StopFault, Fault: &cpu.Fault{PC: pc, Kind: kind, Err: err}}
}

// memFault turns the memory's last failure into a fault at pc.
func (c *Core) memFault(pc uint64) cpu.Stop {
	if c.alignPending {
		c.alignPending = false
		return cpu.Stop{Kind: cpu.StopFault, Fault: &cpu.Fault{PC: pc, Kind: cpu.FaultAlignment, Addr: c.alignErr,
			Err: fmt.Errorf("exclusive or atomic access to 0x%x is not naturally aligned", c.alignErr)}}
	}
	mf := c.mem.Fault
	return cpu.Stop{Kind: cpu.StopFault, Fault: &cpu.Fault{PC: pc, Kind: cpu.MemFaultKind(mf), Addr: mf.Addr, Err: mf}}
}

// undefFault distinguishes encodings the architecture leaves unallocated
// (or that need features this CPU lacks) from ones simrun does not
// implement, using x/arch's tables as the judge.
func (c *Core) undefFault(pc uint64, w uint32) cpu.Stop {
	b := []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)}
	if in, err := asmDecode(b); err == nil && !needsAbsentFeature(in) {
		return c.stopFault(pc, cpu.FaultUnsupported, fmt.Errorf("simrun does not implement %s", in.Op))
	}
	return c.stopFault(pc, cpu.FaultUndefined, nil)
}

// needsAbsentFeature lists instructions x/arch decodes that this CPU treats
// as undefined (no pointer authentication, EL1+ only).
func needsAbsentFeature(in arm64asm.Inst) bool {
	switch in.Op.String() {
	case "RETAA", "RETAB", "BRAA", "BRAB", "BLRAA", "BLRAB", "BRAAZ", "BRABZ", "BLRAAZ", "BLRABZ",
		"ERET", "ERETAA", "ERETAB", "HVC", "SMC", "HLT", "DCPS1", "DCPS2", "DCPS3", "UDF":
		return true
	}
	return false
}

// alignFault records an alignment failure in the memory fault slot.
func (c *Core) alignFault(addr uint64) bool {
	c.alignErr = addr
	c.alignPending = true
	return false
}
