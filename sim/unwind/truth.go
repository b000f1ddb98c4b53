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
// Every call, taken return and taken indirect branch first drops such
// frames (counted in Unwound); a call sees the exits that left by a direct
// branch, or by no branch at all.
//
// Calls that never return cost nothing either: a call from the same
// return address at the same stack pointer as an outstanding one means
// the earlier call was abandoned (its callee came back to the call site
// without returning: a loop of bl whose callee branches back, a callee
// that resets the stack pointer and jumps), so the frames from it inwards
// are dropped (counted in Abandoned) before the new one is pushed.  A
// recursion cannot repeat a call site at one stack pointer: a function
// that calls saves its return address below the stack pointer it was
// called with.  Together these keep the shadow stack no larger than the
// program's live stack: every frame kept has its own stack pointer, each
// at least one stack slot (16 bytes on arm64) below the one outside it,
// except the frames of distinct call sites at one stack pointer.
//
// What this cannot see: switching to another stack (swapcontext,
// sigaltstack, a coroutine) — simrun runs one stack per thread.  A switch
// to a higher stack drops the frames of the lower one; a switch to a lower
// one keeps the higher stack's frames outside the new ones, until the
// next switch back drops the lower stack's.  Whatever the program does,
// the stack holds at most Limit frames (MaxShadowDepth by default): past
// it the outermost frames are dropped, counted in Overflowed, and the
// report says so.  Callchain returns at most ChainDepth frames (Linux's
// perf_event_max_stack by default), so sampling a deep stack costs what
// a stack tracer's walk costs.
//
// A return to an address other than the top one is reported, not fatal:
// if the address is deeper in the stack (a longjmp-like unwind; within
// mismatchScan frames) the frames above it are dropped; otherwise the top frame is dropped (its
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
	// Abandoned counts the frames dropped because their call site ran
	// again at the same stack pointer (calls that never returned).
	Abandoned uint64
	// Overflowed counts the outermost frames dropped at the Limit.
	Overflowed uint64
	// Limit is the most frames kept (0: MaxShadowDepth).
	Limit int
	// ChainDepth is the most frames Callchain returns, the pc included
	// (0: all of them).
	ChainDepth int
	// Signals counts the signal frames pushed (handlers entered),
	// SigReturns the rt_sigreturns that popped one.
	Signals, SigReturns uint64
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

	sigs []sigMark // the signal frames on the stack, innermost last
}

