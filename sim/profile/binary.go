package profile

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"

	"simrun/sim/cpu"
	"simrun/sim/elfsym"
	"simrun/sim/infile"
)

// Binary is a program file read for symbolization: its functions from the
// ELF symbol table, file:line from DWARF .debug_line when it has one, and
// its code for disassembly.  Addresses are run-time addresses: the file's
// addresses plus Bias (0 for ET_EXEC, the load address of a static PIE).
type Binary struct {
	Path  string
	Arch  *cpu.Arch // nil when no registered architecture runs the file
	ELF   *elf.File
	Bias  uint64
	Funcs []Func // sorted by Start, not overlapping
	lines []lineRow
	// HasLines is true when the file has DWARF line information.
	HasLines bool
	// BuildID is the file's GNU build-id (nil: none).
	BuildID []byte
	// Warnings are one line each about a corrupt section whose feature
	// was left out (symbols, source lines): the rest of the file serves.
	Warnings []string
	code     []codeRange
	// Shared are the shared objects of a dynamically linked program
	// (each with its own Bias): Symbolize names a pc the program's own
	// functions do not cover from their symbols.
	Shared []*Binary
}

// Func is one function of the symbol table.
type Func struct {
	Name       string
	Start, End uint64 // run-time addresses, End exclusive
}

type lineRow struct {
	addr uint64
	file string
	line int
	end  bool // end of a sequence: no line from here on
}

type codeRange struct {
	start uint64
	data  []byte
}

// elfFile is what OpenBinary reads: a regular ELF file of a size read
// whole (not a FIFO or a device a recording's paths might name).
var elfFile = infile.Format{Name: "an ELF file", Magic: "\x7fELF", Max: 512 << 20}

// OpenBinary reads the ELF file at path; bias is where it was loaded
// relative to its link addresses.
func OpenBinary(path string, bias uint64) (*Binary, error) {
	data, err := infile.Read(path, elfFile)
	if err != nil {
		return nil, err
	}
	return NewBinary(path, data, bias)
}

// NewBinary reads an ELF file held in data; path names it in errors.
func NewBinary(path string, data []byte, bias uint64) (b *Binary, err error) {
	if len(data) < 4 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return nil, fmt.Errorf("%s: not an ELF file (no \\x7fELF magic)", path)
	}
	defer func() {
		// debug/elf and debug/dwarf have had panics on hostile input.
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%s: malformed ELF file: %v", path, r)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: malformed ELF file: %v", path, err)
	}
	b = &Binary{Path: path, ELF: f, Bias: bias, Arch: cpu.ArchForMachine(f.Machine), BuildID: ReadBuildID(bytes.NewReader(data))}
	// A corrupt symbol table or DWARF costs its feature, not the file.
	if err := guard(b.readFuncs); err != nil {
		b.Funcs = nil
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s: %v; samples are not attributed to functions", path, err))
	}
	if err := guard(b.readLines); err != nil {
		b.lines, b.HasLines = nil, false
		b.Warnings = append(b.Warnings, fmt.Sprintf("%s: %s: %v; samples have no source lines", path, dwarfSection(err), err))
	}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 {
			d, err := s.Data()
			if err != nil {
				return nil, fmt.Errorf("%s: section %s: %v", path, s.Name, err)
			}
			b.code = append(b.code, codeRange{start: s.Addr + bias, data: d})
		}
	}
	return b, nil
}

// guard runs fn, turning a panic (debug/elf and debug/dwarf have had them
// on hostile input) into an error.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed: %v", r)
		}
	}()
	return fn()
}

// dwarfSection names the section a DWARF error is about (debug/dwarf
// names it without the ".debug_" prefix), else the line table's.
func dwarfSection(err error) string {
	var de dwarf.DecodeError
	if errors.As(err, &de) && de.Name != "" {
		return ".debug_" + de.Name
	}
	return ".debug_line"
}

// readFuncs collects the function symbols by sim/elfsym's rule (a
// stripped file's from its separate debug file when there is one, as perf
// and gdb find it, else from .dynsym, as perf names a stripped shared
// object's samples).
func (b *Binary) readFuncs() error {
	t, err := elfsym.ReadFile(b.ELF, b.Path)
	if err != nil {
		return err // names the section
	}
	b.Funcs = make([]Func, len(t))
	for i, s := range t {
		b.Funcs[i] = Func{Name: s.Name, Start: s.Addr + b.Bias, End: s.Addr + s.Size + b.Bias}
	}
	return nil
}

