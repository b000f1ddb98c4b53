package cpu

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"time"
)

// Kernel is the operating system around a machine: it handles what the
// core hands over (syscalls). The simulated Linux kernel (sim/linux)
// implements it; sim/cpu knows no operating system.
type Kernel interface {
	// Syscall runs the syscall the core stopped at: it reads the number
	// and arguments from m.Core and writes the result there, or ends the
	// run (m.Exit, m.EndFault).
	Syscall(m *Machine)
}

// FaultTaker is implemented by kernels that turn an instruction's fault
// into a signal for the guest (a handler runs) instead of ending the run.
// TakeFault reports whether it did; if not, the run ends with the fault.
type FaultTaker interface {
	TakeFault(m *Machine, f *Fault) bool
}

// Preempter is implemented by kernels that run several threads on the
// core: Preempt is called when the running thread has used its quantum
// (see Machine.SetSliceEnd) and switches to the next.
type Preempter interface {
	Preempt(m *Machine)
}

// ThreadLister is implemented by kernels that run several threads:
// ThreadList describes each one (tid, state, pc) for the message of a
// run that ends at --max-insns, "" while only one exists.
type ThreadLister interface {
	ThreadList() string
}

// Machine is one simulated CPU core with its memory: what runs a program.
// The kernel (Machine.Kernel) lays the program out and answers its
// syscalls.
type Machine struct {
	Arch   *Arch
	Mem    *Memory
	Core   Core
	Image  *Image // the main program
	Kernel Kernel

	MaxInsns uint64 // stop with FaultInsnLimit after this many (0: no limit)
	Insns    uint64 // retired instructions
	Syscalls uint64 // syscalls executed
	// TakenFaults counts instructions whose fault the kernel turned into
	// a signal the guest handles (they did not retire; faults of fetching
	// one are not counted).
	TakenFaults uint64

	// Per-instruction observer (tracing); nil costs nothing.
	Observer func(m *Machine) error

	// Timing is the timing model (nil: off; sim/timing.Enable turns it
	// on); Consumers see every retired operation with its timing.
	Timing    Timer
	Consumers []RetireConsumer
	log       *Batch
	times     []OpTiming // details for the consumers, reused

	exited bool
	status int
	fault  *Fault

	// sliceEnd, when not 0, is the Insns count at which the running
	// thread's quantum ends: the core's budget stops there and the
	// kernel's Preempt runs. The kernel sets it only while more than one
	// thread exists, so a single thread pays nothing per instruction.
	sliceEnd uint64

	stopReq atomic.Bool // RequestStop was called
	// stopWith, when not nil, is the machine whose stopReq this one
	// uses (ShareStop: the processes of one run stop together).
	stopWith *Machine
	yield    bool // Yield was called
}

// stopFlag is the flag RequestStop sets for m.
func (m *Machine) stopFlag() *atomic.Bool {
	if m.stopWith != nil {
		return &m.stopWith.stopReq
	}
	return &m.stopReq
}

// ShareStop makes m stop when with is asked to (and with when m is):
// the kernel gives a forked process's machine its parent's, so that
// RequestStop on the first process's machine (simrun's SIGINT, a
// debugger's interrupt) stops whichever process has the core.
func (m *Machine) ShareStop(with *Machine) {
	if with.stopWith != nil {
		with = with.stopWith
	}
	if with != m {
		m.stopWith = with
	}
}

// Exit is how a run ended.
type Exit struct {
	Status int    // exit status as the shell sees it (128+signal after a fault)
	Fault  *Fault // nil for a normal exit
}

// NewMachine returns a machine for arch with empty memory and a core whose
// registers are all zero; the kernel loads a program into it.
func NewMachine(arch *Arch) *Machine { return NewMachineMem(arch, NewMemory()) }

// NewMachineMem returns a machine for arch on the address space mem (a
// forked process's, Memory.Fork).
func NewMachineMem(arch *Arch, mem *Memory) *Machine {
	m := &Machine{Arch: arch, Mem: mem}
	m.Core = arch.NewCore(m)
	return m
}

// SetSliceEnd makes the running thread's quantum end when Insns reaches
// end (0: never, while one thread runs); the kernel (a Preempter) calls
// it at each thread switch.
func (m *Machine) SetSliceEnd(end uint64) { m.sliceEnd = end }

// SliceEnd returns what SetSliceEnd set.
func (m *Machine) SliceEnd() uint64 { return m.sliceEnd }

