package unwind_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"simrun/sim/cpu"
	"simrun/sim/unwind"
)

// regsCore is a core whose DWARF registers are a map (the rest of
// cpu.Core is not used by Shadow.Signal).
type regsCore struct {
	cpu.Core
	r map[int]uint64
}

func (c regsCore) Reg(n int) (uint64, bool) {
	v, ok := c.r[n]
	return v, ok
}

// TestThreadsSwitch: each thread keeps its own frames; a thread seen for
// the first time starts with none (its start routine is outermost on
// its own stack).
func TestThreadsSwitch(t *testing.T) {
	mk := func() *unwind.Shadow { return unwind.NewShadow(31) }
	th := unwind.NewThreads(1000, mk(), mk)
	main := th.Cur
	th.Cur.Call(0x100, 0x104, 0x8000)
	th.Cur.Call(0x200, 0x204, 0x7f00)
	th.Cur.Call(0x300, 0x304, 0x7e00)
	th.Switch(1001, 0x400)
	assert.Equal(t, uint64(1001), th.Tid)
	assert.Equal(t, hex{0x500}, hex(th.Cur.Callchain(0x500, nil)), "a new thread has no frames of its creator's")
	th.Cur.Call(0x500, 0x504, 0x1000)
	th.Switch(1002, 0x600)
	th.Cur.Call(0x700, 0x704, 0x2000)
	th.Cur.Return(0x800, 0x704, 0x2000)
	th.Switch(1000, 0x800)
	assert.Same(t, main, th.Cur)
	assert.Equal(t, hex{0x400, 0x304, 0x204, 0x104}, hex(th.Cur.Callchain(0x400, nil)))
	// A return in the main thread matches the main thread's frame, not
	// the one thread 1001 pushed last.
	th.Cur.Return(0x400, 0x304, 0x7e00)
	assert.Zero(t, th.Cur.Mismatched)
	th.Switch(1001, 0x304)
	assert.Equal(t, hex{0x600, 0x504}, hex(th.Cur.Callchain(0x600, nil)))
	th.Switch(1001, 0x604) // no switch: nothing changes
	assert.Equal(t, 1, th.Cur.Depth())

	all := th.All()
	assert.Len(t, all, 3)
	assert.Equal(t, []uint64{1000, 1001, 1002}, []uint64{all[0].Tid, all[1].Tid, all[2].Tid})
	tot := th.Totals()
	assert.Equal(t, uint64(5), tot.Calls)
	assert.Equal(t, uint64(2), tot.Returns)
	assert.Equal(t, 3, tot.MaxDepth)
}

// TestShadowSignal: a handler's frames sit on the interrupted pc (the
// signal frame) and the trampoline it returns to; rt_sigreturn pops back
// to the interrupted frames, nested signals pop one at a time, and a
// signal frame a non-local exit dropped is not popped again.
func TestShadowSignal(t *testing.T) {
	const sp, ra = 31, 30
	s := unwind.NewShadow(sp)
	s.Call(0x100, 0x104, 0x8000) // main calls f
	core := regsCore{r: map[int]uint64{ra: 0x9000, sp: 0x7000}}
	s.Signal(core, 0x208, 0x7f00, ra) // f interrupted at 0x208
	assert.Equal(t, hex{0xa00, 0x9000, 0x208, 0x104}, hex(s.Callchain(0xa00, nil)))
	s.Call(0xa00, 0xa04, 0x7000) // the handler calls and returns
	s.Return(0xb00, 0xa04, 0x6f00)
	core.r[sp] = 0x6000
	s.Signal(core, 0xa10, 0x6f00, ra) // a nested signal in the handler
	assert.Equal(t, hex{0xc00, 0x9000, 0xa10, 0x9000, 0x208, 0x104}, hex(s.Callchain(0xc00, nil)))
	s.Return(0xc08, 0x9000, 0x6000) // the nested handler returns to the trampoline
	s.SigReturn()
	assert.Equal(t, hex{0xa10, 0x9000, 0x208, 0x104}, hex(s.Callchain(0xa10, nil)))
	s.Return(0xa20, 0x9000, 0x7000)
	s.SigReturn()
	assert.Equal(t, hex{0x208, 0x104}, hex(s.Callchain(0x208, nil)))
	assert.Zero(t, s.Mismatched)
	assert.Equal(t, uint64(2), s.Signals)
	assert.Equal(t, uint64(2), s.SigReturns)

	// A handler that leaves by siglongjmp to main's frame: its signal
	// frame is dead; a later sigreturn (of a signal taken since) pops
	// only that signal's frame.
	core.r[sp] = 0x7000
	s.Signal(core, 0x210, 0x7f00, ra)
	s.Call(0xa00, 0xa04, 0x7000)
	s.Branch(0xa30, 0x110, 0x8010) // longjmp: sp back above f's call
	assert.Equal(t, 0, s.Depth())
	s.Call(0x110, 0x114, 0x8000)
	s.Signal(core, 0x220, 0x7f80, ra)
	s.Return(0xa40, 0x9000, 0x7000)
	s.SigReturn()
	assert.Equal(t, hex{0x220, 0x114}, hex(s.Callchain(0x220, nil)))
	// rt_sigreturn with no signal frame (called by hand) changes nothing.
	s.SigReturn()
	assert.Equal(t, 1, s.Depth())
	assert.Equal(t, uint64(3), s.SigReturns)

	// A core without registers: the signal frame alone.
	s2 := unwind.NewShadow(sp)
	s2.Signal(nil, 0x300, 0x7000, ra)
	assert.Equal(t, hex{0x400, 0x300}, hex(s2.Callchain(0x400, nil)))
}

// TestThreadsExecOtherArch: execve of a program of another architecture
// gives the thread a truth with that program's stack-pointer register, so
// a signal's trampoline frame is read from its registers (an arm64
// program, sp 31 and ra 30, execs an s390x one, sp 15 and ra 14).
func TestThreadsExecOtherArch(t *testing.T) {
	mk := func() *unwind.Shadow { return unwind.NewShadow(31) }
	th := unwind.NewThreads(1000, mk(), mk)
	th.Exec(1000, "s390x-program", 15)
	core := regsCore{r: map[int]uint64{14: 0x9000, 15: 0x7000}} // no r31, r30 on s390x
	th.Signal(core, 0x208, 0x7f00, 14)
	assert.Equal(t, hex{0xa00, 0x9000, 0x208}, hex(th.Cur.Callchain(0xa00, nil)), "handler, trampoline, interrupted pc")
}