// readLines reads every line-number program of .debug_line.
func (b *Binary) readLines() error {
	if b.ELF.Section(".debug_line") == nil || b.ELF.Section(".debug_info") == nil {
		return nil
	}
	d, err := b.ELF.DWARF()
	if err != nil {
		return err
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil {
			return err
		}
		r.SkipChildren()
		if lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for {
			if err := lr.Next(&le); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return err
			}
			row := lineRow{addr: le.Address + b.Bias, line: le.Line, end: le.EndSequence}
			if le.File != nil {
				row.file = le.File.Name
			}
			b.lines = append(b.lines, row)
		}
	}
	// The rows in address order; at one address the last row of the
	// sequence holds (an end of sequence never hides a row starting there).
	sort.SliceStable(b.lines, func(i, j int) bool {
		if b.lines[i].addr != b.lines[j].addr {
			return b.lines[i].addr < b.lines[j].addr
		}
		return b.lines[i].end && !b.lines[j].end
	})
	b.HasLines = len(b.lines) > 0
	return nil
}

// FuncAt returns the function containing addr.
func (b *Binary) FuncAt(addr uint64) (*Func, bool) {
	i := sort.Search(len(b.Funcs), func(i int) bool { return b.Funcs[i].Start > addr }) - 1
	if i >= 0 && addr < b.Funcs[i].End {
		return &b.Funcs[i], true
	}
	return nil, false
}

// LineAt returns the source file and line of addr from .debug_line.
func (b *Binary) LineAt(addr uint64) (file string, line int, ok bool) {
	i := sort.Search(len(b.lines), func(i int) bool { return b.lines[i].addr > addr }) - 1
	if i < 0 || b.lines[i].end || b.lines[i].line == 0 {
		return "", 0, false
	}
	return b.lines[i].file, b.lines[i].line, true
}

// Code returns the bytes of the executable sections from addr to end.
func (b *Binary) Code(addr, end uint64) ([]byte, bool) {
	for _, c := range b.code {
		if addr >= c.start && end <= c.start+uint64(len(c.data)) && addr <= end {
			return c.data[addr-c.start : end-c.start], true
		}
	}
	return nil, false
}

// Frame is one symbolized pc of a callchain.
type Frame struct {
	PC     uint64 `json:"pc"`
	Func   string `json:"func,omitempty"`   // "" when no symbol covers the pc
	Offset uint64 `json:"offset,omitempty"` // pc - function start
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// maps reports whether one of the file's executable segments, where it is
// loaded, holds pc.
func (b *Binary) maps(pc uint64) bool {
	for _, p := range b.ELF.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && pc >= p.Vaddr+b.Bias && pc < p.Vaddr+p.Memsz+b.Bias {
			return true
		}
	}
	return false
}

// ObjectAt is the file whose code holds pc: the program itself or one of
// its shared objects (nil: none, e.g. the signal trampoline's page).
func (b *Binary) ObjectAt(pc uint64) *Binary {
	if b == nil {
		return nil
	}
	if b.maps(pc) {
		return b
	}
	for _, o := range b.Shared {
		if o.maps(pc) {
			return o
		}
	}
	return nil
}

// Symbolize names pc.
func (b *Binary) Symbolize(pc uint64) Frame {
	fr := Frame{PC: pc}
	if b == nil {
		return fr
	}
	if f, ok := b.FuncAt(pc); ok {
		fr.Func, fr.Offset = f.Name, pc-f.Start
	} else {
		for _, o := range b.Shared {
			if f, ok := o.FuncAt(pc); ok {
				fr.Func, fr.Offset = f.Name, pc-f.Start
				return fr
			}
		}
	}
	if file, line, ok := b.LineAt(pc); ok {
		fr.File, fr.Line = file, line
	}
	return fr
}

// FuncName is the function's name, or "[unknown]" when no symbol covers
// the pc (the word perf and flamegraph.pl use).
func (f Frame) FuncName() string {
	if f.Func == "" {
		return "[unknown]"
	}
	return f.Func
}

// Name is "func+0xOFF", or "[unknown]" when no symbol covers the pc.
func (f Frame) Name() string {
	if f.Func == "" {
		return "[unknown]"
	}
	if f.Offset == 0 {
		return f.Func
	}
	return fmt.Sprintf("%s+0x%x", f.Func, f.Offset)
}

// Where is "file:line", or "" without line information.
func (f Frame) Where() string {
	if f.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", f.File, f.Line)
}
