package record

import (
	"debug/elf"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
)

// CodeResolver answers a multi-object tracer from the process's mappings.
func CodeResolver(p *linux.Process) unwind.Resolver { return codeMaps{p} }

type codeMaps struct{ p *linux.Process }

func (c codeMaps) CodeAt(addr uint64) (unwind.Mapped, bool) {
	m, ok := c.p.CodeAt(addr)
	return unwind.Mapped{Start: m.Start, End: m.Start + m.Len, Off: m.Pgoff, Path: m.Path}, ok
}

func (c codeMaps) MapsGen() uint64 { return c.p.MapsGen() }

// ObjectMaps lists the executable mappings of the process's other objects.
func ObjectMaps(p *linux.Process) []profile.ObjectMap {
	var out []profile.ObjectMap
	for _, c := range p.CodeMaps() {
		out = append(out, profile.ObjectMap{Path: c.Path, Start: profile.Hex(c.Start), Len: profile.Hex(c.Len), Pgoff: profile.Hex(c.Pgoff)})
	}
	return out
}

// OpenObjects reads the symbols of each object of maps (ld.so, libc,
// ...) once per load bias (an object loaded again after dlclose may be
// elsewhere); objects that are gone or unreadable are left out (their
// pcs stay unnamed).
func OpenObjects(maps []profile.ObjectMap) []*profile.Binary {
	var out []*profile.Binary
	type placed struct {
		path string
		bias uint64
	}
	seen := map[placed]bool{}
	for _, c := range maps {
		bias, ok := objectBias(c.Path, unwind.Mapped{Start: uint64(c.Start), End: uint64(c.Start + c.Len), Off: uint64(c.Pgoff), Path: c.Path})
		if !ok || seen[placed{c.Path, bias}] {
			continue
		}
		seen[placed{c.Path, bias}] = true
		if b, err := profile.OpenBinary(c.Path, bias); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// objectBias is the load bias of the file at path given one of its
// mappings (false: the file is gone, unreadable or does not map there).
func objectBias(path string, m unwind.Mapped) (uint64, bool) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return unwind.LoadBias(f, m)
}

// ProcessTracer is the stack tracer of the program machine m runs, with
// opt's method: for a dynamically linked program (and a method with
// unwind data) one that looks each frame up in the object that maps it
// (the process's mappings), else one over the program's own tables.
func ProcessTracer(m *cpu.Machine, opt unwind.Options) (*unwind.Tracer, error) {
	if p := linux.Of(m); p != nil && p.Interp != nil && opt.Method.HasData() {
		a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder)
		if err != nil {
			return nil, err
		}
		return unwind.NewObjectsTracer(a, CodeResolver(p), opt)
	}
	obj, err := unwind.Open(m.Image.Path)
	if err != nil {
		return nil, err
	}
	return unwind.NewTracer(obj, opt)
}
