package linux

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"simrun/sim/cpu"
)

// Several CPUs (Config.CPUs > 1, simrun run --cpus N).
//
// The guest sees N CPUs, numbered 0 to N-1: sched_getaffinity reports
// them, getcpu names the running thread's, sched_setaffinity restricts a
// thread to some of them (a mask naming none that exists is EINVAL, as
// on Linux). The simulator still runs one thread at a time on the host;
// what N changes is which simulated core each thread's time goes to, and
// so which thread runs next.
//
// Placement: the thread with tid 1000+i (the i-th made, counting every
// process's threads, the main one first) starts on core i mod N, or if
// its affinity (inherited from its creator) leaves that core out, on the
// next core the mask allows, wrapping. A thread stays on its core until
// sched_setaffinity leaves the core out; then it moves the same way.
//
// Time: each core has its own clock. A thread runs on its core's clock,
// which it carries on while it runs (the process's virtual clock,
// Process.clockOff, is set to it at every switch); when it stops, the
// core's clock is where it left it. A thread never starts earlier than
// it last stopped (or was created): its core's clock jumps forward to
// that time if it is behind (the core was idle). With the timing model
// on, every core is a model core of its own (timing.NewCores) and the
// running thread's machine is timed on its core's model (the timing
// model's OnCore), so a core's clock is its own cycles; without it, a
// core's clock counts the instructions its threads retired, 1 ns each.
//
// Scheduling: at every scheduling point (the quantum, a blocking call,
// sched_yield, an exit) the next thread is the runnable one that can
// start earliest: the later of its core's clock and the time it last
// stopped. A tie goes to the first in tid order after the thread that
// ran last (round robin, as with one CPU), so threads sharing a core
// take turns and cores take turns by virtual time, each for at most a
// quantum: the interleaving follows the cores' clocks in bounded steps,
// and it is decided by retired instructions and the timing model alone,
// so runs are repeatable. (--sched random picks any runnable thread, as
// with one CPU.) The threads' clocks may differ by up to a quantum's
// time: a thread reading the clock just after another thread on a core
// that is behind may see a smaller value, never one smaller than its
// own last reading.
//
// With one CPU none of this runs: the scheduler and the clock are the
// ones described in thread.go and system.go.

// MaxCPUs bounds Config.CPUs: the affinity masks are one 64-bit word
// (and the timing model's coherence directory tracks 64 cores).
const MaxCPUs = 64

// cpuMask is the mask of CPUs 0 to n-1.
func cpuMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<max(n, 1) - 1
}

// onCore is implemented by a timing model of several cores
// (timing.Model): the timer of core i.
type onCore interface {
	OnCore(i int) cpu.Timer
}

// nextAllowed is core c if mask allows it, else the next core it
// allows, wrapping (mask is not 0).
func (s *System) nextAllowed(c int, mask uint64) int {
	for i := 0; i < s.cpus; i++ {
		if k := (c + i) % s.cpus; mask&(1<<k) != 0 {
			return k
		}
	}
	return 0
}

// placeNew places t, a new thread or process's thread made by p's
// running thread: its affinity is the creator's, its core as the
// placement rule says, and it starts no earlier than now.
func (s *System) placeNew(p *Process, t *thread) {
	t.affinity = p.cur.affinity
	if s.cpus <= 1 {
		return
	}
	t.core = s.nextAllowed(int((t.tid-guestPID)%uint64(s.cpus)), t.affinity)
	t.readyAt, t.wasRunnable = p.monoNow(), true
}

// setAffinity gives t, a thread of p, the CPU mask mask (not 0, of CPUs
// that exist); a thread whose core it leaves out moves to the next one
// it allows, the running thread at the next scheduling point, which is
// now.
func (s *System) setAffinity(p *Process, t *thread, mask uint64) {
	t.affinity = mask
	if mask&(1<<t.core) != 0 {
		return
	}
	t.core = s.nextAllowed(t.core, mask)
	if t == p.cur {
		s.coreNow[t.core] = max(s.coreNow[t.core], p.monoNow())
		p.resched = true
	}
}

// leaveCore records, before a scheduling decision, where the running
// thread's core's clock is (now, the time the thread stopped) and how
// much of its quantum it has used: a thread whose quantum is over, or
// that stopped, lets the core go to its other threads.
func (s *System) leaveCore(now uint64) {
	p := s.cur
	t := p.cur
	if t == nil {
		return
	}
	k := t.core
	s.coreNow[k] = max(s.coreNow[k], now)
	t.readyAt = max(t.readyAt, now)
	if s.coreThr[k] == t {
		s.coreUsed[k] += p.Insns - s.stepStart
		s.stepStart = p.Insns
		if s.coreUsed[k] >= p.quantum || t.state != threadRunnable || p.ended {
			s.coreThr[k] = nil
		}
	}
}