// Exited reports whether the guest has exited (or faulted).
func (m *Machine) Exited() bool { return m.exited }

// ErrStopped is Run's error after RequestStop: the guest stopped between
// two instructions, every retired one seen by the timing model and the
// consumers, and it could run on.
var ErrStopped = errors.New("stopped on request")

// RequestStop asks Run or RunFor to return ErrStopped at the next
// instruction boundary where it checks: between two runs of the core,
// that is after at most runSlice instructions, a syscall or a timing
// batch. It is safe from any goroutine (a signal handler's) and costs the
// run loop one atomic load per run of the core.
func (m *Machine) RequestStop() { m.stopFlag().Store(true) }

// ErrYield is Run's error after Yield: the kernel handed the core to
// another machine (another process's); Run may be called again.
var ErrYield = errors.New("yielded to another machine")

// Yield makes Run return ErrYield at the next instruction boundary where
// it checks (the kernel calls it from a syscall or Preempt).
func (m *Machine) Yield() { m.yield = true }

// StopRequested reports whether RequestStop was called (and not
// cleared).
func (m *Machine) StopRequested() bool { return m.stopFlag().Load() }

// ClearStop forgets a RequestStop, so that Run and RunFor run on (a
// debugger stub stops the guest this way and then resumes it).
func (m *Machine) ClearStop() { m.stopFlag().Store(false) }

// runSlice is the most instructions the core runs between two checks of
// RequestStop when nothing else (an observer, the timing log, a syscall)
// ends its run sooner: a few milliseconds of guest time.
const runSlice = 1 << 24

// Yielder is implemented by kernels that run several machines (a
// process each): when Run's machine yields, RunOthers runs the rest of
// the run and returns its end.
type Yielder interface {
	RunOthers(m *Machine) (*Exit, error)
}

// Run executes the program to its end, or until an error that is not the
// guest's (an observer error, ErrStopped). A guest fault is a normal end:
// Exit.Fault. When the machine yields to another (Yield), the kernel's
// RunOthers (a Yielder) runs on.
func (m *Machine) Run() (*Exit, error) {
	exit, err := m.RunMachine()
	if errors.Is(err, ErrYield) {
		if y, ok := m.Kernel.(Yielder); ok {
			return y.RunOthers(m)
		}
	}
	return exit, err
}

// RunMachine is Run of this machine alone: it returns ErrYield when the
// machine yields.
func (m *Machine) RunMachine() (*Exit, error) {
	for !m.exited {
		if m.stopFlag().Load() {
			m.StopTiming()
			return nil, ErrStopped
		}
		if m.yield {
			m.yield = false
			return nil, ErrYield
		}
		if err := m.step(); err != nil {
			m.StopTiming()
			return nil, err
		}
	}
	m.StopTiming()
	return &Exit{Status: m.status, Fault: m.fault}, nil
}

// RunFor executes at most n more instructions (for tests and tracers).
// An instruction whose fault became a handled signal counts as one, as
// in qemu's traces. Like RunMachine it returns ErrYield when the kernel
// handed the core to another machine (the caller runs the others, then
// this one again).
func (m *Machine) RunFor(n uint64) (*Exit, error) {
	stop := m.Insns + m.TakenFaults + n
	for !m.exited && m.Insns+m.TakenFaults < stop {
		if m.stopFlag().Load() {
			return nil, ErrStopped
		}
		if m.yield {
			m.yield = false
			return nil, ErrYield
		}
		if err := m.stepBudget(stop - m.Insns - m.TakenFaults); err != nil {
			return nil, err
		}
	}
	// A pc that cannot be fetched from faults before any instruction
	// starts: take that fault now, so that the state is the handler's
	// when the kernel turns it into a signal.
	if !m.exited && !m.fetchable(m.Core.PC()) {
		if err := m.stepBudget(1); err != nil {
			return nil, err
		}
	}
	if !m.exited {
		return nil, nil
	}
	return &Exit{Status: m.status, Fault: m.fault}, nil
}

// fetchable reports whether pc is in executable memory.
func (m *Machine) fetchable(pc uint64) bool {
	_, ok := m.Mem.FetchPage(pc)
	return ok
}

func (m *Machine) step() error {
	if m.Observer != nil {
		return m.stepBudget(1)
	}
	return m.stepBudget(runSlice)
}

