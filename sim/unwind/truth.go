package unwind

import (
	"fmt"

	"simrun/sim/cpu"
)

// Shadow is the truth: a shadow call stack kept from the calls and
// returns the simulator executes.  A call (an instruction with link:
// arm64 bl/blr, s390x brasl/basr/bras) pushes its return address (the
// call's pc plus its length) and the stack pointer at the call; a return
// (arm64 ret, s390x br %r14 and the conditional forms, when taken) pops.
// Tail calls need nothing: the tail-called function returns to the same
// address.
//
// Non-local exits (longjmp, an exception's jump to a landing pad) leave
// by an indirect branch after loading the stack pointer of a frame further
// out.  A callee's stack pointer never rises above the one it was called
// with, so a frame whose call-time stack pointer is below the current one
// is dead; and once one frame is dead, so is any frame called at exactly
// the current stack pointer (its function had called out, so it had
// allocated a frame below that value: execution is now in its caller).
// Every taken return or indirect branch first drops such frames (counted
// in Unwound).  What this cannot see: switching to another stack
// (swapcontext, sigaltstack) — simrun runs one stack per thread.
//
// A return to an address other than the top one is reported, not fatal:
// if the address is deeper in the stack (a longjmp-like unwind) the
// frames above it are dropped; otherwise the top frame is dropped (its
// function did return, to somewhere unexpected — a corrupt return slot).
// A taken indirect branch to the top return address (s390x br %r1 after
// lgr %r1,%r14) counts as a return.
type Shadow struct {
	stack []shadowFrame // outermost first

	Calls, Returns uint64
	MaxDepth       int
	// Unwound counts the frames dropped by non-local exits, NonLocal the
	// exits.
	Unwound, NonLocal uint64
	// Mismatched counts returns to an address that was not on top;
	// Mismatches keeps the first MaxMismatches of them.
	Mismatched    uint64
	Mismatches    []Mismatch
	MaxMismatches int

	pend    pendKind
	pendPC  uint64
	pendRet uint64
	pendSP  uint64
	op      cpu.Op
	sp      int // DWARF number of the stack pointer
}

// shadowFrame is one outstanding call.
type shadowFrame struct {
	ret uint64 // return address
	sp  uint64 // stack pointer at the call
}

type pendKind uint8

const (
	pendNone pendKind = iota
	pendCall
	pendReturn
	pendBranch
)

// Mismatch is a return that did not go to the top return address.
type Mismatch struct {
	PC, Target uint64
	Expected   uint64 // the top return address (0: the stack was empty)
	Dropped    int    // frames dropped
}

func (m Mismatch) String() string {
	if m.Expected == 0 && m.Dropped == 0 {
		return fmt.Sprintf("return at %#x to %#x with no call outstanding", m.PC, m.Target)
	}
	return fmt.Sprintf("return at %#x to %#x, expected %#x (%d frames dropped)", m.PC, m.Target, m.Expected, m.Dropped)
}

// NewShadow returns an empty shadow stack for an architecture whose stack
// pointer is DWARF register sp (Observe reads it from the core).
func NewShadow(sp uint32) *Shadow { return &Shadow{MaxMismatches: 16, sp: int(sp)} }

// Depth is the number of calls outstanding.
func (s *Shadow) Depth() int { return len(s.stack) }

// Call records a call at pc that will return to ret, made with stack
// pointer sp.
func (s *Shadow) Call(pc, ret, sp uint64) {
	s.Calls++
	s.stack = append(s.stack, shadowFrame{ret, sp})
	if len(s.stack) > s.MaxDepth {
		s.MaxDepth = len(s.stack)
	}
}

// dropDead drops the frames a non-local exit to stack pointer sp left
// behind (see Shadow), reporting whether there were any.
func (s *Shadow) dropDead(sp uint64) bool {
	n := len(s.stack)
	if n == 0 || s.stack[n-1].sp >= sp {
		return false
	}
	k := n - 1
	for k > 0 && s.stack[k-1].sp <= sp {
		k--
	}
	s.Unwound += uint64(n - k)
	s.NonLocal++
	s.stack = s.stack[:k]
	return true
}

