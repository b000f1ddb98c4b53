package cpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"unsafe"
)

// Guest memory is a sparse set of 4 KiB pages with per-page permissions.
//
// The hot path is a pair of direct-mapped translation caches (one for reads,
// one for writes) indexed by the low bits of the virtual page number; a hit
// costs a tag compare and one slice access. Misses, page-crossing accesses,
// permission failures and stores into pages that hold decoded code take the
// slow path.
//
// Accessors never panic on guest addresses: they return ok == false and leave
// the reason in Memory.Fault for the caller, which knows the pc.

const (
	PageShift = 12
	PageSize  = 1 << PageShift
	PageMask  = PageSize - 1
)

// TopPage is the base of the last page of the address space. A core that
// must look its code page up before the next operation, at a pc it does
// not know yet, takes it as its page base: only a pc in that page passes
// the same-page test (pc - base < PageSize), and no user program fetches
// code there. (The sentinel ^0 instead let the null page pass: a branch to
// address 0 ran a slot of the stale page.)
const TopPage = ^uint64(PageMask)

// Perm is a set of page permissions.
type Perm uint8

const (
	PermR Perm = 1 << iota
	PermW
	PermX
)

const PermRW = PermR | PermW

func (p Perm) String() string {
	b := []byte("---")
	if p&PermR != 0 {
		b[0] = 'r'
	}
	if p&PermW != 0 {
		b[1] = 'w'
	}
	if p&PermX != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// CodeCache is what an architecture keeps per page of decoded instructions.
// Memory calls InvalidateCode when bytes [off, off+n) of the page are written
// or when the page goes away, so stale decodings are never executed.
type CodeCache interface {
	InvalidateCode(off, n int)
}

// Page is one 4 KiB guest page. Its bytes are allocated on the first
// write; until then it reads as zeros (an 8 MiB stack costs nothing).
type Page struct {
	data *[PageSize]byte
	Perm Perm
	// cow says data is shared with another address space (Fork): the
	// first write copies it. Only the slow write paths (touch) look.
	cow bool
	// codeCost is what Code costs the host, charged to the memory limit
	// (it fits in the padding after Perm: Page stays 32 bytes).
	codeCost uint32
	// Code is the decoded-instruction cache of this page, owned by the
	// architecture (nil until something executes here).
	Code CodeCache
}

var zeroPage [PageSize]byte

// Bytes returns the page contents for reading (never write through it).
func (p *Page) Bytes() *[PageSize]byte {
	if p.data == nil {
		return &zeroPage
	}
	return p.data
}

// Touched reports whether the page was ever written (has bytes of its
// own): a core dump leaves out anonymous mappings none of whose pages
// was, as Linux does for a mapping that never faulted a page in.
func (p *Page) Touched() bool { return p.data != nil }

// touch gives p, the page at vpn, its bytes if it has none yet, charging
// them to the limit; false (nothing allocated) when the limit would be
// passed.
func (m *Memory) touch(p *Page, vpn uint64) bool {
	if m.journal != nil {
		m.journal.wrote(vpn)
	}
	if p.data != nil && !p.cow {
		return true
	}
	if p.cow {
		if n := m.acct.shares[p.data]; n <= 1 {
			// the other holders let go: the bytes are this space's alone
			delete(m.acct.shares, p.data)
			p.cow = false
			return true
		}
		if !m.charge(PageSize) {
			return false
		}
		m.acct.shares[p.data]--
		d := *p.data
		p.data, p.cow = &d, false
	} else {
		if !m.charge(PageSize) {
			return false
		}
		p.data = new([PageSize]byte)
	}
	// a read translation may still point at the zero page
	if e := &m.rtlb[vpn&(tlbSize-1)]; e.vpn == vpn {
		e.data = p.data
	}
	return true
}

// tlbEntry caches the bytes of one page for reading or writing.
type tlbEntry struct {
	vpn  uint64
	page *Page
	data *[PageSize]byte
}

const tlbBits = 8
const tlbSize = 1 << tlbBits

// Access is the kind of memory access that failed.
type Access uint8

const (
	AccessRead Access = iota
	AccessWrite
	AccessExec
)

func (a Access) String() string {
	switch a {
	case AccessWrite:
		return "write"
	case AccessExec:
		return "execute"
	}
	return "read"
}

// MemFault describes the last failed access.
type MemFault struct {
	Addr     uint64
	Size     int
	Access   Access
	Unmapped bool // false: mapped but without the needed permission
	// PastEOF is set when the page maps a file wholly past its end
	// (Memory.MarkPastEOF).
	PastEOF bool
	// Limit is set when the access needed a new page and the memory limit
	// (Memory.SetLimit) forbade it: the limit in bytes.
	Limit uint64
}

func (f MemFault) Error() string {
	if f.Limit != 0 {
		return fmt.Sprintf("%s of %s at 0x%x needs a new page past the guest memory limit of %s", f.Access, byteCount(f.Size), f.Addr, FormatSize(f.Limit))
	}
	what := "unmapped address"
	switch {
	case f.PastEOF:
		what = "past the end of the mapped file at"
	case !f.Unmapped:
		what = "no " + f.Access.String() + " permission at"
	}
	return fmt.Sprintf("%s of %s: %s 0x%x", f.Access, byteCount(f.Size), what, f.Addr)
}

// Memory is the guest address space: a map of 2 MiB chunks, each with the
// permissions of its 512 pages and the pages themselves, created on first
// touch. Mapping a gigabyte costs a few kilobytes until the guest uses it.
type Memory struct {
	chunks map[uint64]*chunk
	rtlb   [tlbSize]tlbEntry
	wtlb   [tlbSize]tlbEntry
	// Fault is set by every failed access.
	Fault MemFault
	// CodeGen counts the writes over decoded code (self-modifying code):
	// the timing model drops its run summaries when it changes.
	CodeGen uint64

	// acct is the account SetLimit bounds, shared by the address spaces
	// Fork made from one another (one bound for a run's processes).
	acct     *memAcct
	limitHit bool // an allocation was refused (TakeLimitHit)

	// TBI makes the accessors ignore the top byte of lower-half data
	// addresses (arm64 Linux; see loadData).
	TBI bool

	// journal, while set (StartJournal), records the pages written and
	// the mapping changes made (journal.go).
	journal *Journal
}

// Host bytes charged to the limit besides the pages' own 4 KiB: each
// mapped page's Page (charged when mapped: it is made on first access) and
// each 2 MiB chunk's table.
const (
	pageMetaBytes = uint64(unsafe.Sizeof(Page{}))
	chunkBytes    = uint64(unsafe.Sizeof(chunk{}))
)

// ErrMemoryLimit is what Map returns when the mapping would pass the
// memory limit.
var ErrMemoryLimit = errors.New("past the guest memory limit")

// SetLimit bounds the host memory the address space may hold to n bytes
// (0: no bound). What counts is what the host really allocates: 4 KiB per
// page the guest has written (pages are allocated on first write), the
// bookkeeping of every mapped page (1/128 of the mapping) and the decoded
// code of every page executed (see ICache). Past the limit
//   - Map of a writable range refuses (ErrMemoryLimit) when the range
//     could not be written whole even now: as Linux's heuristic overcommit
//     refuses an obvious overcommit, so mmap, brk and mremap give ENOMEM;
//   - an access that needs a new page fails with MemFault.Limit set, which
//     the cores turn into FaultOutOfMemory (the guest ends, as Linux's
//     out-of-memory killer would end it).
//
// The check is on the slow paths only (a page's first write, Map, a code
// page's first execution): the translation caches never see it.
func (m *Memory) SetLimit(n uint64) { m.acct.limit = n }

// Limit returns the bound set by SetLimit.
func (m *Memory) Limit() uint64 { return m.acct.limit }

// Used returns the host bytes the address space holds, as SetLimit counts
// them.
func (m *Memory) Used() uint64 { return m.acct.used }

// charge adds n bytes to used unless that passes the limit.
func (m *Memory) charge(n uint64) bool {
	if m.acct.limit != 0 && (m.acct.used+n > m.acct.limit || m.acct.used+n < m.acct.used) {
		m.limitHit = true
		return false
	}
	m.acct.used += n
	return true
}

// TakeLimitHit reports whether an allocation was refused for the limit
// since the last call (the kernel asks around each syscall: its copies
// into guest memory fail like any other access).
func (m *Memory) TakeLimitHit() bool {
	hit := m.limitHit
	m.limitHit = false
	return hit
}

func (m *Memory) refund(n uint64) { m.acct.used -= min(n, m.acct.used) }

// ChargeCode charges cost bytes for the decoded-code cache about to be
// attached to p (replacing what its old one was charged); false, with
// nothing changed and the fault set, when the limit forbids it.
func (m *Memory) ChargeCode(p *Page, pc uint64, cost uint32) bool {
	old := uint64(p.codeCost)
	if !m.charge(uint64(cost)) {
		m.fail(pc, 4, AccessExec, false)
		m.Fault.Limit = m.acct.limit
		return false
	}
	m.refund(old)
	p.codeCost = cost
	return true
}

const (
	chunkShift = 9 // pages per chunk: 512
	chunkPages = 1 << chunkShift
	permMapped = 0x80
	// permPastEOF marks a page of a file mapping wholly past the file's
	// end: it keeps the mapping's permissions for /proc/self/maps and
	// mprotect, but every access faults with MemFault.PastEOF (Linux
	// raises SIGBUS there).
	permPastEOF = 0x40
	// permShared marks a page of a shared mapping (MarkShared): Fork
	// shares its bytes instead of copying them on write.
	permShared = 0x20
	permFlags  = permMapped | permPastEOF | permShared
)

// memAcct is what an account's address spaces hold of the host's memory
// (used) and its bound (limit, 0: none).
type memAcct struct {
	limit, used uint64
	// shares counts the address spaces holding each page's bytes that
	// Fork shared (copy-on-write or MAP_SHARED): they are charged once
	// and refunded when the last holder lets go.
	shares map[*[PageSize]byte]int
}

// release lets go of p's bytes, refunding them if no other address space
// holds them.
func (m *Memory) release(p *Page) {
	if p.data == nil {
		return
	}
	if n, ok := m.acct.shares[p.data]; ok {
		if n > 1 {
			m.acct.shares[p.data] = n - 1
			p.data, p.cow = nil, false
			return
		}
		delete(m.acct.shares, p.data)
	}
	m.refund(PageSize)
	p.data, p.cow = nil, false
}

type chunk struct {
	perm  [chunkPages]uint8 // permMapped | permPastEOF | Perm
	pages [chunkPages]*Page
	count int // mapped pages
}

// NewMemory returns an empty address space.
func NewMemory() *Memory {
	m := &Memory{chunks: make(map[uint64]*chunk), acct: &memAcct{}}
	m.flushTLB()
	return m
}

func (m *Memory) flushTLB() {
	for i := range m.rtlb {
		m.rtlb[i] = tlbEntry{vpn: ^uint64(0)}
		m.wtlb[i] = tlbEntry{vpn: ^uint64(0)}
	}
}

// page returns the page with number vpn, creating its Page on first use,
// or nil if it is not mapped.
func (m *Memory) page(vpn uint64) *Page {
	c := m.chunks[vpn>>chunkShift]
	if c == nil {
		return nil
	}
	i := vpn & (chunkPages - 1)
	pm := c.perm[i]
	if pm&permMapped == 0 {
		return nil
	}
	p := c.pages[i]
	if p == nil {
		p = &Page{Perm: effectivePerm(pm)}
		c.pages[i] = p
	}
	return p
}

// effectivePerm is what accesses to a page of chunk permissions pm may do.
func effectivePerm(pm uint8) Perm {
	if pm&permPastEOF != 0 {
		return 0
	}
	return Perm(pm &^ permFlags)
}

// MarkPastEOF marks the mapped pages of [addr, addr+size) as lying past
// the end of the file they map: every access to them faults (PastEOF)
// until they are mapped again.
func (m *Memory) MarkPastEOF(addr, size uint64) {
	m.record(MemOp{Kind: OpPastEOF, Addr: addr, Size: size})
	first, n := pageSpan(addr, size)
	m.eachChunk(first, n, func(_ uint64, c *chunk, lo, hi uint64) {
		for i := lo; i < hi; i++ {
			if c.perm[i]&permMapped == 0 {
				continue
			}
			c.perm[i] |= permPastEOF
			if p := c.pages[i]; p != nil {
				if p.Code != nil {
					p.Code.InvalidateCode(0, PageSize)
				}
				p.Perm = 0
			}
		}
	})
	m.flushTLB()
}

// pastEOF reports whether addr is in a page MarkPastEOF marked whose
// permissions allow acc: Linux checks the rights first (SIGSEGV), the
// file's end only then (SIGBUS).
func (m *Memory) pastEOF(addr uint64, acc Access) bool {
	vpn := addr >> PageShift
	c := m.chunks[vpn>>chunkShift]
	if c == nil {
		return false
	}
	pm := c.perm[vpn&(chunkPages-1)]
	need := PermR
	switch acc {
	case AccessWrite:
		need = PermW
	case AccessExec:
		need = PermX
	}
	return pm&(permMapped|permPastEOF) == permMapped|permPastEOF && Perm(pm)&need != 0
}

// PageAt returns the page holding addr, or nil.
func (m *Memory) PageAt(addr uint64) *Page { return m.page(addr >> PageShift) }

// MaxMapPages bounds one mapping (16 GiB): larger requests are refused
// rather than making the simulator work without end.
const MaxMapPages = 1 << 22

// pageSpan returns the first page number and the page count of
// [addr, addr+size), clamped at the top of the address space.
func pageSpan(addr, size uint64) (first, n uint64) {
	first = addr >> PageShift
	if size == 0 {
		return first, 0
	}
	end := addr + size
	if end < addr {
		end = 0 // wrapped: up to the top
	}
	last := (end - 1) >> PageShift
	return first, last - first + 1
}

// eachChunk calls fn for every existing chunk overlapping pages
// [first, first+n), with the page index range inside it, walking whichever
// is smaller: the range or the set of chunks.
func (m *Memory) eachChunk(first, n uint64, fn func(key uint64, c *chunk, lo, hi uint64)) {
	if n == 0 {
		return
	}
	last := first + n - 1
	clip := func(key uint64, c *chunk) {
		base := key << chunkShift
		lo, hi := uint64(0), uint64(chunkPages)
		if first > base {
			lo = first - base
		}
		if last < base+chunkPages-1 {
			hi = last - base + 1
		}
		fn(key, c, lo, hi)
	}
	k0, k1 := first>>chunkShift, last>>chunkShift
	if k1-k0+1 > uint64(len(m.chunks)) {
		keys := make([]uint64, 0, len(m.chunks))
		for k := range m.chunks {
			if k >= k0 && k <= k1 {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			clip(k, m.chunks[k])
		}
		return
	}
	for k := k0; ; k++ {
		if c := m.chunks[k]; c != nil {
			clip(k, c)
		}
		if k == k1 {
			break
		}
	}
}

func (m *Memory) countMapped(addr, size uint64) uint64 {
	var cnt uint64
	first, n := pageSpan(addr, size)
	m.eachChunk(first, n, func(_ uint64, c *chunk, lo, hi uint64) {
		if lo == 0 && hi == chunkPages {
			cnt += uint64(c.count)
			return
		}
		for i := lo; i < hi; i++ {
			if c.perm[i]&permMapped != 0 {
				cnt++
			}
		}
	})
	return cnt
}

// dropPage forgets a materialised page, invalidating its decoded code and
// refunding its bytes.
func (m *Memory) dropPage(c *chunk, i uint64) {
	if p := c.pages[i]; p != nil {
		if p.Code != nil {
			p.Code.InvalidateCode(0, PageSize)
		}
		m.release(p)
		m.refund(uint64(p.codeCost))
		c.pages[i] = nil
	}
}

// Map creates zeroed pages with perm over [addr, addr+size), replacing any
// pages there. addr and size must be page aligned.
func (m *Memory) Map(addr, size uint64, perm Perm) error {
	if addr&PageMask != 0 || size&PageMask != 0 {
		return fmt.Errorf("map 0x%x+0x%x: not page aligned", addr, size)
	}
	if size == 0 || addr+size < addr {
		return fmt.Errorf("map 0x%x+0x%x: bad size", addr, size)
	}
	first, n := pageSpan(addr, size)
	if n > MaxMapPages {
		return fmt.Errorf("map 0x%x+0x%x: larger than simrun's limit of %d pages", addr, size, MaxMapPages)
	}
	if m.acct.limit != 0 {
		if err := m.mapFits(first, n, perm); err != nil {
			return fmt.Errorf("map 0x%x+0x%x: %w", addr, size, err)
		}
	}
	for v := first; v < first+n; v++ {
		key, i := v>>chunkShift, v&(chunkPages-1)
		c := m.chunks[key]
		if c == nil {
			c = &chunk{}
			m.chunks[key] = c
			m.acct.used += chunkBytes
		}
		if c.perm[i]&permMapped == 0 {
			c.count++
			m.acct.used += pageMetaBytes
		}
		m.dropPage(c, i)
		c.perm[i] = permMapped | uint8(perm)
	}
	m.flushTLB()
	m.record(MemOp{Kind: OpMap, Addr: addr, Size: size, Perm: perm})
	return nil
}

// mapFits checks that mapping pages [first, first+n) keeps the memory
// within its limit: the new bookkeeping, and, for a writable range, every
// page written, less what the pages replaced held.
func (m *Memory) mapFits(first, n uint64, perm Perm) error {
	var mapped, freed, chunks uint64
	m.eachChunk(first, n, func(_ uint64, c *chunk, lo, hi uint64) {
		chunks++
		for i := lo; i < hi; i++ {
			if c.perm[i]&permMapped == 0 {
				continue
			}
			mapped++
			if p := c.pages[i]; p != nil {
				if p.data != nil {
					freed += PageSize
				}
				freed += uint64(p.codeCost)
			}
		}
	})
	need := (n-mapped)*pageMetaBytes + ((first+n-1)>>chunkShift-first>>chunkShift+1-chunks)*chunkBytes
	if perm&PermW != 0 {
		need += n * PageSize
	}
	if m.acct.used-min(freed, m.acct.used)+need > m.acct.limit {
		return fmt.Errorf("%w of %s (%s in use)", ErrMemoryLimit, FormatSize(m.acct.limit), FormatSize(m.acct.used))
	}
	return nil
}

// Unmap removes the pages of [addr, addr+size); holes are fine.
func (m *Memory) Unmap(addr, size uint64) {
	m.record(MemOp{Kind: OpUnmap, Addr: addr, Size: size})
	first, n := pageSpan(addr, size)
	m.eachChunk(first, n, func(key uint64, c *chunk, lo, hi uint64) {
		for i := lo; i < hi; i++ {
			if c.perm[i]&permMapped != 0 {
				m.dropPage(c, i)
				c.perm[i] = 0
				c.count--
				m.refund(pageMetaBytes)
			}
		}
		if c.count == 0 {
			delete(m.chunks, key)
			m.refund(chunkBytes)
		}
	})
	m.flushTLB()
}

// Protect changes the permissions of [addr, addr+size). Every page must be
// mapped (as mprotect requires).
func (m *Memory) Protect(addr, size uint64, perm Perm) error {
	if !m.IsMapped(addr, size) {
		return fmt.Errorf("protect: 0x%x+0x%x is not entirely mapped", addr, size)
	}
	m.record(MemOp{Kind: OpProtect, Addr: addr, Size: size, Perm: perm})
	first, n := pageSpan(addr, size)
	m.eachChunk(first, n, func(_ uint64, c *chunk, lo, hi uint64) {
		for i := lo; i < hi; i++ {
			c.perm[i] = c.perm[i]&permFlags | uint8(perm)
			if p := c.pages[i]; p != nil {
				eff := effectivePerm(c.perm[i])
				if p.Perm&PermX != 0 && eff&PermX == 0 && p.Code != nil {
					p.Code.InvalidateCode(0, PageSize)
				}
				p.Perm = eff
			}
		}
	})
	m.flushTLB()
	return nil
}

// Discard drops the contents of the mapped pages in [addr, addr+size): they
// read as zeros again (madvise MADV_DONTNEED on private anonymous memory).
func (m *Memory) Discard(addr, size uint64) {
	m.record(MemOp{Kind: OpDiscard, Addr: addr, Size: size})
	first, n := pageSpan(addr, size)
	m.eachChunk(first, n, func(_ uint64, c *chunk, lo, hi uint64) {
		for i := lo; i < hi; i++ {
			if p := c.pages[i]; p != nil {
				m.release(p)
				if p.Code != nil {
					p.Code.InvalidateCode(0, PageSize)
				}
			}
		}
	})
	m.flushTLB()
}

// IsMapped reports whether every page of [addr, addr+size) is mapped.
func (m *Memory) IsMapped(addr, size uint64) bool {
	_, n := pageSpan(addr, size)
	return m.countMapped(addr, size) == n
}

// FreeRange reports whether no page of [addr, addr+size) is mapped.
func (m *Memory) FreeRange(addr, size uint64) bool {
	if addr+size < addr {
		return false
	}
	return m.countMapped(addr, size) == 0
}

// FindFree returns the lowest page-aligned address >= from where size bytes
// are unmapped, ending at or below limit; ok is false if there is none.
func (m *Memory) FindFree(from, size, limit uint64) (uint64, bool) {
	need := (size + PageMask) >> PageShift
	if need == 0 || need > MaxMapPages {
		return 0, false
	}
	v := (from + PageMask) >> PageShift
	top := limit >> PageShift
	run, start := uint64(0), v
	for v < top {
		c := m.chunks[v>>chunkShift]
		if c == nil { // the rest of this chunk is free
			step := chunkPages - v&(chunkPages-1)
			run += step
			v += step
		} else {
			if c.perm[v&(chunkPages-1)]&permMapped != 0 {
				run, start = 0, v+1
			} else {
				run++
			}
			v++
		}
		if run >= need {
			if start+need > top {
				return 0, false
			}
			return start << PageShift, true
		}
	}
	return 0, false
}

// Regions returns the mapped ranges with their permissions, in address order
// (for diagnostics).
func (m *Memory) Regions() []Region {
	var rs []Region
	keys := make([]uint64, 0, len(m.chunks))
	for k := range m.chunks {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		c := m.chunks[k]
		for i := uint64(0); i < chunkPages; i++ {
			if c.perm[i]&permMapped == 0 {
				continue
			}
			a := (k<<chunkShift + i) << PageShift
			p := Perm(c.perm[i] &^ permFlags)
			if n := len(rs); n > 0 && rs[n-1].End == a && rs[n-1].Perm == p {
				rs[n-1].End += PageSize
				continue
			}
			rs = append(rs, Region{Start: a, End: a + PageSize, Perm: p})
		}
	}
	return rs
}

// Region is a run of mapped pages with the same permissions.
type Region struct {
	Start, End uint64
	Perm       Perm
}

// MarkCode attaches a decoded-code cache to the page at addr, so writes to
// it go through the slow path and invalidate the cache.
func (m *Memory) MarkCode(p *Page, c CodeCache, addr uint64) {
	p.Code = c
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if e.page == p {
		*e = tlbEntry{vpn: ^uint64(0)}
	}
}

func (m *Memory) fail(addr uint64, size int, acc Access, unmapped bool) {
	m.Fault = MemFault{Addr: addr, Size: size, Access: acc, Unmapped: unmapped, PastEOF: !unmapped && m.pastEOF(addr, acc)}
}

// readPage finds a readable page for addr, filling the read cache.
func (m *Memory) readPage(addr uint64, size int) *Page {
	vpn := addr >> PageShift
	p := m.page(vpn)
	if p == nil {
		m.fail(addr, size, AccessRead, true)
		return nil
	}
	if p.Perm&PermR == 0 {
		m.fail(addr, size, AccessRead, false)
		return nil
	}
	m.rtlb[vpn&(tlbSize-1)] = tlbEntry{vpn: vpn, page: p, data: p.Bytes()}
	return p
}

// writePage finds a writable page for addr. Pages with decoded code are
// not cached, so every write to them comes here and invalidates.
func (m *Memory) writePage(addr uint64, size int) *Page {
	vpn := addr >> PageShift
	p := m.page(vpn)
	if p == nil {
		m.fail(addr, size, AccessWrite, true)
		return nil
	}
	if p.Perm&PermW == 0 {
		m.fail(addr, size, AccessWrite, false)
		return nil
	}
	if !m.touch(p, vpn) {
		m.fail(addr, size, AccessWrite, false)
		m.Fault.Limit = m.acct.limit
		return nil
	}
	if p.Code != nil {
		off := int(addr & PageMask)
		n := size
		if off+n > PageSize {
			n = PageSize - off
		}
		p.Code.InvalidateCode(off, n)
	} else {
		m.wtlb[vpn&(tlbSize-1)] = tlbEntry{vpn: vpn, page: p, data: p.data}
	}
	return p
}

// FetchPage returns the executable page holding pc.
func (m *Memory) FetchPage(pc uint64) (*Page, bool) {
	p := m.page(pc >> PageShift)
	if p == nil {
		m.fail(pc, 2, AccessExec, true)
		return nil, false
	}
	if p.Perm&PermX == 0 {
		m.fail(pc, 2, AccessExec, false)
		return nil, false
	}
	return p, true
}

// loadSlow reads size bytes at addr byte by byte (page-crossing or missed
// accesses) and assembles them in the given order.
func (m *Memory) loadSlow(addr uint64, size int, big bool) (uint64, bool) {
	var buf [8]byte
	for i := 0; i < size; i++ {
		a := addr + uint64(i)
		p := m.readPage(a, size)
		if p == nil {
			m.Fault.Addr = addr
			return 0, false
		}
		buf[i] = p.Bytes()[a&PageMask]
	}
	if big {
		return binary.BigEndian.Uint64(buf[:]) >> (64 - 8*uint(size)), true
	}
	return binary.LittleEndian.Uint64(buf[:]), true
}

func (m *Memory) storeSlow(addr uint64, size int, v uint64, big bool) bool {
	// Check every byte's page first so a failing store writes nothing.
	for i := 0; i < size; i++ {
		vpn := (addr + uint64(i)) >> PageShift
		p := m.page(vpn)
		if p == nil || p.Perm&PermW == 0 {
			m.fail(addr, size, AccessWrite, p == nil)
			return false
		}
		if !m.touch(p, vpn) {
			m.fail(addr, size, AccessWrite, false)
			m.Fault.Limit = m.acct.limit
			return false
		}
	}
	for i := 0; i < size; {
		a := addr + uint64(i)
		n := min(size-i, PageSize-int(a&PageMask))
		d := m.writePage(a, n).data
		for j := 0; j < n; j++ {
			sh := 8 * uint(i+j)
			if big {
				sh = 8 * uint(size-1-i-j)
			}
			d[(a+uint64(j))&PageMask] = byte(v >> sh)
		}
		i += n
	}
	return true
}

// loadData and storeData are the accessors' way out of the translation
// caches. With TBI set, an address whose top byte is not zero and whose
// bit 55 is clear is taken without its top byte: arm64 Linux runs user
// space with TCR_EL1.TBI0 set (Arm ARM D8.8 "Address tagging": the top
// byte of a data address in the lower half is ignored). A tagged pointer
// never hits the caches (their tags hold whole page numbers), so the hit
// path costs nothing; a fault reports the address without its tag, as
// qemu-aarch64 7.2 and Linux (without SA_EXPOSE_TAGBITS) do. Load, Store,
// ReadBytes and WriteBytes, the kernel's ways in, do not untag: Linux
// refuses tagged pointers in syscalls unless the process asks
// (PR_SET_TAGGED_ADDR_CTRL).
func (m *Memory) loadData(addr uint64, size int, big bool) (uint64, bool) {
	if m.TBI && addr>>56 != 0 && addr&(1<<55) == 0 {
		addr &= 1<<56 - 1
	}
	return m.loadSlow(addr, size, big)
}

func (m *Memory) storeData(addr uint64, size int, v uint64, big bool) bool {
	if m.TBI && addr>>56 != 0 && addr&(1<<55) == 0 {
		addr &= 1<<56 - 1
	}
	return m.storeSlow(addr, size, v, big)
}

// Load8 reads one byte.
func (m *Memory) Load8(addr uint64) (uint8, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if e.vpn == addr>>PageShift {
		return e.data[addr&PageMask], true
	}
	v, ok := m.loadData(addr, 1, false)
	return uint8(v), ok
}

// Store8 writes one byte.
func (m *Memory) Store8(addr uint64, v uint8) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if e.vpn == addr>>PageShift {
		e.data[addr&PageMask] = v
		return true
	}
	return m.storeData(addr, 1, uint64(v), false)
}

// Little-endian accessors (arm64).

func (m *Memory) Load16LE(addr uint64) (uint16, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-2 {
		return binary.LittleEndian.Uint16(e.data[off:]), true
	}
	v, ok := m.loadData(addr, 2, false)
	return uint16(v), ok
}

func (m *Memory) Load32LE(addr uint64) (uint32, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-4 {
		return binary.LittleEndian.Uint32(e.data[off:]), true
	}
	v, ok := m.loadData(addr, 4, false)
	return uint32(v), ok
}

func (m *Memory) Load64LE(addr uint64) (uint64, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-8 {
		return binary.LittleEndian.Uint64(e.data[off:]), true
	}
	return m.loadData(addr, 8, false)
}

func (m *Memory) Store16LE(addr uint64, v uint16) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-2 {
		binary.LittleEndian.PutUint16(e.data[off:], v)
		return true
	}
	return m.storeData(addr, 2, uint64(v), false)
}