// DefaultCoreStep is Config.CoreStep's default: the most instructions a
// thread runs, with several CPUs, before the scheduler looks for a core
// whose clock is behind. The cores advance in steps this long (a thread
// keeps its core for its quantum, Config.Quantum, over many steps).
// Cache lines bounce between cores at most once a step, so a shorter
// step shows contention more faithfully and costs more scheduling: the
// false-sharing pair (programs/threads/src/falseshare.c) costs 1.2 to
// 1.7 times the padded one's cycles at steps of 32 and 50 (where a step
// ends within the loop moves the figure), 1.25 at 100.
const DefaultCoreStep = 50

// MinCoreStep bounds Config.CoreStep from below: a step of one
// instruction interleaves the cores instruction by instruction. A
// thread's arm64 exclusive monitor survives the steps of other cores (its
// own core ran nothing else: cpu.Resumer) unless one of them stored to
// the bytes it marks, so a load-exclusive/store-exclusive loop cut by a
// step still succeeds; only a context switch on its own core (the end of
// its quantum, a blocking call) clears it, as Linux's exception return
// does.
const MinCoreStep = 1

// coreSlice is how many instructions t, starting a step, runs: a step,
// or what is left of its quantum if less.
func (s *System) coreSlice(t *thread) uint64 {
	q := s.first.quantum
	if s.coreThr[t.core] == t {
		q -= min(q, s.coreUsed[t.core])
	}
	step := uint64(s.first.Cfg.CoreStep)
	if step == 0 {
		step = DefaultCoreStep
	}
	step = max(step, MinCoreStep)
	return max(min(q, step), 1)
}

// noteWake makes t, if it became runnable (run) since the last
// scheduling decision, start no earlier than now, the time it was
// noticed (a waker's, or the time an idle system jumped to), and
// remembers whether it is runnable. nextRunnable notes every live
// thread's at each decision.
func (s *System) noteWake(t *thread, run bool, now uint64) {
	if run && !t.wasRunnable {
		t.readyAt = max(t.readyAt, now)
	}
	t.wasRunnable = run
}

// startAt is when t can start: the later of its core's clock and the time
// it last stopped.
func (s *System) startAt(t *thread) uint64 { return max(s.coreNow[t.core], t.readyAt) }

// enterCore makes q's machine run t on t's core: the machine's timer is
// that core's model (with the timing model on), and the clock is where
// t starts. It reports whether t resumes: the core ran no other thread
// since t stopped there (no context switch on it).
func (s *System) enterCore(q *Process, t *thread) (resume bool) {
	if mc, ok := q.Machine.Timing.(onCore); ok {
		q.Machine.Timing = mc.OnCore(t.core)
	}
	start := s.startAt(t)
	s.coreNow[t.core] = start
	q.clockOff = start - q.VirtualNanos() // (modulo 2^64: VirtualNanos may be larger)
	if s.coreThr[t.core] != t {
		s.coreThr[t.core], s.coreUsed[t.core] = t, 0
	}
	last := s.coreLast[t.core]
	if last != t {
		if last != nil {
			q.switches++ // a context switch on that CPU
		}
		s.coreLast[t.core] = t
	}
	s.stepStart = q.Insns
	return last == t
}

// nextOnCores is nextRunnable with several CPUs: it notes every live
// thread's wake at now (noteWake) and picks. Each core offers one of its
// runnable threads (offerOn); of the cores' threads, pickOffer picks.
// Every order here is a comparison of (start, tid after a given one,
// wrapping), so one pass over the threads in any order decides (this
// runs every few dozen instructions). It also notes whether any thread
// waits with a deadline (calm).
func (s *System) nextOnCores(now uint64, rng *uint64) (*Process, *thread) {
	for k := range s.offer {
		s.offer[k] = coreOffer{}
	}
	deadlines := false
	for _, q := range s.procs {
		if q.ended {
			continue
		}
		for _, t := range q.threads {
			run := t.state == threadRunnable
			s.noteWake(t, run, now)
			if run {
				s.offerOn(q, t)
			} else if t.hasDeadline {
				deadlines = true
			}
		}
	}
	s.calm = s.calm && !deadlines
	return s.pickOffer(rng)
}

// offerOn makes t, a runnable thread of q, the thread its core offers if
// it comes before the one offered so far: the one whose quantum goes on
// there comes first, then the one that can start earliest, ties to the
// first in tid order after the thread that ran there last (round robin
// on the core, as with one CPU).
func (s *System) offerOn(q *Process, t *thread) {
	k := t.core
	o := &s.offer[k]
	at := s.startAt(t)
	switch holder := s.coreThr[k]; {
	case o.t != nil && o.t == holder: // its quantum goes on
	case t == holder, o.t == nil:
		*o = coreOffer{q, t, at}
	default:
		var last uint64 // (the round robin's order: how far after the core's last thread a tid comes, wrapping)
		if l := s.coreLast[k]; l != nil {
			last = l.tid
		}
		if at < o.at || at == o.at && t.tid-last-1 < o.t.tid-last-1 {
			*o = coreOffer{q, t, at}
		}
	}
}

