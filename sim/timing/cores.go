package timing

import (
	"fmt"
	"math/bits"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// Several cores (simrun run --cpus N).
//
// Each core is a Model of its own: pipeline, data TLB, branch predictors,
// L1D and L2, the L2 private to the core as on the Neoverse presets (and,
// by the model's choice, on slow-memory too). The cores share one
// last-level cache and the MESI Directory (coherence.go), which stands
// for the interconnect's snoop filter. What a core's access does beyond
// the one-core model:
//
//   - A store or atomic that hits a line the core holds Shared asks the
//     directory for ownership (an upgrade): the other copies leave their
//     cores' L1D and L2.
//   - A private miss asks the directory: a line another core owns comes
//     from that core (data source codes.DSPeerCore, Preset.Peer cycles;
//     a modified copy is written back to the last-level cache on the way);
//     otherwise from the last-level cache or DRAM as before. A store
//     takes the line Modified and invalidates every other copy.
//   - The private caches do not report their evictions: a line that left
//     both L1D and L2 of a core silently stays in the directory's record
//     until a request meets it, which then first records the eviction
//     (Directory.Evict, writing a modified line back to the last-level
//     cache). The data source and latency are therefore always those of
//     the caches' contents.
//
// Run summaries (block.go) assume that accesses hitting the L1D change
// nothing. For a load that holds here too (a copy in the L1D is valid:
// other cores' stores remove it), but a store hit may have to upgrade a
// Shared copy. So a core of several summarises runs without stores as
// one core does, and times runs with a store or an atomic operation by
// operation (timingBlock.stepped; slowRun takes them, TimeBatch's inline
// path never does). A model of one core never reaches this file's code
// (its cluster is nil, and no summary of its is stepped).

// cluster is what the cores of a multi-core model share.
type cluster struct {
	cores []*Model
	llc   *cache
	dir   *Directory
	// sweepAt is the directory size at which sweep next runs.
	sweepAt int
}

// NewCores returns n cold cores of preset p sharing a last-level cache
// and a coherence directory, 1 ≤ n ≤ MaxCores; n = 1 is New(p) alone.
func NewCores(p *Preset, n int) ([]*Model, error) {
	if n == 1 {
		return []*Model{New(p)}, nil
	}
	dir, err := NewDirectory(n)
	if err != nil {
		return nil, err
	}
	c := &cluster{llc: newCache(p.LLC), dir: dir}
	c.sweepAt = 2 * n * (p.L1D.Size/p.L1D.Line + p.L2.Size/p.L2.Line)
	for i := 0; i < n; i++ {
		t := newModel(p, c.llc)
		t.co, t.core = c, i
		c.cores = append(c.cores, t)
	}
	return c.cores, nil
}

// EnableCores makes n cold cores of preset p (NewCores) and turns core 0
// on for machine m (cpu.Machine.EnableTiming); the kernel moves the
// machine from core to core (OnCore).
func EnableCores(m *cpu.Machine, p *Preset, n int) ([]*Model, error) {
	cores, err := NewCores(p, n)
	if err != nil {
		return nil, err
	}
	shift := uint(bits.TrailingZeros64(max(m.Arch.InsnAlign, 1)))
	for _, t := range cores {
		t.PCShift = shift
	}
	if err := m.EnableTiming(cores[0]); err != nil {
		return nil, err
	}
	return cores, nil
}

// Cores returns every core of t's model, t among them (t alone for a
// model of one core).
func (t *Model) Cores() []*Model {
	if t.co == nil {
		return []*Model{t}
	}
	return t.co.cores
}

// CoreIndex is t's number among its model's cores.
func (t *Model) CoreIndex() int { return t.core }

// NumCores is how many cores t's model has.
func (t *Model) NumCores() int {
	if t.co == nil {
		return 1
	}
	return len(t.co.cores)
}

// OnCore returns core i of t's model as the machine's timer: the kernel
// calls it when a thread starts to run on core i.
func (t *Model) OnCore(i int) cpu.Timer {
	if t.co == nil || i < 0 || i >= len(t.co.cores) {
		return t
	}
	return t.co.cores[i]
}

// Directory returns the coherence directory of a multi-core model (nil
// for one core).
func (t *Model) Directory() *Directory {
	if t.co == nil {
		return nil
	}
	return t.co.dir
}

// Total adds up the cores' counts; Cycles is the most cycles any core
// has run.
func Total(cores []*Model) Stats {
	var s Stats
	for _, t := range cores {
		c := t.Stats
		s.Cycles = max(s.Cycles, c.Cycles)
		s.Insns += c.Insns
		s.L1DAccess += c.L1DAccess
		s.L1DRefill += c.L1DRefill
		s.L2Access += c.L2Access
		s.L2Refill += c.L2Refill
		s.LLCAccess += c.LLCAccess
		s.LLCMiss += c.LLCMiss
		s.TLBAccess += c.TLBAccess
		s.TLBWalk += c.TLBWalk
		s.Branches += c.Branches
		s.Mispredicts += c.Mispredicts
		s.NotTaken += c.NotTaken
		s.StallCycles += c.StallCycles
		s.PeerHits += c.PeerHits
		s.Upgrades += c.Upgrades
	}
	return s
}

// holds reports whether addr's line is in c, changing nothing.
func (c *cache) holds(addr uint64) bool {
	line := addr>>c.lineShift + 1
	for _, tag := range c.tags[(int(line)&c.setMask)*c.ways:][:c.ways] {
		if tag == line {
			return true
		}
	}
	return false
}

// remove takes addr's line out of c (an invalidation); the lines after
// it in its set move up, so the empty entry is the oldest.
func (c *cache) remove(addr uint64) {
	line := addr>>c.lineShift + 1
	set := c.tags[(int(line)&c.setMask)*c.ways:][:c.ways]
	for i, tag := range set {
		if tag == line {
			copy(set[i:], set[i+1:])
			set[len(set)-1] = 0
			return
		}
	}
}

// privately reports whether core t's L1D or L2 holds addr's line.
func (t *Model) privately(addr uint64) bool { return t.l1.holds(addr) || t.l2.holds(addr) }

// invalidate takes addr's line out of core t's private caches.
func (t *Model) invalidate(addr uint64) {
	t.l1.remove(addr)
	t.l2.remove(addr)
	clear(t.hot[:])
}

// settle records in the directory the evictions the private caches made
// of addr's line (line in directory terms) without telling it, for
// every core it names as a holder; a modified copy is written back to
// the last-level cache. Core self has just missed its private caches
// (stale: its record goes whatever its caches hold now, having filled
// the line) or hit them.
func (c *cluster) settle(line, addr uint64, self int, stale bool) {
	for h := c.dir.Holders(line); h != 0; h &= h - 1 {
		k := bits.TrailingZeros64(h)
		gone := !c.cores[k].privately(addr)
		if k == self {
			gone = stale
		}
		if gone && c.dir.Evict(k, line) {
			c.llc.access(addr)
		}
	}
}

// sweep settles every line of the directory (see settle), in line
// order so that the write-backs reach the last-level cache in an order
// that depends on nothing but the run: the records of evictions nobody
// asked about would otherwise pile up. It runs when the directory has
// grown to twice what the private caches can hold (or twice what it held
// after the last sweep), so its cost per request stays constant.
func (c *cluster) sweep() {
	shift := c.cores[0].l1.lineShift
	for _, line := range c.dir.sortedLines() {
		c.settle(line, line<<shift, -1, false)
	}
	c.sweepAt = max(c.sweepAt, 2*c.dir.Lines())
}

// accessShared is access for a core of a multi-core model: the TLB as
// one core's, then the private caches, the directory and the shared
// last-level cache as the comment at the top of this file says.
func (t *Model) accessShared(ea uint64, in *cpu.OpInfo, m *memResult) {
	clear(t.hot[:])
	p, co := t.Preset, t.co
	xlat := uint64(p.TLB.Latency)
	t.Stats.TLBAccess++
	m.events = codes.EvTLBAccess | codes.EvL1DAccess
	if !t.tlb.access(ea) {
		t.Stats.TLBWalk++
		xlat += uint64(p.Walk)
		m.events |= codes.EvTLBWalk
	}
	m.xlat = uint32(xlat)
	write := in.Class == cpu.ClassStore || in.Class == cpu.ClassLoadAtomic
	line := ea >> t.l1.lineShift
	t.Stats.L1DAccess++
	mem, ds := uint64(p.L1D.Latency), uint8(codes.DSL1D)
	hit := t.l1.access(ea)
	if !hit {
		t.Stats.L1DRefill++
		t.Stats.L2Access++
		m.events |= codes.EvL1DRefill | codes.EvL2DAccess
		mem, ds = uint64(p.L2.Latency), codes.DSL2
		hit = t.l2.access(ea)
	}
	switch {
	case hit && (!write || co.dir.State(t.core, line) >= Exclusive):
		// a valid copy (every other core's store removed it), or one
		// this core owns
	case hit:
		// a store to a Shared copy: ownership without data
		co.settle(line, ea, t.core, false)
		s := co.dir.Store(t.core, line)
		co.drop(s.Invalidated, ea)
		t.Stats.Upgrades++
		mem = max(mem, uint64(p.Peer))
	default:
		t.Stats.L2Refill++
		m.events |= codes.EvL2DMiss | codes.EvLLCAccess
		co.settle(line, ea, t.core, true)
		var s Snoop
		if write {
			s = co.dir.Store(t.core, line)
		} else {
			s = co.dir.Load(t.core, line)
		}
		co.drop(s.Invalidated, ea)
		if co.dir.Lines() >= co.sweepAt {
			co.sweep()
		}
		if s.Peer >= 0 {
			// from the peer's private cache; a modified copy is written
			// back to the shared cache on the way (MESI has no Owned
			// state)
			t.Stats.PeerHits++
			mem, ds = uint64(p.Peer), codes.DSPeerCore
			if s.PeerModified {
				co.llc.access(ea)
			}
		} else {
			t.Stats.LLCAccess++
			mem, ds = uint64(p.LLC.Latency), codes.DSLLC
			if !co.llc.access(ea) {
				t.Stats.LLCMiss++
				m.events |= codes.EvLLCMiss
				mem, ds = uint64(p.DRAM), codes.DSDRAM
			}
		}
	}
	m.ds = ds
	m.lat = xlat + mem
	if in.Class == cpu.ClassStore && p.StoreBuf {
		m.lat = xlat // the store buffer hides the cache (and the coherence traffic)
	}
}

// ownsHot reports whether every access of blk, a stepped run of a core
// of several (vals: its operations' values, infos: their descriptions),
// hits a hot line (see TimeBatch) and every store and atomic one a line
// this core owns (Exclusive or Modified). Then accessShared would change
// nothing for any of them (no upgrade, no directory request) and would
// time each as one core's L1D hit, so the run is timed from its summary
// as one core's is; it counts the hits as TimeBatch's inline path does.
// Ownership is remembered in t.owned while the directory is unchanged.
func (t *Model) ownsHot(infos []cpu.OpInfo, vals []uint64, blk *timingBlock) bool {
	dir := t.co.dir
	if t.ownedGen != dir.gen {
		clear(t.owned[:])
		t.ownedGen = dir.gen
	}
	shift := min(t.tlb.pageShift, t.l1.lineShift) & 63
	for _, m := range blk.mem {
		ea := vals[memOp(m)]
		if line := ea >> shift; t.hot[line&(hotLines-1)] != line+1 {
			if !t.tlb.holds(ea) || !t.l1.hitMRU(ea) {
				return false
			}
			t.hot[line&(hotLines-1)] = line + 1
		}
		if c := infos[memSlot(m)].Class; c != cpu.ClassStore && c != cpu.ClassLoadAtomic {
			continue
		}
		if line := ea >> (t.l1.lineShift & 63); t.owned[line&(hotLines-1)] != line+1 {
			if dir.State(t.core, line) < Exclusive {
				return false
			}
			t.owned[line&(hotLines-1)] = line + 1
		}
	}
	t.hits += uint64(len(blk.mem))
	return true
}

// cutBlock returns the summary of the first n operations of the run
// that full summarises (described by infos[0] on, at pc), which the
// batch's end cuts; nil if they cannot be summarised. With several cores
// a batch ends every few dozen operations (linux.DefaultCoreStep),
// mostly inside a run, at the few places where a thread stops in a loop
// over and over: these summaries are kept with the run's own (full.cuts),
// which they must not replace.
func (t *Model) cutBlock(full *timingBlock, infos []cpu.OpInfo, pc uint64, n int, shift uint) *timingBlock {
	if full.cuts == nil {
		cuts := make([]*timingBlock, full.n)
		full.cuts = &cuts
	}
	c := (*full.cuts)[n]
	if c == nil || c != noSummary && c.gen&^steppedGen != t.codeGen {
		if c, _ = t.buildBlock(infos, pc, n, false, false, shift); c == nil {
			c = noSummary
		}
		(*full.cuts)[n] = c
	}
	if c == noSummary {
		return nil
	}
	return c
}

// noSummary marks in timingBlock.cuts a cut that cannot be summarised.
var noSummary = &timingBlock{}

// drop takes addr's line out of the private caches of the cores in mask.
func (c *cluster) drop(mask, addr uint64) {
	for ; mask != 0; mask &= mask - 1 {
		c.cores[bits.TrailingZeros64(mask)].invalidate(addr)
	}
}

// String names core t for messages ("core 2 of 4").
func (t *Model) String() string {
	return fmt.Sprintf("core %d of %d", t.core, t.NumCores())
}
