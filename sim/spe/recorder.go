package spe

import "simrun/sim/cpu"

// Recorder connects a Unit (driven by its Driver) to a machine's timing
// model: it counts every retired operation down the interval counter and
// turns the selected ones into samples.
type Recorder struct {
	Unit  *Unit
	D     *Driver
	Timer cpu.Timer // the machine's timing model: its clock stamps the records
	left  uint64    // members until the next selected one (0: not computed)
	want  []int
	// the last operation of the previous batch, if a branch: its outcome
	// shows in the first pc of the next batch
	lastBranch uint64
	lastSize   uint8

	// Chain, if set, returns the call stack (pc first) of the machine's
	// next operation; the recorder calls it before every selected
	// operation, and keeps the stacks of those whose records it wrote.
	Chain      func(m *cpu.Machine, buf []uint64) []uint64
	Callchains [][]uint64 // with a Chain: one per record written, in order
	// MaxStack caps each kept stack at that many frames, the innermost
	// ones (0: DefaultMaxStack), as Linux caps a sample's callchain at
	// kernel.perf_event_max_stack; Truncated counts the stacks it cut.
	MaxStack  int
	Truncated int
	pending   []uint64 // the stack of the selected operation about to retire
	seen      bool     // Before ran for the next selected operation
	// Tag, if set, names the machine of each record written (a run of
	// several processes: which program's symbols name it); Tags holds
	// them, one per record, in order.
	Tag  func(m *cpu.Machine) int
	Tags []int
}

// Ahead counts the operations before the next selected one (see
// cpu.PreSampler): only with a Chain, while profiling is on.
func (r *Recorder) Ahead(*cpu.Machine) uint64 {
	if r.Chain == nil || !r.Unit.Enabled() {
		return ^uint64(0)
	}
	if r.seen {
		return 1 // let the selected one retire
	}
	if r.left == 0 {
		r.left = r.Unit.NextSelection()
	}
	return r.left - 1
}

// Before takes the stack of the selected operation about to retire.
func (r *Recorder) Before(m *cpu.Machine) {
	r.pending = r.Chain(m, r.pending[:0])
	r.seen = true
}

// NewRecorder attaches u and d to m, whose timing model must be on.
func NewRecorder(m *cpu.Machine, u *Unit, d *Driver) *Recorder {
	r := &Recorder{Unit: u, D: d, Timer: m.Timing}
	m.Consumers = append(m.Consumers, r)
	return r
}

// Want advances the interval counter over a batch of retired operations
// and returns the indices of the selected ones. (When profiling stops for
// good in the middle of a batch, the rest of that batch has already been
// counted: at most 4096 members.)
func (r *Recorder) Want(b *cpu.Batch) []int {
	r.want = r.want[:0]
	if !r.Unit.Enabled() {
		return nil
	}
	n, pos := uint64(b.Len()), uint64(0)
	for {
		if r.left == 0 {
			r.left = r.Unit.NextSelection()
		}
		if pos+r.left > n {
			r.left -= n - pos
			break
		}
		pos += r.left
		r.left = 0
		r.want = append(r.want, int(pos-1))
	}
	return r.want
}

// Retired samples the selected operations in order.
func (r *Recorder) Retired(m *cpu.Machine, b *cpu.Batch, want []int, details []cpu.OpTiming) {
	u := r.Unit
	start := 0
	var ops []cpu.Retired // every operation, only for the previous-branch target
	if u.Features.PBT && b.Len() > 0 {
		ops = b.Ops()
		if r.lastSize != 0 && ops[0].PC != r.lastBranch+uint64(r.lastSize) {
			u.TakenBranch(ops[0].PC)
		}
		r.lastSize = 0
		if last := &ops[len(ops)-1]; last.Info.Class == cpu.ClassBranch {
			r.lastBranch, r.lastSize = last.PC, last.Info.Size
		}
	}
	for k, i := range want {
		if u.Features.PBT {
			r.trackBranches(ops[start:i+1], 0)
			start = i
		}
		if !u.Enabled() { // profiling stopped for good
			return
		}
		d := &details[k]
		chain := r.seen
		r.seen = false
		if !u.Start(d.Issue) {
			continue
		}
		written := u.Written
		op := b.At(i)
		o := &op
		in := o.Info
		s := &Sample{Op: cpu.Op{PC: o.PC, Size: in.Size, Class: in.Class, Flags: in.Flags, Access: in.Access},
			Taken: d.Taken, Events: d.Events, DS: uint16(d.DS), DSValid: d.DSValid}
		s.Lat = [3]uint32{uint32(d.Complete - d.Dispatch), uint32(d.Issue - d.Dispatch), d.XlatLat}
		if in.Access != 0 {
			s.Op.VA = o.Addr()
			s.XlatOK = true
		}
		if in.Class == cpu.ClassBranch {
			s.Op.Target = d.Next
		}
		if d.Taken {
			s.Op.Flags |= cpu.OpCondPassed
		}
		u.Complete(s, d.Complete, r.Timer.Nanos(d.Complete))
		if r.Tag != nil && u.Written > written {
			r.Tags = append(r.Tags, r.Tag(m))
		}
		if r.Chain != nil && u.Written > written {
			stack := []uint64{o.PC} // not seen before it retired: the pc alone
			if chain && len(r.pending) > 0 && r.pending[0] == o.PC {
				frames := r.pending
				if max := r.maxStack(); len(frames) > max {
					frames = frames[:max]
					r.Truncated++
				}
				stack = append([]uint64(nil), frames...)
			}
			r.Callchains = append(r.Callchains, stack)
		}
	}
	if u.Features.PBT {
		r.trackBranches(ops[start:], 0)
	}
}

// DefaultMaxStack is Linux's default kernel.perf_event_max_stack: the
// most frames a sample's callchain carries (the kernel stops walking
// there and marks nothing; perf report's --max-stack defaults to it too).
const DefaultMaxStack = 127

func (r *Recorder) maxStack() int {
	if r.MaxStack <= 0 {
		return DefaultMaxStack
	}
	return r.MaxStack
}

// trackBranches notes taken branches for the previous-branch-target packet.
func (r *Recorder) trackBranches(ops []cpu.Retired, from int) {
	for i := from; i+1 < len(ops); i++ {
		o := &ops[i]
		if o.Info.Class == cpu.ClassBranch && ops[i+1].PC != o.PC+uint64(o.Info.Size) {
			r.Unit.TakenBranch(ops[i+1].PC)
		}
	}
}

// Finish stops profiling and drains the buffer (at the end of the run):
// members counted ahead for a selection that never came are given back.
func (r *Recorder) Finish() {
	if r.left > 0 {
		r.Unit.PMU.SamplePop -= r.left
		r.left = 0
	}
	r.D.Stop()
}
