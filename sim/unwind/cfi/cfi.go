// Package cfi reads DWARF call frame information: the .eh_frame and
// .debug_frame sections, their CIEs and FDEs, the call frame instructions
// of each FDE and the row table those instructions describe.
//
// A section is a sequence of records, each a CIE or an FDE:
//
//	┌────────────┬───────────────────┬──────────────────────────────────┐
//	│ length u32 │ id / CIE pointer  │ body ...                         │
//	│ (0xffffffff│ .eh_frame: 0 = CIE│ CIE: version, augmentation,      │
//	│  + u64 for │ else distance back│  code/data alignment, RA column, │
//	│  64-bit    │ to the CIE        │  augmentation data, initial insns│
//	│  DWARF)    │ .debug_frame: ~0 =│ FDE: pc_begin, pc_range,         │
//	│            │ CIE, else offset  │  augmentation data, insns        │
//	└────────────┴───────────────────┴──────────────────────────────────┘
//
// A zero length ends an .eh_frame section.  Addresses in .eh_frame are
// written in the pointer encoding the CIE's 'R' augmentation names
// (usually pc-relative sdata4); see Encoding.
package cfi

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Kind says which of the two section flavours is being read.
type Kind uint8

const (
	EHFrame    Kind = iota // .eh_frame (GNU/LSB form)
	DebugFrame             // .debug_frame (DWARF form)
)

func (k Kind) String() string {
	if k == DebugFrame {
		return ".debug_frame"
	}
	return ".eh_frame"
}

// Options describe where the section lives.
type Options struct {
	Kind  Kind
	Order binary.ByteOrder
	// AddrSize is the target's address size in bytes (8 for every
	// supported target; 4 is accepted).
	AddrSize int
	// Addr is the section's address, the base of pc-relative pointers.
	Addr uint64
	// TextBase and DataBase are the bases of DW_EH_PE_textrel and
	// DW_EH_PE_datarel pointers; a pointer with such an encoding is an
	// error while its base is 0.
	TextBase, DataBase uint64
}

// CIE is a Common Information Entry.
type CIE struct {
	Offset        int // section offset of the record
	Version       uint8
	Augmentation  string
	AddrSize      uint8 // DWARF 4 .debug_frame; else Options.AddrSize
	CodeAlign     uint64
	DataAlign     int64
	RAColumn      uint32 // the return address register
	FDEEncoding   Encoding
	LSDAEncoding  Encoding
	Personality   uint64 // 'P': personality routine (or its GOT slot if indirect)
	PersonalityOK bool
	SignalFrame   bool // 'S'
	BKey          bool // 'B': aarch64 return address signed with the B key
	MTETagged     bool // 'G'
	Initial       []byte
	initialPos    int
}

// FDE is a Frame Description Entry.
type FDE struct {
	Offset  int // section offset of the record
	CIE     *CIE
	PCBegin uint64
	PCRange uint64
	LSDA    uint64
	HasLSDA bool
	Insns   []byte
	insnPos int
}

// PCEnd is the first address after the function.
func (f *FDE) PCEnd() uint64 { return f.PCBegin + f.PCRange }

// Section is a parsed .eh_frame or .debug_frame.
type Section struct {
	Options
	Data []byte
	CIEs []*CIE
	FDEs []*FDE // in section order
}

