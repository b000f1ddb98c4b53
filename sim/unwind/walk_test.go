package unwind_test

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/sframe"
)

// Hand-built contexts: registers, a stack in guest memory and an SFrame
// section written in Go, for both ABIs.  They pin down each rule of the
// walk independently of any compiler or core.

type regs map[int]uint64

func (r regs) Reg(n int) (uint64, bool) {
	v, ok := r[n]
	return v, ok
}

const stackTop = 0x80000

// stack is guest memory with a 64 KiB stack page range below stackTop.
func stack(t *testing.T, order binary.ByteOrder, words map[uint64]uint64) *cpu.Memory {
	t.Helper()
	m := cpu.NewMemory()
	require.NoError(t, m.Map(stackTop-0x10000, 0x10000, cpu.PermRW))
	for a, v := range words {
		require.True(t, m.Store(a, 8, v, order), "store %#x", a)
	}
	return m
}

func mustABI(t *testing.T, m elf.Machine, o binary.ByteOrder) *abi.ABI {
	a, err := abi.ForMachine(m, o)
	require.NoError(t, err)
	return a
}

func reg(r uint32, off int64) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleReg, Reg: r, Off: off}
}

func slot(off int64) sframe.Rule { return sframe.Rule{Kind: sframe.RuleCFA, Off: off, Deref: true} }

// aarch64Section: f at 0x1000 (32 bytes): entry row "sp+0 u u", from +4
// "sp+16 c-16 c-8" (stp x29, x30, [sp, #-16]!), from +8 "fp+16 c-16 c-8"
// (mov x29, sp), signed from +0 with mangled RA rows; g at 0x2000: the
// same without signing; _start at 0x3000: RA undefined.
func aarch64Section() *sframe.Section {
	frame := func(start, size uint32, signed bool) sframe.FDE {
		return sframe.FDE{Start: int64(start), Size: size, FREs: []sframe.FRE{
			{Start: 0, CFA: reg(31, 0)},
			{Start: 4, CFA: reg(31, 0), MangledRA: signed},
			{Start: 8, CFA: reg(31, 16), RA: slot(-8), FP: slot(-16), MangledRA: signed},
			{Start: 12, CFA: reg(29, 16), RA: slot(-8), FP: slot(-16), MangledRA: signed},
		}}
	}
	return &sframe.Section{
		Version: 3, Flags: sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL,
		ABI: abi.SFrameAArch64LE, Order: binary.LittleEndian,
		FDEs: []sframe.FDE{
			frame(0x1000, 32, true),
			frame(0x2000, 32, false),
			{Start: 0x3000, Size: 16, FREs: []sframe.FRE{{RAUndefined: true}}},
		},
	}
}

func tracer(t *testing.T, a *abi.ABI, s *sframe.Section, p unwind.Policy) *unwind.Tracer {
	t.Helper()
	tr, err := unwind.NewTracerFor(a, s, 0, nil, p)
	require.NoError(t, err)
	return tr
}

func policy(t *testing.T, s string) unwind.Policy {
	p, err := unwind.ParsePolicy(s)
	require.NoError(t, err)
	return p
}

