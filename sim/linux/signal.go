package linux

import (
	"fmt"
	"slices"

	"simrun/sim/cpu"
)

// Signals as Linux delivers them to a process, with the frames and the
// return path qemu-user 7.2 gives (so register traces diff against its):
// a signal raised by a syscall (kill, tgkill, rt_sigqueueinfo, a write to
// a pipe without readers) or by an unblocking mask is delivered when that
// syscall returns; a fault becomes its signal at once. Delivery builds the
// architecture's frame on the stack (sigframe_aarch64.go, sigframe_zarch.go)
// and enters the handler; rt_sigreturn restores what the frame holds.
// Nothing here runs between two instructions unless a syscall, a fault or
// a timer's expiry (timer.go) ended the core's run, so the run loop pays
// nothing.

// sa_flags bits (the same on arm64 and s390x).
const (
	saSiginfo   = 0x00000004
	saRestorer  = 0x04000000
	saOnstack   = 0x08000000
	saRestart   = 0x10000000
	saNodefer   = 0x40000000
	saResethand = 0x80000000

	sigDfl = 0
	sigIgn = 1

	ssOnstack    = 1
	ssDisable    = 2
	ssAutodisarm = 1 << 31

	sigSTOP  = 19
	sigCHLD  = 17
	sigCONT  = 18
	sigURG   = 23
	sigWINCH = 28
)

// si_code values.
const (
	siUser   = 0
	siKernel = 0x80
	siQueue  = -1
	siTkill  = -6

	segvMaperr = 1
	segvAccerr = 2
	illIllopc  = 1
	illIllopn  = 2
	fpeIntdiv  = 1
	trapBrkpt  = 1
	busAdraln  = 1
	busAdrerr  = 2
)

// sigKind says which siginfo union member is valid (and written to the
// frame, as qemu writes only that one).
type sigKind uint8

const (
	siKindKill  sigKind = iota // _kill: pid, uid
	siKindRT                   // _rt: pid, uid, sigval
	siKindFault                // _sigfault: addr
	siKindTimer                // _timer: tid (the timer's id), overrun, sigval
	siKindChild                // _sigchld: pid, uid, status (in value)
)

// sigInfo is one pending signal.
type sigInfo struct {
	signo int
	code  int32
	errno int32
	kind  sigKind
	pid   uint32
	uid   uint32
	value uint64 // sigval
	addr  uint64 // si_addr
	// timerID and overrun are a POSIX timer's si_tid and si_overrun;
	// timer is that timer (its overrun count is settled when the signal
	// is taken).
	timerID uint32
	overrun uint32
	timer   *ptimer
	// fault, for a signal raised by an instruction's fault, is the fault
	// the run ends with when the guest does not handle it; cause, for
	// other signals, says where they came from in that message.
	fault *cpu.Fault
	cause string
	// process is set for a signal sent to the process (kill,
	// rt_sigqueueinfo), which any thread not blocking it may take.
	process bool
}

// sigAction is one rt_sigaction entry as the guest gave it.
type sigAction struct {
	handler, flags, restorer, mask uint64
}

// sigThread is the signal state Linux keeps per thread: the blocked
// mask, the signals pending for the thread and the alternate stack.
// Each thread owns one; Process.sig is the running thread's.
type sigThread struct {
	mask     uint64
	pending  []sigInfo
	altSP    uint64
	altSize  uint64
	altFlags uint32 // SS_AUTODISARM as given
	// saved is the mask rt_sigsuspend replaced (hasSaved): the first
	// handler frame records it, or it comes back if no handler runs.
	saved    uint64
	hasSaved bool
}

// maxQueued bounds the queued real-time signals (RLIMIT_SIGPENDING):
// more give EAGAIN.
const maxQueued = 1024

func sigBit(sig int) uint64 { return 1 << (sig - 1) }

// unblockable are SIGKILL and SIGSTOP, which no mask holds.
const unblockable = 1<<(cpu.SIGKILL-1) | 1<<(sigSTOP-1)

// synchronous are the signals faults raise, which Linux dequeues first.
const synchronous = 1<<(cpu.SIGSEGV-1) | 1<<(cpu.SIGBUS-1) | 1<<(cpu.SIGILL-1) |
	1<<(cpu.SIGTRAP-1) | 1<<(cpu.SIGFPE-1) | 1<<(cpu.SIGSYS-1)

