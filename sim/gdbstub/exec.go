package gdbstub

import (
	"errors"
	"fmt"
	"strconv"

	"simrun/sim/cpu"
	"simrun/sim/replay"
)

// Running the guest for gdb: continue and step, breakpoints and
// watchpoints through the per-instruction observer, faults held for gdb.

// runFree runs the program to its end without gdb.
func (s *Stub) runFree() (*cpu.Exit, error) {
	s.toNewest()
	s.catching = false
	s.m.Kernel = s.inner
	s.m.Observer = s.base
	if f := s.fault; f != nil { // reported but never resumed: Linux delivers it
		s.fault = nil
		s.deliver(f)
	}
	if s.p.Away() { // the core is with another process: on until it is back
		if exit, err := s.p.RunUntilBack(false); err != nil || exit != nil {
			return exit, err
		}
	}
	for {
		exit, err := s.m.Run()
		if errors.Is(err, ErrPause) {
			continue // no gdb to pause for
		}
		if errors.Is(err, cpu.ErrStopped) && !s.hostStop.Load() {
			s.m.ClearStop() // a late 0x03 or a fault stop of the attached run
			continue
		}
		return exit, err
	}
}

// deliver hands fault f to the kernel as the signal it raises: the
// guest's handler runs, or the run ends with it.
func (s *Stub) deliver(f *cpu.Fault) {
	ft, ok := s.inner.(cpu.FaultTaker)
	taken := false
	if ok {
		s.begin()
		taken = ft.TakeFault(s.m, f)
		s.end(replay.Fault, taken)
	}
	if taken {
		if !f.Fetching() {
			s.m.TakenFaults++ // as Machine counts a taken fault
		}
		return
	}
	s.m.EndFault(f)
}

// batch is how many instructions continue runs between two looks at the
// interrupt flag (an interrupt also stops the run at once).
const batch = 1 << 24

