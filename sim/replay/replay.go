// Package replay gives a deterministic machine a history it can go back
// in: gdb's reverse execution (sim/gdbstub's bs and bc packets).
//
// simrun is deterministic: from a given machine state the same
// instructions run and the same syscalls are made. So a History takes a
// snapshot of the machine every Interval instructions (the core's whole
// state and a copy-on-write copy of memory, cpu.Memory.Snapshot) and, to
// go back to instruction count T, restores the latest snapshot at or
// before T and runs forward to T.
//
// The kernel does not run again in a replay: its state (files, the
// program's output, pids, timers) stays at the newest point the machine
// reached. Each kernel entry of the live run — a syscall, a fault handed
// to the kernel, a preemption, a debugger's write to registers or
// memory — is logged with its effect on the machine: the core's state
// afterwards, the pages the kernel wrote (their contents afterwards) and
// the mapping changes it made (cpu.Journal). A replay applies the logged
// effect where the live run called the kernel; when it reaches the newest
// point the machine is set to the state it had there and runs live again.
//
// The clock is Machine.Insns + Machine.TakenFaults: what RunFor counts,
// a fault turned into a signal counting as one step. The state "at T"
// includes every kernel entry at T.
//
// Threads: one core runs them in turn, and each switch happens in the
// kernel (a quantum's end, a blocking call), so the machine replays as
// for one thread: the logged effect of the entry that switched is the
// core's state afterwards, the next thread's. What a debugger shows of
// the threads in the past — which one runs, which exist, the registers
// of those switched out — is kept beside (History.Threads, ViewAt).
// Other processes' machines are not snapshotted: past a fork or an
// execve the caller turns the history off (Drop).
package replay

import (
	"errors"
	"fmt"
	"slices"

	"simrun/sim/cpu"
)

// Defaults for History.Interval and History.Limit.
const (
	DefaultInterval = 1 << 20   // instructions between two snapshots
	DefaultLimit    = 256 << 20 // host bytes the snapshots and the log may hold
)

// Kind is the kind of a logged kernel entry.
type Kind uint8

const (
	// Syscall: the kernel ran a syscall the core stopped at.
	Syscall Kind = iota
	// Fault: the kernel took an instruction's fault (a signal handler
	// entered, or not: Event.Taken).
	Fault
	// Boundary: a change between two instructions (the scheduler's
	// preemption, a timer firing, a debugger's write).
	Boundary
)

// Event is one logged kernel entry and its effect.
type Event struct {
	Kind  Kind
	At    uint64 // the clock when the kernel was entered
	Taken bool   // Fault: the kernel took it (TakeFault's result)
	Ops   []cpu.MemOp
	Pages []Page
	ctx   any         // the core's Checkpoint afterwards
	view  *ThreadView // the threads afterwards, when they changed (nil: as before)
}

// Threads is what a History asks the kernel about its threads.
type Threads interface {
	Current() uint64                     // the thread the core runs
	IDs() []uint64                       // the live threads
	State(tid uint64, s *cpu.State) bool // the registers of one switched out
}

// ThreadView is the threads at one point of the history: the one the
// core runs, the live ones, and the registers of those switched out.
type ThreadView struct {
	Current uint64
	IDs     []uint64
	States  map[uint64]*cpu.State
}

// Page is a page's contents after a kernel entry wrote it.
type Page struct {
	VPN  uint64
	Data *[cpu.PageSize]byte
}

// snapshot is the machine at one clock.
type snapshot struct {
	clock                  uint64
	insns, taken, syscalls uint64
	mem                    *cpu.Memory
	ctx                    any
	logPos                 int // index (global) of the first event logged after it
	view                   *ThreadView
}

