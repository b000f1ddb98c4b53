package unwind_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/unwind"
)

func TestShadow(t *testing.T) {
	s := unwind.NewShadow()
	assert.Equal(t, hex{0x100}, hex(s.Callchain(0x100, nil)))
	s.Call(0x100, 0x104) // main calls f
	s.Call(0x200, 0x204) // f calls g
	assert.Equal(t, hex{0x300, 0x204, 0x104}, hex(s.Callchain(0x300, nil)))
	// g tail-calls h (a plain branch): nothing changes; h returns to f.
	s.Return(0x400, 0x204)
	assert.Equal(t, hex{0x208, 0x104}, hex(s.Callchain(0x208, nil)))
	assert.Zero(t, s.Mismatched)

	// A return to an address deeper in the stack drops the frames above.
	s.Call(0x208, 0x20c)
	s.Call(0x500, 0x504)
	s.Return(0x600, 0x104)
	assert.Equal(t, hex{0x104}, hex(s.Callchain(0x104, nil)))
	require.Len(t, s.Mismatches, 1)
	assert.Equal(t, unwind.Mismatch{PC: 0x600, Target: 0x104, Expected: 0x504, Dropped: 3}, s.Mismatches[0])

	// A return to an address on no frame (a corrupt return slot) drops
	// the returning frame only.
	s.Call(0x104, 0x108)
	s.Call(0x700, 0x704)
	s.Return(0x800, 0xdead)
	assert.Equal(t, hex{0xdead, 0x108}, hex(s.Callchain(0xdead, nil)))
	assert.Equal(t, uint64(2), s.Mismatched)
	assert.Contains(t, s.Mismatches[1].String(), "return at 0x800 to 0xdead, expected 0x704")

	// An indirect branch to the top return address is a return; to
	// anywhere else it is a jump.
	s.Branch(0x900, 0x1234)
	assert.Equal(t, 1, s.Depth())
	s.Branch(0x900, 0x108)
	assert.Equal(t, 0, s.Depth())
	s.Return(0xa00, 0x42)
	assert.Contains(t, s.Mismatches[2].String(), "no call outstanding")
	assert.Equal(t, 3, s.MaxDepth)
}

// TestShadowRetired drives the shadow stack from retired operations, as
// a cpu.RetireConsumer would.
func TestShadowRetired(t *testing.T) {
	call := &cpu.OpInfo{Class: cpu.ClassBranch, Flags: cpu.OpLink, Size: 4}
	ret := &cpu.OpInfo{Class: cpu.ClassBranch, Flags: cpu.OpReturn | cpu.OpIndirect, Size: 4}
	condRet := &cpu.OpInfo{Class: cpu.ClassBranch, Flags: cpu.OpReturn | cpu.OpIndirect | cpu.OpConditional, Size: 2}
	alu := &cpu.OpInfo{Class: cpu.ClassOther, Size: 4}
	ops := []cpu.Retired{
		{Info: alu, PC: 0x100},
		{Info: call, PC: 0x104},    // -> 0x200, returns to 0x108
		{Info: condRet, PC: 0x200}, // not taken
		{Info: ret, PC: 0x202},     // -> 0x108
		{Info: alu, PC: 0x108},
	}
	s := unwind.NewShadow()
	var depth []int
	for i := range ops {
		next := uint64(0x10c)
		if i+1 < len(ops) {
			next = ops[i+1].PC
		}
		depth = append(depth, len(s.Callchain(ops[i].PC, nil)))
		s.StepRetired(&ops[i], next)
	}
	assert.Equal(t, []int{1, 1, 2, 2, 1}, depth)
	assert.Zero(t, s.Mismatched)
	assert.Equal(t, uint64(1), s.Calls)
	assert.Equal(t, uint64(1), s.Returns)
}