// resume runs the guest with Linux signal sig delivered (0: none), and
// reports the stop or the end to gdb. step, if not 0, is a thread to
// step one instruction: the running thread steps alone; a thread that is
// switched out retires its next instruction when the scheduler runs it
// again, the other threads running meanwhile as they would (a breakpoint
// one of them meets stops the run first).
func (s *Stub) resume(stepTid uint64, sig int) (*cpu.Exit, bool, error) {
	if s.past() {
		live, exit, done, err := s.forward(stepTid)
		if !live {
			return exit, done, err
		}
		sig = 0 // gdb saw no signal in the past
	}
	if f := s.fault; f != nil {
		s.fault = nil
		if sig == f.Signal() {
			s.deliver(f)
		} else if sig != 0 {
			fmt.Fprintf(s.notes, "simrun: gdb: continuing with signal %d instead of the fault's %d is not supported; the fault is discarded\n", sig, f.Signal())
		}
	} else if sig != 0 {
		fmt.Fprintf(s.notes, "simrun: gdb: sending signal %d is not supported yet; resumed without it\n", sig)
	}
	if s.m.Exited() {
		return s.finish()
	}
	step := stepTid != 0 && (stepTid == s.p.CurrentTid() || !s.alive(stepTid))
	if step {
		stepTid = s.p.CurrentTid()
	}
	s.stepTid = 0
	if stepTid != 0 && !step {
		s.stepTid, s.stepFrom = stepTid, s.p.ThreadInsns(stepTid)
	}
	defer func() { s.stepTid = 0 }()
	if step || s.stepTid != 0 || len(s.bps) > 0 || len(s.watches) > 0 {
		s.m.Observer = s.observe
	} else {
		s.m.Observer = s.base
	}
	defer func() { s.m.Observer = s.base }()
	s.armed = watchHit{}
	// An interrupt gdb sent while the guest was stopped (or after the
	// last batch ran out) has nothing left to stop.
	s.interruptReq.Store(false)
	s.m.ClearStop()
	if s.hostStop.Load() {
		return nil, true, cpu.ErrStopped
	}
	s.mark()
	for {
		n := uint64(batch)
		if step {
			n = 1
		}
		if s.hist != nil {
			n = min(n, s.hist.UntilMark())
		}
		var exit *cpu.Exit
		var err error
		if s.p.Away() {
			// Stopped while another process had the core (an
			// interrupt): the others run on until it comes back, then
			// this process runs as asked.
			if exit, err = s.p.RunUntilBack(false); exit == nil && err == nil {
				continue
			}
		} else if exit, err = s.m.RunFor(n); errors.Is(err, cpu.ErrYield) {
			// The kernel handed the core to another process (a fork's
			// child, a process this one waits for): the others run
			// without gdb, as gdb's follow-fork-mode parent with
			// detach-on-fork lets them, until it is back.
			exit, err = s.p.RunUntilBack(true)
		}
		if exit == nil && err == nil && s.p.Machine != s.m {
			return s.execed()
		}
		if exit == nil && err == nil {
			s.mark()
		}
		if s.hostStop.Load() {
			return nil, true, cpu.ErrStopped
		}
		if f := s.fault; f != nil {
			s.m.ClearStop()
			if s.hostStop.Load() { // raced with the clear: keep the host's stop
				s.m.RequestStop()
				return nil, true, cpu.ErrStopped
			}
			if !f.Fetching() {
				s.m.TakenFaults-- // not taken yet: gdb decides
			}
			return s.stopped(f.Signal(), "")
		}
		switch {
		case err == errStop:
			s.send(s.stop)
			s.interruptReq.Store(false)
			return nil, false, nil
		case errors.Is(err, ErrPause):
			return s.stopped(cpu.SIGTRAP, "")
		case errors.Is(err, cpu.ErrStopped):
			s.m.ClearStop()
			if s.hostStop.Load() {
				s.m.RequestStop()
				return nil, true, cpu.ErrStopped
			}
			if s.interruptReq.Swap(false) {
				return s.stopped(2, "") // SIGINT, as gdb expects after 0x03
			}
			s.mark() // the history asked for a snapshot, or a stale request
			continue
		case err != nil:
			return nil, true, err
		case exit != nil:
			return s.finish()
		}
		if s.armed.on && s.m.Insns != s.armed.insns {
			return s.stopped(cpu.SIGTRAP, s.watchReason())
		}
		if step {
			s.stop = s.stopReplyFor(stepTid, cpu.SIGTRAP, "")
			s.interruptReq.Store(false)
			s.send(s.stop)
			return nil, false, nil
		}
		if s.interruptReq.Swap(false) {
			return s.stopped(2, "") // SIGINT, as gdb expects after 0x03
		}
	}
}

// execed follows the program into the machine its execve gave it (its
// new program, of either architecture): the stub debugs the new machine,
// with that architecture's registers, no breakpoints or watchpoints (the
// old address space's went with it, as on Linux) and a new history; gdb,
// told by an exec stop (exec-events), loads the new program and asks
// for its target description again. A gdb that did not take exec-events
// gets a plain stop.
func (s *Stub) execed() (*cpu.Exit, bool, error) {
	old := s.m
	old.Kernel, old.Observer = s.inner, s.base
	s.m = s.p.Machine
	s.inner, s.base = s.m.Kernel, s.m.Observer
	s.m.Kernel = catcher{s}
	lay, err := layoutFor(s.p.Arch, pauthOn(s.m))
	if err != nil {
		return nil, true, err
	}
	s.lay = lay
	s.bps = map[uint64]byte{}
	s.watches, s.armed, s.fault = nil, watchHit{}, nil
	s.hist, s.histOff = nil, ""
	s.startHistory()
	fmt.Fprintf(s.notes, "simrun: gdb: the program ran execve: now %s (%s)\n", s.p.ExePath(), s.p.Arch.Name)
	if s.execEvents {
		return s.stopped(cpu.SIGTRAP, "exec:"+string(appendHex(nil, []byte(s.p.ExePath())))+";")
	}
	return s.stopped(cpu.SIGTRAP, "")
}

// stopped reports a stop with Linux signal sig.
func (s *Stub) stopped(sig int, reason string) (*cpu.Exit, bool, error) {
	s.stop = s.stopReply(sig, reason)
	s.interruptReq.Store(false)
	s.send(s.stop)
	return nil, false, nil
}