// sigMark is a signal frame on the shadow stack: the frame at index i
// holds the interrupted pc and stack pointer.  A frame a non-local exit
// or the Limit dropped leaves a mark that no longer matches; SigReturn
// skips those.
type sigMark struct {
	i       int
	ret, sp uint64
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

// MaxShadowDepth is the default Shadow.Limit: the frames of an 8 MiB
// stack (simrun's RLIMIT_STACK, as Linux's default) whose every frame
// takes arm64's smallest, 16 bytes — which is also what each shadow frame
// takes, so the shadow stack never costs more than the stack it follows.
const MaxShadowDepth = 8 << 20 / 16

// sameSPScan is how many frames at the current stack pointer a call
// looks through for its own call site (see Shadow): normal code has at
// most one or two there; a longer cycle of calls at one stack pointer is
// left to the Limit.
const sameSPScan = 64

// mismatchScan is how far down the stack a return to an address other
// than the top one looks for its target, so that a program returning
// to unexpected places over and over costs no more than its calls.
const mismatchScan = 4096

// NewShadow returns an empty shadow stack for an architecture whose stack
// pointer is DWARF register sp (Observe reads it from the core).
// Callchain returns at most DefaultMaxDepth frames, as a walk with the
// default Policy.
func NewShadow(sp uint32) *Shadow {
	return &Shadow{MaxMismatches: 16, sp: int(sp), ChainDepth: DefaultMaxDepth}
}

// Depth is the number of calls outstanding.
func (s *Shadow) Depth() int { return len(s.stack) }

// Call records a call at pc that will return to ret, made with stack
// pointer sp.
func (s *Shadow) Call(pc, ret, sp uint64) {
	s.Calls++
	n := len(s.stack)
	if n > 0 && s.stack[n-1].sp <= sp {
		// Not a call from deeper in the stack than the top frame: drop
		// what is dead, then an earlier call from this site.
		s.dropDead(sp)
		s.dropAbandoned(ret, sp)
		n = len(s.stack)
	}
	if n == cap(s.stack) {
		s.grow()
		n = len(s.stack)
	}
	s.stack = append(s.stack, shadowFrame{ret, sp})
	if n+1 > s.MaxDepth {
		s.MaxDepth = n + 1
	}
}

// dropAbandoned drops an outstanding call from return address ret at
// stack pointer sp, and the frames inside it (see Shadow).
func (s *Shadow) dropAbandoned(ret, sp uint64) {
	n := len(s.stack)
	for i := n - 1; i >= max(0, n-sameSPScan) && s.stack[i].sp == sp; i-- {
		if s.stack[i].ret == ret {
			s.Abandoned += uint64(n - i)
			s.stack = s.stack[:i]
			return
		}
	}
}

// grow makes room for one more frame in a full backing array: it doubles
// it up to the Limit, and at the Limit drops the outer half of the frames
// (keeping the innermost, which callchains show).
func (s *Shadow) grow() {
	limit := s.Limit
	if limit <= 0 {
		limit = MaxShadowDepth
	}
	n := len(s.stack)
	if n < limit {
		bigger := make([]shadowFrame, n, min(max(2*n, 64), limit))
		copy(bigger, s.stack)
		s.stack = bigger
		return
	}
	drop := max(n/2, 1)
	s.Overflowed += uint64(drop)
	s.stack = s.stack[:copy(s.stack, s.stack[drop:])]
	k := 0
	for _, m := range s.sigs {
		if m.i >= drop {
			m.i -= drop
			s.sigs[k] = m
			k++
		}
	}
	s.sigs = s.sigs[:k]
}

// Signal records the entry into a signal handler of a thread interrupted
// at pc with stack pointer sp; c holds the handler's entry state, whose
// return-address register (DWARF ra) points at the signal trampoline.
// Two frames go on the stack, as the kernel's signal frame nests the
// handler's call in the interrupted code: the interrupted pc (the signal
// frame: that pc did not call, so an unwinder must not look it up as a
// return address) and the trampoline, which the handler returns to.  An
// instruction whose call or return had begun completes at pc first.
// Callchain in the handler is then handler, trampoline, interrupted pc,
// then the interrupted function's callers.
func (s *Shadow) Signal(c cpu.Core, pc, sp uint64, ra uint32) {
	s.settle(pc)
	s.Signals++
	s.dropDead(sp)
	s.push(pc, sp)
	s.sigs = append(s.sigs, sigMark{len(s.stack) - 1, pc, sp})
	if r, ok := c.(Regs); ok {
		tramp, ok1 := r.Reg(int(ra))
		hsp, ok2 := r.Reg(s.sp)
		if ok1 && ok2 {
			s.push(tramp, hsp)
		}
	}
}

// SigReturn records an rt_sigreturn: the innermost signal frame still on
// the stack goes, with whatever is left above it (the trampoline's frame
// when the handler jumped to it rather than returning), and the thread
// resumes at its interrupted pc with the frames it had.  A sigreturn with
// no signal frame (a program calling it by hand) changes nothing.
func (s *Shadow) SigReturn() {
	s.pend = pendNone
	for n := len(s.sigs); n > 0; n = len(s.sigs) {
		m := s.sigs[n-1]
		s.sigs = s.sigs[:n-1]
		if m.i < len(s.stack) && s.stack[m.i].ret == m.ret && s.stack[m.i].sp == m.sp {
			s.stack = s.stack[:m.i]
			s.SigReturns++
			return
		}
	}
}

// push pushes a frame, growing the stack as Call does.
func (s *Shadow) push(ret, sp uint64) {
	if len(s.stack) == cap(s.stack) {
		s.grow()
	}
	s.stack = append(s.stack, shadowFrame{ret, sp})
	s.MaxDepth = max(s.MaxDepth, len(s.stack))
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
		for i := n - 2; i >= max(0, n-1-mismatchScan); i-- {
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
	stop := 0
	if s.ChainDepth > 0 {
		stop = max(0, len(s.stack)-(s.ChainDepth-1))
	}
	for i := len(s.stack) - 1; i >= stop; i-- {
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
// truth at that operation.  Cores log the stack pointer (cpu.Retired.SP) of
// calls and indirect branches.
func (s *Shadow) StepRetired(op *cpu.Retired, next uint64) {
	in := op.Info
	if in == nil || in.Class != cpu.ClassBranch {
		return
	}
	fall := op.PC + uint64(in.Size)
	switch {
	case in.Flags&cpu.OpLink != 0:
		s.Call(op.PC, fall, op.SP())
	case next == fall:
		// not taken
	case in.Flags&cpu.OpReturn != 0:
		s.Return(op.PC, next, op.SP())
	case in.Flags&cpu.OpIndirect != 0:
		s.Branch(op.PC, next, op.SP())
	}
}
