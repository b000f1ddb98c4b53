package gdbstub

import (
	"errors"
	"fmt"
	"strconv"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/replay"
)

// Reverse execution: bs (reverse-stepi) and bc (reverse-continue) over
// the history sim/replay keeps of the process, and forward
// execution through that history until the newest point, where the
// guest runs live again.

// startHistory gives the stub its history (nil, with the reason noted in
// histOff, when the machine cannot have one).
func (s *Stub) startHistory() {
	if s.m.Timing != nil || len(s.m.Consumers) > 0 {
		s.histOff = "reverse execution is not available with the timing model or SPE on"
		return
	}
	h, err := replay.New(s.m)
	if err != nil {
		s.histOff = "reverse execution is not available: " + err.Error()
		return
	}
	if s.Interval != 0 {
		h.Interval = s.Interval
	}
	if s.HistoryLimit != 0 {
		h.Limit = s.HistoryLimit
	}
	h.Threads = procThreads{s.p}
	s.hist = h
	s.checkSingle()
}

// procThreads shows the process's threads to the history.
type procThreads struct{ p *linux.Process }

func (t procThreads) Current() uint64 { return t.p.CurrentTid() }
func (t procThreads) IDs() []uint64   { return t.p.ThreadIDs() }
func (t procThreads) State(tid uint64, st *cpu.State) bool {
	_, ok := t.p.ThreadState(tid, st)
	return ok
}

// pastView is the threads at the guest's point in its history while it
// is behind the newest point (nil when it is live: the kernel knows).
func (s *Stub) pastView() *replay.ThreadView {
	if !s.past() {
		return nil
	}
	return s.hist.ViewAt(replay.Clock(s.m))
}

// curTid is the thread the core runs, at the guest's point in time.
func (s *Stub) curTid() uint64 {
	if v := s.pastView(); v != nil {
		return v.Current
	}
	return s.p.CurrentTid()
}

// threadIDs is the live threads at the guest's point in time.
func (s *Stub) threadIDs() []uint64 {
	if v := s.pastView(); v != nil {
		return v.IDs
	}
	return s.p.ThreadIDs()
}

// begin and end bracket a kernel entry (or a debugger's change) of the
// live guest for the history's log.
func (s *Stub) begin() {
	if s.hist != nil {
		s.hist.Begin()
	}
}

func (s *Stub) end(kind replay.Kind, taken bool) {
	if s.hist != nil {
		s.hist.End(kind, taken)
		s.checkSingle()
	}
}

// checkSingle turns the history off while the process is not the only
// one (or runs on another machine after an execve), and on again when
// it is.
func (s *Stub) checkSingle() {
	h := s.hist
	if h == nil || !h.Live() {
		return
	}
	reason := ""
	switch {
	case s.p.Machine != s.m:
		reason = "the program ran execve: reverse execution stops at an execve"
	case len(s.p.System().Processes()) > 1:
		reason = "the program has forked: reverse execution is for a single process"
	}
	switch {
	case reason != "" && h.Off() == "":
		h.Drop(reason)
	case reason == "" && h.Off() != "" && s.p.Machine == s.m:
		h.Resume() // the history starts again here
	}
}

// mark takes a snapshot when one is due.
func (s *Stub) mark() {
	if s.hist != nil {
		s.hist.Mark()
	}
}

// past reports whether the guest is behind the newest point of its
// history.
func (s *Stub) past() bool { return s.hist != nil && !s.hist.Live() }

// edit runs a debugger's change to registers or memory, logged for
// replay; behind the newest point it is refused (the kernel's state
// belongs to the newest point, so the past cannot be changed).
func (s *Stub) edit(f func() string) string {
	if s.past() {
		fmt.Fprintln(s.notes, "simrun: gdb: registers and memory cannot be changed while replaying the past; continue to the newest point first")
		return "E01"
	}
	s.begin()
	r := f()
	s.end(replay.Boundary, false)
	return r
}

// refused is why reverse execution is refused now ("" if it is not).
func (s *Stub) refused() string {
	switch {
	case s.hist == nil && s.histOff != "":
		return s.histOff
	case s.hist == nil:
		return "reverse execution is not available: no history was started"
	case s.hist.Off() != "":
		return s.hist.Off()
	}
	return ""
}

// reverse answers bs (step false: reverse-stepi) and bc.
func (s *Stub) reverse(cont bool) (*cpu.Exit, bool, error) {
	if why := s.refused(); why != "" {
		fmt.Fprintf(s.notes, "simrun: gdb: %s\n", why)
		s.send("E01")
		return nil, false, nil
	}
	h := s.hist
	now, start := replay.Clock(s.m), h.Start()
	if now <= start {
		return s.stopped(cpu.SIGTRAP, "replaylog:begin;")
	}
	if !cont {
		// Back over the stepped thread's last instruction (the other
		// threads go back with it, to where it ran that instruction).
		tid := s.stepFor(true)
		t, ok := h.LastRun(tid, now)
		if !ok {
			return s.stopped(cpu.SIGTRAP, "replaylog:begin;")
		}
		if err := h.Seek(t, nil); err != nil {
			return s.replayFailed(err)
		}
		return s.stopped(cpu.SIGTRAP, "")
	}
	t, found, err := h.ScanBack(now, s.hitBack)
	if err != nil {
		return s.replayFailed(err)
	}
	if err := h.Seek(t, nil); err != nil {
		return s.replayFailed(err)
	}
	if !found {
		return s.stopped(cpu.SIGTRAP, "replaylog:begin;")
	}
	if k, ok := s.bps[s.m.Core.PC()]; ok {
		return s.stopped(cpu.SIGTRAP, map[byte]string{'s': "swbreak:;", 'h': "hwbreak:;"}[k])
	}
	if w, ok := s.watchAccess(s.m); ok {
		s.armed = w
		if s.lay.watchBefore {
			// Reported before the access in the direction of execution,
			// after it in the program's: gdb then steps back over it.
			if err := h.Seek(t+1, nil); err != nil {
				return s.replayFailed(err)
			}
		}
		return s.stopped(cpu.SIGTRAP, s.watchReason())
	}
	return s.stopped(cpu.SIGTRAP, "")
}