// Return records a return at pc, with stack pointer sp, that went to
// target.  A non-local exit by a return instruction (libgcc's
// __builtin_eh_return epilogue jumps to the landing pad with ret) is
// not matched against the frames it leaves.
func (s *Shadow) Return(pc, target, sp uint64) {
	s.Returns++
	if s.dropDead(sp) {
		return
	}
	n := len(s.stack)
	if n > 0 && s.stack[n-1].ret == target {
		s.stack = s.stack[:n-1]
		return
	}
	m := Mismatch{PC: pc, Target: target}
	if n > 0 {
		m.Expected = s.stack[n-1].ret
		keep := n - 1 // default: the returning function's frame goes
		for i := n - 2; i >= 0; i-- {
			if s.stack[i].ret == target {
				keep = i
				break
			}
		}
		m.Dropped = n - keep
		s.stack = s.stack[:keep]
	}
	s.Mismatched++
	if len(s.Mismatches) < s.MaxMismatches {
		s.Mismatches = append(s.Mismatches, m)
	}
}

// Branch records a taken indirect branch at pc, with stack pointer sp, to
// target: a return if it goes to the top return address.
func (s *Shadow) Branch(pc, target, sp uint64) {
	if s.dropDead(sp) {
		return
	}
	if n := len(s.stack); n > 0 && s.stack[n-1].ret == target {
		s.Return(pc, target, sp)
	}
}

// Callchain appends the true frames at pc to buf: pc, then the return
// addresses from the innermost call outwards.
func (s *Shadow) Callchain(pc uint64, buf []uint64) []uint64 {
	buf = append(buf, pc)
	for i := len(s.stack) - 1; i >= 0; i-- {
		buf = append(buf, s.stack[i].ret)
	}
	return buf
}

// Observe is the per-instruction driver: call it before every
// instruction executes (a cpu.Machine observer).  It completes the
// previous instruction's call or return with the pc it actually went to
// and classifies the next one with Core.NextOp.  After it returns,
// Callchain(core.PC()) is the truth for the instruction about to run.
func (s *Shadow) Observe(c cpu.Core) {
	pc := c.PC()
	s.settle(pc)
	if !c.NextOp(&s.op) || s.op.Class != cpu.ClassBranch {
		return
	}
	f := s.op.Flags
	if f&(cpu.OpLink|cpu.OpIndirect|cpu.OpReturn) != 0 {
		s.pendSP = 0
		if r, ok := c.(Regs); ok {
			s.pendSP, _ = r.Reg(s.sp)
		}
	}
	switch {
	case f&cpu.OpLink != 0:
		s.pend, s.pendPC, s.pendRet = pendCall, pc, pc+uint64(s.op.Size)
	case f&cpu.OpCondPassed == 0:
	case f&cpu.OpReturn != 0:
		s.pend, s.pendPC = pendReturn, pc
	case f&cpu.OpIndirect != 0:
		s.pend, s.pendPC = pendBranch, pc
	}
}

// settle completes a pending call or return now that the next pc is
// known.
func (s *Shadow) settle(next uint64) {
	switch s.pend {
	case pendCall:
		s.Call(s.pendPC, s.pendRet, s.pendSP)
	case pendReturn:
		s.Return(s.pendPC, next, s.pendSP)
	case pendBranch:
		s.Branch(s.pendPC, next, s.pendSP)
	}
	s.pend = pendNone
}

// StepRetired is the retire-log driver: it applies one retired operation
// whose successor is at next (the following operation's pc, or the
// core's pc after the batch).  Call Callchain(op.PC) before it for the
// truth at that operation.  Cores log the stack pointer as the EA of
// calls and indirect branches (cpu.Retired).
func (s *Shadow) StepRetired(op *cpu.Retired, next uint64) {
	in := op.Info
	if in == nil || in.Class != cpu.ClassBranch {
		return
	}
	fall := op.PC + uint64(in.Size)
	switch {
	case in.Flags&cpu.OpLink != 0:
		s.Call(op.PC, fall, op.EA)
	case next == fall:
		// not taken
	case in.Flags&cpu.OpReturn != 0:
		s.Return(op.PC, next, op.EA)
	case in.Flags&cpu.OpIndirect != 0:
		s.Branch(op.PC, next, op.EA)
	}
}
