package linux

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"simrun/sim/cpu"
)

// Processes: fork, wait, exit and the scheduler over all of them.
//
// A System is every process of one run. Each process has its own
// machine (its memory, core and decoded-code cache: after execve it may
// even be of the other architecture); one machine runs at a time. Pids
// and tids come from one counter: the first process is pid 1000 (its
// main thread's tid), and every new thread or process takes the next
// number, never reused — so a single process's threads are numbered as
// before, and a run's ids depend only on the order things were created.
//
// The scheduler is the threads' scheduler (thread.go) over the threads
// of every live process: with one process it is exactly that; with
// more, the next thread is the first runnable one after the running one
// in tid order over all processes (or a random one from --seed), the
// quantum bounds every slice, and a thread of another process runs by
// switching machines (the running machine yields, System.Run runs the
// other). The virtual clock is one for all: a machine that starts to run
// takes the clock where the last one left it (Process.clockOff), and an
// idle system jumps it to the earliest deadline of any process. When
// every thread of every process waits and nothing can wake one, the run
// ends with the deadlock report, from the first process.
//
// The run is the first process's: when it exits, simrun's exit status is
// its status, and every process still alive is ended. A process whose
// parent is gone is reaped when it exits (Linux reparents it to init,
// which reaps it).

// DefaultMaxProcs bounds the live processes of a run (--max-procs): a
// fork past it gives EAGAIN, as RLIMIT_NPROC would.
const DefaultMaxProcs = 256

// System is the processes of one run and what they share: the id
// counter, the scheduler and the clock.
type System struct {
	procs  []*Process // live and zombie processes, in pid order
	first  *Process
	cur    *Process // the process whose machine runs (or ran last)
	nextID uint64
	nlive  int // live processes (not zombies)
	// switchTo is the process and thread the scheduler picked in
	// another process: the running machine yielded for it.
	switchTo   *Process
	switchThr  *thread
	deadlocked bool
	everMulti  bool                      // more than one process existed (strace's [pid N])
	done       []ProcStat                // the processes that ended (--stats)
	fifos      map[fifoKey]*pipe         // the pipes of the FIFOs some process has open (fifo.go)
	bound      map[string]*sockEnd       // the run's bound AF_UNIX sockets by address (socket.go)
	hosts      int                       // processes running a host program (hostproc.go)
	locks      map[lockKey][]*recordLock // fcntl's record locks (reclock.go)
	pageCache  map[lockKey]filePages     // the bytes of shared file mappings' pages (pagecache.go)
	ttys       []*terminal               // the host terminals the guest used (tty.go)

	// cpus is Config.CPUs; with more than one, coreNow is each core's
	// clock (cores.go).
	cpus    int
	coreNow []uint64
	// With several cores: the thread each core runs (nil: none, its
	// quantum over or it stopped), the instructions it has run of its
	// quantum, and Insns of its process when it last started a step
	// (cores.go).
	coreThr   []*thread
	coreLast  []*thread // the thread each core ran last
	coreUsed  []uint64
	stepStart uint64
	ready     []cand      // nextRunnable's list, reused
	offer     []coreOffer // nextOnCores's, reused
	// calm says the last decision found the system calm; calmSince is
	// the process that has run since a calm decision (nil: none), whose
	// kernel entries were calmEntries then (cores.go).
	calm        bool
	calmSince   *Process
	calmEntries uint64
	checkCalm   bool // SIMRUN_CHECK_SCHED=1 (calmDecision)

	personality uint32 // personality(2)'s persona (sysproc.go)
	pipeIno     uint64 // the last anonymous pipe's inode number
	// onEvent sees every thread and process event (AddHook).
	onEvent func(*Process, ThreadEvent)
}

// newPipeIno numbers a new anonymous pipe, as pipefs gives each its own
// inode (diff, for one, takes two descriptors with one inode for the same
// file). The first is 8192.
func (s *System) newPipeIno() uint64 {
	if s.pipeIno == 0 {
		s.pipeIno = 8191
	}
	s.pipeIno++
	return s.pipeIno
}

