// Package abi holds the per-architecture facts the unwinders need, keyed
// by ELF machine: which DWARF registers are the stack pointer, frame
// pointer and return address, where the CFA sits relative to the caller's
// stack pointer, and how SFrame describes the ABI.  It is data only, so
// sim/unwind never imports an architecture package.
package abi

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// SFrame ABI/arch identifiers (sfh_abi_arch).
const (
	SFrameAArch64BE = 1 // SFRAME_ABI_AARCH64_ENDIAN_BIG
	SFrameAArch64LE = 2 // SFRAME_ABI_AARCH64_ENDIAN_LITTLE
	SFrameAMD64LE   = 3 // SFRAME_ABI_AMD64_ENDIAN_LITTLE
	SFrameS390XBE   = 4 // SFRAME_ABI_S390X_ENDIAN_BIG
)

// ABI describes one architecture's stack-frame conventions.
type ABI struct {
	Name    string
	Machine elf.Machine
	Order   binary.ByteOrder

	// DWARF register numbers.
	SP, FP, RA uint32

	// CFAInitial is the CIE rule gas puts in every FDE (CFA = SP + offset
	// at function entry): 0 on aarch64, 8 on x86-64, 160 on s390x.
	CFAInitial int64
	// SPValOffset is SP_caller - CFA (s390x: -160; 0 elsewhere).
	SPValOffset int64

	// RATracked is true when the return address is described per row
	// (aarch64, s390x); false when it sits at a fixed offset from the CFA
	// (x86-64: FixedRAOffset).
	RATracked     bool
	FixedRAOffset int8
	// FlexFDE is true when gas may emit SFrame V3 flexible FDEs for this
	// ABI (x86-64, s390x; not aarch64).
	FlexFDE bool
	// CFAScaled is true when SFrame stores CFA offsets as
	// (offset - 160) / 8 (s390x).
	CFAScaled bool
	// FPWithoutRA is true when a row may save FP but not RA (s390x pads
	// the RA word with 0); gas drops such functions elsewhere.
	FPWithoutRA bool
	// PAuth is true on aarch64 (mangled RA, A/B keys).
	PAuth bool
	// PACMask is the part of a code pointer that holds a pointer
	// authentication code in user space: bits 54:48 with 48-bit virtual
	// addresses and the top byte ignored (the mask Linux reports in
	// NT_ARM_PAC_MASK).  Bit 55 says which half of the address space the
	// pointer is in; stripping copies it into the mask bits (XPACI).
	PACMask uint64

	// Frame is the frame-pointer (aarch64) or back-chain (s390x) record
	// that unwinding without tables follows.
	Frame FrameChain
	// Regs says where the DWARF registers live in a cpu.State.
	Regs RegLayout
	// Signals are Linux's signal frames a handler returns through.
	Signals []SignalFrame

	// BFDName is the BFD target objdump names ("elf64-s390").
	BFDName string
}

// FrameChain (Name "" when the ABI has none here) describes the frame records that link frames without unwind
// tables, as a row with fixed rules:
//
//	CFA = (Deref ? *(Base+Off) : Base+Off) + Add
//	RA  = *(CFA + RAOff)
//	FP  = *(CFA + FPOff) if FPSaved, else unknown
//
// At a function's first instruction (topmost frame only) the record does
// not exist yet: CFA = SP + EntryCFA, RA is in the RA register and FP is
// unchanged.
type FrameChain struct {
	Name     string // "frame pointer", "back chain"
	Base     uint32 // DWARF register
	Off      int64
	Deref    bool
	Add      int64
	RAOff    int64
	FPOff    int64
	FPSaved  bool
	EntryCFA int64
}

// SignalFrame is one kind of Linux signal frame: the code of the
// trampoline a handler returns to (the sigreturn system call), and where
// the interrupted context's registers lie from the stack pointer the
// trampoline runs with — the frame's start, as the kernel set the
// handler's SP. Unwinders that cross signal frames recognize the
// trampoline by its instructions, as libgcc's MD_FALLBACK_FRAME_STATE_FOR
// and gdb's sigtramp sniffers do, and read the registers from there.
//
//	SP ─▶ frame ... +PC: the interrupted pc
//	                +GPR: DWARF registers 0..GPRs-1, 8 bytes each
//	                +FPR: the FPRs by number, 8 bytes each (0: none;
//	                      DWARF numbers map to them by RegLayout)
//	                the stack pointer is GPR ABI.SP unless SPAt != 0
type SignalFrame struct {
	Code []byte
	PC   int64
	GPR  int64
	GPRs int
	SPAt int64
	FPR  int64
}

// RegLayout maps DWARF register numbers to the fields of a cpu.State:
// 0..GPRs-1 are State.GPR[n]; FPRBase..FPRBase+len(FPR)-1 are the
// floating-point registers State.Vec[FPR[n-FPRBase]], their high half
// (Vec[i][0], bits 127:64) when FPRHigh, else the low half.
type RegLayout struct {
	GPRs    int
	FPRBase int
	FPR     []uint8
	FPRHigh bool
}

// Locate returns where DWARF register n lives: a GPR index (vec false) or
// a vector register index and half; ok is false if the layout has no
// such register.
func (l *RegLayout) Locate(n int) (idx int, vec, ok bool) {
	switch {
	case n >= 0 && n < l.GPRs:
		return n, false, true
	case n >= l.FPRBase && n < l.FPRBase+len(l.FPR):
		return int(l.FPR[n-l.FPRBase]), true, true
	}
	return 0, false, false
}

// StripPAC removes a pointer authentication code from a code pointer.
func (a *ABI) StripPAC(p uint64) uint64 {
	if a.PACMask == 0 {
		return p
	}
	if p&(1<<55) != 0 {
		return p | a.PACMask
	}
	return p &^ a.PACMask
}

