package cpu

import "unsafe"

// ICache is a core's cache of pre-decoded instructions: one CodePage of
// slots per executable guest page, a slot per possible instruction start
// (every 4 bytes on arm64, every 2 on s390x). An architecture keeps its own
// instruction type T in the slots and decodes each slot once; Memory calls
// back when code bytes change so stale slots are decoded again.
type ICache[T any] struct {
	mem    *Memory
	shift  uint // log2 of the slot granularity in bytes
	maxLen int  // longest instruction in bytes
	clear  func(*T)
	// WithInfo makes new pages carry Infos (set while timing is on).
	WithInfo bool
	recent   [64]struct {
		vpn  uint64
		page *CodePage[T]
	}
}

// CodePage holds the decoded slots of one page.
type CodePage[T any] struct {
	Base  uint64
	Slots []T
	// Infos parallels Slots with the descriptions the timing model uses
	// (made on demand; an entry is filled when its slot first retires).
	Infos []OpInfo
	cache *ICache[T]
}

// Info returns the (possibly not yet Valid) description of the slot for
// pc.
func (p *CodePage[T]) Info(pc uint64) *OpInfo {
	if p.Infos == nil {
		p.Infos = make([]OpInfo, len(p.Slots))
	}
	return &p.Infos[(pc&PageMask)>>p.cache.shift]
}

// NewICache returns a cache for instructions aligned to 1<<shift bytes and
// at most maxLen long; clear marks a slot as not decoded (it should only
// reset the field the executor dispatches on, so an instruction that is
// executing while it overwrites itself keeps its operands).
func NewICache[T any](mem *Memory, shift uint, maxLen int, clear func(*T)) *ICache[T] {
	c := &ICache[T]{mem: mem, shift: shift, maxLen: maxLen, clear: clear}
	for i := range c.recent {
		c.recent[i].vpn = ^uint64(0)
	}
	return c
}

// InvalidateCode clears every slot whose instruction may overlap bytes
// [off, off+n) of the page, including ones that start on the previous page
// and run into this one.
func (p *CodePage[T]) InvalidateCode(off, n int) {
	if n <= 0 {
		return
	}
	c := p.cache
	c.mem.CodeGen++
	lo := off - (c.maxLen - 1)
	if lo < 0 {
		if prev := c.mem.PageAt(p.Base - PageSize); prev != nil && p.Base >= PageSize {
			if pp, ok := prev.Code.(*CodePage[T]); ok {
				pp.clearRange(PageSize+lo, PageSize)
			}
		}
		lo = 0
	}
	p.clearRange(lo, off+n)
}

func (p *CodePage[T]) clearRange(from, to int) {
	sh := p.cache.shift
	for i := (from + 1<<sh - 1) >> sh; i<<sh < to && i < len(p.Slots); i++ {
		p.cache.clear(&p.Slots[i])
		if p.Infos != nil {
			p.Infos[i].Valid = false
		}
	}
}

// Page returns the decoded page holding pc, creating it on first use.
// A cached page stays valid until memory clears its slots; Fetch then
// notices when the page itself was replaced.
func (c *ICache[T]) Page(pc uint64) (*CodePage[T], *Fault) {
	vpn := pc >> PageShift
	e := &c.recent[vpn&63]
	if e.vpn == vpn {
		return e.page, nil
	}
	pg, ok := c.mem.FetchPage(pc)
	if !ok {
		return nil, &Fault{PC: pc, Kind: FaultFetch, Err: c.mem.Fault}
	}
	cp, _ := pg.Code.(*CodePage[T])
	if cp == nil || cp.cache != c {
		// Charged to the memory limit as if its Infos were made too.
		var slot T
		cost := uint32(PageSize>>c.shift) * uint32(unsafe.Sizeof(slot)+unsafe.Sizeof(OpInfo{}))
		if !c.mem.ChargeCode(pg, pc, cost+uint32(unsafe.Sizeof(CodePage[T]{}))) {
			return nil, &Fault{PC: pc, Kind: FaultOutOfMemory, Err: c.mem.Fault}
		}
		cp = &CodePage[T]{Base: pc &^ PageMask, Slots: make([]T, PageSize>>c.shift), cache: c}
		if c.WithInfo {
			cp.Infos = make([]OpInfo, len(cp.Slots))
		}
		c.mem.MarkCode(pg, cp, pc)
	}
	e.vpn, e.page = vpn, cp
	return cp, nil
}

// Fetch reads the instruction bytes at pc (up to len(buf), fewer at the end
// of executable memory) for decoding into a slot of p. stale reports that p
// no longer backs pc (the page was unmapped and mapped anew): look it up
// again. An error is returned only when not even the first byte can be
// fetched.
func (c *ICache[T]) Fetch(p *CodePage[T], pc uint64, buf []byte) (n int, stale bool, f *Fault) {
	pg, ok := c.mem.FetchPage(pc)
	if !ok {
		return 0, false, &Fault{PC: pc, Kind: FaultFetch, Err: c.mem.Fault}
	}
	if pg.Code != CodeCache(p) {
		c.recent[(pc>>PageShift)&63].vpn = ^uint64(0)
		return 0, true, nil
	}
	off := int(pc & PageMask)
	n = copy(buf, pg.Bytes()[off:])
	if n < len(buf) { // the instruction may continue on the next page
		if next, ok := c.mem.FetchPage(pc + uint64(n)); ok {
			n += copy(buf[n:], next.Bytes()[:])
			c.Page(pc + uint64(n)) // so writes there invalidate this slot too
		}
	}
	return n, false, nil
}

// DecodedSlot returns the page holding pc and pc's slot there, decoded:
// a slot empty says is not is filled by decode (the core's decodeAt,
// which reports a stale page: one replaced since the cache last saw it,
// by fork's copy of memory or a new mapping), and a stale page is looked
// up again, as the cores' Execute does. ok is false when pc has no
// instruction to show: a fault, or a page replaced again meanwhile.
func (c *ICache[T]) DecodedSlot(pc uint64, empty func(*T) bool, decode func(*CodePage[T], uint64) (bool, *Fault)) (p *CodePage[T], slot *T, ok bool) {
	for range 2 {
		p, f := c.Page(pc)
		if f != nil {
			return nil, nil, false
		}
		slot := p.Slot(pc)
		if !empty(slot) {
			return p, slot, true
		}
		stale, f := decode(p, pc)
		if f != nil {
			return nil, nil, false
		}
		if !stale {
			return p, slot, true
		}
	}
	return nil, nil, false
}

// Slot returns the slot for pc in p.
func (p *CodePage[T]) Slot(pc uint64) *T {
	return &p.Slots[(pc&PageMask)>>p.cache.shift]
}
