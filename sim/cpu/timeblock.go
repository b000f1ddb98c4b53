package cpu

import "sort"

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
// the same results (TestBlockTimingExact).

// maxBlock bounds the operations of a summarised run.
const maxBlock = 32

// timingBlock is the summary of a straight-line run of operations that
// starts at one decoded instruction and ends at a branch (or a system
// operation, or after maxBlock operations).
type timingBlock struct {
	n       int32
	branch  bool    // the last operation is a branch
	last    *OpInfo // the last operation's description (validates reuse)
	gen     uint64  // Memory.CodeGen when summarised: code written since invalidates it
	lastLat uint64  // its execution latency (at least 1)
	issueC  uint64  // issue(last) = max(C + issueC, issue terms)
	issue   []blockTerm
	// in lists the registers read before written, each with the static
	// issue offset of its first reader: if every one is ready by then,
	// nothing stalls on the entry state and every cycle is C + its
	// static offset. Packed as offset<<8 | register.
	in   []uint64
	outs []blockOut
	// static lists the registers written with their static ready
	// offsets (the outs' cOff), packed as offset<<8 | register.
	static []uint64
	terms  []blockTerm
	mem    []int8 // indices of the operations with a data access
}

type blockTerm struct {
	reg uint8
	off uint64
}

// blockOut is the ready cycle of a register the run writes: C + cOff or
// any of terms[first:end].
type blockOut struct {
	reg        uint8
	cOff       uint64
	first, end uint16
}

// expr is a max-plus expression during summarising: offsets by input,
// input 0 being C and input k the k-th register read before written; -1 = absent.
type expr []int64

func (e expr) maxWith(f expr) expr {
	out := make(expr, max(len(e), len(f)))
	for i := range out {
		out[i] = -1
		if i < len(e) {
			out[i] = e[i]
		}
		if i < len(f) && f[i] > out[i] {
			out[i] = f[i]
		}
	}
	return out
}

func (e expr) plus(k int64) expr {
	out := make(expr, len(e))
	for i, v := range e {
		out[i] = -1
		if v >= 0 {
			out[i] = v + k
		}
	}
	return out
}

// staticLat is an operation's latency when its access hits the TLB and
// the L1D.
func (t *Timing) staticLat(in *OpInfo) uint64 {
	p := t.P
	lat := uint64(p.Lat[in.Unit&(numUnits-1)])
	if in.Access != 0 {
		lat += uint64(p.TLB.Latency)
		if in.Class != ClassStore || !p.StoreBuf {
			lat += uint64(p.L1D.Latency)
		}
	}
	return max(lat, 1)
}

// buildBlock summarises the run that starts at ops[i] and attaches it to
// its first operation's description. It returns nil (and attaches
// nothing) when the batch ends inside the run.
func (t *Timing) buildBlock(ops []Retired, i int) *timingBlock {
	end := -1
	for j := i; j < len(ops) && j < i+maxBlock; j++ {
		in := ops[j].Info
		if in.Class == ClassBranch || in.Unit == UnitSys || j == i+maxBlock-1 ||
			(j+1 < len(ops) && ops[j+1].PC != ops[j].PC+uint64(in.Size)) {
			end = j + 1
			break
		}
	}
	if end < 0 {
		return nil
	}
	b := &timingBlock{n: int32(end - i), last: ops[end-1].Info, gen: t.CodeGen}
	inputs := map[uint8]int{} // live-in register -> input index
	var inRegs []uint8
	regs := map[uint8]expr{}
	var slack uint64 // static issue offset of the operation being summarised
	read := func(r uint8) expr {
		if e, ok := regs[r]; ok {
			return e
		}
		k, ok := inputs[r]
		if !ok {
			inRegs = append(inRegs, r)
			k = len(inRegs)
			inputs[r] = k
			b.in = append(b.in, slack<<8|uint64(r))
		}
		e := make(expr, k+1)
		for x := range e {
			e[x] = -1
		}
		e[k] = 0
		return e
	}
	cycle := expr{0}
	var issue expr
	for j := i; j < end; j++ {
		in := ops[j].Info
		issue = cycle
		slack = uint64(cycle[0])
		for s := 0; s < 4; s++ {
			if r := in.SrcReg(s); r != RegNone {
				issue = issue.maxWith(read(r))
			}
		}
		lat := t.staticLat(in)
		done := issue.plus(int64(lat))
		for d := 0; d < 3; d++ {
			if r := in.DstReg(d); r != regSink {
				regs[r] = done
			}
		}
		cycle = issue.plus(1)
		if in.Access != 0 {
			b.mem = append(b.mem, int8(j-i))
		}
		if j == end-1 {
			b.lastLat = lat
			b.branch = in.Class == ClassBranch
		}
	}
	terms := func(e expr) (cOff uint64, ts []blockTerm) {
		cOff = uint64(e[0]) // every expression holds C: cycles only grow from it
		for k := 1; k < len(e); k++ {
			if e[k] >= 0 {
				ts = append(ts, blockTerm{reg: inRegs[k-1], off: uint64(e[k])})
			}
		}
		return cOff, ts
	}
	b.issueC, b.issue = terms(issue)
	var written []int
	for r := range regs {
		written = append(written, int(r))
	}
	sort.Ints(written)
	for _, r := range written {
		c, ts := terms(regs[uint8(r)])
		b.outs = append(b.outs, blockOut{reg: uint8(r), cOff: c, first: uint16(len(b.terms)), end: uint16(len(b.terms) + len(ts))})
		b.static = append(b.static, c<<8|uint64(r))
		b.terms = append(b.terms, ts...)
	}
	ops[i].Info.blk = b
	return b
}