func (m *Memory) Store32LE(addr uint64, v uint32) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-4 {
		binary.LittleEndian.PutUint32(e.data[off:], v)
		return true
	}
	return m.storeData(addr, 4, uint64(v), false)
}

func (m *Memory) Store64LE(addr uint64, v uint64) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-8 {
		binary.LittleEndian.PutUint64(e.data[off:], v)
		return true
	}
	return m.storeData(addr, 8, v, false)
}

// Big-endian accessors (s390x).

func (m *Memory) Load16BE(addr uint64) (uint16, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-2 {
		return binary.BigEndian.Uint16(e.data[off:]), true
	}
	v, ok := m.loadData(addr, 2, true)
	return uint16(v), ok
}

func (m *Memory) Load32BE(addr uint64) (uint32, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-4 {
		return binary.BigEndian.Uint32(e.data[off:]), true
	}
	v, ok := m.loadData(addr, 4, true)
	return uint32(v), ok
}

func (m *Memory) Load64BE(addr uint64) (uint64, bool) {
	e := &m.rtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-8 {
		return binary.BigEndian.Uint64(e.data[off:]), true
	}
	return m.loadData(addr, 8, true)
}

func (m *Memory) Store16BE(addr uint64, v uint16) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-2 {
		binary.BigEndian.PutUint16(e.data[off:], v)
		return true
	}
	return m.storeData(addr, 2, uint64(v), true)
}

