package sframe

import (
	"errors"
	"sort"
)

// Lookup errors.
var (
	ErrNotSorted = errors.New("sframe: FDEs are not sorted (SFRAME_F_FDE_SORTED is clear)")
	ErrNoFDE     = errors.New("sframe: no FDE covers the address")
	ErrNoFRE     = errors.New("sframe: no FRE covers the address")
	ErrRepSize   = errors.New("sframe: PC type MASK FDE with rep_size 0")
)

// Sort orders the FDEs by start address and sets SFRAME_F_FDE_SORTED,
// as ld does.
func (s *Section) Sort() {
	sort.SliceStable(s.FDEs, func(i, j int) bool { return s.FDEs[i].Start < s.FDEs[j].Start })
	s.Flags |= SFRAME_F_FDE_SORTED
}

// Index is a sorted section's lookup table: one compact entry per FDE
// and the FRE starts in one flat array, so that a lookup touches little
// memory.  It is built once (NewIndex) and must be rebuilt if the section
// changes.
type Index struct {
	s         *Section
	starts    []int64 // FDE starts, searched
	fdes      []indexEntry
	freStarts []uint32
}

type indexEntry struct {
	size uint32
	rep  int32  // -1 for PC type INC, else rep_size (MASK)
	fre  uint32 // the FDE's FREs are freStarts[fre:fre+nfre]
	nfre uint32
}

// NewIndex indexes a sorted section.
func NewIndex(s *Section) (*Index, error) {
	if s.Flags&SFRAME_F_FDE_SORTED == 0 {
		return nil, ErrNotSorted
	}
	x := &Index{s: s, starts: make([]int64, len(s.FDEs)), fdes: make([]indexEntry, len(s.FDEs)), freStarts: make([]uint32, 0, s.NumFREs())}
	for i := range s.FDEs {
		f := &s.FDEs[i]
		x.starts[i] = f.Start
		e := indexEntry{size: f.Size, rep: -1, fre: uint32(len(x.freStarts)), nfre: uint32(len(f.FREs))}
		if f.PCType == PCMask {
			e.rep = int32(f.RepSize)
		}
		x.fdes[i] = e
		for j := range f.FREs {
			x.freStarts = append(x.freStarts, f.FREs[j].Start)
		}
	}
	return x, nil
}

// Find returns the FDE and FRE that describe pc, given relative to the
// section's address (pc - section address), as libsframe's
// sframe_find_fre takes it: a binary search for the last FDE starting at
// or before pc, a check that pc lies inside it, then a scan for the last
// FRE starting at or before pc's offset (for PC type MASK, the offset
// modulo rep_size).
func (x *Index) Find(pc int64) (*FDE, *FRE, error) {
	// A branch-free binary search for the last start <= pc: the loop
	// body compiles to a conditional move, so random pcs cost no branch
	// mispredictions.
	starts := x.starts
	if len(starts) == 0 || pc < starts[0] {
		return nil, nil, ErrNoFDE
	}
	base, n := 0, len(starts)
	for n > 1 {
		half := n >> 1
		if starts[base+half] <= pc {
			base += half
		}
		n -= half
	}
	e := &x.fdes[base]
	off := pc - starts[base]
	if off >= int64(e.size) {
		return nil, nil, ErrNoFDE
	}
	f := &x.s.FDEs[base]
	if e.rep >= 0 {
		if e.rep == 0 {
			return f, nil, ErrRepSize
		}
		off %= int64(e.rep)
	}
	// FRE starts increase: count those at or before off (again without
	// a data-dependent branch).
	j := -1
	for _, st := range x.freStarts[e.fre : e.fre+e.nfre] {
		if int64(st) <= off {
			j++
		}
	}
	if j < 0 {
		return f, nil, ErrNoFRE
	}
	return f, &f.FREs[j], nil
}

// Find looks pc up in a sorted section (see Index.Find).  It indexes the
// section on every call; build an Index for repeated lookups.
func (s *Section) Find(pc int64) (*FDE, *FRE, error) {
	x, err := NewIndex(s)
	if err != nil {
		return nil, nil, err
	}
	return x.Find(pc)
}