// History is the past of one machine.
type History struct {
	m  *cpu.Machine
	cp cpu.Checkpointer

	// Interval is the instructions between two snapshots; Limit the host
	// bytes the history may hold (snapshots' own pages and the log) before
	// its oldest snapshot is dropped. Set them before the first Mark.
	Interval, Limit uint64
	// Threads, if set, is asked about the threads at each snapshot and
	// after each kernel entry (ViewAt).
	Threads Threads
	evTid   uint64
	evIDs   []uint64

	snaps    []*snapshot // by clock; snaps[0] is the start of history
	log      []*Event    // the events since snaps[0]: log[i] is event base+i
	base     int
	logBytes uint64
	// sinceMark is what the log grew by since the last snapshot: past
	// Limit/16 a snapshot is due early, so that trim can bound the log
	// of a program that makes many syscalls, and End asks the machine to
	// stop (RequestStop: Run and RunFor return cpu.ErrStopped, and the
	// caller, seeing no one else asked, clears it and calls Mark).
	sinceMark uint64
	stopAsked bool

	head      *snapshot // the newest point, while the machine is behind it
	headSlice uint64    // the scheduler's slice end at the newest point
	next      int       // while replaying: the next event to apply (global index)

	journal cpu.Journal
	evClock uint64
	inEvent bool

	off string // why there is no history ("": there is)
}

// ErrDiverged is returned (wrapped) when a replay does not meet the
// logged kernel entries where the live run met them: a simulator bug.
// The history is dropped and the machine set to the newest point.
var ErrDiverged = errors.New("replay diverged from the recorded run")

// New returns the history of m, empty; its first Mark takes the first
// snapshot. The core must be a cpu.Checkpointer.
func New(m *cpu.Machine) (*History, error) {
	cp, ok := m.Core.(cpu.Checkpointer)
	if !ok {
		return nil, fmt.Errorf("the %s core cannot be checkpointed", m.Arch.Name)
	}
	return &History{m: m, cp: cp, Interval: DefaultInterval, Limit: DefaultLimit}, nil
}

// Clock is the machine's position in its history.
func Clock(m *cpu.Machine) uint64 { return m.Insns + m.TakenFaults }

// Live reports whether the machine is at the newest point (it runs live).
func (h *History) Live() bool { return h.head == nil }

// Off is why there is no history ("" when there is one).
func (h *History) Off() string { return h.off }

// Start is the clock of the oldest point the machine can go back to.
func (h *History) Start() uint64 {
	if len(h.snaps) == 0 {
		return Clock(h.m)
	}
	return h.snaps[0].clock
}

// Newest is the clock of the newest point.
func (h *History) Newest() uint64 {
	if h.head != nil {
		return h.head.clock
	}
	return Clock(h.m)
}

// Snapshots is the number of snapshots held; Held the host bytes the
// history holds (snapshots and log).
func (h *History) Snapshots() int { return len(h.snaps) }

// Held returns the host bytes the history holds besides the running
// machine's memory: the snapshots' own pages and the log.
func (h *History) Held() uint64 {
	used, own := h.m.Mem.Used(), h.m.Mem.Footprint()
	return used - min(own, used) + h.logBytes
}

// Drop forgets the history for reason (a second thread, a fork, an
// execve): going back is refused with reason until Resume. The machine
// must be live.
func (h *History) Drop(reason string) {
	if h.head != nil {
		panic("replay: Drop while replaying")
	}
	for _, s := range h.snaps {
		s.mem.Release()
	}
	h.snaps, h.log, h.base, h.logBytes = nil, nil, 0, 0
	h.off = reason
}

// Resume starts a new history at the next Mark after Drop.
func (h *History) Resume() { h.off = "" }

// UntilMark is how many instructions the live machine may run before
// the next snapshot is due.
func (h *History) UntilMark() uint64 {
	if h.off != "" {
		return h.Interval
	}
	if len(h.snaps) == 0 || h.sinceMark > h.Limit/16 {
		return 1 // a snapshot is due
	}
	d := Clock(h.m) - h.snaps[len(h.snaps)-1].clock
	if d >= h.Interval {
		return 1
	}
	return h.Interval - d
}

// Mark takes a snapshot of the live machine if one is due (none yet, or
// Interval instructions since the last), then drops the oldest
// snapshots while the history holds more than Limit bytes.
func (h *History) Mark() {
	if h.off != "" || h.head != nil {
		return
	}
	c := Clock(h.m)
	if n := len(h.snaps); n > 0 && c-h.snaps[n-1].clock < h.Interval && h.sinceMark <= h.Limit/16 {
		return
	}
	h.snaps = append(h.snaps, h.take())
	h.sinceMark, h.stopAsked = 0, false
	h.trim()
}

