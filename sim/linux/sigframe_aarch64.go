package linux

import (
	"errors"
	"fmt"

	"simrun/sim/cpu"
)

// The arm64 rt_sigframe (Linux arch/arm64 ABI; the layout qemu-user 7.2
// writes for a CPU without SVE or SME):
//
//	frame+0     siginfo (128 bytes)
//	frame+128   ucontext: uc_flags, uc_link, uc_stack (24), uc_sigmask
//	            (8, in a 128-byte glibc sigset), then at +176 the
//	            sigcontext: fault_address, x0-x30, sp, pc, pstate, and at
//	            +464 (16-aligned) __reserved[4096]: the FPSIMD record
//	            (magic 0x46508001, size 528: fpsr, fpcr, v0-v31) and a
//	            null record ending the list
//	frame+4688  the frame record (fp, lr) that x29 points to
//
// The frame is 4704 bytes below the stack pointer (or the alternate
// stack's top), 16-aligned. The handler starts with x0 = signal, x1 =
// &siginfo, x2 = &ucontext (the siginfo and these two only with
// SA_SIGINFO), x29 = &frame record, x30 = sa_restorer with
// SA_RESTORER, else the signal-trampoline page, sp = frame.
const (
	a64UC         = 128
	a64MC         = a64UC + 176
	a64Regs       = a64MC + 8
	a64SP         = a64MC + 256
	a64PC         = a64MC + 264
	a64PState     = a64MC + 272
	a64Reserved   = a64MC + 288
	a64ReservedSz = 4096
	a64FrameSize  = a64Reserved + a64ReservedSz // sizeof(struct rt_sigframe)
	a64Total      = a64FrameSize + 16           // and the frame record
	fpsimdMagic   = 0x46508001
	fpsimdSize    = 528
	esrMagic      = 0x45535201
)

type arm64Signals struct{}

func (arm64Signals) setup(p *Process, st *cpu.State, in *sigInfo, act *sigAction, oldmask uint64) error {
	t := p.sig
	sp := st.GPR[31]
	frame := (t.frameStack(sp, act) - a64Total) &^ 15
	w := &frameWriter{p: p}
	uc := frame + a64UC
	w.u64(uc, 0) // uc_flags
	w.u64(uc+8, 0)
	w.stack(uc+16, p.curAltStack(sp))
	w.u64(uc+40, oldmask)
	w.u64(frame+a64MC, 0) // fault_address: qemu leaves it 0
	for i := 0; i < 31; i++ {
		w.u64(frame+a64Regs+8*uint64(i), st.GPR[i])
	}
	w.u64(frame+a64SP, sp)
	w.u64(frame+a64PC, st.PC)
	w.u64(frame+a64PState, st.Flags<<28)
	r := frame + a64Reserved
	w.u32(r, fpsimdMagic)
	w.u32(r+4, fpsimdSize)
	w.u32(r+8, uint32(st.FPSR))
	w.u32(r+12, uint32(st.FPCR))
	for i := 0; i < 32; i++ {
		w.u64(r+16+16*uint64(i), st.Vec[i][1])
		w.u64(r+24+16*uint64(i), st.Vec[i][0])
	}
	w.u32(r+fpsimdSize, 0) // the null record ending the list
	w.u32(r+fpsimdSize+4, 0)
	w.u64(frame+a64FrameSize, st.GPR[29])
	w.u64(frame+a64FrameSize+8, st.GPR[30])
	siginfo := act.flags&saSiginfo != 0
	if siginfo {
		w.siginfo(frame, in)
	}
	if w.err != nil {
		return w.err
	}
	ret := p.sigTramp
	if act.flags&saRestorer != 0 {
		ret = act.restorer
	}
	st.GPR[0] = uint64(in.signo)
	if siginfo {
		st.GPR[1] = frame
		st.GPR[2] = uc
	}
	st.GPR[29] = frame + a64FrameSize
	st.GPR[30] = ret
	st.GPR[31] = frame
	st.PC = act.handler
	return nil
}

