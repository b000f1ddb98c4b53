package unwind_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/unwind"
)

func TestShadow(t *testing.T) {
	s := unwind.NewShadow(31)
	assert.Equal(t, hex{0x100}, hex(s.Callchain(0x100, nil)))
	s.Call(0x100, 0x104, 0x8000) // main calls f
	s.Call(0x200, 0x204, 0x8000) // f calls g
	assert.Equal(t, hex{0x300, 0x204, 0x104}, hex(s.Callchain(0x300, nil)))
	// g tail-calls h (a plain branch): nothing changes; h returns to f.
	s.Return(0x400, 0x204, 0x8000)
	assert.Equal(t, hex{0x208, 0x104}, hex(s.Callchain(0x208, nil)))
	assert.Zero(t, s.Mismatched)

	// A return to an address deeper in the stack drops the frames above.
	s.Call(0x208, 0x20c, 0x8000)
	s.Call(0x500, 0x504, 0x8000)
	s.Return(0x600, 0x104, 0x8000)
	assert.Equal(t, hex{0x104}, hex(s.Callchain(0x104, nil)))
	require.Len(t, s.Mismatches, 1)
	assert.Equal(t, unwind.Mismatch{PC: 0x600, Target: 0x104, Expected: 0x504, Dropped: 3}, s.Mismatches[0])

	// A return to an address on no frame (a corrupt return slot) drops
	// the returning frame only.
	s.Call(0x104, 0x108, 0x8000)
	s.Call(0x700, 0x704, 0x8000)
	s.Return(0x800, 0xdead, 0x8000)
	assert.Equal(t, hex{0xdead, 0x108}, hex(s.Callchain(0xdead, nil)))
	assert.Equal(t, uint64(2), s.Mismatched)
	assert.Contains(t, s.Mismatches[1].String(), "return at 0x800 to 0xdead, expected 0x704")

	// An indirect branch to the top return address is a return; to
	// anywhere else it is a jump.
	s.Branch(0x900, 0x1234, 0x8000)
	assert.Equal(t, 1, s.Depth())
	s.Branch(0x900, 0x108, 0x8000)
	assert.Equal(t, 0, s.Depth())
	s.Return(0xa00, 0x42, 0x8000)
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
	s := unwind.NewShadow(31)
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

// TestShadowNonLocal: longjmp and an exception's jump to a landing pad
// leave by an indirect branch with the stack pointer of a frame further
// out; the frames they skip are dropped.
func TestShadowNonLocal(t *testing.T) {
	s := unwind.NewShadow(31)
	s.Call(0x100, 0x104, 0x9000) // start calls main
	s.Call(0x200, 0x204, 0x8f00) // main calls setjmp
	s.Return(0x300, 0x204, 0x8f00)
	s.Call(0x210, 0x214, 0x8f00) // main calls descend
	s.Call(0x400, 0x404, 0x8e00) // descend calls itself
	s.Call(0x410, 0x414, 0x8d00) // and then longjmp
	// longjmp loads main's stack pointer and jumps back after the setjmp
	// call: descend's frames (called at or below 0x8f00) are dead.
	s.Branch(0x500, 0x204, 0x8f00)
	assert.Equal(t, hex{0x204, 0x104}, hex(s.Callchain(0x204, nil)))
	assert.Equal(t, uint64(3), s.Unwound)
	assert.Equal(t, uint64(1), s.NonLocal)
	assert.Zero(t, s.Mismatched)

	// A frameless function's tail call through a register, at the stack
	// pointer it was called with, drops nothing.
	s.Call(0x220, 0x224, 0x8f00)
	s.Branch(0x600, 0x700, 0x8f00)
	assert.Equal(t, 2, s.Depth())
	s.Return(0x700, 0x224, 0x8f00)
	assert.Equal(t, 1, s.Depth())

	// An exception caught in a frame that is itself called: the landing
	// pad in f runs at f's stack pointer, below f's call.
	s.Call(0x230, 0x234, 0x8f00) // main calls f
	s.Call(0x800, 0x804, 0x8e80) // f calls g
	s.Call(0x900, 0x904, 0x8e00) // g calls the thrower
	s.Call(0xa00, 0xa04, 0x8d80) // which calls the unwinder
	s.Branch(0xb00, 0x880, 0x8e80)
	assert.Equal(t, hex{0x880, 0x234, 0x104}, hex(s.Callchain(0x880, nil)))
	assert.Equal(t, uint64(6), s.Unwound)
	assert.Equal(t, uint64(2), s.NonLocal)
}

// TestShadowEHReturn: libgcc's __builtin_eh_return epilogue reaches the
// landing pad with a ret; the frames it leaves are dropped and the ret is
// not a mismatch.
func TestShadowEHReturn(t *testing.T) {
	s := unwind.NewShadow(31)
	s.Call(0x100, 0x104, 0x9000)   // main calls check
	s.Call(0x200, 0x204, 0x8f00)   // check calls check
	s.Call(0x200, 0x204, 0x8e00)   // and again
	s.Call(0x210, 0x214, 0x8d00)   // the innermost throws
	s.Call(0x300, 0x304, 0x8c00)   // into the unwinder
	s.Return(0x400, 0x220, 0x8e00) // caught by the middle check
	assert.Equal(t, hex{0x220, 0x204, 0x104}, hex(s.Callchain(0x220, nil)))
	assert.Zero(t, s.Mismatched)
	assert.Equal(t, uint64(3), s.Unwound)
}
