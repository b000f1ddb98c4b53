package cpu

import "fmt"

// Journals and snapshots of an address space, for a debugger's reverse
// execution (sim/replay): a snapshot is a copy-on-write copy that a space
// can be set back to; a journal records what the kernel changes during
// one syscall, so that replay can apply the same change without running
// the syscall again.

// MemOpKind is the kind of a mapping change.
type MemOpKind uint8

const (
	OpMap MemOpKind = iota
	OpUnmap
	OpProtect
	OpDiscard
	OpMarkShared
	OpPastEOF
)

// MemOp is one mapping change: Map, Unmap, Protect, Discard, MarkShared
// or MarkPastEOF of [Addr, Addr+Size).
type MemOp struct {
	Kind       MemOpKind
	Addr, Size uint64
	Perm       Perm
}

// Journal is what an address space records while StartJournal is in
// effect: the pages written (by any write that leaves the translation
// caches' fast path, and StartJournal makes every page's first write
// leave it) and the mapping changes, in order.
type Journal struct {
	Pages map[uint64]bool // page numbers (address >> PageShift) written
	Ops   []MemOp
}

func (j *Journal) wrote(vpn uint64) {
	if j.Pages == nil {
		j.Pages = map[uint64]bool{}
	}
	j.Pages[vpn] = true
}

func (m *Memory) record(op MemOp) {
	if m.journal != nil {
		m.journal.Ops = append(m.journal.Ops, op)
	}
}

// StartJournal makes m record into j until StopJournal. It empties the
// write translation cache, so that the first write to each page takes
// the slow path, where it is recorded; later writes to the page hit the
// cache, which is fine: the journal names pages, whose contents the
// caller reads at the end.
func (m *Memory) StartJournal(j *Journal) {
	m.journal = j
	for i := range m.wtlb {
		m.wtlb[i] = tlbEntry{vpn: ^uint64(0)}
	}
}

// StopJournal ends StartJournal.
func (m *Memory) StopJournal() { m.journal = nil }

// Apply makes the mapping change op, as the call it records made it.
func (m *Memory) Apply(op MemOp) error {
	switch op.Kind {
	case OpMap:
		return m.Map(op.Addr, op.Size, op.Perm)
	case OpUnmap:
		m.Unmap(op.Addr, op.Size)
	case OpProtect:
		return m.Protect(op.Addr, op.Size, op.Perm)
	case OpDiscard:
		m.Discard(op.Addr, op.Size)
	case OpMarkShared:
		m.MarkShared(op.Addr, op.Size)
	case OpPastEOF:
		m.MarkPastEOF(op.Addr, op.Size)
	default:
		return fmt.Errorf("unknown mapping change %d", op.Kind)
	}
	return nil
}

// Snapshot returns a copy-on-write copy of m that does not change when m
// does (pages MarkShared marked are copied at once): what Restore sets m
// back to. It shares m's account; Release gives its pages back.
func (m *Memory) Snapshot() *Memory {
	n := &Memory{chunks: make(map[uint64]*chunk, len(m.chunks)), acct: m.acct, TBI: m.TBI}
	m.forkInto(n, true)
	return n
}

// Restore makes m's mappings and contents those of snap (a Snapshot of
// m), copy-on-write: snap stays as it is and can be restored again. The
// decoded code of m's pages is dropped (the cores decode again).
func (m *Memory) Restore(snap *Memory) {
	m.Release()
	snap.forkInto(m, true)
}

// Footprint returns the host bytes m alone holds as SetLimit counts
// them, counting bytes it shares with another space (Fork, Snapshot) as
// its own: Used less the Footprint of the running space is what the
// other spaces of the account hold besides.
func (m *Memory) Footprint() uint64 {
	var n uint64
	for _, c := range m.chunks {
		n += chunkBytes + uint64(c.count)*pageMetaBytes
		for _, p := range c.pages {
			if p == nil {
				continue
			}
			n += uint64(p.codeCost)
			if p.data != nil {
				n += PageSize
			}
		}
	}
	return n
}