func (m *Machine) stepBudget(budget uint64) (err error) {
	defer func() {
		// A simulator bug must end the run with a message, not a crash.
		if r := recover(); r != nil {
			m.EndFault(&Fault{PC: m.Core.PC(), Kind: FaultInternal,
				Err: fmt.Errorf("simulator bug, please report: %v\n%s", r, debug.Stack())})
		}
	}()
	if m.MaxInsns != 0 {
		if m.Insns >= m.MaxInsns {
			err := fmt.Errorf("%d instructions retired (--max-insns)", m.Insns)
			if tl, ok := m.Kernel.(ThreadLister); ok {
				if s := tl.ThreadList(); s != "" {
					err = fmt.Errorf("%w; threads: %s", err, s)
				}
			}
			m.EndFault(&Fault{PC: m.Core.PC(), Kind: FaultInsnLimit, Err: err})
			return nil
		}
		budget = min(budget, m.MaxInsns-m.Insns)
	}
	if m.sliceEnd != 0 {
		budget = min(budget, m.sliceEnd-m.Insns)
	}
	if m.Observer != nil {
		budget = 1
		if err := m.Observer(m); err != nil {
			return err
		}
	}
	if m.log != nil {
		budget = min(budget, LogBatch-1) // room for a faulting one
		for _, c := range m.Consumers {
			if p, ok := c.(PreSampler); ok {
				a := p.Ahead(m)
				if a == 0 {
					p.Before(m)
					a = max(p.Ahead(m), 1)
				}
				budget = min(budget, a)
			}
		}
	}
	if m.log != nil {
		m.log.reset()
	}
	n, stop := m.Core.Execute(budget)
	m.Insns += n
	if m.log != nil {
		m.retire(n)
	}
	switch stop.Kind {
	case StopSyscall:
		m.Syscalls++
		m.Kernel.Syscall(m)
	case StopFault:
		if ft, ok := m.Kernel.(FaultTaker); ok && ft.TakeFault(m, stop.Fault) {
			if !stop.Fault.Fetching() {
				m.TakenFaults++
			}
		} else {
			m.EndFault(stop.Fault)
		}
	}
	if m.sliceEnd != 0 && m.Insns >= m.sliceEnd && !m.exited {
		m.Kernel.(Preempter).Preempt(m)
	}
	return nil
}

// describeFault adds the instruction bytes and disassembly to a fault.
func (m *Machine) describeFault(f *Fault) *Fault {
	f.Arch = m.Arch.Name
	if f.Insn == nil && f.Kind != FaultFetch && f.Kind != FaultInsnLimit {
		n := m.Arch.MaxInsnLen
		for ; n > 0; n-- {
			if b, err := m.Mem.ReadBytes(f.PC, n); err == nil {
				f.Insn = b
				break
			}
		}
	}
	if f.Insn != nil && f.Disasm == "" && m.Arch.Disasm != nil {
		if text, n := m.Arch.Disasm(f.Insn, f.PC); n > 0 {
			f.Disasm = text
			if n < len(f.Insn) {
				f.Insn = f.Insn[:n]
			}
		}
	}
	return f
}

// EndFault ends the run with fault f, adding the instruction bytes and
// disassembly at its pc.
func (m *Machine) EndFault(f *Fault) {
	m.fault = m.describeFault(f)
	m.exited = true
	m.status = f.ExitStatus()
}

// Exit ends the run with the guest's exit status (its low 8 bits).
func (m *Machine) Exit(status int) {
	m.exited = true
	m.status = status & 0xff
}

// VirtualNanos is the virtual clock: the timing model's cycles at the
// preset's frequency, or 1 ns per retired instruction without it.
func (m *Machine) VirtualNanos() uint64 {
	if m.Timing != nil {
		return m.Timing.Nanos(m.Timing.Cycle())
	}
	return m.Insns
}

// Logger is implemented by cores that can log retired instructions for
// the timing model.
type Logger interface {
	// SetLog starts logging into b (nil: stops) and points b.Vals at
	// the core's LogBatch values.
	SetLog(b *Batch)
}

// RetireConsumer sees every retired operation (the SPE unit, tracers).
// Want returns the indices of the batch's operations (ascending) it needs
// timed in detail; Retired then gets those details in the same order.
type RetireConsumer interface {
	Want(b *Batch) []int
	Retired(m *Machine, b *Batch, want []int, details []OpTiming)
}

