package arm64

import "simrun/sim/cpu"

// slotInfo returns the cached description of the slot for pc.
func (c *Core) slotInfo(p *codePage, in *inst, pc uint64) *cpu.OpInfo {
	if p.Infos == nil {
		c.describePage(p)
	}
	if info := p.Info(pc); info.Valid {
		return info
	}
	return c.describeSlot(p, in, pc)
}

// NextOp classifies the instruction at pc for SPE and tracing, computing
// its data address and branch outcome from the current registers.
func (c *Core) NextOp(op *cpu.Op) bool {
	if c.pc&3 != 0 {
		return false
	}
	p, in, ok := c.icache.DecodedSlot(c.pc, func(in *inst) bool { return in.op == opNone }, c.decodeAt)
	if !ok {
		return false
	}
	info := c.slotInfo(p, in, c.pc)
	d := decoded(in, info)
	in = &d
	*op = cpu.Op{PC: c.pc, Size: 4, Class: info.Class, Flags: info.Flags, Access: info.Access}
	if info.Class == cpu.ClassBranch {
		t, taken := c.branchTarget(in)
		op.Target = t
		if taken {
			op.Flags |= cpu.OpCondPassed
		}
		return true
	}
	ea := c.dynamicValue(in, info)
	switch {
	case info.Access != 0:
		op.VA = ea
	case info.Flags&cpu.OpConditional != 0 && ea != 0:
		op.Flags |= cpu.OpCondPassed
	}
	return true
}
