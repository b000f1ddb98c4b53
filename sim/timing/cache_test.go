package timing

import (
	"math/rand"
	"slices"
	"testing"
)

// mtfCache is the textbook LRU cache the model's must match: each set
// a list of lines, most recently used first.
type mtfCache struct {
	sets      [][]uint64
	lineShift uint
}

func (c *mtfCache) holds(addr uint64) bool {
	line := addr >> c.lineShift
	return slices.Contains(c.sets[int(line)%len(c.sets)], line)
}

func (c *mtfCache) access(addr uint64) bool {
	line := addr >> c.lineShift
	set := &c.sets[int(line)%len(c.sets)]
	if i := slices.Index(*set, line); i >= 0 {
		*set = slices.Insert(slices.Delete(*set, i, i+1), 0, line)
		return true
	}
	*set = slices.Insert(*set, 0, line)
	if len(*set) > cap(*set)-1 { // capacity ways+1: drop the oldest
		*set = (*set)[:len(*set)-1]
	}
	return false
}

// TestCacheLRU drives the cache and the textbook model with the same
// addresses (a small working set, so both hits and evictions are common)
// and compares every outcome; a third of the probes are lookups, which
// must leave the cache alone on a miss.
func TestCacheLRU(t *testing.T) {
	for _, cfg := range []CacheConfig{{4 << 10, 4, 64, 1}, {48 * 4096, 48, 4096, 1}, {1 << 10, 1, 64, 1}} {
		c := newCache(cfg)
		ref := &mtfCache{sets: make([][]uint64, c.setMask+1), lineShift: c.lineShift}
		for i := range ref.sets {
			ref.sets[i] = make([]uint64, 0, cfg.Ways+1)
		}
		rng := rand.New(rand.NewSource(1))
		span := uint64(cfg.Size) * 3 / 2
		tally := probes{cfg: cfg, model: "LRU"}
		for i := 0; i < 30000; i++ {
			addr := rng.Uint64() % span
			if i%3 == 0 {
				addr %= span / 8 // a hot part
			}
			var got, want bool
			if i%3 == 1 {
				got, want = c.lookup(addr), ref.holds(addr)
				if want {
					ref.access(addr)
				}
			} else {
				got, want = c.access(addr), ref.access(addr)
			}
			tally.check(t, i, addr, got, want)
		}
		tally.enough(t)
	}
}

// fifoTLB is the textbook first-in first-out TLB the model's must match:
// each set a queue of pages, oldest first.
type fifoTLB struct {
	sets      [][]uint64
	ways      int
	pageShift uint
}

func (f *fifoTLB) holds(addr uint64) bool {
	page := addr >> f.pageShift
	return slices.Contains(f.sets[int(page)%len(f.sets)], page)
}

func (f *fifoTLB) access(addr uint64) bool {
	if f.holds(addr) {
		return true
	}
	page := addr >> f.pageShift
	set := &f.sets[int(page)%len(f.sets)]
	if len(*set) == f.ways {
		*set = (*set)[1:]
	}
	*set = append(*set, page)
	return false
}

// TestTLBFIFO drives the TLB and the textbook model with the same
// addresses and compares every outcome, as TestCacheLRU does; pages that
// share a slot of the held filter (heldSize apart) are common, so the
// filter's entries are replaced and evicted under the scan.
func TestTLBFIFO(t *testing.T) {
	for _, cfg := range []CacheConfig{{48 * 4096, 48, 4096, 1}, {8 * 4096, 8, 4096, 2}, {64 * 4096, 4, 4096, 1}, {4 * 4096, 1, 4096, 1}} {
		tl := newTLB(cfg)
		ref := &fifoTLB{sets: make([][]uint64, tl.setMask+1), ways: cfg.Ways, pageShift: tl.pageShift}
		rng := rand.New(rand.NewSource(1))
		pages := uint64(cfg.Size/cfg.Line) * 3 / 2
		tally := probes{cfg: cfg, model: "FIFO"}
		for i := 0; i < 30000; i++ {
			page := rng.Uint64() % pages
			switch i % 4 {
			case 0:
				page %= pages / 4 // a hot part
			case 1:
				page = page%4*heldSize + 7 // filter slot 7
			}
			addr := page<<12 | rng.Uint64()&0xfff
			var got, want bool
			if i%3 == 1 {
				got, want = tl.lookup(addr), ref.holds(addr)
				if fast := tl.holds(addr); fast && !want {
					t.Fatalf("%+v: probe %d (%#x): the filter holds a page the TLB does not", cfg, i, addr)
				}
			} else {
				got, want = tl.access(addr), ref.access(addr)
			}
			tally.check(t, i, addr, got, want)
		}
		tally.enough(t)
	}
}

// probes counts a replacement test's outcomes and fails it at the first
// that differs from the textbook model's.
type probes struct {
	cfg          CacheConfig
	model        string
	hits, misses int
}

func (p *probes) check(t *testing.T, i int, addr uint64, got, want bool) {
	t.Helper()
	if got != want {
		t.Fatalf("%+v: probe %d (%#x): hit %v, textbook %s says %v", p.cfg, i, addr, got, p.model, want)
	}
	if got {
		p.hits++
	} else {
		p.misses++
	}
}

// enough fails the test if it saw too few hits or misses to mean much.
func (p *probes) enough(t *testing.T) {
	t.Helper()
	if p.hits < 1000 || p.misses < 1000 {
		t.Fatalf("%+v: %d hits, %d misses: the test exercises too little", p.cfg, p.hits, p.misses)
	}
}