// Parse reads every CIE and FDE of a section.
func Parse(data []byte, opt Options) (*Section, error) {
	if opt.Order == nil {
		return nil, fmt.Errorf("cfi: no byte order given")
	}
	if opt.AddrSize == 0 {
		opt.AddrSize = 8
	}
	if opt.AddrSize != 4 && opt.AddrSize != 8 {
		return nil, fmt.Errorf("cfi: address size %d is not supported", opt.AddrSize)
	}
	s := &Section{Options: opt, Data: data}
	cies := map[int]*CIE{}
	type pending struct {
		pos, ciePos int
		r           reader
	}
	var fdes []pending
	pos := 0
	for pos < len(data) {
		r := reader{sec: opt.Kind.String(), b: data, pos: pos, end: len(data), order: opt.Order}
		start := pos
		length := uint64(r.u32("record length"))
		is64 := false
		if length == 0xffffffff {
			is64 = true
			length = r.u64("record length (64-bit DWARF)")
		}
		if r.err != nil {
			return nil, r.err
		}
		if length == 0 {
			if opt.Kind == EHFrame {
				break // terminator
			}
			pos = r.pos
			continue
		}
		if length > uint64(len(data)-r.pos) {
			r.pos = start
			r.fail("record length", "length %d runs past the end of the section (%d bytes left)", length, len(data)-start)
			return nil, r.err
		}
		r.end = r.pos + int(length)
		idPos := r.pos
		var id uint64
		if is64 {
			id = r.u64("CIE id / CIE pointer")
		} else {
			id = uint64(r.u32("CIE id / CIE pointer"))
		}
		if r.err != nil {
			return nil, r.err
		}
		isCIE := false
		ciePos := 0
		switch opt.Kind {
		case EHFrame:
			isCIE = id == 0
			ciePos = idPos - int(id)
			if !isCIE && (id > uint64(idPos)) {
				r.pos = idPos
				r.fail("FDE CIE pointer", "points %d bytes back, before the start of the section", id)
				return nil, r.err
			}
		case DebugFrame:
			isCIE = id == 0xffffffff || (is64 && id == ^uint64(0))
			if !isCIE && id >= uint64(len(data)) {
				r.pos = idPos
				r.fail("FDE CIE pointer", "offset %#x is outside the section", id)
				return nil, r.err
			}
			ciePos = int(id)
		}
		if isCIE {
			c, err := s.parseCIE(&r, start)
			if err != nil {
				return nil, err
			}
			cies[start] = c
			s.CIEs = append(s.CIEs, c)
		} else {
			fdes = append(fdes, pending{pos: start, ciePos: ciePos, r: r})
		}
		pos = r.end
	}
	for _, p := range fdes {
		c := cies[p.ciePos]
		if c == nil {
			r := p.r
			r.pos = p.pos
			r.fail("FDE CIE pointer", "no CIE at offset %#x", p.ciePos)
			return nil, r.err
		}
		f, err := s.parseFDE(&p.r, p.pos, c)
		if err != nil {
			return nil, err
		}
		s.FDEs = append(s.FDEs, f)
	}
	sort.SliceStable(s.FDEs, func(i, j int) bool { return s.FDEs[i].Offset < s.FDEs[j].Offset })
	return s, nil
}

