package unwind

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"

	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/cfi"
	"simrun/sim/unwind/sframe"
)

// Object is an ELF file (executable or relocatable object) read for its
// unwinding sections.
type Object struct {
	Path string
	ELF  *elf.File
	ABI  *abi.ABI
	// Relocatable is true for ET_REL objects: their sections are read with
	// relocations applied as if every section sat at address 0, as
	// objdump shows them.
	Relocatable bool
}

// Open reads the ELF file at path.
func Open(path string) (*Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return NewObject(path, data)
}

// NewObject reads an ELF file held in data; path names it in errors.
func NewObject(path string, data []byte) (o *Object, err error) {
	if !IsELF(data) {
		return nil, fmt.Errorf("%s: not an ELF file", path)
	}
	defer func() {
		// debug/elf has had panics on hostile input; never let one escape.
		if r := recover(); r != nil {
			o, err = nil, fmt.Errorf("%s: malformed ELF file: %v", path, r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: malformed ELF file: %v", path, err)
	}
	if f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: %v files are not supported (64-bit only)", path, f.Class)
	}
	a, err := abi.ForMachine(f.Machine, f.ByteOrder)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Object{Path: path, ELF: f, ABI: a, Relocatable: f.Type == elf.ET_REL}, nil
}

// IsELF reports whether data starts with the ELF magic.
func IsELF(data []byte) bool { return len(data) >= 4 && bytes.Equal(data[:4], []byte(elf.ELFMAG)) }

// FileHeader is what objdump prints before a section dump:
// "\nFILE:     file format elf64-s390\n\n".
func (o *Object) FileHeader() string {
	return fmt.Sprintf("\n%s:     file format %s\n\n", o.Path, o.ABI.BFDName)
}

// Section returns the contents and address of the named section, with
// relocations applied in relocatable objects; ok is false if there is no
// such section.
func (o *Object) Section(name string) (data []byte, addr uint64, ok bool, err error) {
	s := o.ELF.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, 0, false, nil
	}
	data, err = s.Data()
	if err != nil {
		return nil, 0, true, fmt.Errorf("%s: %s: %v", o.Path, name, err)
	}
	if !o.Relocatable {
		return data, s.Addr, true, nil
	}
	data = append([]byte(nil), data...)
	if err := o.relocate(s, data); err != nil {
		return nil, 0, true, err
	}
	return data, 0, true, nil
}

// relocate applies the RELA relocations that target section s to data,
// with every section at address 0 (S + A - P for the pc-relative kinds).
func (o *Object) relocate(s *elf.Section, data []byte) error {
	var target int = -1
	for i, sec := range o.ELF.Sections {
		if sec == s {
			target = i
		}
	}
	syms, _ := o.ELF.Symbols()
	order := o.ELF.ByteOrder
	for _, rs := range o.ELF.Sections {
		if rs.Type != elf.SHT_RELA || int(rs.Info) != target {
			continue
		}
		rd, err := rs.Data()
		if err != nil {
			return fmt.Errorf("%s: %s: %v", o.Path, rs.Name, err)
		}
		for off := 0; off+24 <= len(rd); off += 24 {
			rOff := order.Uint64(rd[off:])
			info := order.Uint64(rd[off+8:])
			addend := int64(order.Uint64(rd[off+16:]))
			symIdx, typ := info>>32, uint32(info)
			var sv uint64
			if symIdx > 0 {
				if symIdx > uint64(len(syms)) {
					return fmt.Errorf("%s: %s entry at offset %#x: symbol %d out of range", o.Path, rs.Name, off, symIdx)
				}
				sv = syms[symIdx-1].Value
			}
			size, pcrel, known := relocKind(o.ELF.Machine, typ)
			if !known {
				return fmt.Errorf("%s: %s entry at offset %#x: relocation type %d is not supported", o.Path, rs.Name, off, typ)
			}
			if size == 0 {
				continue
			}
			if rOff > uint64(len(data)) || uint64(len(data))-rOff < uint64(size) {
				return fmt.Errorf("%s: %s entry at offset %#x: target offset %#x is outside %s", o.Path, rs.Name, off, rOff, s.Name)
			}
			v := sv + uint64(addend)
			if pcrel {
				v -= rOff
			}
			if size == 8 {
				order.PutUint64(data[rOff:], v)
			} else {
				order.PutUint32(data[rOff:], uint32(v))
			}
		}
	}
	return nil
}

