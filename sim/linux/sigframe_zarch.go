package linux

import (
	"errors"
	"fmt"

	"simrun/sim/cpu"
)

// The s390x signal frames (Linux arch/s390 ABI, as qemu-user 7.2 writes
// them). Both start with 160 bytes for the handler's callee (the back
// chain, the old r15, in the first doubleword) and are 8-aligned below
// the stack pointer or the alternate stack's top.
//
// rt_sigframe (SA_SIGINFO), 1320 bytes:
//
//	+160  __u16 svc insn area (qemu leaves it: its trampoline page returns)
//	+168  siginfo (128)
//	+296  ucontext: uc_flags (UC_VXRS), uc_link, uc_stack (24), at +40
//	      _sigregs (psw mask and address, r0-r15, a0-a15, fpc, f0-f15;
//	      344 bytes), at +384 uc_sigmask (8 in a 128-byte area), at +512
//	      _sigregs_ext (the low halves of v0-v15, then v16-v31; 512)
//
// sigframe (no SA_SIGINFO), 1040 bytes (qemu 7.2 has no svc area in it):
//
//	+160  sigcontext: oldmask, the address of the _sigregs
//	+176  _sigregs, +520 the signal number, +528 _sigregs_ext
//
// The handler starts with r2 = signal and r3 = &siginfo, r4 = &ucontext
// (rt) or r3 = &sigcontext, r4 = r6 = 0; r5 = 0; r14 = sa_restorer with
// SA_RESTORER, else the trampoline page's svc (sigreturn at +0,
// rt_sigreturn at +2); r15 = the frame.
const (
	s390RTSize      = 1320
	s390RTInfo      = 168
	s390RTUC        = 296
	s390UCRegs      = 40
	s390UCMask      = 384
	s390UCExt       = 512
	s390OldSize     = 1040
	s390OldSC       = 160
	s390OldRegs     = 176
	s390OldSigno    = 520
	s390OldExt      = 528
	s390SigregsSize = 344
	s390ExtSize     = 384 // the part written: vxrs_low and vxrs_high
	ucVXRS          = 2
	// s390PSWUser is the PSW mask of a problem-state program in 64-bit
	// mode as qemu-user shows it (DAT, I/O, external, machine check,
	// problem state, EA, BA); the condition code goes in bits 18-19.
	s390PSWUser = 0x0705000180000000
	s390PSWCC   = 44
)

type s390xSignals struct{}

func (s390xSignals) setup(p *Process, st *cpu.State, in *sigInfo, act *sigAction, oldmask uint64) error {
	t := p.sig
	sp := st.GPR[15]
	rt := act.flags&saSiginfo != 0
	size := uint64(s390OldSize)
	if rt {
		size = s390RTSize
	}
	frame := (t.frameStack(sp, act) - size) &^ 7
	w := &frameWriter{p: p}
	w.u64(frame, sp) // back chain
	ret := p.sigTramp
	if rt {
		w.siginfo(frame+s390RTInfo, in)
		uc := frame + s390RTUC
		w.u64(uc, ucVXRS)
		w.u64(uc+8, 0)
		w.stack(uc+16, p.curAltStack(sp))
		s390SaveRegs(w, uc+s390UCRegs, st)
		s390SaveExt(w, uc+s390UCExt, st)
		w.u64(uc+s390UCMask, oldmask)
		ret += 2
	} else {
		w.u64(frame+s390OldSC, oldmask)
		w.u64(frame+s390OldSC+8, frame+s390OldRegs)
		s390SaveRegs(w, frame+s390OldRegs, st)
		s390SaveExt(w, frame+s390OldExt, st)
		w.u32(frame+s390OldSigno, uint32(in.signo))
	}
	if w.err != nil {
		return w.err
	}
	if act.flags&saRestorer != 0 {
		ret = act.restorer
	}
	st.GPR[2] = uint64(in.signo)
	if rt {
		st.GPR[3], st.GPR[4] = frame+s390RTInfo, frame+s390RTUC
	} else {
		st.GPR[3], st.GPR[4] = frame+s390OldSC, 0
	}
	// r5 = 0 for both (the last breaking-event address on Linux); the
	// old frame also zeroes r6, as qemu does.
	st.GPR[5] = 0
	if !rt {
		st.GPR[6] = 0
	}
	st.GPR[14] = ret
	st.GPR[15] = frame
	st.PC = act.handler
	return nil
}

func s390SaveRegs(w *frameWriter, at uint64, st *cpu.State) {
	w.u64(at, s390PSWUser|(st.Flags&3)<<s390PSWCC)
	w.u64(at+8, st.PC)
	for i := 0; i < 16; i++ {
		w.u64(at+16+8*uint64(i), st.GPR[i])
	}
	for i := 0; i < 16; i++ {
		w.u32(at+144+4*uint64(i), st.AR[i])
	}
	w.u32(at+208, uint32(st.FPCR))
	for i := 0; i < 16; i++ {
		w.u64(at+216+8*uint64(i), st.Vec[i][0])
	}
}

