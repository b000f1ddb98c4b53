package sframe

import (
	"encoding/binary"
	"fmt"

	"simrun/sim/unwind/abi"
)

// EncodeOptions adjust the layout of an encoded section.
type EncodeOptions struct {
	// PadTo pads the section with zero bytes to a multiple of PadTo bytes
	// (s390x gas pads .sframe to 8; 0 or 1: no padding).
	PadTo int
}

// Encode writes s as a version 2 or 3 section in s.Order.  Each FDE's
// FRE type and each FRE's data word size are the narrowest that hold its
// values, as gas and libsframe choose them.  FDE starts are written
// relative to their field when SFRAME_F_FDE_FUNC_START_PCREL is set, else
// relative to the section start.  Rules the version or ABI cannot express
// are errors naming the FDE and FRE.
func Encode(s *Section, opt EncodeOptions) ([]byte, error) {
	if s.Version != SFRAME_VERSION_2 && s.Version != SFRAME_VERSION_3 {
		return nil, fmt.Errorf("sframe: cannot encode version %d (2 and 3 are supported)", s.Version)
	}
	if bad := s.Flags &^ validFlags[s.Version]; bad != 0 {
		return nil, fmt.Errorf("sframe: flags %#x are not valid in version %d", s.Flags, s.Version)
	}
	a, err := abi.ForSFrame(s.ABI)
	if err != nil {
		return nil, fmt.Errorf("sframe: %w", err)
	}
	bo := s.Order
	if bo == nil {
		bo = a.Order
	}
	o, ok := bo.(binary.AppendByteOrder)
	if !ok {
		return nil, fmt.Errorf("sframe: byte order %v cannot append", bo)
	}
	if len(s.Aux) > 255 {
		return nil, fmt.Errorf("sframe: auxiliary header of %d bytes (at most 255)", len(s.Aux))
	}
	fdeSize := fdeSizeV3
	if s.Version == SFRAME_VERSION_2 {
		fdeSize = fdeSizeV2
	}
	hdrEnd := HeaderSize + len(s.Aux)
	freStart := hdrEnd + len(s.FDEs)*fdeSize
	e := encoder{s: s, abi: a, o: o}
	var fres []byte
	fdes := make([]byte, 0, len(s.FDEs)*fdeSize)
	numFREs := 0
	for i := range s.FDEs {
		f := &s.FDEs[i]
		fieldPos := int64(hdrEnd + i*fdeSize)
		if err := e.fdeCheck(f, fieldPos, fieldPos); err != nil {
			return nil, fmt.Errorf("sframe: FDE %d: %w", i, err)
		}
		ft := freType(f.Size)
		start := f.Start
		if s.Flags&SFRAME_F_FDE_FUNC_START_PCREL != 0 {
			start -= fieldPos
		}
		freOff := uint32(len(fres))
		info := funcInfo(f, ft)
		if s.Version == SFRAME_VERSION_3 {
			fdes = o.AppendUint64(fdes, uint64(start))
			fdes = o.AppendUint32(fdes, f.Size)
			fdes = o.AppendUint32(fdes, freOff)
			fres = o.AppendUint16(fres, uint16(len(f.FREs)))
			info2 := uint8(SFRAME_FDE_TYPE_DEFAULT)
			if f.Flex {
				info2 = SFRAME_FDE_TYPE_FLEX
			}
			fres = append(fres, info, info2, f.RepSize)
		} else {
			fdes = o.AppendUint32(fdes, uint32(int32(start)))
			fdes = o.AppendUint32(fdes, f.Size)
			fdes = o.AppendUint32(fdes, freOff)
			fdes = o.AppendUint32(fdes, uint32(len(f.FREs)))
			fdes = append(fdes, info, f.RepSize, 0, 0)
		}
		for j := range f.FREs {
			var err error
			fres, err = e.fre(fres, f, &f.FREs[j], ft)
			if err == nil && j > 0 && f.FREs[j].Start < f.FREs[j-1].Start {
				err = fmt.Errorf("start %#x is before the previous FRE's %#x", f.FREs[j].Start, f.FREs[j-1].Start)
			}
			if err != nil {
				return nil, fmt.Errorf("sframe: FDE %d (start %#x) FRE %d: %w", i, f.Start, j, err)
			}
		}
		numFREs += len(f.FREs)
	}
	out := make([]byte, 0, freStart+len(fres)+8)
	out = o.AppendUint16(out, SFRAME_MAGIC)
	out = append(out, s.Version, s.Flags, s.ABI, uint8(s.FixedFP), uint8(s.FixedRA), uint8(len(s.Aux)))
	out = o.AppendUint32(out, uint32(len(s.FDEs)))
	out = o.AppendUint32(out, uint32(numFREs))
	out = o.AppendUint32(out, uint32(len(fres)))
	out = o.AppendUint32(out, 0)
	out = o.AppendUint32(out, uint32(len(s.FDEs)*fdeSize))
	out = append(out, s.Aux...)
	out = append(out, fdes...)
	out = append(out, fres...)
	if opt.PadTo > 1 {
		for len(out)%opt.PadTo != 0 {
			out = append(out, 0)
		}
	}
	return out, nil
}