// defaultIgnored reports whether sig's default action is to ignore it
// (SIGCHLD, SIGURG, SIGWINCH) or to continue (SIGCONT, a no-op here).
func defaultIgnored(sig int) bool {
	return sig == sigCHLD || sig == sigURG || sig == sigWINCH || sig == sigCONT
}

// defaultStops reports whether sig's default action stops the process:
// a single process with no parent to resume it goes on instead.
func defaultStops(sig int) bool { return sig >= sigSTOP && sig <= 22 }

// defaultCore reports whether sig's default action dumps core.
func defaultCore(sig int) bool {
	switch sig {
	case 3, cpu.SIGILL, cpu.SIGTRAP, cpu.SIGABRT, cpu.SIGBUS, cpu.SIGFPE, cpu.SIGSEGV, cpu.SIGXCPU, 25, cpu.SIGSYS:
		return true
	}
	return false
}

func (t *sigThread) blocked(sig int) bool { return t.mask&sigBit(sig) != 0 }

// pendingSet is the set of pending signals (rt_sigpending).
func (t *sigThread) pendingSet() uint64 {
	var s uint64
	for _, in := range t.pending {
		s |= sigBit(in.signo)
	}
	return s
}

// next is the index of the pending signal to deliver next, or -1.
func (t *sigThread) next() int {
	return t.pick(func(in *sigInfo) bool { return !t.blocked(in.signo) })
}