// relocKind classifies the relocation types that appear in .eh_frame,
// .debug_frame and .sframe sections.
func relocKind(m elf.Machine, typ uint32) (size int, pcrel, known bool) {
	switch m {
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(typ) {
		case elf.R_AARCH64_NONE, elf.R_AARCH64_NULL:
			return 0, false, true
		case elf.R_AARCH64_ABS64:
			return 8, false, true
		case elf.R_AARCH64_ABS32:
			return 4, false, true
		case elf.R_AARCH64_PREL64:
			return 8, true, true
		case elf.R_AARCH64_PREL32:
			return 4, true, true
		}
	case elf.EM_S390:
		switch elf.R_390(typ) {
		case elf.R_390_NONE:
			return 0, false, true
		case elf.R_390_64:
			return 8, false, true
		case elf.R_390_32:
			return 4, false, true
		case elf.R_390_PC64:
			return 8, true, true
		case elf.R_390_PC32:
			return 4, true, true
		}
	case elf.EM_X86_64:
		switch elf.R_X86_64(typ) {
		case elf.R_X86_64_NONE:
			return 0, false, true
		case elf.R_X86_64_64:
			return 8, false, true
		case elf.R_X86_64_32, elf.R_X86_64_32S:
			return 4, false, true
		case elf.R_X86_64_PC64:
			return 8, true, true
		case elf.R_X86_64_PC32:
			return 4, true, true
		}
	}
	return 0, false, false
}

// CFI returns the object's call frame information: .eh_frame, or
// .debug_frame when there is no .eh_frame; nil if it has neither.
func (o *Object) CFI() (*cfi.Section, error) {
	for _, k := range []cfi.Kind{cfi.EHFrame, cfi.DebugFrame} {
		data, addr, ok, err := o.Section(k.String())
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		opt := cfi.Options{Kind: k, Order: o.ELF.ByteOrder, AddrSize: 8, Addr: addr}
		sec, err := cfi.Parse(data, opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Path, err)
		}
		return sec, nil
	}
	return nil, nil
}

// SFrame decodes the named SFrame section (".sframe" unless renamed);
// ok is false if there is none.
func (o *Object) SFrame(name string) (s *sframe.Section, addr uint64, ok bool, err error) {
	data, addr, ok, err := o.Section(name)
	if err != nil || !ok {
		return nil, 0, ok, err
	}
	s, err = o.decodeSFrame(name, data)
	if err != nil {
		return nil, 0, true, err
	}
	return s, addr, true, nil
}

// decodeSFrame decodes an SFrame section of the object.  gas has always
// written FDE starts relative to the start field itself; before
// SFRAME_F_FDE_FUNC_START_PCREL said so (V1, early V2), only linked
// sections were section-relative as the flag's absence claims.  So in a
// relocatable object such starts are read as field-relative.
func (o *Object) decodeSFrame(name string, data []byte) (*sframe.Section, error) {
	s, err := sframe.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: SFrame decode failure: %w", o.Path, name, err)
	}
	if o.Relocatable && s.Flags&sframe.SFRAME_F_FDE_FUNC_START_PCREL == 0 {
		for i := range s.FDEs {
			s.FDEs[i].Start += int64(sframe.HeaderSize + len(s.Aux) + i*sframe.FDESize(s.Version))
		}
	}
	return s, nil
}

// Emitted is an SFrame section made from an object's CFI.
type Emitted struct {
	Section  *sframe.Section
	Bytes    []byte
	Addr     uint64 // the address the section was laid out for
	Warnings []sframe.Warning
}