func (m *Memory) Store32BE(addr uint64, v uint32) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-4 {
		binary.BigEndian.PutUint32(e.data[off:], v)
		return true
	}
	return m.storeData(addr, 4, uint64(v), true)
}

func (m *Memory) Store64BE(addr uint64, v uint64) bool {
	e := &m.wtlb[(addr>>PageShift)&(tlbSize-1)]
	if off := addr & PageMask; e.vpn == addr>>PageShift && off <= PageSize-8 {
		binary.BigEndian.PutUint64(e.data[off:], v)
		return true
	}
	return m.storeData(addr, 8, v, true)
}

// Load and Store dispatch on byte order and size (1, 2, 4 or 8); they are
// for code off the hot path (syscalls, loaders, tracers).
func (m *Memory) Load(addr uint64, size int, order binary.ByteOrder) (uint64, bool) {
	return m.loadSlow(addr, size, order == binary.BigEndian)
}

func (m *Memory) Store(addr uint64, size int, v uint64, order binary.ByteOrder) bool {
	return m.storeSlow(addr, size, v, order == binary.BigEndian)
}

// ReadBytes copies n bytes at addr out of guest memory.
func (m *Memory) ReadBytes(addr uint64, n int) ([]byte, error) {
	if n < 0 || addr+uint64(n) < addr {
		return nil, MemFault{Addr: addr, Size: n, Access: AccessRead, Unmapped: true}
	}
	out := make([]byte, n)
	for i := 0; i < n; {
		a := addr + uint64(i)
		p := m.readPage(a, n)
		if p == nil {
			return nil, m.Fault
		}
		i += copy(out[i:], p.Bytes()[a&PageMask:])
	}
	return out, nil
}