func s390SaveExt(w *frameWriter, at uint64, st *cpu.State) {
	for i := 0; i < 16; i++ {
		w.u64(at+8*uint64(i), st.Vec[i][1])
	}
	for i := 0; i < 16; i++ {
		w.u64(at+128+16*uint64(i), st.Vec[16+i][0])
		w.u64(at+136+16*uint64(i), st.Vec[16+i][1])
	}
}

// s390FPCReserved are the FPC bits a program cannot set (bits 6-7,
// 14-15, 24, 28; z/Architecture Principles of Operation, "Floating-Point-
// Control Register"): Linux refuses a frame holding them.
const s390FPCReserved = 0x03030088

func (s390xSignals) sigreturn(p *Process, st *cpu.State, rt bool) (uint64, *stackT, error) {
	frame := st.GPR[15]
	size, regs, ext := s390OldSize, s390OldRegs, s390OldExt
	if rt {
		size, regs, ext = s390RTSize, s390RTUC+s390UCRegs, s390RTUC+s390UCExt
	}
	b, err := p.Mem.ReadBytes(frame, size)
	if err != nil {
		return 0, nil, err
	}
	o := p.order()
	r := b[regs:]
	fpc := o.Uint32(r[208:])
	if fpc&s390FPCReserved != 0 {
		return 0, nil, fmt.Errorf("fpc 0x%08x sets reserved bits", fpc)
	}
	// Only the PSW's user bits count (the condition code; Linux keeps
	// the rest of its own mask).
	st.Flags = o.Uint64(r) >> s390PSWCC & 3
	st.PC = o.Uint64(r[8:])
	for i := 0; i < 16; i++ {
		st.GPR[i] = o.Uint64(r[16+8*i:])
		st.AR[i] = o.Uint32(r[144+4*i:])
		st.Vec[i][0] = o.Uint64(r[216+8*i:])
	}
	st.FPCR = uint64(fpc)
	e := b[ext:]
	for i := 0; i < 16; i++ {
		st.Vec[i][1] = o.Uint64(e[8*i:])
		st.Vec[16+i] = [2]uint64{o.Uint64(e[128+16*i:]), o.Uint64(e[136+16*i:])}
	}
	if !rt {
		return o.Uint64(b[s390OldSC:]), nil, nil
	}
	u := b[s390RTUC:]
	alt := &stackT{sp: o.Uint64(u[16:]), flags: o.Uint32(u[24:]), size: o.Uint64(u[32:])}
	return o.Uint64(u[s390UCMask:]), alt, nil
}

// faultSignal maps an s390x program interruption to its signal as Linux
// and qemu-user 7.2 raise it: an addressing or protection exception is
// SIGSEGV with SEGV_MAPERR or SEGV_ACCERR at the page of the address (the
// translation-exception identification names a page), the PSW at the
// instruction; an operation exception SIGILL with ILL_ILLOPC, a
// specification exception SIGILL with ILL_ILLOPN, a fixed-point divide
// exception SIGFPE with FPE_INTDIV, each at the instruction with the PSW
// after it. An access to a file mapping past the file's end is SIGBUS
// with BUS_ADRERR at the page of the address as on Linux (qemu 7.2
// fills si_addr with unrelated bits), the PSW at the instruction.
func (s390xSignals) faultSignal(p *Process, f *cpu.Fault) (sigInfo, uint64, bool) {
	in := sigInfo{kind: siKindFault}
	next := func() uint64 {
		b, err := p.Mem.ReadBytes(f.PC, 1)
		if err != nil {
			return f.PC
		}
		return f.PC + uint64(s390InsnLen(b[0]))
	}
	switch {
	case f.Kind == cpu.FaultUnmapped || f.Kind == cpu.FaultPermission:
		in.signo, in.code, in.addr = cpu.SIGSEGV, segvCode(f), f.Addr&^(cpu.PageSize-1)
		return in, f.PC, true
	case f.Kind == cpu.FaultBus:
		in.signo, in.code, in.addr = cpu.SIGBUS, busAdrerr, f.Addr&^(cpu.PageSize-1)
		return in, f.PC, true
	case f.Kind == cpu.FaultFetch:
		addr := f.PC
		var mf cpu.MemFault
		if errors.As(f.Err, &mf) {
			addr = mf.Addr
		}
		in.signo, in.code, in.addr = cpu.SIGSEGV, segvCode(f), addr&^(cpu.PageSize-1)
		return in, f.PC, true
	case f.Kind == cpu.FaultUndefined && f.Err != nil && f.Err.Error() == "operation exception":
		in.signo, in.code, in.addr = cpu.SIGILL, illIllopc, f.PC
	case f.Kind == cpu.FaultUndefined:
		in.signo, in.code, in.addr = cpu.SIGILL, illIllopn, f.PC
	case f.Kind == cpu.FaultSignal && f.Sig == cpu.SIGFPE:
		in.signo, in.code, in.addr = cpu.SIGFPE, fpeIntdiv, f.PC
	default:
		return in, 0, false
	}
	return in, next(), true
}

// s390InsnLen is the length the first two bits of an opcode give.
func s390InsnLen(op byte) int {
	switch op >> 6 {
	case 0:
		return 2
	case 3:
		return 6
	}
	return 4
}
