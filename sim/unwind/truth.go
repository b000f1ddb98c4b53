package unwind

import (
	"fmt"

	"simrun/sim/cpu"
)

// Shadow is the truth: a shadow call stack kept from the calls and
// returns the simulator executes.  A call (an instruction with link:
// arm64 bl/blr, s390x brasl/basr/bras) pushes its return address (the
// call's pc plus its length); a return (arm64 ret, s390x br %r14 and the
// conditional forms, when taken) pops.  Tail calls need nothing: the
// tail-called function returns to the same address.
//
// A return to an address other than the top one is reported, not fatal:
// if the address is deeper in the stack (a longjmp-like unwind) the
// frames above it are dropped; otherwise the top frame is dropped (its
// function did return, to somewhere unexpected — a corrupt return slot).
// A taken indirect branch to the top return address (s390x br %r1 after
// lgr %r1,%r14) counts as a return.
type Shadow struct {
	stack []uint64 // return addresses, outermost first

	Calls, Returns uint64
	MaxDepth       int
	// Mismatched counts returns to an address that was not on top;
	// Mismatches keeps the first MaxMismatches of them.
	Mismatched    uint64
	Mismatches    []Mismatch
	MaxMismatches int

	pend    pendKind
	pendPC  uint64
	pendRet uint64
	op      cpu.Op
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

// NewShadow returns an empty shadow stack.
func NewShadow() *Shadow { return &Shadow{MaxMismatches: 16} }

// Depth is the number of calls outstanding.
func (s *Shadow) Depth() int { return len(s.stack) }

// Call records a call at pc that will return to ret.
func (s *Shadow) Call(pc, ret uint64) {
	s.Calls++
	s.stack = append(s.stack, ret)
	if len(s.stack) > s.MaxDepth {
		s.MaxDepth = len(s.stack)
	}
}

// Return records a return at pc that went to target.
func (s *Shadow) Return(pc, target uint64) {
	s.Returns++
	n := len(s.stack)
	if n > 0 && s.stack[n-1] == target {
		s.stack = s.stack[:n-1]
		return
	}
	m := Mismatch{PC: pc, Target: target}
	if n > 0 {
		m.Expected = s.stack[n-1]
		keep := n - 1 // default: the returning function's frame goes
		for i := n - 2; i >= 0; i-- {
			if s.stack[i] == target {
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

// Branch records a taken indirect branch at pc to target: a return if it
// goes to the top return address.
func (s *Shadow) Branch(pc, target uint64) {
	if n := len(s.stack); n > 0 && s.stack[n-1] == target {
		s.Return(pc, target)
	}
}

// Callchain appends the true frames at pc to buf: pc, then the return
// addresses from the innermost call outwards.
func (s *Shadow) Callchain(pc uint64, buf []uint64) []uint64 {
	buf = append(buf, pc)
	for i := len(s.stack) - 1; i >= 0; i-- {
		buf = append(buf, s.stack[i])
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
		s.Call(s.pendPC, s.pendRet)
	case pendReturn:
		s.Return(s.pendPC, next)
	case pendBranch:
		s.Branch(s.pendPC, next)
	}
	s.pend = pendNone
}

// StepRetired is the retire-log driver: it applies one retired operation
// whose successor is at next (the following operation's pc, or the
// core's pc after the batch).  Call Callchain(op.PC) before it for the
// truth at that operation.
func (s *Shadow) StepRetired(op *cpu.Retired, next uint64) {
	in := op.Info
	if in == nil || in.Class != cpu.ClassBranch {
		return
	}
	fall := op.PC + uint64(in.Size)
	switch {
	case in.Flags&cpu.OpLink != 0:
		s.Call(op.PC, fall)
	case next == fall:
		// not taken
	case in.Flags&cpu.OpReturn != 0:
		s.Return(op.PC, next)
	case in.Flags&cpu.OpIndirect != 0:
		s.Branch(op.PC, next)
	}
}