func (h *History) take() *snapshot {
	m := h.m
	return &snapshot{clock: Clock(m), insns: m.Insns, taken: m.TakenFaults, syscalls: m.Syscalls,
		mem: m.Mem.Snapshot(), ctx: h.cp.Checkpoint(nil), logPos: h.base + len(h.log), view: h.view()}
}

// view asks Threads about the threads now (nil without Threads).
func (h *History) view() *ThreadView {
	if h.Threads == nil {
		return nil
	}
	v := &ThreadView{Current: h.Threads.Current(), IDs: slices.Clone(h.Threads.IDs()), States: map[uint64]*cpu.State{}}
	for _, id := range v.IDs {
		if id != v.Current {
			st := new(cpu.State)
			if h.Threads.State(id, st) {
				v.States[id] = st
			}
		}
	}
	return v
}

// SetLimit sets Limit and drops the oldest snapshots past it now (when
// the machine is live; else when it is again).
func (h *History) SetLimit(n uint64) {
	h.Limit = n
	if h.head == nil {
		h.trim()
	}
}

// trim drops the oldest snapshots (and the events before the new oldest)
// while the history holds more than Limit; the newest stays.
func (h *History) trim() {
	for len(h.snaps) > 1 && h.Held() > h.Limit {
		h.snaps[0].mem.Release()
		h.snaps = h.snaps[1:]
		drop := h.snaps[0].logPos - h.base
		for _, e := range h.log[:drop] {
			h.logBytes -= e.bytes()
		}
		h.log = slices.Clone(h.log[drop:])
		h.base += drop
	}
}

func (e *Event) bytes() uint64 {
	n := uint64(len(e.Pages))*(cpu.PageSize+16) + uint64(len(e.Ops))*32 + 512
	if e.view != nil {
		n += uint64(len(e.view.IDs)) * 700
	}
	return n
}

// Begin is called before the live machine enters the kernel (or a
// debugger changes it); End after, with what it was.
func (h *History) Begin() {
	if h.off != "" || h.head != nil {
		return
	}
	h.inEvent = true
	h.evClock = Clock(h.m)
	if h.Threads != nil {
		h.evTid, h.evIDs = h.Threads.Current(), slices.Clone(h.Threads.IDs())
	}
	h.journal = cpu.Journal{}
	h.m.Mem.StartJournal(&h.journal)
}

// End logs the kernel entry Begin started: kind and, for a Fault,
// whether the kernel took it.
func (h *History) End(kind Kind, taken bool) {
	if !h.inEvent {
		return
	}
	h.inEvent = false
	m := h.m
	m.Mem.StopJournal()
	if m.Exited() || len(h.snaps) == 0 {
		return // the run ended (never replayed past), or nothing to replay from
	}
	e := &Event{Kind: kind, At: h.evClock, Taken: taken, Ops: h.journal.Ops, ctx: h.cp.Checkpoint(nil)}
	if h.Threads != nil && (kind == Boundary || h.Threads.Current() != h.evTid || !slices.Equal(h.Threads.IDs(), h.evIDs)) {
		e.view = h.view()
	}
	for vpn := range h.journal.Pages {
		if p := m.Mem.PageAt(vpn << cpu.PageShift); p != nil {
			d := *p.Bytes()
			e.Pages = append(e.Pages, Page{VPN: vpn, Data: &d})
		}
	}
	slices.SortFunc(e.Pages, func(a, b Page) int {
		if a.VPN < b.VPN {
			return -1
		}
		return 1
	})
	h.log = append(h.log, e)
	h.logBytes += e.bytes()
	h.sinceMark += e.bytes()
	if h.sinceMark > h.Limit/16 && !h.stopAsked {
		h.stopAsked = true
		m.RequestStop()
	}
}

// event returns the event with global index i, nil if none.
func (h *History) event(i int) *Event {
	if i-h.base < 0 || i-h.base >= len(h.log) {
		return nil
	}
	return h.log[i-h.base]
}

// apply makes e's effect on the machine.
func (h *History) apply(e *Event) error {
	for _, op := range e.Ops {
		if err := h.m.Mem.Apply(op); err != nil {
			return err
		}
	}
	for _, p := range e.Pages {
		if err := h.m.Mem.Poke(p.VPN<<cpu.PageShift, p.Data[:]); err != nil {
			return err
		}
	}
	h.cp.Rewind(e.ctx)
	return nil
}