// pick is the index of the pending signal accept takes that Linux would
// dequeue first (next_signal): the synchronous ones first, then the
// lowest number, each in the order sent; -1 when accept takes none.
func (t *sigThread) pick(accept func(*sigInfo) bool) int {
	best := -1
	for i := range t.pending {
		in := &t.pending[i]
		if !accept(in) {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := t.pending[best].signo
		bs, is := synchronous&sigBit(b) != 0, synchronous&sigBit(in.signo) != 0
		if is && !bs || is == bs && in.signo < b {
			best = i
		}
	}
	return best
}

// ignored reports whether sig would be discarded on arrival at t: its
// action ignores it and t does not block it (a blocked one stays pending,
// as Linux's sig_ignored).
func (p *Process) ignored(t *sigThread, sig int) bool {
	if t.blocked(sig) {
		return false
	}
	h := p.sigact[sig].handler
	return h == sigIgn || h == sigDfl && defaultIgnored(sig)
}

// sendSignal sends in to the process: the running thread takes it
// unless it blocks it, else the first thread in tid order that does not
// (Linux's complete_signal prefers the current thread too); when all
// block it, it stays pending on the running thread.
func (p *Process) sendSignal(in sigInfo) uint64 {
	if h := p.hostRun; h != nil {
		h.signal(in.signo)
		return 0
	}
	in.process = true
	target := p.cur
	if target.state == threadExited || in.signo >= 1 && in.signo <= 64 && target.sig.blocked(in.signo) {
		target = p.threads[0]
		for _, t := range p.threads {
			if in.signo >= 1 && in.signo <= 64 && !t.sig.blocked(in.signo) {
				target = t
				break
			}
		}
	}
	return p.sendSignalTo(target, in)
}

// sendSignalTo makes in pending for thread th (or discards it as Linux
// does); a thread waiting on a futex that can take it wakes with EINTR.
// It returns 0 or a negated errno.
func (p *Process) sendSignalTo(th *thread, in sigInfo) uint64 {
	if in.signo == 0 {
		return 0
	}
	if in.signo < 1 || in.signo > 64 {
		return errno(EINVAL)
	}
	t := th.sig
	if p.waitTakes(th, &in) {
		return 0 // rt_sigtimedwait took it
	}
	if p.ignored(t, in.signo) {
		return 0
	}
	if !t.blocked(in.signo) && th.state != threadRunnable && th.state != threadExited {
		p.interrupt(th, in.signo) // as Linux's restart rules say (timer.go)
	}
	if in.signo < 32 {
		for _, q := range t.pending {
			if q.signo == in.signo {
				return 0 // a standard signal is pending at most once
			}
		}
	} else if len(t.pending) >= maxQueued {
		return errno(EAGAIN)
	}
	t.pending = append(t.pending, in)
	if p.ioWaiters != 0 && p.signalfdWants(in.signo) {
		p.wakeIO() // a signalfd read may take it
	}
	return 0
}

// PID is the process id the program knows itself by (its only thread's
// id too).
func (p *Process) PID() uint64 { return p.selfPID() }

// killInfo is the siginfo of kill (SI_USER) or tgkill/tkill (SI_TKILL)
// from the process itself.
func (p *Process) killInfo(sig int, code int32) sigInfo {
	return sigInfo{signo: sig, code: code, kind: siKindKill, pid: uint32(p.selfPID()), uid: guestUID, cause: "the program sent itself"}
}

// selfPID is the pid the program knows itself by (see AdoptSelfID).
func (p *Process) selfPID() uint64 {
	if p.selfAlias != 0 {
		return p.selfAlias
	}
	return p.pid
}

// signalSelf sends sig to the running thread from the kernel's side
// (SIGPIPE, which Linux sends to the writing thread).
func (p *Process) signalSelf(sig uint64) uint64 {
	in := p.killInfo(int(sig), siUser)
	in.cause = "the kernel sent the program"
	return p.sendSignalTo(p.cur, in)
}

// deliverSignals delivers every pending signal the mask lets through,
// each handler's frame on top of the last (the last delivered runs
// first), as Linux does on the way back to user space.
func (p *Process) deliverSignals() {
	t := p.sig
	for n := 0; n < 65 && !p.Exited(); n++ {
		i := t.next()
		if i < 0 {
			return
		}
		in := t.pending[i]
		t.pending = slices.Delete(t.pending, i, i+1)
		p.timerTaken(&in)
		p.handleSignal(&in)
	}
}

// handleSignal takes sig's action.
func (p *Process) handleSignal(in *sigInfo) {
	sig := in.signo
	act := &p.sigact[sig]
	switch act.handler {
	case sigIgn:
		return
	case sigDfl:
		p.defaultAction(in)
		return
	}
	abi := sigABIFor(p.Arch)
	sw, ok := p.Core.(cpu.StateWriter)
	if abi == nil || !ok {
		p.EndFault(&cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultSignal, Sig: sig,
			Err: fmt.Errorf("signal %d (%s): simrun cannot deliver signals on %s", sig, SignalName(sig), p.Arch.Name)})
		return
	}
	t := p.sig
	a := *act
	p.restartForHandler(a.flags)
	var st cpu.State
	p.Core.State(&st)
	fromPC, fromSP := st.PC, st.GPR[p.Arch.DwarfSP]
	if a.flags&saResethand != 0 {
		act.handler = sigDfl
	}
	oldmask := t.mask
	if t.hasSaved {
		oldmask, t.hasSaved = t.saved, false // rt_sigsuspend's mask
	}
	if err := abi.setup(p, &st, in, &a, oldmask); err != nil {
		// Linux's force_sigsegv: a frame that cannot be written kills
		// with SIGSEGV (through its handler, unless that is the one
		// that failed).
		if sig == cpu.SIGSEGV {
			act.handler = sigDfl
		}
		p.forceSignal(sigInfo{signo: cpu.SIGSEGV, code: siKernel, kind: siKindKill,
			fault: &cpu.Fault{PC: st.PC, Kind: cpu.FaultSignal, Sig: cpu.SIGSEGV,
				Err: fmt.Errorf("cannot write the frame for signal %d (%s): %v", sig, SignalName(sig), err)}})
		return
	}
	sw.SetState(&st)
	t.mask |= a.mask
	if a.flags&saNodefer == 0 {
		t.mask |= sigBit(sig)
	}
	t.mask &^= unblockable
	p.delivered++
	p.threadEvent(ThreadEvent{Kind: SignalEntered, Tid: p.cur.tid, PC: fromPC, SP: fromSP})
}

// defaultAction applies sig's default action.
func (p *Process) defaultAction(in *sigInfo) {
	sig := in.signo
	if defaultIgnored(sig) || defaultStops(sig) {
		return
	}
	p.fatal = in
	if in.fault != nil {
		p.EndFault(in.fault)
		return
	}
	what := "ends the process"
	if defaultCore(sig) {
		what = "ends the process with a core dump"
	}
	cause := in.cause
	if cause == "" {
		cause = "the program received"
	}
	p.EndFault(&cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultSignal, Sig: sig, Retired: true,
		Err: fmt.Errorf("%s signal %d (%s), whose default action %s", cause, sig, SignalName(sig), what)})
}