// fdeCheck is what Encode refuses in FDE f itself, with its start field
// at any offset from lo to hi in the section.
func (e *encoder) fdeCheck(f *FDE, lo, hi int64) error {
	s := e.s
	if f.Flex && s.Version != SFRAME_VERSION_3 {
		return fmt.Errorf("flexible FDEs need version 3")
	}
	if len(f.FREs) > 0xffff && s.Version == SFRAME_VERSION_3 {
		return fmt.Errorf("%d FREs (version 3 allows 65535)", len(f.FREs))
	}
	if s.Version == SFRAME_VERSION_2 {
		for _, pos := range []int64{lo, hi} {
			start := f.Start
			if s.Flags&SFRAME_F_FDE_FUNC_START_PCREL != 0 {
				start -= pos
			}
			if start < -1<<31 || start >= 1<<31 {
				return fmt.Errorf("start offset %#x does not fit the 32-bit version 2 field", start)
			}
		}
		if f.Signal {
			return fmt.Errorf("version 2 has no signal-frame bit")
		}
	}
	return nil
}

// Encodable reports why Encode would refuse FDE f in section s (nil if
// it would not), for f placed anywhere among n FDEs: what a translation
// checks before it keeps a function, so that one bad function costs
// only itself.  s gives the version, flags, ABI and fixed offsets.
func Encodable(s *Section, f *FDE, n int) error {
	a, err := abi.ForSFrame(s.ABI)
	if err != nil {
		return err
	}
	bo := s.Order
	if bo == nil {
		bo = a.Order
	}
	o, ok := bo.(binary.AppendByteOrder)
	if !ok {
		return fmt.Errorf("byte order %v cannot append", bo)
	}
	fdeSize := fdeSizeV3
	if s.Version == SFRAME_VERSION_2 {
		fdeSize = fdeSizeV2
	}
	lo := int64(HeaderSize + len(s.Aux))
	e := encoder{s: s, abi: a, o: o}
	if err := e.fdeCheck(f, lo, lo+int64(max(n-1, 0)*fdeSize)); err != nil {
		return err
	}
	ft := freType(f.Size)
	var scratch [64]byte
	for j := range f.FREs {
		_, err := e.fre(scratch[:0], f, &f.FREs[j], ft)
		if err == nil && j > 0 && f.FREs[j].Start < f.FREs[j-1].Start {
			err = fmt.Errorf("start %#x is before the previous FRE's %#x", f.FREs[j].Start, f.FREs[j-1].Start)
		}
		if err != nil {
			return fmt.Errorf("FRE %d: %w", j, err)
		}
	}
	return nil
}

type encoder struct {
	s   *Section
	abi *abi.ABI
	o   binary.AppendByteOrder
}

// word is one data word to write: a signed offset or an unsigned FLEX
// control word.
type word struct {
	v    int64
	ctrl bool
}

func (w word) size() uint8 {
	if w.ctrl {
		switch {
		case w.v <= 0xff:
			return SFRAME_FRE_DATAWORD_1B
		case w.v <= 0xffff:
			return SFRAME_FRE_DATAWORD_2B
		}
		return SFRAME_FRE_DATAWORD_4B
	}
	switch {
	case w.v >= -0x7f && w.v <= 0x7f:
		return SFRAME_FRE_DATAWORD_1B
	case w.v >= -0x7fff && w.v <= 0x7fff:
		return SFRAME_FRE_DATAWORD_2B
	}
	return SFRAME_FRE_DATAWORD_4B
}

func (e *encoder) cfaOffset(off int64) (int64, error) {
	if !e.abi.CFAScaled {
		return off, nil
	}
	v := off + S390XCFAOffsetAdjustment
	if v%S390XCFAAlignment != 0 {
		return 0, fmt.Errorf("CFA offset %d is not 160 plus a multiple of 8 (not representable on s390x)", off)
	}
	return v / S390XCFAAlignment, nil
}