// newSystem makes p, pid 1000, the first process of a new system.
func newSystem(p *Process) *System {
	s := &System{procs: []*Process{p}, first: p, cur: p, nextID: guestPID + 1, nlive: 1}
	p.sys, p.pid, p.pgid, p.sid = s, guestPID, guestPID, guestPID
	s.cpus = max(p.Cfg.CPUs, 1)
	if s.cpus > 1 {
		s.coreNow = make([]uint64, s.cpus)
		s.coreThr, s.coreUsed, s.offer = make([]*thread, s.cpus), make([]uint64, s.cpus), make([]coreOffer, s.cpus)
		s.coreLast = make([]*thread, s.cpus)
		s.checkCalm = os.Getenv("SIMRUN_CHECK_SCHED") == "1"
	}
	return s
}

// maxProcs is Config.MaxProcs, or its default.
func (s *System) maxProcs() int {
	if n := s.first.Cfg.MaxProcs; n > 0 {
		return n
	}
	return DefaultMaxProcs
}

// newID is the next pid or tid.
func (s *System) newID() uint64 {
	id := s.nextID
	s.nextID++
	return id
}

// System returns the run's system.
func (p *Process) System() *System { return p.sys }

// Processes returns the live and zombie processes in pid order.
func (s *System) Processes() []*Process { return s.procs }

// ProcStat is one process's figures for --stats.
type ProcStat struct {
	Pid     uint64
	Program string // the host path of what it ran last
	Insns   uint64 // instructions retired by its last program
	Status  string // StatusString
}

// Stats lists every process the run had, in pid order; nil for a run of
// one process.
func (s *System) Stats() []ProcStat {
	if !s.everMulti {
		return nil
	}
	out := slices.Clone(s.done)
	for _, q := range s.procs {
		if !q.ended {
			out = append(out, q.stat())
		}
	}
	slices.SortFunc(out, func(a, b ProcStat) int { return int(a.Pid) - int(b.Pid) })
	return out
}

func (p *Process) stat() ProcStat {
	return ProcStat{Pid: p.pid, Program: p.exe, Insns: p.Insns, Status: p.StatusString()}
}

// Program is the program the process runs (its host path).
func (p *Process) Program() string { return p.exe }

// Pid is the process's id.
func (p *Process) Pid() uint64 { return p.pid }

// StatusString says how the process ended ("exit 0", "signal 9",
// "signal 6, core dumped"), or "running" (ended with the run).
func (p *Process) StatusString() string {
	switch {
	case !p.ended:
		return "running"
	case p.wcode == cldExited:
		return fmt.Sprintf("exit %d", p.wvalue)
	case p.wcode == cldDumped:
		return fmt.Sprintf("signal %d, core dumped", p.wvalue)
	}
	return fmt.Sprintf("signal %d", p.wvalue)
}

// ExitStatus is how the process ended, as wait encodes it (valid once
// it ended).
func (p *Process) ExitStatus() (status uint32, ended bool) { return p.wstatus, p.ended }

// Run runs the program of m (made by Load or New) and every process it
// starts, to the first process's end: its Exit is the run's. With one
// process it is m.Run.
func Run(m *cpu.Machine) (*cpu.Exit, error) { return m.Run() }

// RunOthers runs the system on once m, a process's machine, yielded
// (cpu.Yielder).
func (p *Process) RunOthers(m *cpu.Machine) (*cpu.Exit, error) { return p.sys.run(true) }

// RunUntilBack runs the other processes while p's machine is away: after
// it yielded (yielded), or again after a stop while another ran. It
// returns (nil, nil) once the scheduler hands the core back to p (or p
// ended meanwhile, killed), the end of the run when the first process
// ends, or ErrStopped after the first process's RequestStop. A debugger
// stub runs p's machine itself and the rest of the system this way.
func (p *Process) RunUntilBack(yielded bool) (*cpu.Exit, error) {
	return p.sys.runUntil(yielded, p)
}

// EndRun ends the run after p, the first process, ended while something
// other than System's own loop ran it (a debugger stub): its end is
// recorded as the loop records it, and every other process is killed,
// as when the first process ends.
func (p *Process) EndRun(exit *cpu.Exit) {
	s := p.sys
	if p != s.first || exit == nil {
		return
	}
	s.ended(p, exit)
	s.endOthers()
}

// Away reports whether the core is with another process than p (p's
// machine yielded and the scheduler has not handed it back).
func (p *Process) Away() bool { return p.sys.cur != p }

// run runs the system until the first process ends; yielded says the
// running machine has just yielded.
func (s *System) run(yielded bool) (*cpu.Exit, error) { return s.runUntil(yielded, nil) }