// finish reports the program's end.
func (s *Stub) finish() (*cpu.Exit, bool, error) {
	exit, err := s.m.RunFor(0)
	if err != nil {
		return nil, true, err
	}
	s.p.EndRun(exit) // the other processes end with the first, as without gdb
	reply := exitReply(exit)
	if s.multi {
		reply += fmt.Sprintf(";process:%x", s.p.PID())
	}
	s.send(reply)
	return exit, true, nil
}

func (s *Stub) watchReason() string {
	name := map[byte]string{'2': "watch", '3': "rwatch", '4': "awatch"}[s.armed.kind]
	return name + ":" + strconv.FormatUint(s.armed.addr, 16) + ";"
}

// observe runs before each instruction while gdb has breakpoints or
// watchpoints set, or steps.
func (s *Stub) observe(m *cpu.Machine) error {
	if s.stepTid != 0 && s.p.ThreadInsns(s.stepTid) != s.stepFrom {
		// The stepped thread retired its instruction (the scheduler may
		// have switched away since).
		tid := s.stepTid
		if !s.alive(tid) {
			tid = s.p.CurrentTid()
		}
		s.stop = s.stopReplyFor(tid, cpu.SIGTRAP, "")
		s.stepTid = 0
		return errStop
	}
	if s.armed.on {
		if m.Insns != s.armed.insns { // the accessing instruction retired
			s.stop = s.stopReply(cpu.SIGTRAP, s.watchReason())
			s.armed.on = false
			return errStop
		}
		s.armed.on = false
	}
	// A breakpoint at the pc the guest resumes at stops it at once, as a
	// hardware breakpoint does: gdb steps over its own breakpoint there
	// with that breakpoint removed.
	if k, ok := s.bps[m.Core.PC()]; ok {
		reason := "swbreak:;"
		if k == 'h' {
			reason = "hwbreak:;"
		}
		s.stop = s.stopReply(cpu.SIGTRAP, reason)
		return errStop
	}
	if len(s.watches) > 0 {
		s.checkWatch(m)
		if s.armed.on && s.lay.watchBefore {
			// gdb steps over the access itself (layout.watchBefore).
			s.stop = s.stopReply(cpu.SIGTRAP, s.watchReason())
			s.armed.on = false
			return errStop
		}
	}
	if s.base != nil {
		return s.base(m)
	}
	return nil
}

// checkWatch arms a watch hit when the next instruction accesses a
// watched range in a watched way.
func (s *Stub) checkWatch(m *cpu.Machine) {
	if w, ok := s.watchAccess(m); ok {
		s.armed = w
	}
}

// watchAccess is the watch hit of the next instruction, if it accesses a
// watched range in a watched way.
func (s *Stub) watchAccess(m *cpu.Machine) (watchHit, bool) {
	var op cpu.Op
	if !m.Core.NextOp(&op) {
		return watchHit{}, false
	}
	var read, write bool
	switch op.Class {
	case cpu.ClassLoad:
		read = true
	case cpu.ClassStore:
		write = true
	case cpu.ClassLoadAtomic:
		read, write = true, true
	default:
		return watchHit{}, false
	}
	size := uint64(max(op.Access, 1))
	for _, w := range s.watches {
		hit := w.kind == '4' || (w.kind == '2' && write) || (w.kind == '3' && read)
		if hit && op.VA < w.addr+w.len && w.addr < op.VA+size {
			return watchHit{on: true, kind: w.kind, addr: max(op.VA, w.addr), insns: m.Insns}, true
		}
	}
	return watchHit{}, false
}

// resumeLocked is resume with only thread lock running (gdb's scheduler
// locking: a vCont whose actions all name it): the scheduler switches to
// it now and runs no other thread while it can run (linux.Process
// LockScheduler: one that waits lets the others run until it wakes).
// Behind the newest point the history replays as it was recorded.
func (s *Stub) resumeLocked(stepTid uint64, sig int, lock uint64) (*cpu.Exit, bool, error) {
	if !s.past() && !s.m.Exited() {
		s.begin()
		ok := s.p.LockScheduler(lock)
		s.end(replay.Boundary, false)
		if !ok {
			s.send("E01")
			return nil, false, nil
		}
		defer s.p.LockScheduler(0)
	}
	return s.resume(stepTid, sig)
}