// WriteBytes copies b into guest memory at addr, checking write permission
// for every page before writing anything.
func (m *Memory) WriteBytes(addr uint64, b []byte) error {
	n := len(b)
	if addr+uint64(n) < addr {
		return MemFault{Addr: addr, Size: n, Access: AccessWrite, Unmapped: true}
	}
	for a := addr &^ PageMask; a < addr+uint64(n); a += PageSize {
		p := m.page(a >> PageShift)
		if p == nil || p.Perm&PermW == 0 {
			fa := max(a, addr)
			return MemFault{Addr: fa, Size: n, Access: AccessWrite, Unmapped: p == nil}
		}
		if !m.touch(p, a>>PageShift) {
			return MemFault{Addr: max(a, addr), Size: n, Access: AccessWrite, Limit: m.acct.limit}
		}
	}
	for i := 0; i < n; {
		a := addr + uint64(i)
		p := m.writePage(a, n-i)
		i += copy(p.data[a&PageMask:], b[i:])
	}
	return nil
}

// Poke writes b at addr ignoring permissions (for the loader and the
// initial stack); every page must be mapped.
func (m *Memory) Poke(addr uint64, b []byte) error {
	for i := 0; i < len(b); {
		a := addr + uint64(i)
		p := m.page(a >> PageShift)
		if p == nil {
			return MemFault{Addr: a, Size: len(b), Access: AccessWrite, Unmapped: true}
		}
		if !m.touch(p, a>>PageShift) {
			return MemFault{Addr: a, Size: len(b), Access: AccessWrite, Limit: m.acct.limit}
		}
		if p.Code != nil {
			n := min(len(b)-i, PageSize-int(a&PageMask))
			p.Code.InvalidateCode(int(a&PageMask), n)
		}
		i += copy(p.data[a&PageMask:], b[i:])
	}
	return nil
}