func (e *encoder) fre(out []byte, f *FDE, fre *FRE, ft uint8) ([]byte, error) {
	if fre.Start > f.Size {
		return nil, fmt.Errorf("start %#x is past the function size %#x", fre.Start, f.Size)
	}
	switch ft {
	case SFRAME_FRE_TYPE_ADDR1:
		out = append(out, uint8(fre.Start))
	case SFRAME_FRE_TYPE_ADDR2:
		out = e.o.AppendUint16(out, uint16(fre.Start))
	default:
		out = e.o.AppendUint32(out, fre.Start)
	}
	if fre.RAUndefined {
		return append(out, 0), nil
	}
	var words []word
	var base uint8
	var err error
	if f.Flex {
		words, err = e.flexWords(fre)
	} else {
		words, base, err = e.defaultWords(fre)
	}
	if err != nil {
		return nil, err
	}
	size := uint8(0)
	for _, w := range words {
		if w.v < -1<<31 || w.v > 1<<32-1 || (!w.ctrl && w.v > 1<<31-1) {
			return nil, fmt.Errorf("value %d does not fit a 4-byte data word", w.v)
		}
		size = max(size, w.size())
	}
	out = append(out, freInfo(fre.MangledRA, size, uint8(len(words)), base))
	for _, w := range words {
		switch size {
		case SFRAME_FRE_DATAWORD_1B:
			out = append(out, uint8(w.v))
		case SFRAME_FRE_DATAWORD_2B:
			out = e.o.AppendUint16(out, uint16(w.v))
		default:
			out = e.o.AppendUint32(out, uint32(w.v))
		}
	}
	return out, nil
}

func (e *encoder) defaultWords(fre *FRE) ([]word, uint8, error) {
	a := e.abi
	c := fre.CFA
	if c.Kind != RuleReg || c.Deref || (c.Reg != a.SP && c.Reg != a.FP) {
		return nil, 0, fmt.Errorf("CFA rule %v needs a flexible FDE (a default FDE has SP or FP + offset)", c)
	}
	base := uint8(0)
	if c.Reg == a.SP {
		base = 1
	}
	off, err := e.cfaOffset(c.Off)
	if err != nil {
		return nil, 0, err
	}
	words := []word{{v: off}}
	slot := func(name string, r Rule) (int64, error) {
		switch {
		case r.Kind == RuleCFA && r.Deref:
			if e.s.Version == SFRAME_VERSION_2 && a.CFAScaled && r.Off&1 != 0 {
				return 0, fmt.Errorf("%s at an odd offset %d reads back as a register number in version 2", name, r.Off)
			}
			return r.Off, nil
		case r.Kind == RuleReg && e.s.Version == SFRAME_VERSION_2 && a.CFAScaled && r.Off == 0 && !r.Deref:
			return int64(int32(r.Reg))<<1 | 1, nil
		}
		return 0, fmt.Errorf("%s rule %v needs a flexible FDE", name, r)
	}
	if e.s.FixedRA != 0 {
		if fre.RA.Kind != RuleNone {
			return nil, 0, fmt.Errorf("RA rule %v with a fixed RA offset in the header", fre.RA)
		}
	} else {
		switch fre.RA.Kind {
		case RuleNone:
			if fre.FP.Kind != RuleNone {
				return nil, 0, fmt.Errorf("FP rule without an RA word (RA needs RulePadding)")
			}
		case RulePadding:
			words = append(words, word{v: 0})
		default:
			v, err := slot("RA", fre.RA)
			if err != nil {
				return nil, 0, err
			}
			if v == 0 {
				return nil, 0, fmt.Errorf("RA at CFA+0 reads back as RA padding")
			}
			words = append(words, word{v: v})
		}
	}
	switch fre.FP.Kind {
	case RuleNone:
	case RulePadding:
		return nil, 0, fmt.Errorf("padding is for RA only")
	default:
		v, err := slot("FP", fre.FP)
		if err != nil {
			return nil, 0, err
		}
		words = append(words, word{v: v})
	}
	return words, base, nil
}

func (e *encoder) flexWords(fre *FRE) ([]word, error) {
	c := fre.CFA
	if c.Kind != RuleReg && c.Kind != RuleCFA {
		return nil, fmt.Errorf("CFA rule %v", c)
	}
	off, err := e.cfaOffset(c.Off)
	if err != nil {
		return nil, err
	}
	words := []word{{v: int64(ctrlWord(c)), ctrl: true}, {v: off}}
	pair := func(name string, r Rule) error {
		cw := ctrlWord(r)
		if r.Kind == RuleCFA && r.Reg != 0 {
			cw |= uint64(r.Reg) << 3
		}
		if cw == 0 && name == "RA" {
			return fmt.Errorf("RA = CFA%+d (no dereference) is not representable", r.Off)
		}
		words = append(words, word{v: int64(cw), ctrl: true}, word{v: r.Off})
		return nil
	}
	switch fre.RA.Kind {
	case RuleNone:
		if fre.FP.Kind != RuleNone {
			return nil, fmt.Errorf("FP rule without an RA word (RA needs RulePadding)")
		}
	case RulePadding:
		words = append(words, word{v: 0, ctrl: true})
	default:
		if err := pair("RA", fre.RA); err != nil {
			return nil, err
		}
	}
	switch fre.FP.Kind {
	case RuleNone:
	case RulePadding:
		return nil, fmt.Errorf("padding is for RA only")
	default:
		if err := pair("FP", fre.FP); err != nil {
			return nil, err
		}
	}
	return words, nil
}
