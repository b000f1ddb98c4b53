package cpu

import "sort"

// Batch is the log of the operations one Core.Execute retired, as the core
// writes it: cheaply, one entry per straight-line run of operations and
// one value per operation, not one record per operation.
//
//	Runs:  [Infos→slot 7, PC 0x400a1c, Start 0] [Infos→slot 2, PC 0x400808, Start 5] ...
//	Vals:  v0 v1 v2 v3 v4 v5 ...        (v_k: op k's dynamic value, if it logs one)
//
// The operations of a run sit at consecutive addresses on one code page,
// so their descriptions follow one another in the page's Infos: op k+1's
// is Size>>Shift entries after op k's. A core begins a run where it
// enters a page (a new page, or the first of a Core.Execute), at a taken
// branch's target and around an s390x EXECUTE's target (whose
// description is not its address's): only where the flow changes, never
// per operation. The timing model walks runs directly; consumers that
// want one record per operation get them from At or Ops.
type Batch struct {
	Runs []Run
	// Vals[k] is op k's logged value (see Logged) when its description
	// LogsValue; other entries are left as the core wrote them. It is the
	// core's own array of LogBatch values (Logger.SetLog puts it here).
	Vals []uint64
	// Shift is log2 of the bytes per Infos entry (the instruction
	// alignment).
	Shift uint
	// CodeGen is the memory's code generation (Memory.CodeGen) when the
	// batch began: the timing model rebuilds summaries made under
	// another. (A write over code that executed earlier in the same batch
	// changes that operation's description under the log; not modelled:
	// the batch is timed with the new one.)
	CodeGen uint64
	n       int
	ops     []Retired // Ops' expansion (valid while expanded)
	done    bool
}

// Run is a straight-line stretch of a Batch.
type Run struct {
	Infos []OpInfo // Infos[0] describes the first operation
	PC    uint64   // its address
	Start uint32   // its index in the batch
}

// LogBatch is how many operations a core logs before the model times
// them. Each switch between the core's code and the model's refills the
// host's instruction cache, and a batch's end cuts a run short (timed
// operation by operation); 4096 operations (a log of about 32 KB of
// values and 20 KB of runs, read back from the host's L2) measured 2-3.5%
// fewer host instructions and 1.5-4% more timed MIPS (medians of runs
// alternated with the old code) than 1024 on the short programs; 16384
// was no better (SPEED.md).
const LogBatch = 4096

// ValMask keeps a logged value's index inside a core's array of them.
const ValMask = LogBatch - 1

// NewBatch returns an empty batch with room for n values. Runs starts
// small (a large allocation per machine costs fresh pages) and grows to
// what the program needs.
func NewBatch(n int, shift uint) *Batch {
	return &Batch{Runs: make([]Run, 0, 64), Vals: make([]uint64, n), Shift: shift}
}

// Begin starts a run at the batch's n-th operation, at pc, described by
// infos[0] on. A run begun at the same n as the one before leaves that
// one empty (its first operation did not retire: a page reloaded);
// walks skip empty runs. Small enough to inline: the cores call it once
// per run.
func (b *Batch) Begin(infos []OpInfo, pc, n uint64) {
	k := len(b.Runs)
	if k == cap(b.Runs) {
		b.grow()
	}
	b.Runs = b.Runs[:k+1]
	r := &b.Runs[k] // (in place: a Run literal is built on the stack and copied)
	r.Infos, r.PC, r.Start = infos, pc, uint32(n)
}

// grow doubles the room for runs.
func (b *Batch) grow() {
	b.Runs = append(make([]Run, 0, 2*cap(b.Runs)+64), b.Runs...)
}

// reset empties the batch for the next Core.Execute.
func (b *Batch) reset() {
	b.Runs, b.n, b.done = b.Runs[:0], 0, false
}

// Finish closes the batch at n retired operations: a run begun for an
// operation that faulted (and so did not retire) is dropped.
func (b *Batch) Finish(n int) {
	for k := len(b.Runs); k > 0 && int(b.Runs[k-1].Start) >= n; k-- {
		b.Runs = b.Runs[:k-1]
	}
	b.n, b.done = n, false
}

// Len is the number of operations in the batch.
func (b *Batch) Len() int { return b.n }

// RunEnd is the index after run r's last operation.
func (b *Batch) RunEnd(r int) int {
	if r+1 < len(b.Runs) {
		return int(b.Runs[r+1].Start)
	}
	return b.n
}

// RunNext is the pc after run r: the next run's, or after the last, next.
func (b *Batch) RunNext(r int, next uint64) uint64 {
	if r+1 < len(b.Runs) {
		return b.Runs[r+1].PC
	}
	return next
}

// At returns operation i.
func (b *Batch) At(i int) Retired {
	if b.done {
		return b.ops[i]
	}
	r := sort.Search(len(b.Runs), func(r int) bool { return int(b.Runs[r].Start) > i }) - 1
	run := &b.Runs[r]
	infos, pc := run.Infos, run.PC
	for k := int(run.Start); k < i; k++ {
		pc += uint64(infos[0].Size)
		infos = infos[infos[0].Slots(b.Shift):]
	}
	return b.Record(&infos[0], pc, i)
}

// Record is the record of operation i, described by in, at pc.
func (b *Batch) Record(in *OpInfo, pc uint64, i int) Retired {
	r := Retired{Info: in, PC: pc}
	if in.LogsValue() {
		r.val = b.Vals[i]
	}
	return r
}

// Ops returns one record per operation (made once per batch; valid until
// the next batch).
func (b *Batch) Ops() []Retired {
	if b.done {
		return b.ops
	}
	b.ops = b.ops[:0]
	for r := range b.Runs {
		run := &b.Runs[r]
		infos, pc := run.Infos, run.PC
		for i := int(run.Start); i < b.RunEnd(r); i++ {
			in := &infos[0]
			b.ops = append(b.ops, b.Record(in, pc, i))
			pc += uint64(in.Size)
			if i+1 < b.RunEnd(r) {
				infos = infos[in.Slots(b.Shift):]
			}
		}
	}
	b.done = true
	return b.ops
}

// Clone returns a copy of the batch that later batches do not overwrite.
func (b *Batch) Clone() *Batch {
	return &Batch{Runs: append([]Run(nil), b.Runs...), Vals: append([]uint64(nil), b.Vals[:b.n]...), Shift: b.Shift, CodeGen: b.CodeGen, n: b.n}
}

// BatchOf makes a batch of hand-built operations (for tests and
// tools): each is a run of its own, described by a copy of its Info.
func BatchOf(ops []Retired, shift uint) *Batch {
	b := NewBatch(len(ops), shift)
	for i := range ops {
		o := &ops[i]
		b.Runs = append(b.Runs, Run{Infos: []OpInfo{*o.Info}, PC: o.PC, Start: uint32(i)})
		b.Vals[i] = o.val
	}
	b.n = len(ops)
	return b
}