// forceSignal is Linux's force_sig_info: a signal the thread may not
// block or ignore (a fault's, a bad frame's) is unblocked and, if
// ignored, reset to its default action; then it is delivered.
func (p *Process) forceSignal(in sigInfo) {
	t := p.sig
	if t.blocked(in.signo) || p.sigact[in.signo].handler == sigIgn {
		p.sigact[in.signo].handler = sigDfl
		t.mask &^= sigBit(in.signo)
	}
	t.pending = append(t.pending, in)
	p.deliverSignals()
}

// TakeFault turns an instruction's fault into its signal when the guest
// handles that signal (cpu.FaultTaker); a fault whose signal is blocked,
// ignored or left at its default ends the run with today's message, as
// the process would die of it.
func (p *Process) TakeFault(m *cpu.Machine, f *cpu.Fault) bool {
	p.entries++
	abi := sigABIFor(p.Arch)
	if abi == nil || p.sig == nil {
		return false
	}
	in, resume, ok := abi.faultSignal(p, f)
	if !ok {
		return false
	}
	if p.sigact[in.signo].handler <= sigIgn || p.sig.blocked(in.signo) {
		return false
	}
	sw, ok := p.Core.(cpu.StateWriter)
	if !ok {
		return false
	}
	var st cpu.State
	p.Core.State(&st)
	st.PC = resume
	sw.SetState(&st)
	in.fault = f
	p.forceSignal(in)
	return true
}

// sigABI is an architecture's signal frame.
type sigABI interface {
	// setup writes the frame for in on the stack st describes and sets
	// st to the handler's entry state.
	setup(p *Process, st *cpu.State, in *sigInfo, act *sigAction, oldmask uint64) error
	// sigreturn reads the frame rt_sigreturn (rt) or sigreturn finds at
	// the stack pointer into st, with the mask and alternate stack it
	// holds; an error is a bad frame.
	sigreturn(p *Process, st *cpu.State, rt bool) (mask uint64, alt *stackT, err error)
	// faultSignal is the signal a fault raises and the pc the frame
	// records; ok is false for faults the guest cannot handle.
	faultSignal(p *Process, f *cpu.Fault) (in sigInfo, resume uint64, ok bool)
}

func sigABIFor(a *cpu.Arch) sigABI {
	switch a.Name {
	case "arm64":
		return arm64Signals{}
	case "s390x":
		return s390xSignals{}
	}
	return nil
}

// stackT is a stack_t: ss_sp, ss_flags (an int and 4 bytes of padding),
// ss_size.
type stackT struct {
	sp    uint64
	flags uint32
	size  uint64
}

// onAltStack reports whether sp is on the alternate stack (qemu's test:
// ss_sp <= sp < ss_sp+ss_size).
func (t *sigThread) onAltStack(sp uint64) bool { return sp-t.altSP < t.altSize }

// altFlagsAt is sas_ss_flags: SS_DISABLE without an alternate stack,
// SS_ONSTACK on it, else 0.
func (t *sigThread) altFlagsAt(sp uint64) uint32 {
	if t.altSize == 0 {
		return ssDisable
	}
	if t.onAltStack(sp) {
		return ssOnstack
	}
	return 0
}

// frameStack is the stack top a handler's frame goes below: the
// alternate stack's for SA_ONSTACK when one is set and not in use.
func (t *sigThread) frameStack(sp uint64, act *sigAction) uint64 {
	if act.flags&saOnstack != 0 && t.altFlagsAt(sp) == 0 {
		return t.altSP + t.altSize
	}
	return sp
}

// setAltStack is sigaltstack's change, at stack pointer sp.
func (p *Process) setAltStack(ss stackT, sp uint64) uint64 {
	t := p.sig
	if t.onAltStack(sp) {
		return errno(EPERM)
	}
	mode := ss.flags &^ ssAutodisarm
	switch mode {
	case ssDisable:
		t.altSP, t.altSize, t.altFlags = 0, 0, 0
		return 0
	case 0, ssOnstack: // SS_ONSTACK is accepted as 0, as Linux
	default:
		return errno(EINVAL)
	}
	if ss.size < p.minSigStack() {
		return errno(ENOMEM)
	}
	t.altSP, t.altSize, t.altFlags = ss.sp, ss.size, ss.flags&ssAutodisarm
	return 0
}