// SFrameABI returns the SFrame ABI/arch identifier.
func (a *ABI) SFrameABI() uint8 {
	switch a.Machine {
	case elf.EM_AARCH64:
		if a.Order == binary.BigEndian {
			return SFrameAArch64BE
		}
		return SFrameAArch64LE
	case elf.EM_X86_64:
		return SFrameAMD64LE
	case elf.EM_S390:
		return SFrameS390XBE
	}
	return 0
}

// RegName is the name the SFrame dump gives a DWARF register in flexible
// FDEs: "sp", "fp", or "r<N>".
func (a *ABI) RegName(reg uint32) string {
	switch reg {
	case a.SP:
		return "sp"
	case a.FP:
		return "fp"
	}
	return fmt.Sprintf("r%d", reg)
}

var (
	aarch64 = ABI{
		Name: "aarch64", Machine: elf.EM_AARCH64, Order: binary.LittleEndian,
		SP: 31, FP: 29, RA: 30,
		RATracked: true, PAuth: true, PACMask: 0x007f << 48,
		// The AAPCS64 frame record: x29 points at {caller's x29, x30}.
		Frame: FrameChain{Name: "frame pointer", Base: 29, Off: 16, RAOff: -8, FPOff: -16, FPSaved: true},
		Regs:  RegLayout{GPRs: 32, FPRBase: 64, FPR: seq(32)},
		// rt_sigframe: siginfo (128), then the ucontext whose sigcontext
		// at +176 holds fault_address, x0-x30, sp, pc (arch/arm64 uapi
		// ucontext.h, sigcontext.h); the trampoline is mov x8, #139
		// (rt_sigreturn); svc #0.
		Signals: []SignalFrame{{Code: []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4},
			GPR: 128 + 176 + 8, GPRs: 31, SPAt: 128 + 176 + 256, PC: 128 + 176 + 264}},
		BFDName: "elf64-littleaarch64",
	}
	aarch64BE = func() ABI {
		a := aarch64
		a.Name, a.Order, a.BFDName = "aarch64_be", binary.BigEndian, "elf64-bigaarch64"
		return a
	}()
	s390x = ABI{
		Name: "s390x", Machine: elf.EM_S390, Order: binary.BigEndian,
		SP: 15, FP: 11, RA: 14,
		CFAInitial: 160, SPValOffset: -160,
		RATracked: true, FlexFDE: true, CFAScaled: true, FPWithoutRA: true,
		// -mbackchain: 0(%r15) holds the caller's %r15; the callee saved
		// %r14 in the caller's register save area at 112(caller's %r15),
		// i.e. CFA-48.  %r11 is saved there too only if the callee saved
		// it, so the chain cannot recover FP (as the kernel's back-chain
		// unwinder says).
		Frame: FrameChain{Name: "back chain", Base: 15, Deref: true, Add: 160, RAOff: -48, EntryCFA: 160},
		// DWARF 16-31 are f0,f2,f4,f6,f1,f3,f5,f7,f8,f10,f12,f14,f9,f11,
		// f13,f15; an FPR is bits 0-63 of its vector register.
		Regs: RegLayout{GPRs: 16, FPRBase: 16, FPR: []uint8{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}, FPRHigh: true},
		// _sigregs (arch/s390 uapi sigcontext.h): the PSW (mask, then
		// address at +8), r0-r15 at +16, a0-a15, the FPC, f0-f15 at
		// +216. rt_sigframe (svc 173, rt_sigreturn) has it in the
		// ucontext at +296+40, sigframe (svc 119, sigreturn) at +176,
		// each after the 160-byte register save area.
		Signals: []SignalFrame{
			{Code: []byte{0x0a, 173}, PC: 336 + 8, GPR: 336 + 16, GPRs: 16, FPR: 336 + 216},
			{Code: []byte{0x0a, 119}, PC: 176 + 8, GPR: 176 + 16, GPRs: 16, FPR: 176 + 216},
		},
		BFDName: "elf64-s390",
	}
	x8664 = ABI{
		Name: "x86-64", Machine: elf.EM_X86_64, Order: binary.LittleEndian,
		SP: 7, FP: 6, RA: 16,
		CFAInitial: 8, FixedRAOffset: -8, FlexFDE: true,
		BFDName: "elf64-x86-64",
	}
)

func seq(n int) []uint8 {
	s := make([]uint8, n)
	for i := range s {
		s[i] = uint8(i)
	}
	return s
}

// ForMachine returns the ABI of a 64-bit ELF machine in the given byte
// order, or an error naming what is not supported.
func ForMachine(m elf.Machine, order binary.ByteOrder) (*ABI, error) {
	var a *ABI
	switch m {
	case elf.EM_AARCH64:
		a = &aarch64
		if order == binary.BigEndian {
			a = &aarch64BE
		}
	case elf.EM_S390:
		a = &s390x
	case elf.EM_X86_64:
		a = &x8664
	default:
		return nil, fmt.Errorf("no unwinding ABI for ELF machine %v (supported: aarch64, s390x, x86-64)", m)
	}
	if order != nil && order != a.Order {
		return nil, fmt.Errorf("%s with %v byte order is not supported", a.Name, order)
	}
	return a, nil
}

// ForSFrame returns the ABI for an SFrame ABI/arch identifier.
func ForSFrame(id uint8) (*ABI, error) {
	switch id {
	case SFrameAArch64BE:
		return &aarch64BE, nil
	case SFrameAArch64LE:
		return &aarch64, nil
	case SFrameAMD64LE:
		return &x8664, nil
	case SFrameS390XBE:
		return &s390x, nil
	}
	return nil, fmt.Errorf("unknown SFrame ABI/arch %d", id)
}