// ReadCString reads a NUL-terminated string of at most max bytes.
func (m *Memory) ReadCString(addr uint64, max int) (string, error) {
	var out []byte
	for len(out) < max {
		b, ok := m.Load8(addr + uint64(len(out)))
		if !ok {
			return "", m.Fault
		}
		if b == 0 {
			return string(out), nil
		}
		out = append(out, b)
	}
	return "", fmt.Errorf("string at 0x%x longer than %d bytes", addr, max)
}

// alignUp rounds v up to a multiple of a (a power of two).
func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// appendU64 appends v to b in order.

// MarkShared marks the mapped pages of [addr, addr+size) as a shared
// mapping (mmap MAP_SHARED): an address space Fork makes shares their
// bytes with this one, writes included, as Linux's fork shares a shared
// mapping's pages. Map clears the mark.
func (m *Memory) MarkShared(addr, size uint64) {
	m.record(MemOp{Kind: OpMarkShared, Addr: addr, Size: size})
	first, n := pageSpan(addr, size)
	m.eachChunk(first, n, func(_ uint64, c *chunk, lo, hi uint64) {
		for i := lo; i < hi; i++ {
			if c.perm[i]&permMapped != 0 {
				c.perm[i] |= permShared
			}
		}
	})
}

// Fork returns a copy of the address space for a forked process, cheap as
// Linux's copy-on-write fork: the copy's pages share their bytes with
// this space's, and the first write on either side copies the page
// (touch, on the write slow path that a page's first write takes anyway:
// Fork flushes the write translations, so the fast path never sees a
// shared page). Pages MarkShared marked keep one set of bytes for both.
// The copy has no decoded code (its core builds its own) and shares
// this space's account: SetLimit bounds both together.
//
// What the copy holds of the host (its page tables, and the bytes of
// shared pages not yet written) is charged before anything is copied:
// past the limit Fork returns ErrMemoryLimit with nothing changed, as
// Linux's fork gives ENOMEM when the new mm cannot be accounted.
func (m *Memory) Fork() (*Memory, error) {
	var cost uint64
	for _, c := range m.chunks {
		cost += chunkBytes + uint64(c.count)*pageMetaBytes
		for i, p := range c.pages {
			if c.perm[i]&(permMapped|permShared) == permMapped|permShared && (p == nil || p.data == nil) {
				cost += PageSize
			}
		}
	}
	if !m.charge(cost) {
		m.limitHit = false // refused as a whole: no access failed
		return nil, ErrMemoryLimit
	}
	n := &Memory{chunks: make(map[uint64]*chunk, len(m.chunks)), acct: m.acct, TBI: m.TBI}
	m.forkInto(n, false)
	return n, nil
}