// runUntil is run that also returns (nil, nil) when the core comes back
// to process back (nil: never).
func (s *System) runUntil(yielded bool, back *Process) (_ *cpu.Exit, err error) {
	defer func() {
		// A simulator bug between the machines' runs (the scheduler,
		// a process's end) ends the run with an error, not a crash;
		// inside a run, Machine.stepBudget catches it.
		if r := recover(); r != nil {
			err = fmt.Errorf("simulator bug, please report: %v\n%s", r, debug.Stack())
			func() {
				defer func() { _ = recover() }() // the state may be what broke: best effort
				s.killHosts()
			}()
		}
	}()
	for {
		if back != nil && !yielded && (s.cur == back || back.ended || back.Exited()) {
			return nil, nil
		}
		p := s.cur
		var exit *cpu.Exit
		var err error
		if yielded {
			err, yielded = cpu.ErrYield, false
		} else {
			exit, err = p.Machine.RunMachine()
		}
		if errors.Is(err, cpu.ErrYield) {
			if s.first.StopRequested() {
				s.killHosts()
				return nil, cpu.ErrStopped
			}
			if f := s.first; f.ended && f.hostRun != nil {
				s.endOthers()
				return f.hostRun.exit, nil
			}
			if s.deadlocked {
				s.deadlocked = false
				s.enterDeadlock()
				continue
			}
			s.enter(s.switchTo, s.switchThr)
			continue
		}
		if err != nil {
			return nil, err
		}
		s.ended(p, exit)
		if p == s.first {
			s.endOthers()
			return exit, nil
		}
		q, t := s.schedule()
		if t == nil {
			s.enterDeadlock()
			continue
		}
		s.enter(q, t)
	}
}

// endOthers kills every process but the first, which ended: the run is
// over.
func (s *System) endOthers() {
	s.killHosts()
	for _, q := range slices.Clone(s.procs) {
		if !q.ended {
			q.EndFault(&cpu.Fault{PC: q.Core.PC(), Kind: cpu.FaultSignal, Sig: cpu.SIGKILL, Retired: true,
				Err: fmt.Errorf("the first process ended")})
			s.ended(q, &cpu.Exit{Status: 128 + cpu.SIGKILL})
		}
	}
}

// enterDeadlock makes the first process's machine the running one, with
// the deadlock fault.
func (s *System) enterDeadlock() {
	f := s.first
	f.clockOff = s.cur.monoNow() - f.VirtualNanos()
	s.switched(f)
	f.deadlock()
}

// enter makes q's machine the running one, with thread t.
func (s *System) enter(q *Process, t *thread) {
	now := s.cur.monoNow()
	q.clockOff = now - q.VirtualNanos()
	resume := false
	if s.cpus > 1 {
		resume = s.enterCore(q, t)
	}
	s.switched(q)
	q.switchTo(t, resume)
	if !q.Exited() {
		q.setSlice()
	}
}

// switched makes q the running process, telling the hooks when it was
// another.
func (s *System) switched(q *Process) {
	prev := s.cur
	s.cur = q
	if prev == q || s.onEvent == nil || q.cur == nil {
		return
	}
	e := ThreadEvent{Kind: ProcessSwitched, Tid: q.cur.tid}
	if prev.cur != nil {
		e.Prev = prev.cur.tid
	}
	if !prev.ended {
		e.PC = prev.Core.PC()
	}
	s.processEvent(q, e)
}

// multi reports whether another process may run.
func (s *System) multi() bool { return s.nlive > 1 }

// reschedule is Process.reschedule with other processes alive: the next
// thread of any process runs; one of another process makes p's machine
// yield to it.
func (s *System) reschedule(p *Process) {
	var q *Process
	var t *thread
	if s.calmSince == p && p.entries == s.calmEntries && p.Machine.Observer == nil && p.locked == nil {
		q, t = s.calmDecision() // (cores.go)
	} else {
		s.calm = s.cpus > 1 && s.hosts == 0 && s.first.schedRng == 0
		q, t = s.schedule()
	}
	s.calmSince = nil
	switch {
	case t == nil:
		s.deadlocked = true
		p.Yield()
	case q == p:
		resume := false
		calm := s.calm && len(t.sig.pending) == 0
		if s.cpus > 1 {
			resume = s.enterCore(p, t)
		}
		p.switchTo(t, resume)
		if !p.Exited() {
			p.setSlice()
			if calm {
				s.calmSince, s.calmEntries = p, p.entries
			}
		}
	default:
		s.switchTo, s.switchThr = q, t
		p.Yield()
	}
}