func TestWalkAArch64(t *testing.T) {
	a := mustABI(t, elf.EM_AARCH64, binary.LittleEndian)
	const pac = 0x002a << 48 // a code in bits 54:48
	// Stack: g's frame record at 0x7efe0 {fp 0x7eff0, lr 0x3008 (_start)};
	// f's frame record at 0x7efc0 {fp 0x7efe0, lr signed 0x2010 (g+0x10)}.
	mem := stack(t, binary.LittleEndian, map[uint64]uint64{
		0x7efc0: 0x7efe0, 0x7efc8: pac | 0x2010,
		0x7efe0: 0x7eff0, 0x7efe8: 0x3008,
	})
	for _, tc := range []struct {
		name   string
		policy string
		pc     uint64
		regs   regs
		want   []uint64
		stop   unwind.StopKind
	}{
		{"entry: RA in x30", "", 0x1000, regs{31: 0x7efd0, 29: 0x7efe0, 30: 0x2010},
			[]uint64{0x1000, 0x2010, 0x3008}, unwind.StopOutermost},
		{"after paciasp: x30 signed, stripped", "", 0x1004, regs{31: 0x7efd0, 29: 0x7efe0, 30: pac | 0x2010},
			[]uint64{0x1004, 0x2010, 0x3008}, unwind.StopOutermost},
		{"frame record saved, SP-based", "", 0x1008, regs{31: 0x7efc0, 29: 0x7efe0, 30: 0},
			[]uint64{0x1008, 0x2010, 0x3008}, unwind.StopOutermost},
		{"FP-based CFA", "", 0x100c, regs{31: 0x7efc0, 29: 0x7efc0, 30: 0},
			[]uint64{0x100c, 0x2010, 0x3008}, unwind.StopOutermost},
		{"pac=keep leaves the signature", "pac=keep", 0x100c, regs{31: 0x7efc0, 29: 0x7efc0},
			[]uint64{0x100c, pac | 0x2010}, unwind.StopNoData},
		{"depth limit", "depth=2", 0x100c, regs{31: 0x7efc0, 29: 0x7efc0},
			[]uint64{0x100c, 0x2010}, unwind.StopDepth},
		{"gap at frame 0", "", 0x5000, regs{31: 0x7efc0, 29: 0x7efc0},
			[]uint64{0x5000}, unwind.StopNoData},
		{"gap=fp takes the frame record", "gap=fp", 0x5000, regs{31: 0x7efc0, 29: 0x7efc0},
			[]uint64{0x5000, 0x2010, 0x3008}, unwind.StopOutermost},
		{"FP below SP", "", 0x100c, regs{31: 0x7efc0, 29: 0x7ef00},
			[]uint64{0x100c}, unwind.StopBadFrame},
		{"no stack pointer", "", 0x100c, regs{29: 0x7ef00},
			[]uint64{0x100c}, unwind.StopUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tracer(t, a, aarch64Section(), policy(t, tc.policy))
			var w unwind.Walk
			tr.Walk(mem, tc.pc, tc.regs, &w)
			assert.Equal(t, hex(tc.want), hex(w.PCs))
			assert.Equal(t, tc.stop, w.Stop.Kind, "%s", w.Stop.Format(a))
		})
	}
}

// TestTopmostOnly: a row that needs the link register met in an outer
// frame stops the walk under the kernel's rules, and gives a frame read
// from the interrupted context's x30 when the rule is ignored.
func TestTopmostOnly(t *testing.T) {
	a := mustABI(t, elf.EM_AARCH64, binary.LittleEndian)
	// f's frame record holds lr = 0x2000: g's first instruction, the
	// return address of a call that ended its caller (a noreturn call).
	mem := stack(t, binary.LittleEndian, map[uint64]uint64{0x7efc0: 0x7efe0, 0x7efc8: 0x2000})
	r := regs{31: 0x7efc0, 29: 0x7efc0, 30: 0x2000}
	var w unwind.Walk

	tracer(t, a, aarch64Section(), unwind.DefaultPolicy()).Walk(mem, 0x100c, r, &w)
	assert.Equal(t, hex{0x100c, 0x2000}, hex(w.PCs))
	assert.Equal(t, unwind.StopTopmostOnly, w.Stop.Kind)
	assert.Equal(t, 1, w.Stop.Frame)
	assert.Contains(t, w.Stop.Format(a), "RA in x30, usable in the topmost frame only")

	tracer(t, a, aarch64Section(), policy(t, "topmost=ignore,depth=6")).Walk(mem, 0x100c, r, &w)
	assert.Equal(t, hex{0x100c, 0x2000, 0x2000, 0x2000, 0x2000, 0x2000}, hex(w.PCs), "the frame repeats until the depth limit")
	assert.Equal(t, unwind.StopDepth, w.Stop.Kind)

	// ra-1 finds f's own row instead: 0x1fff is outside every FDE here.
	tracer(t, a, aarch64Section(), policy(t, "lookup=ra-1")).Walk(mem, 0x100c, r, &w)
	assert.Equal(t, hex{0x100c, 0x2000}, hex(w.PCs))
	assert.Equal(t, unwind.StopNoData, w.Stop.Kind)
	assert.Equal(t, uint64(0x1fff), w.Stop.A)
}

// TestCycle: frame records that point at themselves, or that go down the
// stack, end the walk ("caller's SP is not above SP") in every method.
func TestCycle(t *testing.T) {
	a := mustABI(t, elf.EM_AARCH64, binary.LittleEndian)
	mem := stack(t, binary.LittleEndian, map[uint64]uint64{
		0x7efc0: 0x7efc0, 0x7efc8: 0x200c, // fp -> itself
		0x7efa0: 0x7ef80, 0x7efa8: 0x200c, // fp -> lower address
	})
	for _, fp := range []uint64{0x7efc0, 0x7efa0} {
		for _, tr := range []*unwind.Tracer{
			tracer(t, a, aarch64Section(), unwind.DefaultPolicy()),
			unwind.NewChainTracer(a, nil, unwind.DefaultPolicy()),
		} {
			var w unwind.Walk
			tr.Walk(mem, 0x100c, regs{31: fp - 0x10, 29: fp}, &w)
			require.LessOrEqual(t, len(w.PCs), 3, "%s: %s", tr.Method, hex(w.PCs))
			assert.Equal(t, unwind.StopBadFrame, w.Stop.Kind, "%s: %s", tr.Method, w.Stop.Format(a))
			assert.Contains(t, []unwind.Cause{unwind.CauseSPNotAbove, unwind.CauseFPBelowSP}, w.Stop.Cause)
		}
	}
}