func (s *Section) parseCIE(r *reader, start int) (*CIE, error) {
	c := &CIE{Offset: start, AddrSize: uint8(s.AddrSize), FDEEncoding: PEAbsptr, LSDAEncoding: PEOmit}
	c.Version = r.u8("CIE version")
	if r.err != nil {
		return nil, r.err
	}
	switch {
	case s.Kind == EHFrame && (c.Version == 1 || c.Version == 3):
	case s.Kind == DebugFrame && (c.Version == 1 || c.Version == 3 || c.Version == 4):
	default:
		r.pos--
		r.fail("CIE version", "version %d is not supported", c.Version)
		return nil, r.err
	}
	augPos := r.pos
	c.Augmentation = r.cstring("CIE augmentation")
	if c.Version == 4 {
		c.AddrSize = r.u8("CIE address_size")
		if seg := r.u8("CIE segment_selector_size"); seg != 0 && r.err == nil {
			r.pos--
			r.fail("CIE segment_selector_size", "segmented addresses (%d) are not supported", seg)
		}
		if r.err == nil && c.AddrSize != 4 && c.AddrSize != 8 {
			r.pos -= 2
			r.fail("CIE address_size", "address size %d is not supported", c.AddrSize)
		}
	}
	c.CodeAlign = r.uleb("CIE code_alignment_factor")
	c.DataAlign = r.sleb("CIE data_alignment_factor")
	if c.Version == 1 {
		c.RAColumn = uint32(r.u8("CIE return_address_register"))
	} else {
		ra := r.uleb("CIE return_address_register")
		if ra > 0xffff && r.err == nil {
			r.fail("CIE return_address_register", "register %d is out of range", ra)
		}
		c.RAColumn = uint32(ra)
	}
	if r.err != nil {
		return nil, r.err
	}
	aug := c.Augmentation
	if aug != "" && aug[0] == 'z' {
		n := r.uleb("CIE augmentation data length")
		data := r.bytes(n, "CIE augmentation data")
		if r.err != nil {
			return nil, r.err
		}
		ar := reader{sec: r.sec, b: r.b, pos: r.pos - len(data), end: r.pos, order: r.order}
		after := r.pos
	loop:
		for i := 1; i < len(aug); i++ {
			switch aug[i] {
			case 'L':
				c.LSDAEncoding = Encoding(ar.u8("CIE LSDA encoding"))
				if ar.err == nil && !c.LSDAEncoding.valid() {
					ar.pos--
					ar.fail("CIE LSDA encoding", "bad pointer encoding %#x", uint8(c.LSDAEncoding))
				}
			case 'P':
				e := Encoding(ar.u8("CIE personality encoding"))
				if ar.err == nil && (!e.valid() || e == PEOmit) {
					ar.pos--
					ar.fail("CIE personality encoding", "bad pointer encoding %#x", uint8(e))
					break loop
				}
				c.Personality = s.pointer(&ar, e, "CIE personality", 0)
				c.PersonalityOK = ar.err == nil
			case 'R':
				c.FDEEncoding = Encoding(ar.u8("CIE FDE pointer encoding"))
				if ar.err == nil && (!c.FDEEncoding.valid() || c.FDEEncoding == PEOmit || c.FDEEncoding&PEIndirect != 0) {
					ar.pos--
					ar.fail("CIE FDE pointer encoding", "bad pointer encoding %#x for FDE addresses", uint8(c.FDEEncoding))
				}
			case 'S':
				c.SignalFrame = true
			case 'B':
				c.BKey = true
			case 'G':
				c.MTETagged = true
			default:
				// Unknown letters: the 'z' length lets us skip the rest.
				break loop
			}
			if ar.err != nil {
				return nil, ar.err
			}
		}
		if ar.err != nil {
			return nil, ar.err
		}
		r.pos = after
	} else if aug != "" {
		r.pos = augPos
		r.fail("CIE augmentation", "augmentation %q is not supported (no 'z' length to skip it)", aug)
		return nil, r.err
	}
	c.initialPos = r.pos
	c.Initial = r.b[r.pos:r.end]
	return c, nil
}

func (s *Section) parseFDE(r *reader, start int, c *CIE) (*FDE, error) {
	f := &FDE{Offset: start, CIE: c}
	enc := c.FDEEncoding
	if s.Kind == DebugFrame {
		enc = PEAbsptr
	}
	f.PCBegin = s.pointerSized(r, enc, "FDE pc_begin", 0, int(c.AddrSize))
	f.PCRange = s.pointerSized(r, enc&0x0f, "FDE pc_range", 0, int(c.AddrSize))
	if r.err != nil {
		return nil, r.err
	}
	if len(c.Augmentation) > 0 && c.Augmentation[0] == 'z' {
		n := r.uleb("FDE augmentation data length")
		data := r.bytes(n, "FDE augmentation data")
		if r.err != nil {
			return nil, r.err
		}
		if c.LSDAEncoding != PEOmit {
			ar := reader{sec: r.sec, b: r.b, pos: r.pos - len(data), end: r.pos, order: r.order}
			f.LSDA = s.pointer(&ar, c.LSDAEncoding, "FDE LSDA pointer", f.PCBegin)
			if ar.err != nil {
				return nil, ar.err
			}
			f.HasLSDA = true
		}
	}
	f.insnPos = r.pos
	f.Insns = r.b[r.pos:r.end]
	return f, nil
}

// FDEFor returns the FDE covering pc, or nil.
func (s *Section) FDEFor(pc uint64) *FDE {
	for _, f := range s.FDEs {
		if pc >= f.PCBegin && pc-f.PCBegin < f.PCRange {
			return f
		}
	}
	return nil
}