// schedule picks the next thread over all live processes, as
// Process.reschedule does within one: expired timers fire, due waiters
// wake, and with nothing runnable the clock jumps to the earliest wake.
// nil: deadlock.
func (s *System) schedule() (*Process, *thread) {
	c := s.cur
	now := c.monoNow()
	if s.cpus > 1 {
		s.leaveCore(now) // (the threads' wakes are noted below, at the same time)
	}
	for jumps := 0; ; jumps++ {
		s.pumpHost(0)
		if s.first.ended { // its program ran on the host and ended: the run is over
			return nil, nil
		}
		if jumps > 0 {
			now = c.monoNow()
		}
		for _, q := range s.procs {
			if q.ended {
				continue
			}
			if q != c { // (c's clock is now)
				q.clockOff = now - q.VirtualNanos()
			}
			if q.hasTimers() || len(q.timer.fds) != 0 {
				s.calm = false
			}
			q.fireTimers()
			q.wakeDue(now)
		}
		if q, t := s.nextRunnable(now); t != nil {
			return q, t
		}
		var next uint64
		ok := false
		for _, q := range s.procs {
			if q.ended {
				continue
			}
			if n, k := q.nextWake(); k && (!ok || n < next) {
				next, ok = n, true
			}
		}
		if !ok || jumps > maxIdleJumps {
			if s.hosts > 0 { // only host programs can move things on
				s.pumpHost(hostWait)
				jumps = 0
				continue
			}
			return nil, nil
		}
		if s.hosts > 0 {
			// A host program runs on the host's clock: the guest's next
			// wake is no nearer than the real time that passes, so what
			// the program does first (its end, its output) is seen
			// first, as under qemu-user, where all runs on that clock.
			jumps = 0
			start := time.Now()
			if s.pumpHost(min(time.Duration(next-now), hostWait)) {
				continue
			}
			if waited := uint64(time.Since(start)); next-now > waited {
				c.clockOff += waited
				continue
			}
		}
		c.clockOff += next - now
	}
}

// nextRunnable is the first runnable thread after the running one in tid
// order over all live processes, wrapping around; the random scheduler
// (the first process's generator) picks any runnable one. With several
// CPUs nextOnCores decides.
func (s *System) nextRunnable(now uint64) (*Process, *thread) {
	if s.cpus > 1 {
		return s.nextOnCores(now, &s.first.schedRng)
	}
	ready := s.ready[:0] // (reused)
	defer func() { s.ready = ready[:0] }()
	for _, q := range s.procs {
		if q.ended {
			continue
		}
		for _, t := range q.threads {
			if t.state == threadRunnable {
				ready = append(ready, cand{q, t})
			}
		}
	}
	if len(ready) == 0 {
		return nil, nil
	}
	if tidOrder := func(a, b cand) int { return cmp.Compare(a.t.tid, b.t.tid) }; !slices.IsSortedFunc(ready, tidOrder) {
		slices.SortFunc(ready, tidOrder) // (a process's threads come in tid order; processes may not)
	}
	if s.first.schedRng != 0 {
		c := ready[xorshiftPick(&s.first.schedRng, len(ready))]
		return c.p, c.t
	}
	cur := s.cur.cur.tid
	for _, c := range ready {
		if c.t.tid > cur {
			return c.p, c.t
		}
	}
	return ready[0].p, ready[0].t
}

// cand is a runnable thread of a live process.
type cand struct {
	p *Process
	t *thread
}

// wakeIO makes the threads of every process that wait for another
// thread's (or process's) syscall runnable.
func (s *System) wakeIO() {
	for _, q := range s.procs {
		if q.ioWaiters != 0 {
			q.wakeIO()
		}
	}
}

// Wait statuses (the wait(2) encoding) and options.
const (
	wNohang     = 1
	wUntraced   = 2
	wExited     = 4
	wContinued  = 8
	wNowait     = 0x01000000
	wNothread   = 0x20000000
	wAll        = 0x40000000
	wClone      = 0x80000000
	cldExited   = 1
	cldKilled   = 2
	cldDumped   = 3
	saNocldwait = 2
)