// pickOffer picks among the cores' offers the thread that can start
// earliest, ties to the first in tid order after the running one; with
// --sched random (rng not 0), any one of them, drawn from rng: the k-th
// in tid order, k drawn among the cores that offer one. A debugger's
// scheduler locking (LockScheduler) goes first, as with one CPU.
func (s *System) pickOffer(rng *uint64) (*Process, *thread) {
	offer := s.offer
	if p := s.cur; !p.ended && p.locked != nil && p.locked.state == threadRunnable {
		return p, p.locked
	}
	if *rng != 0 {
		ready := s.ready[:0]
		for k := range offer {
			if o := &offer[k]; o.t != nil {
				ready = append(ready, cand{o.p, o.t})
			}
		}
		s.ready = ready[:0]
		if len(ready) == 0 {
			return nil, nil
		}
		slices.SortFunc(ready, func(a, b cand) int { return cmp.Compare(a.t.tid, b.t.tid) })
		c := ready[xorshiftPick(rng, len(ready))]
		return c.p, c.t
	}
	var pick *coreOffer
	cur := s.cur.cur.tid
	for k := range offer {
		o := &offer[k]
		if o.t == nil {
			continue
		}
		if pick == nil || o.at < pick.at || o.at == pick.at && o.t.tid-cur-1 < pick.t.tid-cur-1 {
			pick = o
		}
	}
	if pick == nil {
		return nil, nil
	}
	return pick.p, pick.t
}

// A calm step (calmDecision). With several CPUs a scheduling decision
// comes every few dozen instructions, mostly with nothing changed but
// the running thread's run. When the last decision found the system calm
// — no timer, no timed wait, no host program, no random scheduling, and
// no signal pending for the thread it chose — and the running process
// has entered its kernel neither by a syscall nor by a fault since
// (Process.entries) and runs without a debugger, then no thread's state
// has changed, no timer can fire and no wait can time out: the other
// cores' clocks and offers are the last decision's, and only the running
// thread's core offers again. calmDecision is then schedule's decision,
// made without a pass over every thread. (SIMRUN_CHECK_SCHED=1 makes
// every calm decision check itself against the full one.)

// calmDecision is schedule at a calm step's end.
func (s *System) calmDecision() (*Process, *thread) {
	c := s.cur
	now := c.monoNow()
	s.leaveCore(now)
	for _, q := range s.procs {
		if !q.ended && q != c {
			q.clockOff = now - q.VirtualNanos()
		}
	}
	if t := c.cur; s.coreThr[t.core] == t {
		s.offer[t.core] = coreOffer{c, t, s.startAt(t)} // its quantum goes on there
	} else {
		k := t.core
		s.offer[k] = coreOffer{}
		for _, q := range s.procs {
			if q.ended {
				continue
			}
			for _, t := range q.threads {
				if t.core == k && t.state == threadRunnable {
					s.offerOn(q, t)
				}
			}
		}
	}
	q, t := s.pickOffer(&s.first.schedRng)
	if s.checkCalm {
		if q2, t2 := s.nextOnCores(now, &s.first.schedRng); q2 != q || t2 != t {
			panic(fmt.Sprintf("a calm scheduling decision chose tid %d, the full one %d", tidOf(t), tidOf(t2)))
		}
	}
	return q, t
}

// tidOf is t's tid, 0 for none.
func tidOf(t *thread) uint64 {
	if t == nil {
		return 0
	}
	return t.tid
}

// coreOffer is the thread a core offers the scheduler (none: t nil), of
// process p, and when it can start.
type coreOffer struct {
	p  *Process
	t  *thread
	at uint64
}

// CPUs is how many CPUs the run simulates (Config.CPUs).
func (p *Process) CPUs() int { return p.sys.cpus }

// CoreOf returns the core the thread tid of p runs on (or last ran on),
// and false when p has no such thread.
func (p *Process) CoreOf(tid uint64) (int, bool) {
	i := slices.IndexFunc(p.allThreads, func(t *thread) bool { return t.tid == tid })
	if i < 0 {
		return 0, false
	}
	return p.allThreads[i].core, true
}

// cpuList writes a CPU mask as Linux's lists do: ranges and single CPUs,
// comma-separated ("0-3", "0,2-3").
func cpuList(mask uint64) string {
	var parts []string
	for c := 0; c < 64; {
		if mask&(1<<c) == 0 {
			c++
			continue
		}
		e := c
		for e+1 < 64 && mask&(1<<(e+1)) != 0 {
			e++
		}
		if e == c {
			parts = append(parts, fmt.Sprint(c))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", c, e))
		}
		c = e + 1
	}
	return strings.Join(parts, ",")
}