// EmitSFrame translates the object's CFI into an SFrame section of the
// given version (2 or 3) laid out for address addr, the way gas would
// have written it for a relocatable object and the way ld would have
// linked it (FDEs sorted) for an executable.
func (o *Object) EmitSFrame(version uint8, addr uint64) (*Emitted, error) {
	sec, err := o.CFI()
	if err != nil {
		return nil, err
	}
	if sec == nil {
		return nil, fmt.Errorf("%s: no .eh_frame or .debug_frame section to emit SFrame from", o.Path)
	}
	if o.Relocatable {
		addr = 0
	}
	s, warns, err := sframe.FromCFI(sec, sframe.TranslateOptions{
		ABI: o.ABI, Version: version, SectionAddr: addr, Sort: !o.Relocatable,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path, err)
	}
	var opt sframe.EncodeOptions
	if o.Relocatable && o.ABI.Machine == elf.EM_S390 {
		// s390x gas pads every section to its alignment (8).
		opt.PadTo = 8
	}
	b, err := sframe.Encode(s, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path, err)
	}
	return &Emitted{Section: s, Bytes: b, Addr: addr, Warnings: warns}, nil
}

// SFrameOptions select what ReadSFrame shows.
type SFrameOptions struct {
	Section string // the SFrame section's name; "" means ".sframe"
	Emit    bool   // emit from the CFI even if the file has the section
	Version uint8  // version to emit (2 or 3; 0 means 3)
	// VMA is the section address of a raw section file, and the address
	// an executable's emitted section is laid out for.
	VMA uint64
}

// SFrameReport is the SFrame section of a file, read or emitted.
type SFrameReport struct {
	Object   *Object // nil for a raw section file
	Name     string
	Section  *sframe.Section // nil when the file has neither SFrame nor CFI
	Bytes    []byte          // the raw section
	Addr     uint64          // the section's address
	Emitted  bool
	Warnings []sframe.Warning
}

// ReadSFrame returns the SFrame section of the file in data: its own
// .sframe if it has one (and Emit is false), else one emitted from its
// .eh_frame (or .debug_frame).  A file that is not ELF is taken as a raw
// section.  path names the file in output and errors.
func ReadSFrame(path string, data []byte, opt SFrameOptions) (*SFrameReport, error) {
	if opt.Section == "" {
		opt.Section = ".sframe"
	}
	r := &SFrameReport{Name: opt.Section}
	if !IsELF(data) {
		s, err := sframe.Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: SFrame decode failure: %w", path, err)
		}
		r.Section, r.Bytes, r.Addr = s, data, opt.VMA
		return r, nil
	}
	o, err := NewObject(path, data)
	if err != nil {
		return nil, err
	}
	r.Object = o
	if !opt.Emit {
		raw, addr, ok, err := o.Section(opt.Section)
		if err != nil {
			return nil, err
		}
		if ok {
			s, err := o.decodeSFrame(opt.Section, raw)
			if err != nil {
				return nil, err
			}
			r.Section, r.Bytes, r.Addr = s, raw, addr
			return r, nil
		}
		if sec, err := o.CFI(); err != nil || sec == nil {
			return r, err // nothing to show: "No .sframe section present"
		}
	}
	e, err := o.EmitSFrame(opt.Version, opt.VMA)
	if err != nil {
		return nil, err
	}
	r.Section, r.Bytes, r.Addr, r.Warnings, r.Emitted = e.Section, e.Bytes, e.Addr, e.Warnings, true
	return r, nil
}

// Dump prints the report as objdump --sframe=NAME does: the file header,
// then the section (or "No NAME section present").  A raw section file
// has no file header.
func (r *SFrameReport) Dump(w io.Writer) error {
	if r.Object != nil {
		if _, err := io.WriteString(w, r.Object.FileHeader()); err != nil {
			return err
		}
	}
	if r.Section == nil {
		_, err := fmt.Fprintf(w, "No %s section present\n\n", r.Name)
		return err
	}
	return sframe.Dump(w, r.Section, r.Name, r.Addr)
}