// forkInto fills n, an empty address space on m's account, as Fork
// does; with private, pages MarkShared marked are copied now (a
// snapshot must not change with the space it was taken of, and the
// space's pages must stay shared with its forks).
func (m *Memory) forkInto(n *Memory, private bool) {
	if m.acct.shares == nil {
		m.acct.shares = map[*[PageSize]byte]int{}
	}
	for key, c := range m.chunks {
		if private { // Fork charged these before it began; a snapshot is never refused
			m.acct.used += chunkBytes + uint64(c.count)*pageMetaBytes
		}
		nc := &chunk{perm: c.perm, count: c.count}
		for i, p := range c.pages {
			if p == nil && c.perm[i]&(permMapped|permShared) == permMapped|permShared {
				p = &Page{Perm: effectivePerm(c.perm[i])}
				c.pages[i] = p
			}
			if p == nil {
				continue
			}
			if private && c.perm[i]&permShared != 0 {
				np := &Page{Perm: p.Perm}
				if p.data != nil {
					d := *p.data
					np.data = &d
					m.acct.used += PageSize
				}
				nc.pages[i] = np
				continue
			}
			if c.perm[i]&permShared != 0 && p.data == nil {
				// the bytes must exist now to be the same bytes later
				p.data = new([PageSize]byte)
			}
			np := &Page{data: p.data, Perm: p.Perm}
			if p.data != nil {
				if n := m.acct.shares[p.data]; n > 0 {
					m.acct.shares[p.data] = n + 1
				} else {
					m.acct.shares[p.data] = 2
				}
				if c.perm[i]&permShared == 0 {
					p.cow, np.cow = true, true
				}
			}
			nc.pages[i] = np
		}
		n.chunks[key] = nc
	}
	n.flushTLB()
	m.flushTLB()
}

