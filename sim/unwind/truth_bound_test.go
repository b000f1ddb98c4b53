package unwind

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// The tests here look at the shadow stack's backing array: what the truth
// costs whatever the control flow (see Shadow).

const neverReturnIters = 1_000_000

// TestShadowNeverReturns feeds a million iterations of control flows
// whose calls never return: the shadow stack stays as small as the live
// stack, its backing array too, and the truth at the end is right.
func TestShadowNeverReturns(t *testing.T) {
	const sp = 0x7ff0_0000
	tests := []struct {
		name  string
		limit int
		iter  func(s *Shadow, i int)
		// after the iterations: the most frames kept, and the truth
		maxLen int
		chain  []uint64
		// which counter took the dropped frames
		abandoned, unwound, overflowed bool
		mismatched                     bool // each switch into the lower stack
	}{
		{
			// loop: bl f; f: subs; b.ne loop (bl as "get pc")
			name:   "bl to the next instruction",
			iter:   func(s *Shadow, i int) { s.Call(0x108, 0x10c, sp) },
			maxLen: 1, chain: []uint64{0x10c, 0x10c}, abandoned: true,
		},
		{
			// loop: bl f; f: stp x29,x30,[sp,#-16]!; bl g; g: mov sp,x2; b loop
			name: "callee resets the stack pointer and branches back",
			iter: func(s *Shadow, i int) {
				s.Call(0x10c, 0x110, sp)
				s.Call(0x114, 0x118, sp-16)
			},
			maxLen: 2, chain: []uint64{0x118, 0x118, 0x110}, unwound: true,
		},
		{
			// three functions tail-jumping around a cycle, each calling
			// the next at one stack pointer
			name: "a cycle of calls at one stack pointer",
			iter: func(s *Shadow, i int) {
				s.Call(0x200, 0x204, sp)
				s.Call(0x300, 0x304, sp)
				s.Branch(0x308, 0x400, sp) // a tail jump through a register
				s.Call(0x400, 0x404, sp)
			},
			maxLen: 3, chain: []uint64{0x404, 0x404, 0x304, 0x204}, abandoned: true,
		},
		{
			// each callee allocates 16 bytes and jumps back without
			// freeing them: the live stack grows too, and the Limit
			// bounds the truth
			name:  "a stack leak",
			limit: 4096,
			iter: func(s *Shadow, i int) {
				s.Call(0x500, 0x504, sp-16*uint64(i))
			},
			maxLen: 4096, chain: []uint64{0x504, 0x504, 0x504, 0x504}, overflowed: true,
		},
		{
			// coroutines: main, on the stack at 0x7ff0_0000, and a
			// coroutine on a stack at 0x1000_0000 swapcontext to each
			// other; swapcontext returns (ret) on the other stack
			name: "swapcontext between two stacks",
			iter: func(s *Shadow, i int) {
				if i == 0 {
					s.Call(0x100, 0x104, sp+0x100) // start calls main
				}
				s.Call(0x600, 0x604, sp)                 // main calls swapcontext
				s.Return(0x700, 0x804, 0x1000_0000)      // which returns into the coroutine
				s.Call(0x800, 0x804-4, 0x1000_0000-0x40) // the coroutine calls swapcontext
				s.Return(0x700, 0x604, sp)               // which returns into main
			},
			maxLen: 3, chain: []uint64{0x604, 0x104},
			unwound: true, mismatched: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewShadow(31)
			s.Limit = tt.limit
			s.ChainDepth = 4
			for i := range neverReturnIters {
				tt.iter(s, i)
				if s.Depth() > tt.maxLen {
					require.LessOrEqual(t, s.Depth(), tt.maxLen, "iteration %d", i)
				}
			}
			assert.LessOrEqual(t, s.MaxDepth, tt.maxLen)
			assert.LessOrEqual(t, cap(s.stack), max(2*tt.maxLen, 64), "backing array")
			assert.Equal(t, tt.chain, s.Callchain(tt.chain[0], nil))
			assert.Equal(t, tt.abandoned, s.Abandoned > 0, "abandoned %d", s.Abandoned)
			assert.Equal(t, tt.unwound, s.Unwound > 0, "unwound %d", s.Unwound)
			assert.Equal(t, tt.overflowed, s.Overflowed > 0, "overflowed %d", s.Overflowed)
			assert.Equal(t, tt.mismatched, s.Mismatched > 0, "mismatched %d", s.Mismatched)
			assert.LessOrEqual(t, len(s.Mismatches), s.MaxMismatches)
			if !tt.mismatched {
				// Every call is either kept or counted as dropped.
				assert.Equal(t, s.Calls-s.Returns, uint64(s.Depth())+s.Abandoned+s.Unwound+s.Overflowed)
			}
		})
	}
}

// TestShadowLimit: past the Limit the outermost frames go and the
// innermost stay; the returns past the cut are reported.
func TestShadowLimit(t *testing.T) {
	s := NewShadow(31)
	s.Limit, s.ChainDepth = 100, 0
	for i := range 250 { // a recursion 250 deep
		s.Call(0x100, 0x104+uint64(i)*0x10, 0x8000-uint64(i)*32)
	}
	assert.LessOrEqual(t, s.Depth(), 100)
	assert.LessOrEqual(t, cap(s.stack), 100)
	assert.Equal(t, uint64(250-s.Depth()), s.Overflowed)
	chain := s.Callchain(0x200, nil)
	require.Len(t, chain, s.Depth()+1)
	for k := 1; k < len(chain); k++ {
		assert.Equal(t, 0x104+uint64(250-k)*0x10, chain[k])
	}
	for i := 249; i >= 0; i-- {
		s.Return(0x300, 0x104+uint64(i)*0x10, 0x8000-uint64(i)*32-32)
	}
	assert.Equal(t, s.Overflowed, s.Mismatched, "each return past the cut")
	assert.Zero(t, s.Depth())
}

