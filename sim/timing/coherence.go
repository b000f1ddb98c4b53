package timing

import (
	"fmt"
	"slices"
)

// MaxCores bounds the cores one Directory tracks (a line's holders are a
// 64-bit mask).
const MaxCores = 64

// LineState is one core's MESI state of a cache line: what its private
// caches (L1D and L2) may do with their copy.
type LineState uint8

const (
	Invalid   LineState = iota // no copy
	Shared                     // a clean copy that other cores may also hold: loads only
	Exclusive                  // the only copy, clean: a store makes it Modified without asking
	Modified                   // the only copy, written: the shared cache's copy is stale
)

func (s LineState) String() string {
	switch s {
	case Invalid:
		return "I"
	case Shared:
		return "S"
	case Exclusive:
		return "E"
	case Modified:
		return "M"
	}
	return fmt.Sprintf("LineState(%d)", uint8(s))
}

// Directory keeps the cores' private caches coherent with MESI, as the
// snoop filter of a shared last-level cache does (Arm's CMN interconnect
// on the Neoverse presets; its CHI states UC, UD, SC and I are MESI's E,
// M, S and I, and the model does not use CHI's SD, the Owned state of
// MOESI: a modified line read by another core is written back and becomes
// shared).
//
// For each line some core holds it records which cores hold it and
// whether one of them owns it (E or M). The invariant: an owned line has
// exactly one holder.
//
// The timing model asks it on every private-cache miss (Load), on every
// store to a line the core does not own (Store) and when a line leaves a
// core's private caches (Evict); the answer (a Snoop) says where the data
// comes from and whose copies go.
type Directory struct {
	cores int
	lines map[uint64]dirEntry
	// gen counts the requests that may have changed a line's state
	// (Load, Store, Evict): a core's record of the lines it owns
	// (Model.owned) holds while gen is unchanged.
	gen uint64
}

// dirEntry is one line's holders.
//
//	holders  bit c set: core c's private caches hold the line
//	owner    the owning core (E or M), or -1 when every holder is S
//	dirty    the owner's copy is modified (M)
type dirEntry struct {
	holders uint64
	owner   int8
	dirty   bool
}

// Snoop is what a coherence request found.
type Snoop struct {
	// Peer is the core whose private cache supplied the data (the
	// Neoverse "peer core" data source), or -1 when the data comes from
	// the shared cache or memory, or the requester had it already.
	Peer int
	// PeerModified: the peer's copy was modified (perf c2c's HITM).
	PeerModified bool
	// Invalidated are the other cores whose copies must leave their
	// private caches, one bit per core.
	Invalidated uint64
	// Upgrade: a store to a line the core held shared, which asked for
	// ownership without data.
	Upgrade bool
}

// NewDirectory tracks the lines of cores private hierarchies, 1 ≤ cores ≤
// MaxCores.
func NewDirectory(cores int) (*Directory, error) {
	if cores < 1 || cores > MaxCores {
		return nil, fmt.Errorf("%d cores: the coherence model tracks 1 to %d", cores, MaxCores)
	}
	return &Directory{cores: cores, lines: make(map[uint64]dirEntry)}, nil
}

// State returns core's state of line.
func (d *Directory) State(core int, line uint64) LineState {
	e, ok := d.lines[line]
	switch {
	case !ok || e.holders&(1<<core) == 0:
		return Invalid
	case int(e.owner) != core:
		return Shared
	case e.dirty:
		return Modified
	}
	return Exclusive
}

// Load is a load by core that missed its private caches: the core gets
// the line Exclusive when no other core holds it, else Shared, with the
// data from an owning peer (which keeps a Shared copy, writing back a
// modified one) or else from the shared cache or memory.
func (d *Directory) Load(core int, line uint64) Snoop {
	d.gen++
	s := Snoop{Peer: -1}
	bit := uint64(1) << core
	e, ok := d.lines[line]
	switch {
	case !ok || e.holders == 0:
		e = dirEntry{holders: bit, owner: int8(core)}
	case e.holders&bit != 0:
		// Held already (a copy the private caches lost track of is not
		// modelled): nothing changes.
	default:
		if e.owner >= 0 {
			s.Peer, s.PeerModified = int(e.owner), e.dirty
			e.owner, e.dirty = -1, false
		}
		e.holders |= bit
	}
	d.lines[line] = e
	return s
}

// Store is a store by core: afterwards the core holds the line Modified
// and no other core holds it. A Shared copy is upgraded; without a copy
// the data comes from an owning peer, or else from the shared cache or
// memory (a read for ownership).
func (d *Directory) Store(core int, line uint64) Snoop {
	d.gen++
	s := Snoop{Peer: -1}
	bit := uint64(1) << core
	e, ok := d.lines[line]
	switch {
	case !ok:
	case e.holders&bit != 0 && int(e.owner) == core:
		// E → M silently, M stays.
	case e.holders&bit != 0:
		s.Upgrade = true
	case e.owner >= 0:
		s.Peer, s.PeerModified = int(e.owner), e.dirty
	}
	s.Invalidated = e.holders &^ bit
	d.lines[line] = dirEntry{holders: bit, owner: int8(core), dirty: true}
	return s
}

// Evict records that line left core's private caches; it reports whether
// the copy was modified (written back to the shared cache).
func (d *Directory) Evict(core int, line uint64) (writeBack bool) {
	d.gen++
	bit := uint64(1) << core
	e, ok := d.lines[line]
	if !ok || e.holders&bit == 0 {
		return false
	}
	if int(e.owner) == core {
		writeBack = e.dirty
		e.owner, e.dirty = -1, false
	}
	e.holders &^= bit
	if e.holders == 0 {
		delete(d.lines, line)
	} else {
		d.lines[line] = e
	}
	return writeBack
}

// Holders returns the cores that hold line, one bit per core.
func (d *Directory) Holders(line uint64) uint64 { return d.lines[line].holders }

// sortedLines returns the lines some core holds, ascending.
func (d *Directory) sortedLines() []uint64 {
	lines := make([]uint64, 0, len(d.lines))
	for l := range d.lines {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return lines
}

// Lines returns how many lines some core holds.
func (d *Directory) Lines() int { return len(d.lines) }