// ended turns p, whose machine has stopped, into a zombie (or reaps it
// at once when nobody will wait for it): its descriptors close, its
// memory goes, its parent gets SIGCHLD, and waiters everywhere run
// their calls again.
func (s *System) ended(p *Process, exit *cpu.Exit) {
	if p.ended {
		return
	}
	p.ended = true
	s.nlive--
	if f := exit.Fault; f != nil && f.Kind == cpu.FaultInternal && p != s.first {
		// A simulator bug ended another process than the run's own
		// (whose end simrun run reports): it says so here, and the
		// process dies as of the fault's signal (SIGABRT), which its
		// parent's wait sees.
		p.Note("%s (pid %d): %v", p.exe, p.pid, f)
	}
	p.wstatus = uint32(exit.Status&0xff) << 8
	p.wcode = cldExited
	p.wvalue = uint32(exit.Status & 0xff)
	if f := exit.Fault; f != nil {
		sig := f.Signal()
		p.wstatus, p.wcode, p.wvalue = uint32(sig), cldKilled, uint32(sig)
		if CoreDumps(sig) {
			p.wstatus |= 0x80
			p.wcode = cldDumped
		}
	}
	if p.cur != nil {
		p.cur.insns += p.Insns - p.runStart
		p.runStart = p.Insns
		s.processEvent(p, ThreadEvent{Kind: ProcessExited, Tid: p.cur.tid})
	}
	p.maxRSS = p.memKiB()
	p.closeAll()
	p.leaderEnded()
	if p != s.first { // the first's stay for its core dump and --stats
		p.threads = nil
	}
	s.done = append(s.done, p.stat())
	p.leaveVM(p.Machine, p == s.first)
	p.wakeVforkParent()
	for _, c := range slices.Clone(s.procs) { // reap shortens s.procs
		if c.parent == p {
			c.parent = nil
			if c.ended {
				s.reap(c)
			}
		}
	}
	par := p.parent
	switch {
	case par == nil || par.ended:
		s.reap(p)
	case par.sigact[sigCHLD].handler == sigIgn || par.sigact[sigCHLD].flags&saNocldwait != 0:
		s.reap(p) // nobody waits: the child is reaped at once, as Linux does
	default:
		if p.exitSignal != 0 {
			par.sendSignal(sigInfo{signo: p.exitSignal, code: int32(p.wcode), kind: siKindChild, pid: uint32(p.pid), uid: guestUID,
				value: uint64(p.wvalue), cause: "a child's exit sent the program"})
		}
	}
	s.wakeIO()
}

// reap forgets an ended process.
func (s *System) reap(p *Process) {
	s.procs = slices.DeleteFunc(s.procs, func(q *Process) bool { return q == p })
}

// leaveVM lets go of m's address space, p's until it exits or execs:
// released unless keep is set or another process still runs on it (a
// vfork child and its parent). A vfork child hands its parent what it
// changed of the address space's layout (brk, mappings), as their
// shared mm would show it.
func (p *Process) leaveVM(m *cpu.Machine, keep bool) {
	if n := p.vmUsers; n != nil {
		p.vmUsers = nil
		if *n--; *n > 0 {
			if par := p.parent; par != nil && par.Mem == m.Mem && par.vmUsers == n {
				par.brk, par.mmapNext = p.brk, p.mmapNext
				par.fileMaps, par.codeMaps = p.fileMaps, p.codeMaps
			}
			if *n == 1 && p.parent != nil && p.parent.vmUsers == n {
				p.parent.vmUsers = nil // the parent's own again
			}
			return
		}
	}
	if !keep {
		m.Mem.Release()
	}
}

// wakeVforkParent lets a vfork parent go on (the child exec'd or ended).
func (p *Process) wakeVforkParent() {
	if t := p.vforkParent; t != nil {
		p.vforkParent = nil
		if t.state == threadFutex && t.vforkWait && p.parent != nil {
			t.vforkWait = false
			p.parent.wakeThread(t, p.pid)
		}
	}
}