func (arm64Signals) sigreturn(p *Process, st *cpu.State, rt bool) (uint64, *stackT, error) {
	frame := st.GPR[31]
	if frame&15 != 0 {
		return 0, nil, fmt.Errorf("sp 0x%x is not 16-byte aligned", frame)
	}
	b, err := p.Mem.ReadBytes(frame, a64FrameSize)
	if err != nil {
		return 0, nil, err
	}
	o := p.order()
	pstate := o.Uint64(b[a64PState:])
	// Linux's valid_user_regs: EL0t (M[4:0] = 0) with D, A, I and F
	// clear, else the frame is bad.
	if pstate&0x3df != 0 {
		return 0, nil, fmt.Errorf("pstate 0x%x is not EL0 with interrupts unmasked", pstate)
	}
	var fp []byte
	for off := 0; ; {
		if a64ReservedSz-off < 8 {
			return 0, nil, errors.New("the __reserved records run past their 4096 bytes")
		}
		rec := b[a64Reserved+off:]
		magic, size := o.Uint32(rec), int(o.Uint32(rec[4:]))
		if magic == 0 {
			if size != 0 {
				return 0, nil, fmt.Errorf("the null record at +%d has size %d", off, size)
			}
			break
		}
		if size < 8 || size%16 != 0 || size > a64ReservedSz-off {
			return 0, nil, fmt.Errorf("record 0x%x at +%d has size %d", magic, off, size)
		}
		switch magic {
		case fpsimdMagic:
			if fp != nil || size != fpsimdSize {
				return 0, nil, fmt.Errorf("FPSIMD record at +%d: duplicate or size %d", off, size)
			}
			fp = rec[:fpsimdSize]
		case esrMagic: // information only
		default:
			return 0, nil, fmt.Errorf("unknown record 0x%x at +%d", magic, off)
		}
		off += size
	}
	if fp == nil {
		return 0, nil, errors.New("no FPSIMD record")
	}
	for i := 0; i < 31; i++ {
		st.GPR[i] = o.Uint64(b[a64Regs+8*i:])
	}
	st.GPR[31] = o.Uint64(b[a64SP:])
	st.PC = o.Uint64(b[a64PC:])
	st.Flags = pstate >> 28 & 15
	st.FPSR = uint64(o.Uint32(fp[8:]))
	st.FPCR = uint64(o.Uint32(fp[12:]))
	for i := 0; i < 32; i++ {
		st.Vec[i] = [2]uint64{o.Uint64(fp[24+16*i:]), o.Uint64(fp[16+16*i:])}
	}
	u := b[a64UC:]
	alt := &stackT{sp: o.Uint64(u[16:]), flags: o.Uint32(u[24:]), size: o.Uint64(u[32:])}
	return o.Uint64(u[40:]), alt, nil
}

// faultSignal maps an arm64 fault to its signal as qemu-user 7.2 raises
// it (Linux's codes where they agree): a data abort is SIGSEGV with
// SEGV_MAPERR or SEGV_ACCERR at the address, an instruction fetch from
// unmapped or non-executable memory SIGSEGV at the pc, an undefined
// instruction SIGILL with ILL_ILLOPN (qemu's code; Linux gives
// ILL_ILLOPC), brk SIGTRAP with TRAP_BRKPT, a misaligned pc or
// exclusive access SIGBUS with BUS_ADRALN, an access to a file mapping
// past the file's end SIGBUS with BUS_ADRERR at the address. The frame records the
// faulting instruction's pc. Instructions simrun does not implement end
// the run: the guest's handler must not mistake them for absent ones.
func (arm64Signals) faultSignal(p *Process, f *cpu.Fault) (sigInfo, uint64, bool) {
	in := sigInfo{kind: siKindFault}
	switch f.Kind {
	case cpu.FaultUnmapped, cpu.FaultPermission:
		in.signo, in.code, in.addr = cpu.SIGSEGV, segvCode(f), f.Addr
	case cpu.FaultFetch:
		in.signo, in.code, in.addr = cpu.SIGSEGV, segvCode(f), f.PC
	case cpu.FaultUndefined:
		in.signo, in.code, in.addr = cpu.SIGILL, illIllopn, f.PC
	case cpu.FaultBreakpoint:
		in.signo, in.code, in.addr = cpu.SIGTRAP, trapBrkpt, f.PC
	case cpu.FaultBus:
		in.signo, in.code, in.addr = cpu.SIGBUS, busAdrerr, f.Addr
	case cpu.FaultAlignment:
		in.signo, in.code, in.addr = cpu.SIGBUS, busAdraln, f.PC
		if f.Addr != 0 {
			in.addr = f.Addr
		}
	default:
		return in, 0, false
	}
	return in, f.PC, true
}

// segvCode is SEGV_ACCERR for an access the page's rights refuse,
// SEGV_MAPERR for an unmapped address.
func segvCode(f *cpu.Fault) int32 {
	var mf cpu.MemFault
	if errors.As(f.Err, &mf) && !mf.Unmapped || f.Kind == cpu.FaultPermission {
		return segvAccerr
	}
	return segvMaperr
}
