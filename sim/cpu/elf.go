package cpu

import (
	"bytes"
	"debug/elf"
	"fmt"
	"sort"

	"simrun/sim/elfsym"
)

// Image is a program loaded into guest memory.
type Image struct {
	Path     string
	Arch     *Arch
	Type     elf.Type
	Bias     uint64 // load bias (0 for ET_EXEC)
	Entry    uint64
	Phdr     uint64 // guest address of the program headers (AT_PHDR)
	Phent    uint64
	Phnum    uint64
	Start    uint64 // lowest mapped address of the image
	End      uint64 // page-aligned end of the highest segment
	BrkStart uint64
	Segments []Segment
	// Symbols are the program's function symbols at their run-time
	// addresses (see sim/elfsym for which symbols and the rule for their
	// extent); empty when the symbol table is unreadable.
	Symbols elfsym.Table
	// Interp is the program interpreter (PT_INTERP) it asks for; "" for a
	// static program.
	Interp string
}

// Segment is one PT_LOAD segment as mapped.
type Segment struct {
	Index          int
	Vaddr, Memsz   uint64
	Offset, Filesz uint64
	Perm           Perm
}

// Symbol is a function symbol with its final extent.
type Symbol = elfsym.Symbol

// maxImagePages bounds the address space an ELF image may claim.
const maxImagePages = 1 << 18

// LoadError is a problem with the program file itself.
type LoadError struct {
	Path string
	Msg  string
}

func (e *LoadError) Error() string { return e.Path + ": " + e.Msg }

func loadErr(path, format string, args ...any) error {
	return &LoadError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// ParseELF checks that data is a 64-bit executable or shared object for a
// registered architecture and returns its parsed form.
func ParseELF(path string, data []byte) (f *elf.File, arch *Arch, err error) {
	if len(data) < 4 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return nil, nil, loadErr(path, "not an ELF file (no \\x7fELF magic)")
	}
	defer func() {
		// debug/elf has had panics on hostile input; never let one escape.
		if r := recover(); r != nil {
			f, arch, err = nil, nil, loadErr(path, "malformed ELF file: %v", r)
		}
	}()
	f, err = elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, nil, loadErr(path, "malformed ELF file: %v", err)
	}
	arch = ArchForMachine(f.Machine)
	if arch == nil {
		return nil, nil, loadErr(path, "ELF machine %v is not supported (simrun runs %s)", f.Machine, archNames())
	}
	if f.Class != elf.ELFCLASS64 {
		return nil, nil, loadErr(path, "%v %s file: only 64-bit programs are supported", f.Class, arch.Name)
	}
	if f.ByteOrder != arch.ByteOrder {
		return nil, nil, loadErr(path, "%s ELF with %v byte order", arch.Name, f.Data)
	}
	switch f.Type {
	case elf.ET_EXEC, elf.ET_DYN:
	default:
		return nil, nil, loadErr(path, "ELF type %v is not an executable", f.Type)
	}
	return f, arch, nil
}