// restore sets the machine to snapshot s.
func (h *History) restore(s *snapshot) {
	m := h.m
	m.Mem.Restore(s.mem)
	h.cp.Rewind(s.ctx)
	m.Insns, m.TakenFaults, m.Syscalls = s.insns, s.taken, s.syscalls
	h.next = s.logPos
}

// leave makes the newest point a snapshot (head) before the machine
// first goes back from it.
func (h *History) leave() {
	if h.head != nil {
		return
	}
	h.head = h.take()
	h.headSlice = h.m.SliceEnd()
	h.m.SetSliceEnd(0)
	if n := len(h.snaps); n == 0 || h.snaps[n-1].clock < h.head.clock {
		h.snaps = append(h.snaps, h.head)
	}
}

// goLive sets the machine to the newest point, where it runs live.
func (h *History) goLive() {
	h.restore(h.head)
	h.m.SetSliceEnd(h.headSlice)
	h.head = nil
	h.trim()
}

// Seek moves the machine to clock target (Start <= target <= Newest):
// back by restoring a snapshot and replaying, forward by replaying on.
// obs, if not nil, is called at each instruction boundary the replay
// passes from where the machine is (after a restore, from the
// snapshot's) up to, not including, target; an error from obs stops the
// replay there and Seek returns it. At Newest the machine runs live
// again.
func (h *History) Seek(target uint64, obs func(m *cpu.Machine) error) error {
	if h.off != "" {
		return errors.New(h.off)
	}
	if target < h.Start() || target > h.Newest() {
		return fmt.Errorf("clock %d is outside the history [%d, %d]", target, h.Start(), h.Newest())
	}
	if h.head == nil && target == Clock(h.m) {
		return nil
	}
	if h.head != nil && target == h.head.clock && obs == nil {
		h.goLive() // what a replay to it would reach
		return nil
	}
	h.leave()
	if target < Clock(h.m) {
		h.restore(h.latest(target))
	}
	return h.replay(target, obs, true)
}

// latest is the latest snapshot at or before clock c.
func (h *History) latest(c uint64) *snapshot {
	i, _ := slices.BinarySearchFunc(h.snaps, c+1, func(s *snapshot, c uint64) int {
		if s.clock < c {
			return -1
		}
		return 1
	})
	return h.snaps[i-1]
}

// ScanBack finds the latest clock t in [Start, from) at which hit (shown
// the machine at t, before its next instruction) is true, replaying the
// segments between snapshots from the newest back; found is false when
// there is none. The machine is left somewhere in the history: Seek
// next.
func (h *History) ScanBack(from uint64, hit func(m *cpu.Machine) bool) (t uint64, found bool, err error) {
	if h.off != "" {
		return 0, false, errors.New(h.off)
	}
	h.leave()
	for i := len(h.snaps) - 1; i >= 0; i-- {
		s := h.snaps[i]
		if s.clock >= from {
			continue
		}
		end := from
		if i+1 < len(h.snaps) {
			end = min(end, h.snaps[i+1].clock)
		}
		h.restore(s)
		err := h.replay(end, func(m *cpu.Machine) error {
			if c := Clock(m); c < end && hit(m) {
				t, found = c, true
			}
			return nil
		}, false)
		if err != nil {
			return 0, false, err
		}
		if found {
			return t, true, nil
		}
	}
	return h.Start(), false, nil
}

// replay runs the machine from where it is to target, the kernel's
// entries applied from the log; with live, reaching the newest point
// makes the machine live.
func (h *History) replay(target uint64, obs func(m *cpu.Machine) error, live bool) (err error) {
	m := h.m
	kernel, observer := m.Kernel, m.Observer
	rk := &replayKernel{h: h}
	m.Kernel, m.Observer = rk, obs
	defer func() {
		m.Kernel, m.Observer = kernel, observer
		if rk.err != nil || errors.Is(err, ErrDiverged) {
			if rk.err != nil {
				err = rk.err
			}
			m.ClearStop()
			h.goLive()
			h.Drop(err.Error())
		}
	}()
	for {
		if err := h.boundary(); err != nil {
			return err
		}
		c := Clock(m)
		if c >= target {
			break
		}
		n := target - c
		if at, ok := h.nextBoundary(); ok && at > c {
			n = min(n, at-c) // the run stops there for the driver to apply it
		}
		exit, err := m.RunFor(n)
		if rk.err != nil {
			return rk.err
		}
		if err != nil {
			return err
		}
		if exit != nil || Clock(m) == c {
			return fmt.Errorf("%w: the run ended or stopped at %d", ErrDiverged, c)
		}
	}
	if live && target == h.head.clock {
		h.goLive()
	}
	return nil
}