// SharedPage names the bytes of a shared mapping's page: equal for
// every address space that shares them (Fork shares MarkShared pages).
type SharedPage struct{ data *[PageSize]byte }

// Bytes returns the shared bytes themselves (a kernel's page cache
// keeping them and the file in step for read(2) and write(2)).
func (sp SharedPage) Bytes() *[PageSize]byte { return sp.data }

// SharedKey returns the shared bytes addr lies in, for keying what
// processes share there (Linux's shared futexes); ok is false when addr
// is not in a MarkShared page whose bytes exist yet (none can then be
// shared with another space).
func (m *Memory) SharedKey(addr uint64) (SharedPage, bool) {
	vpn := addr >> PageShift
	c := m.chunks[vpn>>chunkShift]
	if c == nil || c.perm[vpn&(chunkPages-1)]&(permMapped|permShared) != permMapped|permShared {
		return SharedPage{}, false
	}
	p := c.pages[vpn&(chunkPages-1)]
	if p == nil || p.data == nil {
		return SharedPage{}, false
	}
	return SharedPage{p.data}, true
}

// sharedPageAt returns the Page of the mapped MarkShared page addr lies
// in, nil when there is none.
func (m *Memory) sharedPageAt(addr uint64) (*Page, uint64) {
	vpn := addr >> PageShift
	c := m.chunks[vpn>>chunkShift]
	if c == nil || c.perm[vpn&(chunkPages-1)]&(permMapped|permShared) != permMapped|permShared {
		return nil, vpn
	}
	return m.page(vpn), vpn
}