// hitBack reports whether reverse-continue stops at the machine's state:
// the pc at a breakpoint, or the next instruction accessing a watched
// range (going backwards, a watchpoint ends up before the access, where
// the old value is still in memory; with layout.watchBefore the report
// comes after it and gdb steps back over it).
func (s *Stub) hitBack(m *cpu.Machine) bool {
	if _, ok := s.bps[m.Core.PC()]; ok {
		return true
	}
	if len(s.watches) == 0 {
		return false
	}
	_, ok := s.watchAccess(m)
	return ok
}

// forward runs a guest that is behind the newest point forward: a step
// replays one instruction; a continue replays until a breakpoint or
// watchpoint stops it or the newest point is reached, where live
// reports false (the caller goes on running the guest live).
func (s *Stub) forward(stepTid uint64) (live bool, exit *cpu.Exit, done bool, err error) {
	h := s.hist
	target := h.Newest()
	step := false
	if stepTid != 0 {
		// To just after the stepped thread's next instruction; the
		// other threads run meanwhile, and a breakpoint or watchpoint
		// one of them meets stops it first, as live. A thread that runs
		// no more before the newest point steps on live.
		if t, ok := h.NextRun(stepTid, replay.Clock(s.m)); ok {
			target, step = t+1, true
		}
	}
	s.armed = watchHit{}
	base := s.base
	s.base = nil // a trace shows the live run only
	err = h.Seek(target, s.observe)
	s.base = base
	switch {
	case err == errStop:
		s.send(s.stop)
		return false, nil, false, nil
	case err != nil:
		exit, done, err = s.replayFailed(err)
		return false, exit, done, err
	case s.armed.on: // the last replayed instruction accessed a watched range
		exit, done, err = s.stopped(cpu.SIGTRAP, s.watchReason())
		return false, exit, done, err
	case step:
		s.stop = s.stopReplyFor(stepTid, cpu.SIGTRAP, "")
		s.send(s.stop)
		return false, nil, false, nil
	}
	return true, nil, false, nil
}

// replayFailed answers a reverse or replayed request that could not be
// done: an error reply (a Ctrl-C stops it with SIGINT where it was).
func (s *Stub) replayFailed(err error) (*cpu.Exit, bool, error) {
	if errors.Is(err, cpu.ErrStopped) {
		s.m.ClearStop()
		if s.hostStop.Load() {
			s.m.RequestStop()
			return nil, true, cpu.ErrStopped
		}
		return s.stopped(2, "")
	}
	fmt.Fprintf(s.notes, "simrun: gdb: %v\n", err)
	s.send("E01")
	return nil, false, nil
}

// toNewest brings a guest that is behind the newest point back to it
// (before a kill, a detach, a lost connection).
func (s *Stub) toNewest() {
	if !s.past() {
		return
	}
	if err := s.hist.Seek(s.hist.Newest(), nil); err != nil {
		fmt.Fprintf(s.notes, "simrun: gdb: %v\n", err)
	}
}

// historyCommand answers monitor history [interval N | limit SIZE].
func (s *Stub) historyCommand(args []string) string {
	h := s.hist
	if h == nil {
		return s.histOff + "\n"
	}
	switch {
	case len(args) == 0:
	case len(args) == 2 && (args[0] == "interval" || args[0] == "limit"):
		var v uint64
		var err error
		if args[0] == "limit" {
			v, err = cpu.ParseSize(args[1])
		} else {
			v, err = strconv.ParseUint(args[1], 10, 64)
		}
		if err != nil || v == 0 {
			return fmt.Sprintf("bad %s %q\n", args[0], args[1])
		}
		if args[0] == "interval" {
			h.Interval = v
		} else {
			h.SetLimit(v)
		}
	default:
		return "usage: monitor history [interval N | limit SIZE]\n"
	}
	if why := h.Off(); why != "" {
		return fmt.Sprintf("no history: %s\n", why)
	}
	where := "at the newest point"
	if !h.Live() {
		where = fmt.Sprintf("replaying, at %d", replay.Clock(s.m))
	}
	return fmt.Sprintf("history: instructions %d to %d, %s; snapshots: %d, one every %d instructions; held: %s of a %s limit\n",
		h.Start(), h.Newest(), where, h.Snapshots(), h.Interval, cpu.FormatSize(h.Held()), cpu.FormatSize(h.Limit))
}