// TestOutsideMemory: rows whose slots lie outside guest memory, and FDEs
// for code that is not there, stop the walk with a reason.
func TestOutsideMemory(t *testing.T) {
	a := mustABI(t, elf.EM_AARCH64, binary.LittleEndian)
	s := &sframe.Section{
		Version: 3, Flags: sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL,
		ABI: abi.SFrameAArch64LE, Order: binary.LittleEndian,
		FDEs: []sframe.FDE{
			{Start: 0x1000, Size: 16, FREs: []sframe.FRE{{CFA: reg(31, 0x7fff0000), RA: slot(-8), FP: slot(-16)}}},
			{Start: 0x2000, Size: 16, FREs: []sframe.FRE{{CFA: reg(31, 16), RA: slot(-0x7fffff00), FP: slot(-16)}}},
			{Start: 0xffff_ffff_0000, Size: 16, FREs: []sframe.FRE{{CFA: reg(31, 16), RA: slot(-8), FP: slot(-16)}}},
		},
	}
	mem := stack(t, binary.LittleEndian, nil)
	for _, tc := range []struct {
		pc, sp uint64
		want   hex
	}{
		{0x1000, 0x7efc0, hex{0x1000}},                          // CFA far above the stack
		{0x2000, 0x7efc0, hex{0x2000}},                          // RA slot far below it
		{0xffff_ffff_0004, stackTop - 8, hex{0xffff_ffff_0004}}, // code outside memory, RA slot just above the stack
	} {
		var w unwind.Walk
		tracer(t, a, s, unwind.DefaultPolicy()).Walk(mem, tc.pc, regs{31: tc.sp, 29: tc.sp}, &w)
		assert.Equal(t, tc.want, hex(w.PCs))
		assert.Equal(t, unwind.StopBadFrame, w.Stop.Kind, "%s", w.Stop.Format(a))
		assert.Equal(t, unwind.CauseRead, w.Stop.Cause)
	}
}

// s390xSection: a leaf at 0x1000 that keeps RA in f0 (DWARF 16) and FP in
// f2 (DWARF 17) from +4 (flexible FDE, as gas writes it for ldgr
// %f0,%r14; ldgr %f2,%r11); a caller at 0x2000 with the usual "stmg
// %r6,%r15,48(%r15); aghi %r15,-160" frame: CFA sp+320, RA c-48, FP c-72;
// _start at 0x3000.
func s390xSection() *sframe.Section {
	return &sframe.Section{
		Version: 3, Flags: sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL,
		ABI: abi.SFrameS390XBE, Order: binary.BigEndian,
		FDEs: []sframe.FDE{
			{Start: 0x1000, Size: 40, Flex: true, FREs: []sframe.FRE{
				{Start: 0, CFA: reg(15, 160)},
				{Start: 4, CFA: reg(15, 160), RA: reg(16, 0), FP: reg(17, 0)},
			}},
			{Start: 0x2000, Size: 64, FREs: []sframe.FRE{
				{Start: 0, CFA: reg(15, 160)},
				{Start: 6, CFA: reg(15, 160), RA: slot(-48), FP: slot(-72)},
				{Start: 10, CFA: reg(15, 320), RA: slot(-48), FP: slot(-72)},
			}},
			{Start: 0x3000, Size: 16, FREs: []sframe.FRE{{RAUndefined: true}}},
		},
	}
}