// HoldShared returns the bytes of the MarkShared page addr lies in,
// giving the page its bytes first if it has none (charged as a first
// write is), and takes one more hold on them for the caller: a kernel's
// page cache, which hands the same bytes to every MAP_SHARED mapping of
// one file page (AttachShared), as Linux maps one page-cache page into
// every address space that shares the file. The bytes stay charged until
// the last holder lets go (ReleaseShared, Unmap, Release). ok is false
// when addr is not in a mapped MarkShared page or the limit refuses the
// bytes.
func (m *Memory) HoldShared(addr uint64) (SharedPage, bool) {
	p, vpn := m.sharedPageAt(addr)
	if p == nil || p.cow || !m.touch(p, vpn) {
		return SharedPage{}, false
	}
	if m.acct.shares == nil {
		m.acct.shares = map[*[PageSize]byte]int{}
	}
	m.acct.shares[p.data] = max(m.acct.shares[p.data], 1) + 1
	return SharedPage{p.data}, true
}

// AttachShared makes the MarkShared page addr lies in hold the bytes sp
// (from HoldShared, still held) in place of its own, which it lets go:
// reads and writes there then reach the same bytes as every other page
// holding sp, in whatever address space. ok is false when addr is not in
// a mapped MarkShared page.
func (m *Memory) AttachShared(addr uint64, sp SharedPage) bool {
	p, vpn := m.sharedPageAt(addr)
	if p == nil || sp.data == nil {
		return false
	}
	if p.data == sp.data {
		return true
	}
	if m.journal != nil {
		m.journal.wrote(vpn) // its contents change as a write's would
	}
	if p.Code != nil {
		p.Code.InvalidateCode(0, PageSize)
	}
	m.release(p)
	p.data, p.cow = sp.data, false
	m.acct.shares[sp.data]++
	m.flushTLB()
	return true
}

// SharedHolders returns how many holds there are on sp: a page cache's
// own hold (HoldShared) and one for each page that holds the bytes. 1
// means the holder asking is the last.
func (m *Memory) SharedHolders(sp SharedPage) int { return m.acct.shares[sp.data] }

// ReleaseShared lets go of a hold HoldShared took, refunding the bytes
// when it was the last.
func (m *Memory) ReleaseShared(sp SharedPage) {
	if sp.data == nil {
		return
	}
	if n := m.acct.shares[sp.data]; n > 1 {
		m.acct.shares[sp.data] = n - 1
		return
	}
	delete(m.acct.shares, sp.data)
	m.refund(PageSize)
}

// Empty returns an empty address space on this space's account (a
// process's new program after execve: SetLimit bounds all together).
func (m *Memory) Empty() *Memory {
	n := NewMemory()
	n.acct = m.acct
	return n
}

// Release unmaps everything (a process that exits or execs lets go of its
// address space), refunding what it held to the account.
func (m *Memory) Release() {
	for key, c := range m.chunks {
		for i := range c.pages {
			m.dropPage(c, uint64(i))
		}
		m.refund(chunkBytes + uint64(c.count)*pageMetaBytes)
		delete(m.chunks, key)
	}
	m.flushTLB()
}