// PreSampler is a RetireConsumer that wants to see the machine stopped
// just before some operations retire, to read their registers (the SPE
// recorder unwinds the stack of each sampled operation there).
type PreSampler interface {
	// Ahead is how many operations m retires before the next one it
	// wants to see (^uint64(0): none). It is asked before every run of
	// the core whose operations it will then see (Want, Retired).
	Ahead(m *Machine) uint64
	// Before is called with the machine stopped before that operation;
	// afterwards Ahead counts to the one after it.
	Before(m *Machine)
}

// ErrNoTiming: the core does not log its retired operations, so the timing
// model (and SPE) cannot run on it.
var ErrNoTiming = errors.New("no timing model support yet")

// Timer is a timing model as the machine drives it (sim/timing.Model):
// it times each batch of retired operations and keeps the clock.
type Timer interface {
	// TimeBatch times batch b; next is the pc after its last operation.
	// For the operations whose indices are in want (ascending) it fills
	// out[k] with the details.
	TimeBatch(b *Batch, next uint64, want []int, out []OpTiming)
	// Cycle is the current cycle; Nanos converts cycles to virtual
	// nanoseconds.
	Cycle() uint64
	Nanos(cycles uint64) uint64
}

// EnableTiming turns the timing model t on (sim/timing.Enable makes one
// and calls this). The core logs what it retires; after each batch t
// times it and the consumers see it, so the model is never more than one
// batch behind the core.
func (m *Machine) EnableTiming(t Timer) error {
	l, ok := m.Core.(Logger)
	if !ok {
		return fmt.Errorf("the %s core: %w", m.Arch.Name, ErrNoTiming)
	}
	m.Timing = t
	m.log = NewBatch(0, uint(bits.TrailingZeros64(max(m.Arch.InsnAlign, 1)))) // SetLog gives it the core's Vals
	m.log.CodeGen = m.Mem.CodeGen
	l.SetLog(m.log)
	return nil
}

// ShareTiming gives m, a new machine of the same run (a forked process's,
// or the one execve made), the timing model and the consumers of from: the
// machines of a run are one simulated core that switches between them, so
// its cycle count, caches and predictors carry over a switch (the caches and
// TLB are indexed by virtual address: a switch neither flushes them nor
// tells apart equal addresses of two address spaces), and every retired
// operation of every machine reaches the same consumers (SPE, tracers).
// A machine without a timing model leaves m as it is.
func (m *Machine) ShareTiming(from *Machine) error {
	if from.Timing == nil {
		return nil
	}
	l, ok := m.Core.(Logger)
	if !ok {
		return fmt.Errorf("the %s core: %w", m.Arch.Name, ErrNoTiming)
	}
	m.Timing, m.Consumers = from.Timing, from.Consumers
	m.log = NewBatch(0, uint(bits.TrailingZeros64(max(m.Arch.InsnAlign, 1))))
	m.log.CodeGen = m.Mem.CodeGen
	l.SetLog(m.log)
	return nil
}

// StopTiming detaches the log from the core; the consumers have then seen
// every operation.
func (m *Machine) StopTiming() {
	if m.log == nil {
		return
	}
	m.log = nil
	m.Core.(Logger).SetLog(nil)
}

// retire times the operations logged by the last Core.Execute (of which n retired;
// a faulting instruction is logged but does not retire), hands them to
// the consumers and empties the log.
func (m *Machine) retire(n uint64) {
	b := m.log
	b.Finish(int(n))
	if n == 0 {
		return
	}
	var want []int
	for _, c := range m.Consumers { // one detail-wanting consumer in practice
		want = append(want, c.Want(b)...)
	}
	if len(m.Consumers) > 1 {
		sort.Ints(want)
	}
	if cap(m.times) < len(want) {
		m.times = make([]OpTiming, len(want))
	}
	details := m.times[:len(want)]
	m.Timing.TimeBatch(b, m.Core.PC(), want, details)
	b.CodeGen = m.Mem.CodeGen // what the next batch starts from
	for _, c := range m.Consumers {
		c.Retired(m, b, want, details)
	}
}

// Stats summarise a run.
type Stats struct {
	Insns    uint64
	Syscalls uint64
	Wall     time.Duration
}

// MIPS is millions of instructions per wall-clock second.
func (s Stats) MIPS() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Insns) / s.Wall.Seconds() / 1e6
}

// ErrNoProgram is returned for a missing program argument.
var ErrNoProgram = errors.New("no program given")