// fork makes a new process, a copy of p whose only thread is the
// calling one with clone returning 0 (see sysClone for the flags).
func (p *Process) fork(c cloneArgs) uint64 {
	s := p.sys
	if s.nlive >= s.maxProcs() {
		return errno(EAGAIN)
	}
	tc, ok := p.Core.(cpu.ThreadCore)
	if !ok {
		return errno(ENOSYS)
	}
	// vfork (CLONE_VM|CLONE_VFORK): the child's machine runs on the
	// parent's memory itself (its core decodes the code pages anew).
	mem := p.Mem
	if c.flags&cloneVM == 0 {
		var err error
		if mem, err = p.Mem.Fork(); err != nil {
			return errno(ENOMEM) // the copy's page tables would pass --max-memory
		}
	}
	pid := s.newID()
	m := cpu.NewMachineMem(p.Arch, mem)
	if err := m.ShareTiming(p.Machine); err != nil {
		if mem != p.Mem {
			mem.Release()
		}
		return errno(ENOSYS)
	}
	m.ShareStop(p.Machine) // an interrupt stops whichever process runs
	q := new(Process)
	*q = *p
	q.Machine, m.Kernel = m, q
	m.Image, m.MaxInsns = p.Image, p.MaxInsns
	q.pid, q.ppid, q.parent = pid, p.pid, p
	q.selfAlias = 0
	q.exitSignal = int(c.flags & cSignal)
	q.ended, q.vforkParent, q.vmUsers = false, nil, nil
	if c.flags&cloneVM != 0 {
		if p.vmUsers == nil {
			p.vmUsers = new(int)
			*p.vmUsers = 1
		}
		*p.vmUsers++
		q.vmUsers = p.vmUsers
	}
	q.OnThread = nil
	q.fatal, q.delivered, q.switches, q.runStart, q.waitSeq = nil, 0, 0, 0, 0
	q.spare, q.resched, q.ioWaiters, q.blockWhat, q.noResult = nil, false, 0, "", false
	// The child's descriptors name the parent's open files, timerfds
	// among them: the same timers, whose expiries either process reads
	// (and so takes from both), and which wake the child's waits too.
	q.timer = timerState{fds: slices.Clone(p.liveTimerFDs())}
	r := *p.rng
	q.rng = &r
	q.fds = make([]*fdEntry, len(p.fds))
	for i, e := range p.fds {
		if e != nil {
			ne := *e
			if ne.f != nil {
				ne.f.refs++
			}
			q.fds[i] = &ne
		}
	}
	q.shared = slices.Clone(p.shared)
	for _, sm := range q.shared {
		sm.file.refs++
	}
	q.fileMaps = slices.Clone(p.fileMaps)
	q.codeMaps = slices.Clone(p.codeMaps)
	// The child's thread: the caller's registers, clone returning 0.
	parent := tc.SaveThread(nil)
	p.Core.SetSyscallResult(0)
	if c.stack != 0 {
		p.Core.SetStack(c.stack)
	}
	if c.flags&cloneSettls != 0 {
		tc.SetTLS(c.tls)
	}
	ctx := tc.SaveThread(nil)
	tc.LoadThread(parent)
	m.Core.(cpu.ThreadCore).LoadThread(ctx)
	st := *p.sig
	st.pending, st.hasSaved = nil, false
	t := &thread{tid: pid, sig: &st, nice: p.cur.nice}
	s.placeNew(p, t)
	if c.flags&cloneChildCleartid != 0 {
		t.clearTid = c.ctid
	}
	q.threads, q.allThreads, q.cur, q.sig = []*thread{t}, []*thread{t}, t, t.sig
	if c.flags&cloneParentSettid != 0 {
		p.Mem.Store(c.ptid, 4, pid, p.order())
	}
	if c.flags&cloneChildSettid != 0 {
		q.Mem.Store(c.ctid, 4, pid, p.order())
	}
	q.clockOff = p.monoNow()
	s.procs = append(s.procs, q)
	s.nlive++
	s.everMulti = true
	ev := ThreadEvent{Kind: ProcessForked, Tid: pid, Prev: p.cur.tid, SP: p.childStack(c.stack)}
	if c.flags&cloneVfork != 0 {
		// The parent waits until the child execs or ends (vfork's
		// promise: meanwhile the child runs in the parent's memory).
		q.vforkParent = p.cur
		s.processEvent(q, ev)
		p.block(0, 0, 0, false)
		p.cur.vforkWait = true
		return pid
	}
	p.setSlice()
	s.processEvent(q, ev)
	return pid
}

// childStack is the stack a new process's event reports (ProcessForked's
// SP): the one clone gave it, or 0 when the child runs on the caller's
// stack — none given, or the caller's own stack pointer given, as
// glibc's arm64 vfork passes it (mov x1, sp before the svc, so the
// kernel starts the child at the very stack pointer the caller has).
// Either way the child returns through the caller's frames.
func (p *Process) childStack(stack uint64) uint64 {
	if stack == 0 {
		return 0
	}
	var st cpu.State
	p.Core.State(&st)
	if sp := p.Arch.DwarfSP; sp >= 0 && sp < len(st.GPR) && st.GPR[sp] == stack {
		return 0
	}
	return stack
}

