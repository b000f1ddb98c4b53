// Package elfsym reads the function symbols of an ELF file, once and with
// one rule, for every user that names code: the loader (sim/cpu), the
// stack tracer (sim/unwind) and the profile writers (sim/profile).
//
// # Which symbols
//
// Read takes .symtab, or .dynsym when the file has no .symtab (a stripped
// shared object such as Debian's libc.so.6 keeps the functions it
// exports there; perf names a stripped library's samples from it too).
// ReadFile, given the file's path, first looks for a stripped file's
// separate debug file by build-id (DebugFile: where Debian's -dbg
// packages put them, and perf and gdb find them) and takes its .symtab.
// It keeps, as perf does when it loads an ELF file's symbols:
//
//   - STT_FUNC and STT_GNU_IFUNC symbols (an IFUNC symbol names its
//     resolver's code);
//   - STT_NOTYPE labels in an executable (SHF_EXECINSTR) section: the
//     functions of hand-written assembly that has no .type directive,
//     and labels such as glibc's __wrap_main inside _start. The AArch64
//     ELF ABI's mapping symbols ($x, $d, $x.name) are not labels of code
//     and are left out, and so are assembler-local names (".L…");
//
// each with a name, defined in a section of the file (not SHN_UNDEF, not
// SHN_ABS or another reserved index).
//
// # One symbol per address
//
// Aliases (several kept symbols at one address, such as libc's getc,
// fgetc and _IO_getc) give one name, chosen in the order of perf's
// choose_best_symbol: a sized symbol before an unsized one, a typed
// function before a label, then GLOBAL before LOCAL before WEAK, then the
// name with fewer leading underscores, then the longer name, and finally
// (our tie-break, for determinism) the name that sorts first.
//
// # The rule for unsized symbols
//
// A symbol with st_size 0 (crti's _init and _fini, most labels) covers the
// bytes from its address to the next kept symbol's address, or to the end
// of its section if that comes first; a sized symbol covers
// [st_value, st_value+st_size). The first half is perf's rule
// (symbols__fixup_end gives an unsized symbol the next symbol's start as
// its end); the section bound is binutils': addr2line (BFD's
// elf_find_function) names an address after the nearest preceding
// function symbol of the same section only, so no name reaches past its
// section. An unsized symbol at the end of its section covers nothing
// and is dropped.
//
// Addresses are those of the file (link addresses); Table.Rebased moves
// a table to where a position-independent file was loaded.
package elfsym

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Symbol is one named stretch of code: [Addr, Addr+Size).
type Symbol struct {
	Name string
	Addr uint64
	Size uint64
}

// Table is a file's function symbols sorted by address, one per address,
// each with its final extent (Size > 0).
type Table []Symbol

// Read reads f's function symbols by the package's rule. A file without
// any symbol table gives an empty table; a corrupt one an error that
// names the section.
func Read(f *elf.File) (t Table, err error) {
	sec := ".symtab"
	defer func() {
		// debug/elf has had panics on hostile input.
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%s: malformed: %v", sec, r)
		}
	}()
	es, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		sec = ".dynsym"
		es, err = f.DynamicSymbols()
	}
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sec, err)
	}
	return build(f.Sections, es), nil
}

// candidate is a kept ELF symbol before the rule gives it its extent.
type candidate struct {
	elf.Symbol
	label  bool   // STT_NOTYPE
	secEnd uint64 // end of its section
}

func build(sections []*elf.Section, es []elf.Symbol) Table {
	var cs []candidate
	for _, e := range es {
		if e.Name == "" || e.Section == elf.SHN_UNDEF || e.Section >= elf.SHN_LORESERVE || int(e.Section) >= len(sections) {
			continue
		}
		s := sections[e.Section]
		c := candidate{Symbol: e, secEnd: s.Addr + s.Size}
		switch elf.ST_TYPE(e.Info) {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC:
		case elf.STT_NOTYPE:
			if s.Flags&elf.SHF_EXECINSTR == 0 || e.Name[0] == '$' || e.Name[0] == '.' {
				continue
			}
			c.label = true
		default:
			continue
		}
		cs = append(cs, c)
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Value != cs[j].Value {
			return cs[i].Value < cs[j].Value
		}
		return better(&cs[i], &cs[j])
	})
	t := make(Table, 0, len(cs))
	for i := 0; i < len(cs); {
		c := &cs[i] // the best of the symbols at its address
		j := i + 1
		for j < len(cs) && cs[j].Value == c.Value {
			j++
		}
		size := c.Size
		if size == 0 {
			end := c.secEnd
			if j < len(cs) {
				end = min(end, cs[j].Value)
			}
			if end > c.Value {
				size = end - c.Value
			}
		}
		if size > 0 {
			t = append(t, Symbol{Name: c.Name, Addr: c.Value, Size: size})
		}
		i = j
	}
	return t
}

// better reports whether a is the name to give an address a and b share
// (perf's choose_best_symbol order, then the name).
func better(a, b *candidate) bool {
	if (a.Size > 0) != (b.Size > 0) {
		return a.Size > 0
	}
	if a.label != b.label {
		return !a.label
	}
	if ra, rb := bindRank(a.Info), bindRank(b.Info); ra != rb {
		return ra < rb
	}
	ua := len(a.Name) - len(strings.TrimLeft(a.Name, "_"))
	ub := len(b.Name) - len(strings.TrimLeft(b.Name, "_"))
	if ua != ub {
		return ua < ub
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) > len(b.Name)
	}
	return a.Name < b.Name
}

// bindRank orders bindings: non-weak before weak, global before the rest.
func bindRank(info byte) int {
	switch elf.ST_BIND(info) {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 2
	}
	return 1
}

// New indexes symbols whose extents are already final (tests, tools):
// sorted by address; symbols of size 0 never match a lookup.
func New(s []Symbol) Table {
	t := append(Table(nil), s...)
	sort.SliceStable(t, func(i, j int) bool { return t[i].Addr < t[j].Addr })
	return t
}

// Lookup returns the symbol covering addr: the one with the highest
// address at or below it, if addr is inside its extent.
func (t Table) Lookup(addr uint64) (*Symbol, bool) {
	i := sort.Search(len(t), func(i int) bool { return t[i].Addr > addr }) - 1
	if i < 0 || addr-t[i].Addr >= t[i].Size {
		return nil, false
	}
	return &t[i], true
}

// Rebased returns a copy of t moved by bias (where a position-independent
// file was loaded), or t itself for a bias of 0.
func (t Table) Rebased(bias uint64) Table {
	if bias == 0 {
		return t
	}
	r := append(Table(nil), t...)
	for i := range r {
		r[i].Addr += bias
	}
	return r
}

// Addr returns the address of the symbol named name.
func (t Table) Addr(name string) (uint64, bool) {
	for _, s := range t {
		if s.Name == name {
			return s.Addr, true
		}
	}
	return 0, false
}