// TestWalkS390X checks the s390x rules without the s390x core: a state as
// cpu.State holds it (FPRs in the high halves of v0-v15), the caller's SP
// = CFA-160, RA and FP taken from FPRs in the topmost frame only.
func TestWalkS390X(t *testing.T) {
	a := mustABI(t, elf.EM_S390, binary.BigEndian)
	// The caller's frame: SP 0x7ef00 (so CFA 0x7f040 = 0x7ef00+320); its
	// saved r14 at CFA-48 returns into _start, its saved r11 at CFA-72.
	const callerSP = 0x7ef00
	mem := stack(t, binary.BigEndian, map[uint64]uint64{
		callerSP + 320 - 48: 0x3008,
		callerSP + 320 - 72: 0x7f100,
	})
	state := &cpu.State{GPR: make([]uint64, 16), Vec: make([][2]uint64, 32)}
	state.GPR[15] = callerSP // a leaf does not move r15
	state.GPR[14] = ^uint64(0)
	state.GPR[11] = ^uint64(0) // both clobbered, the values are in f0 and f2
	state.Vec[0][0] = 0x2020   // f0 = RA into the caller
	state.Vec[2][0] = 0x7f000  // f2 = the caller's r11
	state.Vec[0][1] = 0xbad    // the low half of v0 is not f0
	r := unwind.StateRegs{Layout: &a.Regs, State: state}

	var w unwind.Walk
	tracer(t, a, s390xSection(), unwind.DefaultPolicy()).WalkDetail(mem, 0x1010, r, &w)
	assert.Equal(t, hex{0x1010, 0x2020, 0x3008}, hex(w.PCs))
	assert.Equal(t, unwind.StopOutermost, w.Stop.Kind)
	require.Len(t, w.Frames, 3)
	assert.Equal(t, uint64(callerSP+160), w.Frames[0].CFA, "leaf: CFA = r15+160")
	assert.Equal(t, uint64(callerSP), w.Frames[1].SP, "caller's SP = CFA-160")
	assert.Equal(t, uint64(callerSP+320), w.Frames[1].CFA)
	assert.Equal(t, "CFA=sp+160 RA=f0+0 FP=f2+0", w.Frames[0].Row.Format(a))

	// At the leaf's entry the RA is still in r14.
	state.GPR[14] = 0x2020
	tracer(t, a, s390xSection(), unwind.DefaultPolicy()).Walk(mem, 0x1000, r, &w)
	assert.Equal(t, hex{0x1000, 0x2020, 0x3008}, hex(w.PCs))

	// The same FPR rule in an outer frame: the kernel's rules stop.
	frame := stack(t, binary.BigEndian, map[uint64]uint64{callerSP + 320 - 48: 0x1010, callerSP + 320 - 72: 0x7f100})
	tracer(t, a, s390xSection(), unwind.DefaultPolicy()).Walk(frame, 0x2010, r, &w)
	assert.Equal(t, hex{0x2010, 0x1010}, hex(w.PCs))
	assert.Equal(t, unwind.StopTopmostOnly, w.Stop.Kind)
	assert.Contains(t, w.Stop.Format(a), "RA in f0")
	// Ignored, f0 is read as it is in the interrupted context.
	tracer(t, a, s390xSection(), policy(t, "topmost=ignore,depth=4")).Walk(frame, 0x2010, r, &w)
	assert.Equal(t, hex{0x2010, 0x1010, 0x2020}, hex(w.PCs)[:3])
}

// TestBackChain: the s390x -mbackchain chain, CFA = *(r15) + 160.
func TestBackChain(t *testing.T) {
	a := mustABI(t, elf.EM_S390, binary.BigEndian)
	// Three frames: SP 0x7ee00 -> 0x7ef00 -> 0x7f000 -> 0 (the end).
	mem := stack(t, binary.BigEndian, map[uint64]uint64{
		0x7ee00: 0x7ef00, 0x7ef00 + 112: 0x2010, // back chain, saved r14 in the caller's save area
		0x7ef00: 0x7f000, 0x7f000 + 112: 0x3008,
		0x7f000: 0,
	})
	syms := unwind.NewSymbols([]cpu.Symbol{{Name: "leaf", Addr: 0x1000, Size: 0x40}, {Name: "mid", Addr: 0x2000, Size: 0x40}, {Name: "_start", Addr: 0x3000, Size: 0x10}})
	tr := unwind.NewChainTracer(a, syms, unwind.DefaultPolicy())
	var w unwind.Walk
	tr.Walk(mem, 0x1010, regs{15: 0x7ee00, 14: 0xdead}, &w)
	assert.Equal(t, hex{0x1010, 0x2010, 0x3008}, hex(w.PCs))
	assert.Equal(t, "#0  0x1010 leaf+0x10\n#1  0x2010 mid+0x10\n#2  0x3008 _start+0x8\n"+
		"(bad frame at frame 2 (pc 0x3008): caller's SP 0x0 is not above SP 0x7f000)\n", w.Text(syms))
	assert.Equal(t, unwind.StopBadFrame, w.Stop.Kind, "a zero back chain ends the walk: %s", w.Stop.Format(a))
	// At a function's first instruction the RA is in r14.
	tr.Walk(mem, 0x1000, regs{15: 0x7ef00, 14: 0x2010}, &w)
	assert.Equal(t, hex{0x1000, 0x2010, 0x3008}, hex(w.PCs))
}

type hex []uint64

func (h hex) String() string {
	s := "["
	for i, v := range h {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%#x", v)
	}
	return s + "]"
}