// minSigStack is MINSIGSTKSZ: arm64 5120, s390x 2048.
func (p *Process) minSigStack() uint64 {
	if p.Arch.Name == "arm64" {
		return 5120
	}
	return 2048
}

func (p *Process) readStackT(addr uint64) (stackT, bool) {
	b, ok := p.readGuest(addr, 24)
	if !ok {
		return stackT{}, false
	}
	o := p.order()
	return stackT{sp: o.Uint64(b), flags: o.Uint32(b[8:]), size: o.Uint64(b[16:])}, true
}

// putStackT writes the three fields of a stack_t (not its padding).
func (w *frameWriter) stack(addr uint64, s stackT) {
	w.u64(addr, s.sp)
	w.u32(addr+8, s.flags)
	w.u64(addr+16, s.size)
}

// curAltStack is the stack_t sigaltstack reports at sp.
func (p *Process) curAltStack(sp uint64) stackT {
	t := p.sig
	return stackT{sp: t.altSP, flags: t.altFlagsAt(sp) | t.altFlags, size: t.altSize}
}

// frameWriter writes frame fields with the guest's access rights,
// remembering the first failure.
type frameWriter struct {
	p   *Process
	err error
}

func (w *frameWriter) store(addr uint64, size int, v uint64) {
	if w.err == nil && !w.p.Mem.Store(addr, size, v, w.p.order()) {
		w.err = fmt.Errorf("0x%x is not writable", addr)
	}
}

func (w *frameWriter) u32(addr uint64, v uint32) { w.store(addr, 4, uint64(v)) }
func (w *frameWriter) u64(addr uint64, v uint64) { w.store(addr, 8, v) }

// siginfo writes si_signo, si_errno, si_code and the valid union member,
// as qemu's tswap_siginfo (the rest of the 128 bytes keeps what the stack
// held).
func (w *frameWriter) siginfo(addr uint64, in *sigInfo) {
	w.u32(addr, uint32(in.signo))
	w.u32(addr+4, uint32(in.errno))
	w.u32(addr+8, uint32(in.code))
	switch in.kind {
	case siKindKill:
		w.u32(addr+16, in.pid)
		w.u32(addr+20, in.uid)
	case siKindRT:
		w.u32(addr+16, in.pid)
		w.u32(addr+20, in.uid)
		w.u64(addr+24, in.value)
	case siKindFault:
		w.u64(addr+16, in.addr)
	case siKindChild:
		w.u32(addr+16, in.pid)
		w.u32(addr+20, in.uid)
		w.u32(addr+24, uint32(in.value))
	case siKindTimer:
		w.u32(addr+16, in.timerID)
		w.u32(addr+20, in.overrun)
		w.u64(addr+24, in.value)
	}
}

// sysRtSigreturn restores the state the frame at the stack pointer
// holds; a bad frame raises SIGSEGV, as Linux.
func sysRtSigreturn(p *Process, a [6]uint64) uint64 { return p.sigreturn(true) }

// sysSigreturn is s390x's sigreturn for handlers without SA_SIGINFO.
func sysSigreturn(p *Process, a [6]uint64) uint64 { return p.sigreturn(false) }

func (p *Process) sigreturn(rt bool) uint64 {
	p.noResult = true
	abi := sigABIFor(p.Arch)
	sw, ok := p.Core.(cpu.StateWriter)
	if abi == nil || !ok {
		p.noResult = false
		return errno(ENOSYS)
	}
	var st cpu.State
	p.Core.State(&st)
	sp := st.GPR[p.Arch.DwarfSP]
	mask, alt, err := abi.sigreturn(p, &st, rt)
	if err != nil {
		p.forceSignal(sigInfo{signo: cpu.SIGSEGV, code: siKernel, kind: siKindKill,
			fault: &cpu.Fault{PC: p.Core.PC(), Kind: cpu.FaultSignal, Sig: cpu.SIGSEGV,
				Err: fmt.Errorf("bad signal frame at sp 0x%x: %v", sp, err)}})
		return 0
	}
	sw.SetState(&st)
	p.sig.mask = mask &^ unblockable
	if alt != nil {
		// As Linux's restore_altstack: only a fault matters, and a
		// refusal (the handler runs on the alternate stack) is ignored.
		p.setAltStack(*alt, st.GPR[p.Arch.DwarfSP])
	}
	p.threadEvent(ThreadEvent{Kind: SignalReturned, Tid: p.cur.tid})
	return 0
}