// children are p's children matching wait's pid argument and options.
func (p *Process) children(pid int64, opts uint64) []*Process {
	var out []*Process
	for _, c := range p.sys.procs {
		if c.parent != p {
			continue
		}
		switch {
		case pid > 0 && c.pid != uint64(pid),
			pid == 0 && c.pgid != p.pgid,
			pid < -1 && c.pgid != uint64(-pid):
			continue
		}
		// __WCLONE waits for children whose exit signal is not SIGCHLD
		// only, the default for the others; __WALL for both.
		if opts&wAll == 0 && (c.exitSignal != sigCHLD) != (opts&wClone != 0) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// waitChild finds a zombie among the children wait asks for: the first
// in pid order. errno ECHILD when there is no such child; nil, 0 when
// none has ended yet.
func (p *Process) waitChild(pid int64, opts uint64) (*Process, uint64) {
	cs := p.children(pid, opts)
	if len(cs) == 0 {
		return nil, errno(ECHILD)
	}
	for _, c := range cs {
		if c.ended {
			return c, 0
		}
	}
	return nil, 0
}

// sysWait4 is wait4(2): WNOHANG; WUNTRACED and WCONTINUED are accepted
// (no process here ever stops); struct rusage is the child's (rusage.go).
func sysWait4(p *Process, a [6]uint64) uint64 {
	pid, opts := int64(int32(a[0])), a[2]
	if opts&^(wNohang|wUntraced|wContinued|wNothread|wAll|wClone) != 0 || int32(a[0]) == -1<<31 {
		return errno(EINVAL)
	}
	c, e := p.waitChild(pid, opts)
	if e != 0 {
		return e
	}
	if c == nil {
		if opts&wNohang != 0 {
			return 0
		}
		return p.wouldBlock("wait4 for a child")
	}
	if a[1] != 0 && !p.Mem.Store(a[1], 4, uint64(c.wstatus), p.order()) {
		return errno(EFAULT)
	}
	ru := p.reaped(c)
	if a[3] != 0 && !p.writeGuest(a[3], ru) {
		return errno(EFAULT)
	}
	p.sys.reap(c)
	return c.pid
}

// sysWaitid is waitid(2): P_ALL, P_PID, P_PGID; WEXITED needed (WSTOPPED
// and WCONTINUED accepted), WNOWAIT leaves the child a zombie.
func sysWaitid(p *Process, a [6]uint64) uint64 {
	idType, id, info, opts := a[0], int64(int32(a[1])), a[2], a[3]
	if opts&^(wNohang|wUntraced|wExited|wContinued|wNowait|wNothread|wAll|wClone) != 0 ||
		opts&(wExited|wUntraced|wContinued) == 0 {
		return errno(EINVAL)
	}
	var pid int64
	switch idType {
	case 0: // P_ALL
		pid = -1
	case 1: // P_PID
		if id <= 0 {
			return errno(EINVAL)
		}
		pid = id
	case 2: // P_PGID
		if id < 0 {
			return errno(EINVAL)
		}
		pid = -id
		if id == 0 {
			pid = 0
		}
	default:
		return errno(EINVAL)
	}
	var c *Process
	var e uint64
	if opts&wExited != 0 {
		c, e = p.waitChild(pid, opts)
	} else if len(p.children(pid, opts)) == 0 {
		e = errno(ECHILD)
	}
	if e != 0 {
		return e
	}
	if c == nil && opts&wNohang == 0 {
		return p.wouldBlock("waitid for a child")
	}
	if info != 0 {
		b := make([]byte, 128)
		o := p.order()
		if c != nil {
			o.PutUint32(b[0:], sigCHLD)
			o.PutUint32(b[8:], c.wcode)
			o.PutUint32(b[16:], uint32(c.pid))
			o.PutUint32(b[20:], guestUID)
			o.PutUint32(b[24:], c.wvalue)
		}
		if !p.writeGuest(info, b[:32]) {
			return errno(EFAULT)
		}
	}
	ru := make([]byte, 144)
	if c != nil {
		ru = p.rusage(c.Insns+c.childCPU, max(c.maxRSS, c.childMaxRSS))
		if opts&wNowait == 0 {
			ru = p.reaped(c)
		}
	}
	if a[4] != 0 && !p.writeGuest(a[4], ru) {
		return errno(EFAULT)
	}
	if c != nil && opts&wNowait == 0 {
		p.sys.reap(c)
	}
	return 0
}

func sysFork(p *Process, a [6]uint64) uint64 {
	return p.fork(cloneArgs{flags: sigCHLD})
}

func sysVfork(p *Process, a [6]uint64) uint64 {
	return p.fork(cloneArgs{flags: cloneVM | cloneVfork | sigCHLD})
}

func sysGetpid(p *Process, a [6]uint64) uint64  { return p.pid }
func sysGetppid(p *Process, a [6]uint64) uint64 { return p.ppid }
func sysGetpgrp(p *Process, a [6]uint64) uint64 { return p.pgid }

// byPid is the live or zombie process pid, or nil.
func (s *System) byPid(pid uint64) *Process {
	for _, q := range s.procs {
		if q.pid == pid {
			return q
		}
	}
	return nil
}

// pidTarget is the process a pid argument names (0: the caller).
func (p *Process) pidTarget(pid uint64) *Process {
	if pid == 0 || p.isSelf(pid) {
		return p
	}
	return p.sys.byPid(pid)
}

func sysGetpgid(p *Process, a [6]uint64) uint64 {
	q := p.pidTarget(a[0])
	if q == nil {
		return errno(ESRCH)
	}
	return q.pgid
}

func sysGetsid(p *Process, a [6]uint64) uint64 {
	q := p.pidTarget(a[0])
	if q == nil {
		return errno(ESRCH)
	}
	return q.sid
}

// sysSetpgid moves the caller or a child into a group of its session.
func sysSetpgid(p *Process, a [6]uint64) uint64 {
	if int64(int32(a[1])) < 0 {
		return errno(EINVAL)
	}
	q := p.pidTarget(a[0])
	if q == nil || q != p && q.parent != p {
		return errno(ESRCH)
	}
	if q.sid != p.sid {
		return errno(EPERM)
	}
	if q.sid == q.pid {
		return errno(EPERM) // a session leader stays in its group
	}
	pgid := a[1]
	if pgid == 0 {
		pgid = q.pid
	}
	if pgid != q.pid {
		found := false
		for _, r := range p.sys.procs {
			found = found || r.pgid == pgid && r.sid == p.sid && !r.ended
		}
		if !found {
			return errno(EPERM)
		}
	}
	q.pgid = pgid
	return 0
}

// sysSetsid makes the caller the leader of a new session and group,
// unless it leads a group already (EPERM).
func sysSetsid(p *Process, a [6]uint64) uint64 {
	for _, r := range p.sys.procs {
		if r.pgid == p.pid && !r.ended {
			return errno(EPERM)
		}
	}
	p.sid, p.pgid = p.pid, p.pid
	p.ctty = nil // a new session has no controlling terminal
	return p.pid
}

// sysKill is kill(2): to a process, the caller's group (0), a group
// (-pgid) or every process but the caller (-1).
func sysKill(p *Process, a [6]uint64) uint64 {
	if !validSignal(a[1]) && a[1] != 0 {
		return errno(EINVAL)
	}
	pid := int64(int32(a[0]))
	if p.isSelf(a[0]) {
		return p.sendSignal(p.killInfo(int(a[1]), siUser))
	}
	var targets []*Process
	for _, q := range p.sys.procs {
		if q.ended {
			continue
		}
		switch {
		case pid > 0 && q.pid == uint64(pid),
			pid == 0 && q.pgid == p.pgid,
			pid == -1 && q != p,
			pid < -1 && q.pgid == uint64(-pid):
			targets = append(targets, q)
		}
	}
	if len(targets) == 0 {
		if pid > 0 {
			if q := p.sys.byPid(uint64(pid)); q != nil {
				return 0 // a zombie takes signals and ignores them
			}
		}
		return errno(ESRCH)
	}
	for _, q := range targets {
		in := p.killInfo(int(a[1]), siUser)
		if q != p {
			in.cause = "another process sent the program"
		}
		q.sendSignal(in)
	}
	return 0
}

// stracePrefix is strace -f's "[pid N] " once the run has more than one
// process.
func (p *Process) stracePrefix() string {
	if !p.sys.everMulti {
		return ""
	}
	return fmt.Sprintf("[pid %d] ", p.pid)
}
