package timing

import (
	"math/bits"
	"slices"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// Block timing. The in-order model is max-plus linear: every issue and
// ready cycle inside a straight-line run of operations is the maximum of
// the entry cycle C and the entry ready cycles of the registers it reads,
// each plus a fixed offset, as long as the latencies are fixed. With the
// data accesses hitting the TLB and the L1D (the usual case) they are, so
// a run is summarised once:
//
//	issue(last) = max(C + c, ready[r1] + o1, ready[r2] + o2, ...)
//	ready'[d]   = max(C + c_d, ready[r] + o_dr, ...)   for each register d written
//
// and timed from the summary with a few loads, adds and maxima instead of
// a scoreboard walk per operation. Runs whose accesses miss, or that hold
// an operation SPE wants in detail, are timed operation by operation with
// the same results (TestBlockTimingExact). A run that ends at a
// conditional branch the program keeps falling through gets a long form
// too, summarised on through it (see timingBlock.long).

// maxBlock bounds the operations of a summarised run.
const maxBlock = 32

// timingBlock is the summary of a straight-line run of operations that
// starts at one decoded instruction and ends at a branch (or a system
// operation, or after maxBlock operations).
type timingBlock struct {
	n      int32
	branch bool   // the last operation is a branch
	gen    uint64 // Memory.CodeGen when summarised: code written since invalidates it
	// refill is the cycles a misprediction of the closing branch costs:
	// from issue + 1 to its completion (its latency, at least 1) plus
	// the preset's Mispred.
	refill   uint64
	bytes    uint64      // the run's length in bytes
	lastOff  uint64      // the last operation's offset in bytes
	lastInfo *cpu.OpInfo // its description
	slots    int         // its length in Infos entries
	issueC   uint64      // issue(last) = max(C + issueC, issue terms)
	// The lists below are packed as offset<<8 | register (mem: slot<<8
	// | op). They sit together in the summariser's list slab (see
	// summariser.take).
	//
	// in lists the registers read before written (the inputs), each
	// with the static issue offset of its first reader: an input ready
	// by then is not late, and nothing it reaches is later than its
	// static offset. So if no input is late, every cycle is C + its
	// static offset; if some are, only their terms can raise one.
	in []uint64
	// firstIn is in[0]'s offset, the earliest any input is read (noInput
	// when none: then nothing can be late).
	firstIn uint64
	// static lists the registers written, ascending, with their static
	// ready offsets (C + offset).
	static []uint64
	// terms[ends[j-1]:ends[j]] (from 0 for j = 0) are what input j
	// reaches: a written register (regSink: the last issue) no earlier
	// than the input's ready cycle + offset.
	ends, terms []uint64
	// tail is the part of static later than the cycle after the last
	// issue (the earliest the next operation dispatches), maxOff the
	// latest of all: the rest is ready by the time anything reads it.
	tail   []uint64
	maxOff uint64
	// mem lists the operations with a data access: the index in the run
	// (memOp) and the offset of the description in the run's Infos
	// (memSlot).
	mem []uint64
	// again: timed right after itself from its summary (a loop), the
	// run finds every register it writes ready in time, so nothing it
	// reads can be late.
	again bool
	// jump: the closing branch is an unconditional direct branch without
	// a link, always taken and never mispredicted (the predictor only
	// counts it).
	jump bool
	// A summary that ends with a conditional branch (condEnd) gets a
	// long form once that branch is seen not taken longAfter times (seen
	// counts): long runs on through it, and through any further ones, to
	// where the run it was made from left straight-line code. TimeBatch takes
	// the long form where the run goes on at least as far and the
	// predictor holds every inner branch (at predictor index inner[k])
	// as not taken: each then passes without a misprediction, and only
	// its counter (0 or 1 before, 0 after) and the counts change.
	condEnd bool
	// cond: the closing branch is a conditional direct branch (a long
	// form's too), at predictor index bpIdx: runBlock runs its predictor
	// itself.
	cond  bool
	bpIdx uint64
	seen  uint8
	long  *timingBlock
	inner []uint64
	// stepped: a run of a core of several (cores.go) with a store or
	// an atomic, timed operation by operation (its gen is marked so that
	// TimeBatch's inline path never takes it; slowRun does).
	stepped bool
	// (*cuts)[k]: the summary of the run's first k operations, where a
	// batch's end cut it on a core of several (cutBlock; a pointer:
	// every summary carries it).
	cuts *[]*timingBlock
}

// steppedGen marks the gen of a stepped summary: gen^steppedGen is the
// code generation it was made under.
const steppedGen = 1 << 63

// noInput is a summary's firstIn when it reads no register before
// writing it: later than any horizon, without overflowing an add.
const noInput = 1 << 62

// memOp and memSlot unpack a mem entry.
func memOp(m uint64) uint8    { return uint8(m) }
func memSlot(m uint64) uint64 { return m >> 8 }

// maxInputs bounds the registers a summarised run reads before writing
// (a run with more is timed operation by operation).
const maxInputs = 48

// expr is a max-plus expression during summarising: v[0] is the offset
// from C, v[k] the offset from the ready cycle of the k-th register read
// before written; a negative entry (and every index from n on) is
// absent. Absent entries hold absent: far enough below zero that adding
// offsets keeps them negative, so the loops below need no branches.
type expr struct {
	v [maxInputs + 1]int64
	n int
}

// absent is an expr entry for an input that does not reach it.
const absent = -1 << 40

// grow makes entries up to n present in v (as absent).
func (e *expr) grow(n int) {
	for ; e.n < n; e.n++ {
		e.v[e.n] = absent
	}
}

// raise makes input k at least off.
func (e *expr) raise(k int, off int64) {
	e.grow(k + 1)
	e.v[k] = max(e.v[k], off)
}

// maxWith makes e the maximum of e and f plus d.
func (e *expr) maxWith(f *expr, d int64) {
	e.grow(f.n)
	w := e.v[:f.n]
	for k, v := range f.v[:len(w)] {
		w[k] = max(w[k], v+d)
	}
}

// plus sets e to f plus d.
func (e *expr) plus(f *expr, d int64) {
	e.n = f.n
	w := e.v[:f.n]
	for k, v := range f.v[:len(w)] {
		w[k] = v + d
	}
}

// summariser is the reused working state of buildBlock.
type summariser struct {
	exprs [maxBlock]expr // the issue expression of each operation
	used  int
	// regExpr is, by register, 1 + the index in exprs of the issue
	// expression of its last writer (0: not written), regLat that
	// writer's latency: the register is ready at the expression plus it.
	regExpr [256]int16
	regLat  [256]int64
	inputOf [256]uint8 // register -> its input index (0: not read before written)
	inRegs  []uint8    // the inputs' registers, by index-1
	written []uint8
	// the summary's lists while they grow (copied out at the end)
	in, static, tail, ends, terms, mem, inner []uint64
	// Summaries and their lists come from these slabs, a slab's worth
	// at a time: one allocation per summary cost more than making it.
	blocks []timingBlock
	lists  []uint64
}

// Slab sizes (summaries, list entries).
const (
	blockSlab = 32
	listSlab  = 2048
)

// newBlock returns a zeroed summary; it stays the summariser's until
// kept (a summary given up is made again in its place).
func (s *summariser) newBlock() *timingBlock {
	if len(s.blocks) == 0 {
		s.blocks = make([]timingBlock, blockSlab)
	}
	b := &s.blocks[0]
	*b = timingBlock{}
	return b
}

// keep hands out the summary newBlock returned last.
func (s *summariser) keep() { s.blocks = s.blocks[1:] }

// take returns room for n list entries.
func (s *summariser) take(n int) []uint64 {
	if len(s.lists) < n {
		s.lists = make([]uint64, max(n, listSlab))
	}
	buf := s.lists[:n:n]
	s.lists = s.lists[n:]
	return buf
}

func (s *summariser) alloc() *expr {
	e := &s.exprs[s.used]
	s.used++
	return e
}

// reset clears what the last summary left.
func (s *summariser) reset() {
	for _, r := range s.inRegs {
		s.inputOf[r] = 0
	}
	for _, r := range s.written {
		s.regExpr[r] = 0
	}
	s.inRegs, s.written, s.used = s.inRegs[:0], s.written[:0], 0
	s.in, s.static, s.tail, s.ends, s.terms, s.mem, s.inner = s.in[:0], s.static[:0], s.tail[:0], s.ends[:0], s.terms[:0], s.mem[:0], s.inner[:0]
}

// staticLat is an operation's latency when its access hits the TLB and
// the L1D.
func (t *Model) staticLat(in *cpu.OpInfo) uint64 {
	p := t.Preset
	lat := uint64(p.Lat[in.Unit&(cpu.NumUnits-1)])
	if in.Access != 0 {
		lat += uint64(p.TLB.Latency)
		if in.Class != cpu.ClassStore || !p.StoreBuf {
			lat += uint64(p.L1D.Latency)
		}
	}
	return max(lat, 1)
}

// buildBlock summarises the run of operations described by infos[0] on,
// at pc (at most avail of them). With through it is a long form: it runs
// on through the conditional branches before the last of the avail
// operations (they were not taken). When the batch may end inside the
// run (cut) and does, or the run reads too many registers, it returns nil
// and how many operations (the run's, or all avail) to time one by one.
func (t *Model) buildBlock(infos []cpu.OpInfo, pc uint64, avail int, cut, through bool, shift uint) (*timingBlock, int) {
	if cut && blockEnd(infos, avail, cut, through, shift) < 0 {
		return nil, avail // (the batch's end comes first: no summary)
	}
	sm := t.sum
	b := sm.newBlock()
	sm.reset()
	var issue *expr
	end, slot := -1, 0
	var off uint64 // the operation's offset in bytes
	for j := 0; j < avail && j < maxBlock; j++ {
		in := &infos[slot]
		last := endsBlock(in, j, avail, cut, through)
		if in.Class == cpu.ClassBranch && !last { // a long form's inner branch
			sm.inner = append(sm.inner, t.bpIndex(pc+off))
		}
		// dispatch: the cycle after the last issue (C for the first)
		next := sm.alloc()
		if issue == nil {
			next.v[0], next.n = 0, 1
		} else {
			next.plus(issue, 1)
		}
		issue = next
		slack := uint64(issue.v[0])
		for k := 0; k < 4; k++ {
			r := in.SrcReg(k)
			if r == cpu.RegNone { // (AddSrc packs them from the first)
				break
			}
			if x := sm.regExpr[r]; x != 0 {
				issue.maxWith(&sm.exprs[x-1], sm.regLat[r])
				continue
			}
			if sm.inputOf[r] == 0 {
				if len(sm.inRegs) == maxInputs {
					return nil, blockEnd(infos, avail, cut, through, shift)
				}
				sm.inRegs = append(sm.inRegs, r)
				sm.inputOf[r] = uint8(len(sm.inRegs))
				sm.in = append(sm.in, slack<<8|uint64(r))
			}
			issue.raise(int(sm.inputOf[r]), 0)
		}
		lat := t.staticLat(in)
		for d := 0; d < 3; d++ {
			r := in.DstReg(d)
			if r == cpu.RegSink { // (AddDst packs them from the first)
				break
			}
			if sm.regExpr[r] == 0 {
				sm.written = append(sm.written, r)
			}
			sm.regExpr[r], sm.regLat[r] = int16(sm.used), int64(lat) // issue is the last allocated
		}
		if in.Access != 0 {
			sm.mem = append(sm.mem, uint64(slot)<<8|uint64(j))
			b.stepped = b.stepped || t.co != nil && (in.Class == cpu.ClassStore || in.Class == cpu.ClassLoadAtomic)
		}
		if last {
			end = j + 1
			b.n, b.gen, b.bytes, b.lastOff, b.slots = int32(end), t.codeGen, off+uint64(in.Size), off, slot+in.Slots(shift)
			b.lastInfo, b.refill = in, lat+uint64(t.Preset.Mispred)-1
			b.branch = in.Class == cpu.ClassBranch
			b.cond = innerBranch(in)
			b.jump = jumpBranch(in)
			b.condEnd = !through && b.cond
			b.bpIdx = t.bpIndex(pc + off)
			break
		}
		off += uint64(in.Size)
		slot += in.Slots(shift)
	}
	if end < 0 { // (cut: checked above)
		return nil, avail
	}
	// (every expression holds C: cycles only grow from it)
	b.issueC = uint64(issue.v[0])
	slices.Sort(sm.written)
	for _, r := range sm.written {
		sm.static = append(sm.static, uint64(sm.exprs[sm.regExpr[r]-1].v[0]+sm.regLat[r])<<8|uint64(r))
	}
	// each input's terms: the written registers', then the issue's
	for j := 1; j <= len(sm.inRegs); j++ {
		for _, r := range sm.written {
			if e := &sm.exprs[sm.regExpr[r]-1]; j < e.n && e.v[j] >= 0 {
				sm.terms = append(sm.terms, uint64(e.v[j]+sm.regLat[r])<<8|uint64(r))
			}
		}
		if j < issue.n && issue.v[j] >= 0 {
			sm.terms = append(sm.terms, uint64(issue.v[j])<<8|cpu.RegSink)
		}
		sm.ends = append(sm.ends, uint64(len(sm.terms)))
	}
	b.again = true
	for _, tm := range sm.in {
		if r := uint8(tm); sm.regExpr[r] != 0 && uint64(sm.exprs[sm.regExpr[r]-1].v[0]+sm.regLat[r]) > b.issueC+1+tm>>8 {
			b.again = false
		}
	}
	for _, o := range sm.static {
		if o>>8 > b.issueC+1 {
			sm.tail = append(sm.tail, o)
		}
		b.maxOff = max(b.maxOff, o>>8)
	}
	buf := sm.take(len(sm.in) + len(sm.static) + len(sm.tail) + len(sm.ends) + len(sm.terms) + len(sm.mem) + len(sm.inner))
	b.in, buf = carve(buf, sm.in)
	b.static, buf = carve(buf, sm.static)
	b.tail, buf = carve(buf, sm.tail)
	b.ends, buf = carve(buf, sm.ends)
	b.terms, buf = carve(buf, sm.terms)
	b.mem, buf = carve(buf, sm.mem)
	b.inner, _ = carve(buf, sm.inner)
	b.firstIn = noInput
	if len(b.in) > 0 {
		b.firstIn = b.in[0] >> 8 // in is by offset
	}
	if b.stepped {
		b.gen ^= steppedGen
	}
	sm.keep()
	return b, 0
}

// carve copies list to the first entries of buf and returns them there,
// and the rest of buf.
func carve(buf, list []uint64) (out, rest []uint64) {
	n := copy(buf, list)
	return buf[:n:n], buf[n:]
}

// endsBlock reports whether the j-th operation of a run to summarise,
// described by in, ends the summary (see buildBlock).
func endsBlock(in *cpu.OpInfo, j, avail int, cut, through bool) bool {
	inner := through && j < avail-1 && innerBranch(in)
	return (in.Class == cpu.ClassBranch && !inner) || in.Unit == cpu.UnitSys || in.Varies || j == maxBlock-1 || (j == avail-1 && !cut)
}

// blockEnd is the length of the summary buildBlock would make, or -1 if
// the run reaches avail first (cut: the batch ends inside it).
func blockEnd(infos []cpu.OpInfo, avail int, cut, through bool, shift uint) int {
	slot := 0
	for j := 0; j < avail && j < maxBlock; j++ {
		if endsBlock(&infos[slot], j, avail, cut, through) {
			return j + 1
		}
		slot += infos[slot].Slots(shift)
	}
	return -1
}

// innerBranch reports whether an operation described by in can be a long
// form's inner branch: a conditional direct branch.
func innerBranch(in *cpu.OpInfo) bool {
	return in.Class == cpu.ClassBranch && in.Flags&(cpu.OpConditional|cpu.OpReturn|cpu.OpIndirect|cpu.OpLink) == cpu.OpConditional
}

// jumpBranch reports whether an operation described by in is a jump: an
// unconditional direct branch without a link.
func jumpBranch(in *cpu.OpInfo) bool {
	return in.Class == cpu.ClassBranch && in.Flags&(cpu.OpConditional|cpu.OpReturn|cpu.OpIndirect|cpu.OpLink) == 0
}

// extend makes a long form of blk, the summary of the operations
// described by infos[0] on, at pc, whose closing conditional branch was
// just not taken: the run it is in goes on for avail operations from pc
// (cut: the batch may end inside it).
func (t *Model) extend(blk *timingBlock, infos []cpu.OpInfo, pc uint64, avail int, cut bool, shift uint) {
	if blk.seen++; blk.seen < longAfter {
		return
	}
	l, _ := t.buildBlock(infos, pc, avail, cut, true, shift)
	switch {
	case l != nil && l.stepped: // (TimeBatch takes a long form without a look at its gen)
		blk.condEnd = false
	case l != nil && l.n > blk.n:
		blk.long = l
	case !cut: // it would be no longer another time either
		blk.condEnd = false
	}
}

// longAfter is the sightings of a summary's closing branch not taken
// that make its long form: code that runs only a few times gets none (a
// long form costs about as much to make as 16 uses of it save; 4, 8 and
// 32 measured worse on the short programs, the same on the long ones).
const longAfter = 16

// predicted reports whether the predictor holds each of l's inner
// branches as not taken.
func (t *Model) predicted(l *timingBlock) bool {
	for _, x := range l.inner {
		if t.bp[x&uint64(len(t.bp)-1)] >= 2 {
			return false
		}
	}
	return true
}

// blockAccesses makes the data accesses of a run (summarised by b, its
// operations described by infos[0] on, its values vals) from b.mem[from]
// on, the ones before having hit the TLB and the most recently used L1D
// line of their set (TimeBatch checks that inline). It reports whether all
// hit the TLB and the L1D; if not, the results wait in t.res for the
// operation-by-operation path. Accesses that hit are counted once per
// run.
func (t *Model) blockAccesses(infos []cpu.OpInfo, vals []uint64, b *timingBlock, from int) bool {
	tlb, l1 := t.tlb, t.l1
	clear(t.hot[:]) // the looks below may move or fill entries
	for k := from; k < len(b.mem); k++ {
		if ea := vals[memOp(b.mem[k])]; tlb.lookup(ea) && l1.lookup(ea) {
			continue
		}
		t.hits += uint64(k)
		return t.accessRest(infos, vals, b, k)
	}
	t.hits += uint64(len(b.mem))
	return true
}

// accessRest makes the accesses of a run from b.mem[k] on in full, the
// ones before having hit, and reports whether all hit.
func (t *Model) accessRest(infos []cpu.OpInfo, vals []uint64, b *timingBlock, k int) bool {
	p := t.Preset
	for h, m := range b.mem[:k] {
		lat := uint64(p.TLB.Latency)
		if infos[memSlot(m)].Class != cpu.ClassStore || !p.StoreBuf {
			lat += uint64(p.L1D.Latency)
		}
		t.res[h] = memResult{lat: lat, xlat: uint32(p.TLB.Latency), events: codes.EvTLBAccess | codes.EvL1DAccess, ds: codes.DSL1D}
	}
	hit := true
	for h, m := range b.mem[k:] {
		r := &t.res[k+h]
		t.access(vals[memOp(m)], &infos[memSlot(m)], r)
		hit = hit && r.events == codes.EvTLBAccess|codes.EvL1DAccess
	}
	if !hit {
		t.nres, t.resNext = len(b.mem), 0
	}
	return hit
}

// runBlock times a run from its summary b: it starts at pc; next is the
// pc after it.
//
// The register writes of a run that was not late are left pending
// (t.pend, entered at t.pendC) until anything else is timed (flush), so a
// loop body with b.again timed right after itself without a misprediction
// needs no look at the registers at all.
func (t *Model) runBlock(b *timingBlock, pc, next uint64) {
	c := t.cycle
	issue := c + b.issueC
	if t.pend == b && b.again && c == t.pendC+b.issueC+1 {
		t.pendC = c
	} else {
		if p := t.pend; p != nil {
			t.writePending(p, c) // flush, inlined
		}
		// late is 1 if some input is ready after its first reader's static issue.
		var late uint64
		if t.horizon > c+b.firstIn {
			for _, tm := range b.in {
				_, borrow := bits.Sub64(c+tm>>8, t.ready[uint8(tm)], 0)
				late |= borrow
			}
		}
		if late != 0 {
			t.pend = nil
			t.lateBlock(b, c, &issue)
		} else {
			t.pend, t.pendC = b, c
		}
	}
	t.cycle = issue + 1
	if len(b.inner) > 0 { // not taken, predicted (TimeBatch checked)
		for _, x := range b.inner {
			t.bp[x&uint64(len(t.bp)-1)] = 0
		}
		t.Stats.Branches += uint64(len(b.inner))
		t.Stats.NotTaken += uint64(len(b.inner))
	}
	if b.cond {
		if t.predictCond(b.bpIdx, next != pc+b.bytes) {
			t.cycle += b.refill
			t.refill += b.refill
		}
	} else if b.branch {
		if t.predict(b.lastInfo, pc+b.lastOff, next) {
			t.cycle += b.refill
			t.refill += b.refill
		}
	}
}

// flush makes the pending writes of a run timed by runBlock.
//
// A ready cycle no later than the current cycle means "ready": nothing
// timed from now on dispatches earlier, so it reads the same as any
// other such value. When no register is ready later than now (the
// horizon), the writes of such values are skipped.
func (t *Model) flush() {
	if b := t.pend; b != nil {
		t.writePending(b, t.cycle)
		t.pend = nil
	}
}

// writePending makes the register writes of b, the pending run, at the
// current cycle now (flush's work; it leaves t.pend to the caller).
func (t *Model) writePending(b *timingBlock, now uint64) {
	c, list := t.pendC, b.static
	if t.horizon <= now {
		list = b.tail // the cycle is past c + issueC: the rest is ready
	}
	for _, o := range list {
		t.ready[uint8(o)] = c + o>>8
	}
	t.horizon = max(t.horizon, c+b.maxOff)
}

// lateBlock evaluates b's summary with the inputs that are late: ready
// after their first reader's static issue cycle (see timingBlock.in).
// The others raise nothing above its static offset.
func (t *Model) lateBlock(b *timingBlock, c uint64, issueOut *uint64) {
	ready, late := &t.ready, t.late[:0]
	for j, tm := range b.in { // (read before the writes below)
		if r := ready[uint8(tm)]; r > c+tm>>8 {
			late = append(late, r<<8|uint64(j))
		}
	}
	for _, o := range b.static {
		ready[uint8(o)] = c + o>>8
	}
	horizon := max(t.horizon, c+b.maxOff)
	ready[cpu.RegSink] = *issueOut // (written by every sink, never read)
	for _, l := range late {
		j, r := l&0xff, l>>8
		from := uint64(0)
		if j > 0 {
			from = b.ends[j-1]
		}
		for _, x := range b.terms[from:b.ends[j]] {
			v := r + x>>8
			ready[uint8(x)] = max(ready[uint8(x)], v)
			horizon = max(horizon, v)
		}
	}
	t.horizon = horizon
	*issueOut = ready[cpu.RegSink]
}