// Signal syscalls.

// AdoptSelfID makes id name the process and its thread as well as its
// own pid 1000: the differential test gives the guest qemu's (the host's)
// pid and tid, which the guest then sends its signals to.
func (p *Process) AdoptSelfID(id uint64) { p.selfAlias = id }

// isSelf reports whether id names the process (or its one thread).
func (p *Process) isSelf(id uint64) bool {
	return id == p.pid || p.selfAlias != 0 && id == p.selfAlias
}

func validSignal(sig uint64) bool { return sig >= 1 && sig <= 64 }

func sysRtSigaction(p *Process, a [6]uint64) uint64 {
	sig, act, old := a[0], a[1], a[2]
	if !validSignal(sig) || a[3] != 8 {
		return errno(EINVAL)
	}
	if act != 0 && (sig == cpu.SIGKILL || sig == sigSTOP) {
		return errno(EINVAL)
	}
	o := p.order()
	var nw sigAction
	if act != 0 {
		b, ok := p.readGuest(act, 32)
		if !ok {
			return errno(EFAULT)
		}
		nw = sigAction{handler: o.Uint64(b), flags: o.Uint64(b[8:]), restorer: o.Uint64(b[16:]), mask: o.Uint64(b[24:]) &^ unblockable}
	}
	prev := p.sigact[sig]
	if act != 0 {
		p.sigact[sig] = nw
		// A signal now ignored is discarded from the pending set, as
		// Linux does.
		if h := nw.handler; h == sigIgn || h == sigDfl && defaultIgnored(int(sig)) {
			t := p.sig
			t.pending = slices.DeleteFunc(t.pending, func(in sigInfo) bool { return in.signo == int(sig) })
		}
	}
	if old != 0 {
		var b []byte
		for _, v := range []uint64{prev.handler, prev.flags, prev.restorer, prev.mask} {
			b = appendU64(o, b, v)
		}
		if !p.writeGuest(old, b) {
			return errno(EFAULT)
		}
	}
	return 0
}

func sysRtSigprocmask(p *Process, a [6]uint64) uint64 {
	how, set, old := a[0], a[1], a[2]
	if a[3] != 8 {
		return errno(EINVAL)
	}
	t := p.sig
	prev := t.mask
	if set != 0 {
		b, ok := p.readGuest(set, 8)
		if !ok {
			return errno(EFAULT)
		}
		v := p.order().Uint64(b) &^ unblockable
		switch how {
		case 0: // SIG_BLOCK
			t.mask |= v
		case 1: // SIG_UNBLOCK
			t.mask &^= v
		case 2: // SIG_SETMASK
			t.mask = v
		default:
			return errno(EINVAL)
		}
	}
	if old != 0 && !p.writeGuest(old, appendU64(p.order(), nil, prev)) {
		return errno(EFAULT)
	}
	return 0
}

func sysRtSigpending(p *Process, a [6]uint64) uint64 {
	if a[1] > 8 {
		return errno(EINVAL)
	}
	b := appendU64(p.order(), nil, p.sig.pendingSet()&p.sig.mask)
	if !p.writeGuest(a[0], b[:a[1]]) {
		return errno(EFAULT)
	}
	return 0
}

func sysSigaltstack(p *Process, a [6]uint64) uint64 {
	var st cpu.State
	p.Core.State(&st)
	sp := st.GPR[p.Arch.DwarfSP]
	cur := p.curAltStack(sp)
	if a[0] != 0 {
		ss, ok := p.readStackT(a[0])
		if !ok {
			return errno(EFAULT)
		}
		if r := p.setAltStack(ss, sp); r != 0 {
			return r
		}
	}
	if a[1] != 0 {
		w := &frameWriter{p: p}
		w.stack(a[1], cur)
		if w.err != nil {
			return errno(EFAULT)
		}
	}
	return 0
}