// nextBoundary is the clock of the first Boundary event from h.next on.
func (h *History) nextBoundary() (uint64, bool) {
	for i := h.next - h.base; i >= 0 && i < len(h.log); i++ {
		if e := h.log[i]; e.Kind == Boundary {
			return e.At, true
		}
	}
	return 0, false
}

// boundary applies the Boundary events due at the machine's clock.
func (h *History) boundary() error {
	for {
		e := h.event(h.next)
		if e == nil || e.Kind != Boundary || e.At != Clock(h.m) {
			return nil
		}
		if err := h.apply(e); err != nil {
			return fmt.Errorf("%w: %v", ErrDiverged, err)
		}
		h.next++
	}
}

// replayKernel is the machine's kernel during a replay: it applies the
// logged effects of the kernel's entries instead of entering it.
type replayKernel struct {
	h   *History
	err error
}

func (k *replayKernel) take(m *cpu.Machine, kind Kind) *Event {
	h := k.h
	e := h.event(h.next)
	if e == nil || e.Kind != kind || e.At != Clock(m) {
		k.err = fmt.Errorf("%w: at %d (pc 0x%x) the live run did not enter the kernel this way", ErrDiverged, Clock(m), m.Core.PC())
		m.RequestStop()
		return nil
	}
	if err := h.apply(e); err != nil {
		k.err = fmt.Errorf("%w: %v", ErrDiverged, err)
		m.RequestStop()
		return nil
	}
	h.next++
	return e
}

func (k *replayKernel) Syscall(m *cpu.Machine) { k.take(m, Syscall) }

func (k *replayKernel) TakeFault(m *cpu.Machine, f *cpu.Fault) bool {
	e := k.take(m, Fault)
	if e == nil {
		if !f.Fetching() {
			m.TakenFaults-- // counted by the machine: undone, the run stops
		}
		return true
	}
	return e.Taken
}

// ViewAt is the threads at clock c of the history (nil without
// Threads): after every kernel entry at c.
func (h *History) ViewAt(c uint64) *ThreadView {
	if len(h.snaps) == 0 || c < h.Start() {
		return nil
	}
	s := h.latest(c)
	v := s.view
	for i := s.logPos; ; i++ {
		e := h.event(i)
		if e == nil || e.At > c {
			return v
		}
		if e.view != nil {
			v = e.view
		}
	}
}

// runs is when each thread ran: from clock at on, cur ran, until the
// next one.
type run struct{ at, cur uint64 }

func (h *History) runs() []run {
	if len(h.snaps) == 0 || h.snaps[0].view == nil {
		return nil
	}
	out := []run{{h.snaps[0].clock, h.snaps[0].view.Current}}
	for _, e := range h.log {
		if e.view != nil && e.At >= out[0].at {
			out = append(out, run{e.At, e.view.Current})
		}
	}
	return out
}

// LastRun is the clock of the last instruction thread tid ran before
// clock before (it ran the instruction at the returned clock).
func (h *History) LastRun(tid, before uint64) (uint64, bool) {
	rs := h.runs()
	for i := len(rs) - 1; i >= 0; i-- {
		hi := before
		if i+1 < len(rs) {
			hi = min(hi, rs[i+1].at)
		}
		if rs[i].cur == tid && rs[i].at < hi {
			return hi - 1, true
		}
	}
	return 0, false
}

// NextRun is the clock of the next instruction thread tid runs at or
// after clock from, before the newest point.
func (h *History) NextRun(tid, from uint64) (uint64, bool) {
	rs := h.runs()
	end := h.Newest()
	for i, r := range rs {
		hi := end
		if i+1 < len(rs) {
			hi = min(hi, rs[i+1].at)
		}
		lo := max(r.at, from)
		if r.cur == tid && lo < hi {
			return lo, true
		}
	}
	return 0, false
}
