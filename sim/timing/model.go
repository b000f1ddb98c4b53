// Package timing is the timing model: an in-order, single-issue
// pipeline that gives every retired operation a dispatch, issue and
// completion cycle. Issue waits for source registers (issue latency);
// execution takes a latency per unit; loads and stores go through a data
// TLB (translation latency) and an L1D / L2 / last-level cache hierarchy
// with DRAM behind it; branches through predictors whose mispredictions
// flush the pipeline. From it come the SPE events and data sources
// (sim/spe/codes), the operations' latencies and the PMU counters.
//
// The cores describe what they retire in sim/cpu's terms (cpu.OpInfo per
// decoded instruction, a cpu.Batch per Core.Execute); the machine hands each
// batch to the Model (a cpu.Timer) and its details to the
// cpu.RetireConsumers. Straight-line runs are timed from summaries
// (block.go), with the same cycles as timing each operation alone.
package timing

import (
	"fmt"
	"math/bits"
	"sort"
	"unsafe"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// CacheConfig is one set-associative cache level (or the TLB, with page-sized
// lines).
type CacheConfig struct {
	Size, Ways, Line int
	Latency          int // cycles to return data that hits here
}

// Preset is a named core model.
type Preset struct {
	Name    string
	MIDR    uint64
	Desc    string
	MHz     uint64
	L1D, L2 CacheConfig
	LLC     CacheConfig
	DRAM    int // cycles
	TLB     CacheConfig
	Walk    int // page-walk cycles
	// Peer is the cycles a load takes whose line another core's private
	// caches supply (a snoop through the interconnect: the Neoverse
	// "peer core" data source), and a store that must first take a line
	// from other cores; only --cpus N > 1 has peers (cores.go). The
	// figures are the model's: a snoop crosses the interconnect to the
	// home node and on to the owning core, so it costs more than a hit
	// in the shared cache and far less than DRAM.
	Peer     int
	Mispred  int // branch mispredict penalty
	BPBits   int // log2 of the bimodal predictor entries
	BTBBits  int // log2 of the indirect-branch target buffer entries
	Lat      [cpu.NumUnits]uint8
	StoreBuf bool // stores complete in the store buffer (latency 1)
}

// Presets are the core models --cpu selects.
var Presets = []Preset{
	{Name: "neoverse-n1", MIDR: 0x413fd0c1, Desc: "Neoverse-N1-like core", MHz: 3000,
		L1D: CacheConfig{64 << 10, 4, 64, 4}, L2: CacheConfig{1 << 20, 8, 64, 11}, LLC: CacheConfig{8 << 20, 16, 64, 35},
		DRAM: 240, TLB: CacheConfig{48 * 4096, 48, 4096, 1}, Walk: 30, Peer: 50, Mispred: 11, BPBits: 12, BTBBits: 10,
		Lat: [cpu.NumUnits]uint8{cpu.UnitALU: 1, cpu.UnitMul: 3, cpu.UnitDiv: 12, cpu.UnitFP: 3, cpu.UnitFPDiv: 10, cpu.UnitSIMD: 3,
			cpu.UnitLoad: 0, cpu.UnitStore: 1, cpu.UnitAtomic: 2, cpu.UnitBranch: 1, cpu.UnitSys: 1}, StoreBuf: true},
	{Name: "neoverse-v2", MIDR: 0x410fd4f0, Desc: "Neoverse-V2-like core", MHz: 3100,
		L1D: CacheConfig{64 << 10, 4, 64, 4}, L2: CacheConfig{2 << 20, 8, 64, 12}, LLC: CacheConfig{32 << 20, 16, 64, 40},
		DRAM: 260, TLB: CacheConfig{48 * 4096, 48, 4096, 1}, Walk: 28, Peer: 55, Mispred: 12, BPBits: 13, BTBBits: 11,
		Lat: [cpu.NumUnits]uint8{cpu.UnitALU: 1, cpu.UnitMul: 2, cpu.UnitDiv: 12, cpu.UnitFP: 2, cpu.UnitFPDiv: 10, cpu.UnitSIMD: 2,
			cpu.UnitLoad: 0, cpu.UnitStore: 1, cpu.UnitAtomic: 2, cpu.UnitBranch: 1, cpu.UnitSys: 1}, StoreBuf: true},
	// A slow-memory core for collision and latency experiments.
	{Name: "slow-memory", MIDR: 0x413fd0c1, Desc: "core with slow caches and DRAM", MHz: 1000,
		L1D: CacheConfig{4 << 10, 2, 64, 8}, L2: CacheConfig{32 << 10, 4, 64, 40}, LLC: CacheConfig{256 << 10, 8, 64, 120},
		DRAM: 800, TLB: CacheConfig{8 * 4096, 8, 4096, 2}, Walk: 200, Peer: 160, Mispred: 20, BPBits: 8, BTBBits: 6,
		Lat: [cpu.NumUnits]uint8{cpu.UnitALU: 1, cpu.UnitMul: 4, cpu.UnitDiv: 30, cpu.UnitFP: 6, cpu.UnitFPDiv: 30, cpu.UnitSIMD: 6,
			cpu.UnitLoad: 0, cpu.UnitStore: 1, cpu.UnitAtomic: 4, cpu.UnitBranch: 1, cpu.UnitSys: 1}},
}

// PresetByName finds a core model.
func PresetByName(name string) (*Preset, error) {
	var names []string
	for i := range Presets {
		if Presets[i].Name == name {
			return &Presets[i], nil
		}
		names = append(names, Presets[i].Name)
	}
	return nil, fmt.Errorf("unknown CPU model %q (known: %v)", name, names)
}

// cache is a set-associative cache with LRU replacement. Each set holds
// its tags most-recently-used first (an empty entry, 0, is the oldest).
type cache struct {
	ways, setMask int
	lineShift     uint
	tags          []uint64 // sets*ways, 0 = empty (tags stored +1)
}

func newCache(c CacheConfig) *cache {
	sets := c.Size / c.Line / c.Ways
	if sets < 1 {
		sets = 1
	}
	for sets&(sets-1) != 0 { // round down to a power of two
		sets &= sets - 1
	}
	shift := uint(0)
	for 1<<shift < c.Line {
		shift++
	}
	return &cache{ways: c.Ways, setMask: sets - 1, lineShift: shift, tags: make([]uint64, sets*c.Ways)}
}

// access looks addr up, filling it on a miss; it reports a hit.
func (c *cache) access(addr uint64) bool {
	if c.lookup(addr) {
		return true
	}
	line := addr>>c.lineShift + 1
	set := c.tags[(int(line)&c.setMask)*c.ways:][:c.ways]
	copy(set[1:], set[:len(set)-1])
	set[0] = line
	return false
}

// hitMRU reports whether addr's line is the most recently used of its set
// (lookup's inlined fast path). It always loads the set's head: a
// shortcut through the line accessed last measured no faster.
func (c *cache) hitMRU(addr uint64) bool {
	line := addr>>(c.lineShift&63) + 1 // the mask spares the compiler's check of the shift
	return c.tags[(int(line)&c.setMask)*c.ways] == line
}

// lookup reports whether addr's line is in the cache, making it the most
// recently used of its set if so (without counting an access); on a miss
// nothing changes.
func (c *cache) lookup(addr uint64) bool {
	if c.hitMRU(addr) {
		return true
	}
	line := addr>>c.lineShift + 1
	set := c.tags[(int(line)&c.setMask)*c.ways:][:c.ways]
	for i := 1; i < len(set); i++ {
		if set[i] == line {
			for ; i > 0; i-- { // (a call to copy costs more: the moves are short)
				set[i] = set[i-1]
			}
			set[0] = line
			return true
		}
	}
	return false
}

// tlb is the data TLB: set-associative (the presets' are fully
// associative) with first-in first-out replacement, so a hit changes
// nothing and the entries' order never matters (the model's choice; with
// least-recently-used replacement, a program walking two pages turn
// about would move an entry at every other access).
//
// held is a filter in front of the set scan: held[page%heldSize] is
// page+1 for pages known to be held (set by a fill or a scan that found
// the page, cleared when the page is replaced).
type tlb struct {
	ways, setMask int
	pageShift     uint
	tags          []uint64 // sets*ways, page+1 (0: empty)
	next          []int    // per set: the way its next fill replaces (the oldest)
	held          [heldSize]uint64
}

// heldSize is the size of tlb.held (a power of two).
const heldSize = 64

func newTLB(c CacheConfig) *tlb {
	shape := newCache(c) // the same sets and shift
	return &tlb{ways: shape.ways, setMask: shape.setMask, pageShift: shape.lineShift, tags: shape.tags, next: make([]int, shape.setMask+1)}
}

// holds reports whether the TLB is known to hold addr's page (lookup's
// inlined fast path: false may still be a hit).
func (t *tlb) holds(addr uint64) bool {
	page := addr >> (t.pageShift & 63)
	return t.held[page&(heldSize-1)] == page+1
}

// lookup reports whether addr's page is in the TLB (without counting an
// access).
func (t *tlb) lookup(addr uint64) bool {
	if t.holds(addr) {
		return true
	}
	page := addr >> (t.pageShift & 63)
	s := int(page) & t.setMask
	for _, tag := range t.tags[s*t.ways : (s+1)*t.ways] {
		if tag == page+1 {
			t.held[page&(heldSize-1)] = page + 1
			return true
		}
	}
	return false
}

// access looks addr's page up, filling it over the set's oldest entry on
// a miss; it reports a hit.
func (t *tlb) access(addr uint64) bool {
	if t.lookup(addr) {
		return true
	}
	page := addr >> (t.pageShift & 63)
	s := int(page) & t.setMask
	w := &t.tags[s*t.ways+t.next[s]]
	if old := *w; old != 0 && t.held[(old-1)&(heldSize-1)] == old {
		t.held[(old-1)&(heldSize-1)] = 0
	}
	*w = page + 1
	t.held[page&(heldSize-1)] = page + 1
	t.next[s] = (t.next[s] + 1) % t.ways
	return false
}

// Stats are the PMU counts of a run.
type Stats struct {
	Cycles, Insns                          uint64
	L1DAccess, L1DRefill                   uint64
	L2Access, L2Refill, LLCAccess, LLCMiss uint64
	TLBAccess, TLBWalk                     uint64
	Branches, Mispredicts, NotTaken        uint64
	StallCycles                            uint64
	// With several cores (cores.go): private misses a peer core's
	// caches served, and stores that upgraded a shared copy.
	PeerHits, Upgrades uint64
}

// Model is the timing model's state: one core's pipeline, caches, TLB
// and predictors, and its PMU counts.
type Model struct {
	Preset *Preset
	cycle  uint64
	ready  [256]uint64 // cycle a register's value is available
	l1, l2 *cache
	llc    *cache
	tlb    *tlb
	bp     []uint8         // 2-bit counters
	btb    []btbEntry      // direct mapped by pc>>PCShift
	ras    [rasSize]uint64 // return stack: a ring, top at ras[rasTop]
	rasTop uint8
	rasN   uint8 // entries held (the oldest is overwritten when full)
	Stats  Stats
	// NoBlocks times every operation on its own (for tests: the block
	// summaries must give the same cycles).
	NoBlocks bool
	// codeGen is the batch being timed's (Batch.CodeGen): summaries
	// made under another are rebuilt.
	codeGen uint64
	// PCShift is log2 of the instruction alignment: the branch predictor
	// indexes its table by pc>>PCShift (2 for 4-byte instructions; 1 on
	// s390x, whose instructions start on any halfword).
	PCShift uint

	res [maxBlock]memResult // a run's accesses, made before its timing
	// hot holds lines (in the smaller of the L1D line and the page),
	// each +1 at index line%hotLines, whose accesses hit the TLB and the
	// most recently used L1D line of their set: true while only such
	// accesses are made (an access that moves or fills an entry empties
	// it).
	hot [hotLines]uint64
	// TimeBatch's wanted operations, their details and the next wanted index
	// (past every index: none), for its operation-by-operation path.
	want          []int
	out           []cpu.OpTiming
	nextWant      int
	nres, resNext int
	late          [maxInputs]uint64 // lateBlock's late inputs: ready cycle<<8 | index
	sum           *summariser       // buildBlock's working state
	pend          *timingBlock      // a run whose register writes are pending (runBlock)
	pendC         uint64            // its entry cycle
	horizon       uint64            // no register is ready later (see flush)
	hits          uint64            // accesses found by lookup alone in this batch (counted at TimeBatch's end)
	// co is the cores this one shares its last-level cache and the
	// coherence directory with (cores.go); nil for a model of one core,
	// which then runs none of that code.
	co   *cluster
	core int // this core's number in co
	// refill is the cycles spent refilling the pipeline after
	// mispredictions. Every other cycle dispatches an operation or
	// stalls one: StallCycles is what remains of the cycles.
	refill uint64
	// owned holds lines (in L1D lines), each +1 at index line%hotLines,
	// that this core owns (Exclusive or Modified) as the directory said
	// at its gen ownedGen (ownsHot; a core of several only).
	owned    [hotLines]uint64
	ownedGen uint64
	// perMHz divides by Preset.MHz (Nanos).
	perMHz divider
}

// New returns a cold model of preset p.
func New(p *Preset) *Model { return newModel(p, newCache(p.LLC)) }

// newModel is New with the last-level cache llc (a cluster's shared one).
func newModel(p *Preset, llc *cache) *Model {
	return &Model{Preset: p, l1: newCache(p.L1D), l2: newCache(p.L2), llc: llc, tlb: newTLB(p.TLB),
		bp: make([]uint8, 1<<p.BPBits), btb: make([]btbEntry, 1<<p.BTBBits), PCShift: 2, sum: &summariser{},
		perMHz: newDivider(p.MHz)}
}

// Cycle is the current cycle (the dispatch cycle of the next operation).
func (t *Model) Cycle() uint64 { return t.cycle }

// TimeBatch times a batch of retired operations; next is the pc after
// the last one. For the operations whose indices are in want (ascending) it fills
// out[k] with the details; the others only advance the model.
//
// Straight-line runs of operations ending at a branch are timed as a
// whole from a summary (see block); a run whose accesses miss the L1D or
// TLB, that holds a wanted operation or that the batch cuts, goes
// operation by operation. Both give the same cycles.
func (t *Model) TimeBatch(b *cpu.Batch, next uint64, want []int, out []cpu.OpTiming) {
	// The batch's machine may not be the last one's (a run's processes
	// share one model, cpu.Machine.ShareTiming): its code generation and
	// instruction alignment.
	t.want, t.out, t.nextWant, t.codeGen, t.PCShift = want, out, b.Len(), b.CodeGen, b.Shift
	if len(want) > 0 {
		t.nextWant = want[0]
	}
	// limit: summaries time operations before it (the next wanted one;
	// none without summaries).
	limit := t.nextWant
	if t.NoBlocks {
		limit = 0
	}
	lineShift := min(t.tlb.pageShift, t.l1.lineShift) & 63
	for r := 0; r < len(b.Runs); r++ {
		run := &b.Runs[r]
		end, after := b.RunEnd(r), b.RunNext(r, next) // after: the pc after the run
		// The walk is at run.Infos[slot] (a slot, not a slice: fewer
		// values to keep in registers).
		slot, pc := 0, run.PC
		for i := int(run.Start); i < end; {
			blk := (*timingBlock)(run.Infos[slot].Summary)
			if blk == nil || i+int(blk.n) > min(end, limit) || blk.gen != t.codeGen {
				var n int
				var infos []cpu.OpInfo
				// (the batch may end inside the last run; slowRun returns
				// a suffix of the Infos)
				infos, pc, n = t.slowRun(b, run.Infos[slot:], pc, i, end, after, r+1 == len(b.Runs))
				slot = len(run.Infos) - len(infos)
				if !t.NoBlocks {
					limit = t.nextWant
				}
				i += n
				continue
			}
			if l := blk.long; l != nil && i+int(l.n) <= min(end, limit) && t.predicted(l) {
				blk = l
			}
			n := int(blk.n)
			// An access to a page the TLB is known to hold and to the
			// most recently used L1D line of its set (the common case)
			// hits without changing either; from the first other one
			// on, blockAccesses makes them in full. (Inline: a call per
			// run costs.) A line in t.hot needs no look.
			k := 0
			for ; k < len(blk.mem); k++ {
				line := b.Vals[i+int(memOp(blk.mem[k]))] >> lineShift
				if t.hot[line&(hotLines-1)] == line+1 {
					continue
				}
				if !t.tlb.holds(line<<lineShift) || !t.l1.hitMRU(line<<lineShift) {
					break
				}
				t.hot[line&(hotLines-1)] = line + 1
			}
			if k < len(blk.mem) {
				if !t.blockAccesses(run.Infos[slot:], b.Vals[i:i+n], blk, k) { // it counts the ones before k
					var infos []cpu.OpInfo
					infos, pc = t.missedRun(b, run.Infos[slot:], pc, blk, i, end, after)
					slot = len(run.Infos) - len(infos)
					if !t.NoBlocks {
						limit = t.nextWant
					}
					i += n
					continue
				}
			} else {
				t.hits += uint64(k)
			}
			// summarised, inline (as a call it costs TimeBatch 4% more
			// instructions: the loop's values are saved around it)
			nx := after
			if i+n < end {
				nx = pc + blk.bytes
			}
			t.runBlock(blk, pc, nx)
			if i+n < end {
				if blk.condEnd && blk.long == nil {
					t.extend(blk, run.Infos[slot:], pc, end-i, r+1 == len(b.Runs), b.Shift)
				}
				pc += blk.bytes
				slot += blk.slots
			} else if nx == pc && (blk.cond || blk.jump) && blk.again { // (a loop; not a call to itself)
				r = t.repeats(b, r, blk, pc, limit, lineShift, next)
			}
			i += n
		}
	}
	t.flush()
	t.want, t.out = nil, nil
	t.Stats.TLBAccess += t.hits
	t.Stats.L1DAccess += t.hits
	t.hits = 0
	t.Stats.Insns += uint64(b.Len())
	t.Stats.Cycles = t.cycle
	t.Stats.StallCycles = t.cycle - t.Stats.Insns - t.refill
}

// repeats times the runs after b.Runs[r] that are blk (at pc) again,
// whole: a loop whose body is one summarised run ending at a conditional
// branch (blk.cond) or a jump (blk.jump, the loop left from inside), the
// one just timed, which ended run r. It goes as far as TimeBatch's inline path
// and runBlock's loop path would time each run: its accesses hit hot
// lines, runBlock finds blk pending and in time, and the predictor holds
// the closing conditional branch as taken (and a long form's inner
// branches as not taken, as the run just timed left them). Every run but
// the last of them then goes back to blk's start, taken and predicted, so
// they are timed together. It returns the last run it timed (r itself if
// none).
func (t *Model) repeats(b *cpu.Batch, r int, blk *timingBlock, pc uint64, limit int, lineShift uint, next uint64) int {
	// The run just timed went back to blk's start (taken) without a
	// misprediction, so a closing conditional branch's counter is 3 now
	// (a jump has none): a long form's inner branch sharing the counter
	// would have cleared it and made every such run mispredict.
	step := blk.issueC + 1
	if t.pend != blk || t.cycle != t.pendC+step {
		return r
	}
	k := t.repeatRuns(b, r, blk, pc, limit, lineShift)
	if k == 0 {
		return r
	}
	r += k
	// runs 1 to k-1: taken, predicted, a conditional branch's counter
	// stays 3; the inner branches' counters stay 0 (runBlock cleared
	// them)
	t.pendC = t.cycle + uint64(k-1)*step
	t.cycle = t.pendC + step
	t.hits += uint64(k * len(blk.mem))
	t.Stats.Branches += uint64(k*len(blk.inner) + k - 1)
	t.Stats.NotTaken += uint64(k * len(blk.inner))
	if blk.jump { // run k's is counted and taken, as the others'
		t.Stats.Branches++
	} else if t.predictCond(blk.bpIdx, b.RunNext(r, next) != pc+blk.bytes) { // run k
		t.cycle += blk.refill
		t.refill += blk.refill
	}
	return r
}

// repeatRuns counts the runs after b.Runs[r] that are blk (at pc) again,
// whole, ending by limit, with every access to a hot line (see TimeBatch),
// making lines hot as TimeBatch's inline path does.
func (t *Model) repeatRuns(b *cpu.Batch, r int, blk *timingBlock, pc uint64, limit int, lineShift uint) int {
	rs, mem, vals := b.Runs[r+1:], blk.mem, b.Vals
	if len(rs) == 0 {
		return 0
	}
	n := uint32(blk.n)
	start := rs[0].Start                 // repeat k's, while they are blk again
	last := min(b.Len(), limit) - int(n) // the latest a repeat can start
	k := 0
	for ; k < len(rs) && rs[k].PC == pc && rs[k].Start == start && int(start) <= last; k++ {
		for _, m := range mem {
			line := vals[start+uint32(memOp(m))] >> (lineShift & 63)
			if t.hot[line&(hotLines-1)] != line+1 {
				if addr := line << (lineShift & 63); !t.tlb.holds(addr) || !t.l1.hitMRU(addr) {
					return k
				}
				t.hot[line&(hotLines-1)] = line + 1
			}
		}
		start += n
	}
	// The last repeat is whole if the run after it starts where it ends.
	if k > 0 && (k == len(rs) && int(start) != b.Len() || k < len(rs) && rs[k].Start != start) {
		k--
	}
	return k
}

// summarised times from its summary blk the operations described by
// infos[0] on, at pc, their accesses made; more: the run goes on after
// them (else after is the pc that follows). It returns where the walk
// goes on.
func (t *Model) summarised(blk *timingBlock, infos []cpu.OpInfo, pc uint64, more bool, after uint64) ([]cpu.OpInfo, uint64) {
	if !more {
		t.runBlock(blk, pc, after)
		return infos, pc
	}
	t.runBlock(blk, pc, pc+blk.bytes)
	return infos[blk.slots:], pc + blk.bytes // a run's Infos may end with its last op's entry
}

// slowRun times what follows the batch's i-th operation (described by
// infos[0] on, at pc, in a run that ends at end) when TimeBatch's check of its
// summary fails: it makes the summary if there is none, or it is stale
// or longer than the run; it times the operations from the summary if
// their accesses hit and no wanted one is among them, else one by one.
// It returns where the walk goes on and how many operations it timed.
func (t *Model) slowRun(b *cpu.Batch, infos []cpu.OpInfo, pc uint64, i, end int, after uint64, cut bool) ([]cpu.OpInfo, uint64, int) {
	blk, n := (*timingBlock)(infos[0].Summary), 0
	fits := blk != nil && i+int(blk.n) <= end
	switch {
	case fits && blk.gen == t.codeGen^steppedGen:
		// a run with a store on a core of several (cores.go)
	case blk != nil && !fits && cut && t.co != nil && !t.NoBlocks && blk.gen&^steppedGen == t.codeGen:
		// the batch ends inside the run (cores.go)
		n = end - i
		blk = t.cutBlock(blk, infos, pc, n, b.Shift)
	case !fits || blk.gen != t.codeGen:
		if blk, n = t.buildBlock(infos, pc, end-i, cut, false, b.Shift); blk != nil {
			infos[0].Summary = unsafe.Pointer(blk)
		}
	}
	if blk != nil {
		n = int(blk.n)
		if !t.NoBlocks && i+n <= t.nextWant {
			if blk.stepped && t.ownsHot(infos, b.Vals[i:i+n], blk) || !blk.stepped && t.blockAccesses(infos, b.Vals[i:i+n], blk, 0) {
				infos, pc = t.summarised(blk, infos, pc, i+n < end, after)
				return infos, pc, n
			}
		}
	}
	infos, pc = t.stepOps(b, infos, pc, i, n, end, after)
	return infos, pc, n
}

// stepOps times the n operations of batch b from the i-th on (described
// by infos[0] on, at pc) one by one; the run they are in ends at end,
// after is the pc after it. It returns where the walk goes on. (Out of
// TimeBatch's loop: rare, and its variables would crowd the registers there.)
func (t *Model) stepOps(b *cpu.Batch, infos []cpu.OpInfo, pc uint64, i, n, end int, after uint64) ([]cpu.OpInfo, uint64) {
	for j := i; j < i+n; j++ {
		in := &infos[0]
		op := b.Record(in, pc, j)
		pc += uint64(in.Size)
		nj := after
		if j+1 < end {
			nj = pc
			infos = infos[in.Slots(b.Shift):]
		}
		var pre *memResult
		if in.Access != 0 && t.nres > 0 {
			pre = &t.res[t.resNext]
			t.resNext++
		}
		t.step(&op, j, nj, pre)
	}
	t.nres, t.resNext = 0, 0
	return infos, pc
}

// missedRun times a summarised run, blk at pc (the batch's i-th
// operation on, described by infos[0] on, in a run that ends at end,
// after is the pc after it), whose accesses, made and waiting in t.res,
// did not all hit: operation by operation, as step would, less what only
// a wanted operation needs (there is none before TimeBatch's limit). It returns
// where the walk goes on, as stepOps does.
func (t *Model) missedRun(b *cpu.Batch, infos []cpu.OpInfo, pc uint64, blk *timingBlock, i, end int, after uint64) ([]cpu.OpInfo, uint64) {
	t.flush()
	p := t.Preset
	last := i+int(blk.n) == end // the run ends with blk
	next := pc + blk.bytes      // the pc after blk
	if last {
		next = after
	}
	ins, at, res := infos, pc, t.res[:t.nres]
	for j := int32(0); j < blk.n; j++ {
		in := &ins[0]
		lat := uint64(p.Lat[in.Unit&(cpu.NumUnits-1)])
		branch := false // as in step: an operation with an access is not predicted
		if in.Access != 0 {
			lat += res[0].lat
			res = res[1:]
		} else {
			branch = in.Class == cpu.ClassBranch
		}
		issue, done := t.schedule(in, lat)
		fall := at + uint64(in.Size)
		if branch {
			nx := fall
			if j == blk.n-1 {
				nx = next
			}
			if t.predict(in, at, nx) {
				t.refillAfter(issue, done)
			}
		}
		if j < blk.n-1 {
			at, ins = fall, ins[in.Slots(b.Shift):]
		}
	}
	t.nres, t.resNext = 0, 0
	if last { // (a run's Infos may end with its last operation's entry)
		return infos, pc + blk.bytes
	}
	return infos[blk.slots:], pc + blk.bytes
}

// step times operation r, the batch's i-th (its successor is at next);
// pre, if not nil, is its memory access, already made. The details of a
// wanted operation go to t.out, and t.nextWant moves on (past every
// index: none).
func (t *Model) step(r *cpu.Retired, i int, next uint64, pre *memResult) {
	t.flush()
	in := r.Info
	dispatch := t.cycle
	var d cpu.OpTiming
	lat := uint64(t.Preset.Lat[in.Unit&(cpu.NumUnits-1)])
	switch {
	case in.Access != 0:
		m := pre
		if m == nil {
			m = &t.res[0]
			t.access(r.Addr(), in, m)
		}
		lat += m.lat
		d.XlatLat, d.Events, d.DS, d.DSValid = m.xlat, m.events, m.ds, in.Class != cpu.ClassStore
	case in.Class == cpu.ClassBranch:
		t.branch(r, next, &d)
	case in.Flags&cpu.OpConditional != 0:
		d.Taken = r.CondPassed()
	}
	issue, done := t.schedule(in, lat)
	if d.Events&codes.EvMispredict != 0 {
		t.refillAfter(issue, done)
	}
	if i == t.nextWant {
		d.Dispatch, d.Issue, d.Complete = dispatch, issue, done
		d.Events |= codes.EvRetired
		w := sort.SearchInts(t.want, i)
		t.out[w] = d
		t.nextWant = int(^uint(0) >> 1)
		if w+1 < len(t.want) {
			t.nextWant = t.want[w+1]
		}
	}
}

// memResult is the outcome of one data access.
type memResult struct {
	lat    uint64 // cycles the access adds to the operation
	xlat   uint32 // translation latency
	events uint64
	ds     uint8
}

// schedule issues an operation described by in, of latency lat, at the
// current cycle or when its inputs are ready, and marks its results
// ready at its completion; the next operation dispatches a cycle after
// its issue. It returns the issue and completion cycles.
func (t *Model) schedule(in *cpu.OpInfo, lat uint64) (issue, done uint64) {
	ready, sr := &t.ready, in.Src
	issue = max(t.cycle, ready[uint8(sr)], ready[uint8(sr>>8)], ready[uint8(sr>>16)], ready[uint8(sr>>24)])
	done = issue + max(lat, 1)
	ready[uint8(in.Dst)], ready[uint8(in.Dst>>8)], ready[uint8(in.Dst>>16)] = done, done, done
	t.horizon = max(t.horizon, done)
	t.cycle = issue + 1
	return issue, done
}

// refillAfter makes the pipeline refill behind a mispredicted branch
// issued and completed at those cycles.
func (t *Model) refillAfter(issue, done uint64) {
	t.cycle = done + uint64(t.Preset.Mispred)
	t.refill += t.cycle - issue - 1
}

// access runs the data access at ea of an operation described by in
// through the TLB and the cache hierarchy.
func (t *Model) access(ea uint64, in *cpu.OpInfo, m *memResult) {
	if t.co != nil {
		t.accessShared(ea, in, m)
		return
	}
	clear(t.hot[:]) // its looks may move or fill entries
	p := t.Preset
	xlat := uint64(p.TLB.Latency)
	t.Stats.TLBAccess++
	m.events = codes.EvTLBAccess | codes.EvL1DAccess
	if !t.tlb.access(ea) {
		t.Stats.TLBWalk++
		xlat += uint64(p.Walk)
		m.events |= codes.EvTLBWalk
	}
	m.xlat = uint32(xlat)
	mem := uint64(p.L1D.Latency)
	t.Stats.L1DAccess++
	m.ds = codes.DSL1D
	if !t.l1.access(ea) {
		t.Stats.L1DRefill++
		t.Stats.L2Access++
		m.events |= codes.EvL1DRefill | codes.EvL2DAccess
		mem = uint64(p.L2.Latency)
		m.ds = codes.DSL2
		if !t.l2.access(ea) {
			t.Stats.L2Refill++
			t.Stats.LLCAccess++
			m.events |= codes.EvL2DMiss | codes.EvLLCAccess
			mem = uint64(p.LLC.Latency)
			m.ds = codes.DSLLC
			if !t.llc.access(ea) {
				t.Stats.LLCMiss++
				m.events |= codes.EvLLCMiss
				mem = uint64(p.DRAM)
				m.ds = codes.DSDRAM
			}
		}
	}
	m.lat = xlat + mem
	if in.Class == cpu.ClassStore && p.StoreBuf {
		m.lat = xlat // the store buffer hides the cache
	}
}

// branch runs the predictors for branch r whose successor is at next.
func (t *Model) branch(r *cpu.Retired, next uint64, d *cpu.OpTiming) {
	d.Taken = next != r.PC+uint64(r.Info.Size)
	d.Next = next
	if t.predict(r.Info, r.PC, next) {
		d.Events |= codes.EvMispredict
	}
}

// predict runs the predictors and counts the branch described by in at
// pc, whose successor is at next; it reports a misprediction. The
// predictors: a bimodal table for conditional branches (predictCond), a
// direct-mapped target buffer for indirect branches (non-returns), a
// return stack.
func (t *Model) predict(in *cpu.OpInfo, pc, next uint64) bool {
	fall := pc + uint64(in.Size)
	taken := next != fall
	if in.Flags&(cpu.OpReturn|cpu.OpIndirect|cpu.OpConditional) == cpu.OpConditional {
		return t.predictCond(t.bpIndex(pc), taken)
	}
	t.Stats.Branches++
	if !taken && in.Flags&cpu.OpConditional != 0 {
		t.Stats.NotTaken++
	}
	var miss bool
	switch {
	case in.Flags&cpu.OpReturn != 0:
		var want uint64
		if t.rasN > 0 {
			want = t.ras[t.rasTop&(rasSize-1)]
			t.rasTop--
			t.rasN--
		}
		miss = want != next
	case in.Flags&cpu.OpIndirect != 0:
		if in.Flags&cpu.OpLink != 0 {
			t.push(fall)
		}
		e := &t.btb[(pc>>(t.PCShift&63))&uint64(len(t.btb)-1)]
		miss = e.pc != pc || e.target != next // a branch the buffer does not hold mispredicts
		e.pc, e.target = pc, next
	case in.Flags&cpu.OpLink != 0:
		t.push(fall)
	}
	if miss {
		t.Stats.Mispredicts++
	}
	return miss
}

// predictCond runs the bimodal predictor for a conditional direct branch
// at predictor index i, taken or not, and counts it; it reports a
// misprediction.
func (t *Model) predictCond(i uint64, taken bool) bool {
	t.Stats.Branches++
	c := &t.bp[i&uint64(len(t.bp)-1)]
	miss := *c >= 2 != taken
	if taken {
		*c = min(*c+1, 3)
	} else {
		t.Stats.NotTaken++
		*c = max(*c, 1) - 1
	}
	if miss {
		t.Stats.Mispredicts++
	}
	return miss
}

// bpIndex is the branch predictor's entry for a branch at pc.
func (t *Model) bpIndex(pc uint64) uint64 {
	return (pc >> (t.PCShift & 63)) & uint64(len(t.bp)-1) // (the mask spares the shift check)
}

// btbEntry is one entry of the target buffer: the branch it holds (the
// full pc, so aliases never hit) and its last target.
type btbEntry struct{ pc, target uint64 }

// rasSize is the return stack depth (a power of two).
const rasSize = 16

// push pushes a return address, dropping the oldest when the stack is full.
func (t *Model) push(ret uint64) {
	t.rasTop++
	t.ras[t.rasTop&(rasSize-1)] = ret
	t.rasN = min(t.rasN+1, rasSize)
}

// hotLines is the size of Model.hot (a power of two).
const hotLines = 16

// Enable makes a cold model of preset p for machine m and turns it on
// (cpu.Machine.EnableTiming).
func Enable(m *cpu.Machine, p *Preset) (*Model, error) {
	t := New(p)
	t.PCShift = uint(bits.TrailingZeros64(max(m.Arch.InsnAlign, 1)))
	if err := m.EnableTiming(t); err != nil {
		return nil, err
	}
	return t, nil
}

// Of returns m's timing model (nil when it is off).
func Of(m *cpu.Machine) *Model {
	t, _ := m.Timing.(*Model)
	return t
}

// Nanos converts cycles to virtual nanoseconds.
func (t *Model) Nanos(cycles uint64) uint64 {
	if t.perMHz.d != t.Preset.MHz {
		t.perMHz = newDivider(t.Preset.MHz)
	}
	return t.perMHz.div(cycles * 1000)
}