// blockAccesses makes the data accesses of run ops (summarised by b) and
// reports whether all hit the TLB and the L1D. If not, the results wait
// in t.res for the operation-by-operation path.
//
// An access to the most recently used TLB page and L1D line of its sets
// (the common case) is made inline, its counts added once per run.
func (t *Timing) blockAccesses(ops []Retired, b *timingBlock) bool {
	tlb, l1 := t.tlb, t.l1
	for k, j := range b.mem {
		ea := ops[j].EA
		if tlb.hitMRU(ea) && l1.hitMRU(ea) {
			continue
		}
		t.countHits(uint64(k))
		return t.accessRest(ops, b, k)
	}
	t.countHits(uint64(len(b.mem)))
	return true
}

// countHits counts n accesses made by hitMRU in the TLB and the L1D.
func (t *Timing) countHits(n uint64) {
	t.Stats.TLBAccess += n
	t.Stats.L1DAccess += n
	t.tlb.Accesses += n
	t.l1.Accesses += n
}

// accessRest makes the accesses of run ops from b.mem[k] on in full, the
// ones before having hit, and reports whether all hit.
func (t *Timing) accessRest(ops []Retired, b *timingBlock, k int) bool {
	p := t.P
	for h, j := range b.mem[:k] {
		lat := uint64(p.TLB.Latency)
		if ops[j].Info.Class != ClassStore || !p.StoreBuf {
			lat += uint64(p.L1D.Latency)
		}
		t.res[h] = memResult{lat: lat, xlat: uint32(p.TLB.Latency), events: EvTLBAccess | EvL1DAccess, ds: DSL1D}
	}
	hit := true
	for h, j := range b.mem[k:] {
		m := &t.res[k+h]
		t.access(&ops[j], m)
		hit = hit && m.events == EvTLBAccess|EvL1DAccess
	}
	if !hit {
		t.nres, t.resNext = len(b.mem), 0
	}
	return hit
}

// runBlock times run ops from its summary b; next is the pc after it.
func (t *Timing) runBlock(ops []Retired, b *timingBlock, next uint64) {
	ready := &t.ready
	c := t.cycle
	issue := c + b.issueC
	late := false
	for _, tm := range b.in {
		if ready[uint8(tm)] > c+tm>>8 {
			late = true
		}
	}
	if !late {
		for _, o := range b.static {
			ready[uint8(o)] = c + o>>8
		}
	} else {
		t.lateBlock(b, c, &issue)
	}
	t.cycle = issue + 1
	t.Stats.StallCycles += t.cycle - c - uint64(b.n)
	if b.branch && t.predict(&ops[b.n-1], next) {
		t.cycle = issue + b.lastLat + uint64(t.P.Mispred)
	}
}

// lateBlock evaluates b's summary in full: some register it reads was not
// ready by its first reader's static issue cycle.
func (t *Timing) lateBlock(b *timingBlock, c uint64, issueOut *uint64) {
	ready := &t.ready
	issue := *issueOut
	for _, tm := range b.issue {
		issue = max(issue, ready[tm.reg]+tm.off)
	}
	vals := t.outVals[:len(b.outs)]
	for k := range b.outs {
		o := &b.outs[k]
		v := c + o.cOff
		for _, tm := range b.terms[o.first:o.end] {
			v = max(v, ready[tm.reg]+tm.off)
		}
		vals[k] = v
	}
	for k := range b.outs {
		ready[b.outs[k].reg] = vals[k]
	}
	*issueOut = issue
}