// LoadELF maps the program's segments into mem. base is where an ET_DYN
// (static-PIE) image goes.
func LoadELF(mem *Memory, path string, data []byte, base uint64) (*Image, error) {
	f, arch, err := ParseELF(path, data)
	if err != nil {
		return nil, err
	}
	img := &Image{Path: path, Arch: arch, Type: f.Type}
	if f.Type == elf.ET_DYN {
		img.Bias = base
	}
	var segs []Segment
	for i, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Filesz > p.Memsz {
			return nil, loadErr(path, "segment %d: file size 0x%x exceeds memory size 0x%x", i, p.Filesz, p.Memsz)
		}
		if p.Filesz > 0 && (p.Off > uint64(len(data)) || p.Filesz > uint64(len(data))-p.Off) {
			return nil, loadErr(path, "segment %d is truncated: needs file bytes 0x%x..0x%x, file has 0x%x", i, p.Off, p.Off+p.Filesz, len(data))
		}
		va := p.Vaddr + img.Bias
		if va+p.Memsz < va || va+p.Memsz > 1<<56 {
			return nil, loadErr(path, "segment %d: address range 0x%x+0x%x is outside the user address space", i, va, p.Memsz)
		}
		if p.Memsz == 0 {
			continue
		}
		perm := Perm(0)
		if p.Flags&elf.PF_R != 0 {
			perm |= PermR
		}
		if p.Flags&elf.PF_W != 0 {
			perm |= PermW
		}
		if p.Flags&elf.PF_X != 0 {
			perm |= PermX
		}
		segs = append(segs, Segment{Index: i, Vaddr: va, Memsz: p.Memsz, Offset: p.Off, Filesz: p.Filesz, Perm: perm})
	}
	if len(segs) == 0 {
		return nil, loadErr(path, "no loadable segments")
	}
	if len(segs) > 64 {
		return nil, loadErr(path, "%d loadable segments: too many", len(segs))
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].Vaddr < segs[j].Vaddr })
	// Page permissions: the union over segments that share a page.
	var total uint64
	for _, s := range segs {
		_, n := pageSpan(s.Vaddr, s.Memsz)
		total += n
	}
	if total > maxImagePages {
		return nil, loadErr(path, "segments span %d pages: more than simrun loads (%d, 1 GiB)", total, maxImagePages)
	}
	// Map each segment; a page shared with the previous segment gets the
	// union of both permissions.
	for _, s := range segs {
		lo, hi := s.Vaddr&^PageMask, alignUp(s.Vaddr+s.Memsz, PageSize)
		for ; lo < hi && !mem.FreeRange(lo, PageSize); lo += PageSize {
			if err := mem.Protect(lo, PageSize, mem.PageAt(lo).Perm|s.Perm); err != nil {
				return nil, loadErr(path, "%v", err)
			}
		}
		if lo < hi {
			if err := mem.Map(lo, hi-lo, s.Perm); err != nil {
				return nil, loadErr(path, "segment %d: %v", s.Index, err)
			}
		}
	}
	for _, s := range segs {
		if s.Filesz == 0 {
			continue
		}
		if err := mem.Poke(s.Vaddr, data[s.Offset:s.Offset+s.Filesz]); err != nil {
			return nil, loadErr(path, "segment %d: %v", s.Index, err)
		}
	}
	img.Segments = segs
	img.Start = segs[0].Vaddr &^ PageMask
	for _, s := range segs {
		img.End = max(img.End, alignUp(s.Vaddr+s.Memsz, PageSize))
	}
	// qemu-user reserves the image's whole span with no access before it
	// maps the segments, so the holes between them stay mapped (---p in
	// /proc/self/maps) and no later mmap lands there.
	if (img.End-img.Start)>>PageShift > maxImagePages {
		return nil, loadErr(path, "segments span 0x%x..0x%x: more than simrun loads (%d pages, 1 GiB)", img.Start, img.End, maxImagePages)
	}
	for i := 1; i < len(segs); i++ {
		lo := alignUp(segs[i-1].Vaddr+segs[i-1].Memsz, PageSize)
		hi := segs[i].Vaddr &^ PageMask
		if lo < hi && mem.FreeRange(lo, hi-lo) {
			if err := mem.Map(lo, hi-lo, 0); err != nil {
				return nil, loadErr(path, "%v", err)
			}
		}
	}
	img.BrkStart = img.End
	img.Entry = f.Entry + img.Bias
	inExec := false
	for _, s := range segs {
		if s.Perm&PermX != 0 && img.Entry >= s.Vaddr && img.Entry < s.Vaddr+s.Memsz {
			inExec = true
		}
	}
	if !inExec {
		return nil, loadErr(path, "entry point 0x%x is outside every executable segment", img.Entry)
	}
	// AT_PHDR: PT_PHDR if present, else where the headers' file offset lands.
	phoff := phdrOffset(data, f)
	img.Phent = uint64(phentSize(f))
	img.Phnum = uint64(len(f.Progs))
	for _, p := range f.Progs {
		if p.Type == elf.PT_PHDR {
			img.Phdr = p.Vaddr + img.Bias
		}
	}
	if img.Phdr == 0 {
		for _, s := range segs {
			if phoff >= s.Offset && phoff < s.Offset+s.Filesz {
				img.Phdr = s.Vaddr + (phoff - s.Offset)
			}
		}
	}
	img.Symbols = readSymbols(f, path, img.Bias)
	img.Interp, err = Interp(path, f)
	if err != nil {
		return nil, err
	}
	return img, nil
}

func phentSize(f *elf.File) int {
	if f.Class == elf.ELFCLASS64 {
		return 56
	}
	return 32
}

// phdrOffset returns e_phoff, which debug/elf does not expose.
func phdrOffset(data []byte, f *elf.File) uint64 {
	if len(data) < 0x28 {
		return 0
	}
	return f.ByteOrder.Uint64(data[0x20:0x28])
}

// readSymbols reads the function symbols of f, the file at path (a
// stripped file's from its separate debug file, elfsym.ReadFile), moved
// by bias. A corrupt symbol table costs the names, not the load.
func readSymbols(f *elf.File, path string, bias uint64) elfsym.Table {
	t, err := elfsym.ReadFile(f, path)
	if err != nil {
		return nil
	}
	return t.Rebased(bias)
}

// SymbolAt returns the symbol containing addr and the offset into it.
func (img *Image) SymbolAt(addr uint64) (Symbol, uint64, bool) {
	if s, ok := img.Symbols.Lookup(addr); ok {
		return *s, addr - s.Addr, true
	}
	return Symbol{}, 0, false
}

// Interp returns the program interpreter f asks for (PT_INTERP), or "".
func Interp(path string, f *elf.File) (string, error) {
	for i, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		if p.Filesz == 0 || p.Filesz > 4096 {
			return "", loadErr(path, "PT_INTERP (program header %d) has size %d: not a path", i, p.Filesz)
		}
		b := make([]byte, p.Filesz)
		if n, err := p.ReadAt(b, 0); n != len(b) {
			return "", loadErr(path, "PT_INTERP (program header %d) is truncated: %v", i, err)
		}
		name := string(bytes.TrimRight(b, "\x00"))
		if name == "" || bytes.IndexByte([]byte(name), 0) >= 0 {
			return "", loadErr(path, "PT_INTERP (program header %d) is not a NUL-terminated path", i)
		}
		return name, nil
	}
	return "", nil
}