// TestShadowKeepsTruth: recursion, deep and at the real stack's pace,
// and non-local exits out of it, still give the exact truth with the
// drops on calls.
func TestShadowKeepsTruth(t *testing.T) {
	const depth = 100_000
	s := NewShadow(31)
	s.ChainDepth = 0
	s.Call(0x100, 0x104, 0x9000_0000) // start calls main
	// main recurses: each level allocates 32 bytes and calls itself from
	// one site (ret 0x204); the first call comes from main (ret 0x1f4)
	s.Call(0x1f0, 0x1f4, 0x8fff_ff00)
	for i := 1; i < depth; i++ {
		s.Call(0x200, 0x204, 0x8fff_ff00-uint64(i)*32)
	}
	assert.Equal(t, depth+1, s.Depth())
	chain := s.Callchain(0x300, nil)
	assert.Equal(t, []uint64{0x300, 0x204, 0x204}, chain[:3])
	assert.Equal(t, []uint64{0x1f4, 0x104}, chain[len(chain)-2:])
	// Half of the levels return normally.
	for i := depth - 1; i >= depth/2; i-- {
		s.Return(0x210, 0x204, 0x8fff_ff00-uint64(i)*32)
	}
	assert.Equal(t, depth/2+1, s.Depth())
	// A longjmp from there to main's setjmp (main runs at 0x8fff_ff00,
	// where it called the recursion) drops the rest of the recursion.
	s.Branch(0x400, 0x1f8, 0x8fff_ff00)
	assert.Equal(t, []uint64{0x1f8, 0x104}, s.Callchain(0x1f8, nil))
	assert.Equal(t, uint64(depth/2), s.Unwound)
	// main calls on from the longjmp's landing place and returns.
	s.Call(0x1fc, 0x200, 0x8fff_ff00)
	s.Return(0x500, 0x200, 0x8fff_ff00)
	s.Return(0x600, 0x104, 0x9000_0000)
	assert.Zero(t, s.Depth())
	assert.Zero(t, s.Mismatched)
	assert.Zero(t, s.Abandoned)
	assert.Zero(t, s.Overflowed)
	assert.Equal(t, depth+1, s.MaxDepth)
}

// TestShadowChainDepth: Callchain stops at ChainDepth frames.
func TestShadowChainDepth(t *testing.T) {
	s := NewShadow(31)
	assert.Equal(t, DefaultMaxDepth, s.ChainDepth)
	for i := range 1000 {
		s.Call(0x100, 0x104+uint64(i), 0x8000-uint64(i)*32)
	}
	chain := s.Callchain(0x200, nil)
	require.Len(t, chain, DefaultMaxDepth)
	assert.Equal(t, []uint64{0x200, 0x104 + 999, 0x104 + 998}, chain[:3])
	s.ChainDepth = 0
	assert.Len(t, s.Callchain(0x200, nil), 1001)
}

// TestShadowNeverReturnsProgram runs the never-returning patterns as
// arm64 programs, a million iterations each, with the shadow stack kept
// by Observe: it stays at one or two frames.
func TestShadowNeverReturnsProgram(t *testing.T) {
	const (
		movz    = 0xd2884801 // mov x1, #0x4240
		movk    = 0xf2a001e1 // movk x1, #0xf, lsl #16: x1 = 1000000
		exit0   = 0xd2800000 // mov x0, #0
		exitNr  = 0xd2800ba8 // mov x8, #93
		svc     = 0xd4000001 // svc #0
		subs    = 0xf1000421 // subs x1, x1, #1
		blNext  = 0x94000001 // bl .+4
		stp     = 0xa9bf7bfd // stp x29, x30, [sp, #-16]!
		movX2SP = 0x910003e2 // mov x2, sp
		subSP   = 0xd10083ff // sub sp, sp, #32
		movSPX2 = 0x9100005f // mov sp, x2
		bneM3   = 0x54ffffc1 // b.ne .-8
		bneM6   = 0x54ffff41 // b.ne .-24
		beqP3   = 0x54000060 // b.eq .+12
		adrM3   = 0x10ffffa3 // adr x3, .-12
		brX3    = 0xd61f0060 // br x3
	)
	tests := []struct {
		name     string
		code     []uint32
		maxDepth int
	}{
		// loop: bl f; f: subs; b.ne loop
		{"bl next", []uint32{movz, movk, blNext, subs, bneM3, exit0, exitNr, svc}, 1},
		// loop: bl f; f: stp; bl g; g: sub sp; mov sp, x2; subs; b.ne loop
		{"reset sp", []uint32{movz, movk, movX2SP, blNext, stp, blNext, subSP, movSPX2, subs, bneM6, exit0, exitNr, svc}, 2},
		// loop: bl f; f: subs; b.eq done; adr x3, loop; br x3; done:
		{"br back", []uint32{movz, movk, blNext, subs, beqP3, adrM3, brX3, exit0, exitNr, svc}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, tt.code...), nil)
			m, err := linux.New("loop", prog, linux.Config{})
			require.NoError(t, err)
			s := NewShadow(31)
			m.Observer = func(m *cpu.Machine) error { s.Observe(m.Core); return nil }
			exit, err := m.Run()
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			require.Zero(t, exit.Status)
			assert.GreaterOrEqual(t, s.Calls, uint64(neverReturnIters))
			assert.LessOrEqual(t, s.MaxDepth, tt.maxDepth)
			assert.LessOrEqual(t, cap(s.stack), 64, "backing array")
			assert.Zero(t, s.Mismatched)
		})
	}
}