// signalThread is the thread tid of the run that tkill, tgkill and
// rt_tgsigqueueinfo name (with tgid, its process's pid must be tgid; 0:
// any): the caller's own or another live process's. A process running a
// host program is found by its pid (thread nil: the signal goes to the
// program). ok is false when there is no such thread; zombie is set when
// tid is a process that has ended but not been reaped (a signal to it is
// taken and ignored).
func (p *Process) signalThread(tgid, tid uint64) (q *Process, t *thread, zombie, ok bool) {
	if tgid == 0 || p.isSelf(tgid) {
		if t := p.threadByTid(tid); t != nil {
			return p, t, false, true
		}
	}
	for _, q := range p.sys.procs {
		if q == p || tgid != 0 && q.pid != tgid {
			continue
		}
		switch {
		case q.ended:
			if q.pid == tid {
				return q, nil, true, true
			}
		case q.hostRun != nil:
			if q.pid == tid {
				return q, nil, false, true
			}
		default:
			if t := q.threadByTid(tid); t != nil {
				return q, t, false, true
			}
		}
	}
	return nil, nil, false, false
}

// signalThreadWith sends in to thread tid of process tgid (0: any), as
// tgkill and rt_tgsigqueueinfo do.
func (p *Process) signalThreadWith(tgid, tid uint64, in sigInfo) uint64 {
	q, t, zombie, ok := p.signalThread(tgid, tid)
	switch {
	case !ok:
		return errno(ESRCH)
	case zombie:
		return 0
	case q != p:
		in.cause = "another process sent the program"
	}
	if t == nil {
		return q.sendSignal(in) // a host program's
	}
	return q.sendSignalTo(t, in)
}

func sysTgkill(p *Process, a [6]uint64) uint64 {
	if int64(a[0]) <= 0 || int64(a[1]) <= 0 || !validSignal(a[2]) && a[2] != 0 {
		return errno(EINVAL)
	}
	return p.signalThreadWith(a[0], a[1], p.killInfo(int(a[2]), siTkill))
}

func sysTkill(p *Process, a [6]uint64) uint64 {
	if int64(a[0]) <= 0 || !validSignal(a[1]) && a[1] != 0 {
		return errno(EINVAL)
	}
	return p.signalThreadWith(0, a[0], p.killInfo(int(a[1]), siTkill))
}

// queueInfo is rt_sigqueueinfo's siginfo: the caller's si_code and, as
// qemu takes them, its pid, uid and sigval. Another process may not be
// sent a kernel's or kill's si_code (0 and up, SI_TKILL): EPERM, as Linux.
func (p *Process) queueInfo(sig, addr uint64, toOther bool) (sigInfo, uint64) {
	b, ok := p.readGuest(addr, 128)
	if !ok {
		return sigInfo{}, errno(EFAULT)
	}
	o := p.order()
	in := sigInfo{signo: int(sig), errno: int32(o.Uint32(b[4:])), code: int32(o.Uint32(b[8:])), kind: siKindRT,
		pid: o.Uint32(b[16:]), uid: o.Uint32(b[20:]), value: o.Uint64(b[24:]), cause: "the program sent itself"}
	if toOther && (in.code >= 0 || in.code == siTkill) {
		return in, errno(EPERM)
	}
	if in.code == siUser || in.code == siTkill || in.code == siKernel {
		in.kind = siKindKill
	}
	return in, 0
}

// rt_sigqueueinfo(pid, sig, info): to the caller or another process of
// the run (a zombie takes it and ignores it).
func sysRtSigqueueinfo(p *Process, a [6]uint64) uint64 {
	if !validSignal(a[1]) && a[1] != 0 {
		return errno(EINVAL)
	}
	in, r := p.queueInfo(a[1], a[2], !p.isSelf(a[0])) // EPERM comes before ESRCH
	if r != 0 {
		return r
	}
	q := p
	if !p.isSelf(a[0]) {
		if int32(a[0]) <= 0 {
			return errno(ESRCH)
		}
		if q = p.sys.byPid(a[0]); q == nil {
			return errno(ESRCH)
		}
	}
	if q.ended {
		return 0
	}
	if q != p {
		in.cause = "another process sent the program"
	}
	return q.sendSignal(in)
}

func sysRtTgsigqueueinfo(p *Process, a [6]uint64) uint64 {
	if int64(a[0]) <= 0 || int64(a[1]) <= 0 || !validSignal(a[2]) && a[2] != 0 {
		return errno(EINVAL)
	}
	in, r := p.queueInfo(a[2], a[3], !p.isSelf(a[0]))
	if r != 0 {
		return r
	}
	return p.signalThreadWith(a[0], a[1], in)
}

// SigTramp is the address of the signal-trampoline page (0: none).
func (p *Process) SigTramp() uint64 { return p.sigTramp }
