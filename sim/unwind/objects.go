package unwind

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"simrun/sim/unwind/abi"
)

// A dynamically linked program runs code from several objects: itself,
// its interpreter, every shared library.  As the Linux SFrame unwinder
// looks a pc up in the object that maps it, a tracer over Mapped objects
// finds the mapping that holds each frame's pc, reads that object's
// unwinding data once (its .sframe, or SFrame emitted from its .eh_frame,
// or its .eh_frame itself) and looks the pc up there, less the object's
// load bias.

// Mapped is a file mapping of code, as the simulated kernel knows it.
type Mapped struct {
	Start, End uint64 // guest addresses
	Off        uint64 // file offset of Start
	Path       string // host path of the file
}

// Resolver is a process's code mappings, as the simulated kernel knows
// them.
type Resolver interface {
	// CodeAt names the code mapping that holds addr (false: none).
	CodeAt(addr uint64) (Mapped, bool)
	// MapsGen changes whenever a mapping goes away or moves (munmap,
	// a mapping over it, mremap): what CodeAt said before may no longer
	// hold, and a tracer forgets it.
	MapsGen() uint64
}

// ResolverFunc is a Resolver whose mappings never go away.
type ResolverFunc func(addr uint64) (Mapped, bool)

func (f ResolverFunc) CodeAt(addr uint64) (Mapped, bool) { return f(addr) }
func (f ResolverFunc) MapsGen() uint64                   { return 0 }

// objectsSource is the rowSource of a tracer over mapped objects.
type objectsSource struct {
	resolve Resolver
	opt     Options
	abi     *abi.ABI
	objects map[string]*objectData // by path: read once
	spans   []span                 // the mappings met so far, by address
	last    int                    // index of the span that answered last
	gen     uint64                 // resolve.MapsGen() when spans were learned
}

// objectData is one object's unwinding data (src nil: none, for err).
type objectData struct {
	src  rowSource
	desc string
	err  error
	elf  *elf.File
}

type span struct {
	lo, hi uint64
	bias   uint64
	obj    *objectData
	path   string
}

// NewObjectsTracer prepares a tracer for the program whose code mappings
// resolve names, with the method in opt (SFrame or eh_frame; the frame
// chain needs no per-object data and is NewChainTracer).  An object
// without data for the method (or unreadable) stops a walk there with
// StopNoData, as a kernel would.
func NewObjectsTracer(a *abi.ABI, resolve Resolver, opt Options) (*Tracer, error) {
	if !opt.Method.HasData() {
		return nil, fmt.Errorf("unwind: %v needs no per-object data", opt.Method)
	}
	if opt.Policy.MaxDepth == 0 {
		opt.Policy = DefaultPolicy()
	}
	src := &objectsSource{resolve: resolve, opt: opt, abi: a, objects: map[string]*objectData{}}
	t := &Tracer{ABI: a, Method: opt.Method, Policy: opt.Policy, Syms: &Symbols{}, load: loader(a.Order), src: src,
		Source: fmt.Sprintf("%v of each mapped object", opt.Method), rows: new(rowCache), maps: resolve}
	if opt.Policy.Gap == GapFP && a.Frame.Name != "" {
		t.fallback = &chainSource{abi: a, syms: t.Syms}
	}
	return t, nil
}

// spanAt finds (or learns from the resolver) the mapping that holds addr.
func (x *objectsSource) spanAt(addr uint64) *span {
	if g := x.resolve.MapsGen(); g != x.gen {
		// A mapping went away: a pc there has no object now (as the
		// kernel's unwinder finds no VMA), or another one.
		x.spans, x.last, x.gen = x.spans[:0], 0, g
	}
	if x.last < len(x.spans) {
		if s := &x.spans[x.last]; addr >= s.lo && addr < s.hi {
			return s
		}
	}
	i := sort.Search(len(x.spans), func(i int) bool { return x.spans[i].hi > addr })
	if i < len(x.spans) && addr >= x.spans[i].lo {
		x.last = i
		return &x.spans[i]
	}
	m, ok := x.resolve.CodeAt(addr)
	if !ok || addr < m.Start || addr >= m.End {
		return nil
	}
	obj := x.object(m.Path)
	s := span{lo: m.Start, hi: m.End, obj: obj, path: m.Path}
	if obj.elf != nil {
		b, ok := LoadBias(obj.elf, m)
		if !ok {
			return nil
		}
		s.bias = b
	}
	// A new mapping replaces whatever overlapped it (an object unmapped
	// and another mapped there).
	kept := x.spans[:0]
	for _, o := range x.spans {
		if o.hi <= s.lo || o.lo >= s.hi {
			kept = append(kept, o)
		}
	}
	x.spans = kept
	i = sort.Search(len(x.spans), func(i int) bool { return x.spans[i].lo > s.lo })
	x.spans = append(x.spans, span{})
	copy(x.spans[i+1:], x.spans[i:])
	x.spans[i] = s
	x.last = i
	return &x.spans[i]
}

// LoadBias is what the object's addresses are offset by in the mapping:
// the PT_LOAD holding the mapping's file offset was placed there.
func LoadBias(f *elf.File, m Mapped) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && m.Off >= p.Off&^0xfff && m.Off < p.Off+p.Filesz {
			// File offset o sits at address m.Start + (o - m.Off); the
			// object puts it at p.Vaddr + (o - p.Off).
			return m.Start - m.Off + p.Off - p.Vaddr, true
		}
	}
	return 0, false
}

// object reads one object's data for the method, once (built keeps it
// for every tracer).
func (x *objectsSource) object(path string) *objectData {
	if d, ok := x.objects[path]; ok {
		return d
	}
	fi, statErr := os.Stat(path)
	var fk fileKey
	if statErr == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			fk = fileKey{st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), x.opt.Method, x.opt.SFrame, x.opt.SFrameVersion, x.abi.Machine}
			if d := built.file(fk); d != nil {
				x.objects[path] = d
				return d
			}
		}
	}
	d := &objectData{}
	x.objects[path] = d
	data, err := os.ReadFile(path)
	if err != nil {
		d.err = err
		return d
	}
	o, err := NewObject(path, data)
	if err != nil {
		d.err = err
		return d
	}
	if o.ABI.Machine != x.abi.Machine {
		d.err = fmt.Errorf("%s: a %s object in a %s program", path, o.ABI.Name, x.abi.Name)
		return d
	}
	d.elf = o.ELF
	d.src, d.desc, d.err = tables(o, x.opt)
	if fk.ino != 0 {
		built.keepFile(fk, d)
	}
	return d
}

// fileKey names one file's content as the file system knows it (device,
// inode, size and modification time) and the method its data was read
// for: a file met again, by any tracer, is not read again.
type fileKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
	method   Method
	from     SFrameSource
	version  uint8
	machine  elf.Machine
}

// file returns the object data kept for a file, nil if none.
func (b *builtTables) file(k fileKey) *objectData {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.files[k]
}

// keepFile keeps d for the file k names (at most maxBuilt files).
func (b *builtTables) keepFile(k fileKey, d *objectData) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.files) < maxBuilt {
		b.files[k] = d
	}
}

// builtTables keeps each object's unwind data once it is read (SFrame
// emitted from a library's .eh_frame is the expensive part: libc's takes
// tens of milliseconds), so that each file is read and its tables built
// once per method however many tracers ask: every process of a run that
// maps libc, every recording of a Go program that records many times.
// A file is known by what the file system says of it (fileKey), not by
// its build-id alone: a copy whose unwind data was changed keeps the
// build-id of the file it was copied from. The data is read-only once
// built, so tracers share it; at most maxBuilt files are kept.
type builtTables struct {
	mu    sync.Mutex
	files map[fileKey]*objectData
}

const maxBuilt = 64

var built = &builtTables{files: map[fileKey]*objectData{}}

// tables builds o's unwind tables for the method of opt.
func tables(o *Object, opt Options) (rowSource, string, error) {
	switch opt.Method {
	case MethodSFrame:
		return newSFrameSourceOrNil(o, opt)
	case MethodEHFrame:
		return newCFISourceOrNil(o)
	}
	return nil, "", nil
}

func newSFrameSourceOrNil(o *Object, opt Options) (rowSource, string, error) {
	s, desc, err := newSFrameSource(o, opt.SFrame, opt.SFrameVersion)
	if err != nil || s == nil {
		return nil, desc, err
	}
	return s, desc, nil
}

func newCFISourceOrNil(o *Object) (rowSource, string, error) {
	s, desc, err := newCFISource(o)
	if err != nil || s == nil {
		return nil, desc, err
	}
	return s, desc, nil
}

func (x *objectsSource) row(pc, addr uint64, topmost bool, r *Row) bool {
	s := x.spanAt(addr)
	if s == nil || s.obj.src == nil {
		return false
	}
	return s.obj.src.row(pc-s.bias, addr-s.bias, topmost, r)
}

func (x *objectsSource) where(addr uint64) string {
	s := x.spanAt(addr)
	switch {
	case s == nil:
		return "no object maps this address"
	case s.obj.src == nil:
		return fmt.Sprintf("%s: no unwinding data (%v)", s.path, s.obj.err)
	}
	return fmt.Sprintf("%s+%#x: %s", s.path, addr-s.bias, s.obj.src.where(addr-s.bias))
}

// objectSymbols names pcs in the objects a Resolver maps: each object's
// symbols (its .symtab, else the .dynsym a stripped library keeps) read
// once and moved to its load bias; a pc no symbol covers is named by its
// object and file offset.
type objectSymbols struct {
	resolve Resolver
	byPath  map[string]*Symbols
	spans   []symSpan
	gen     uint64 // resolve.MapsGen() when spans were learned
}

type symSpan struct {
	lo, hi uint64
	off    uint64 // file offset of lo
	path   string
	syms   *Symbols // rebased; nil: unreadable
	bias   uint64   // load bias (when biasOK)
	biasOK bool
}

func newObjectSymbols(resolve Resolver) *objectSymbols {
	return &objectSymbols{resolve: resolve, byPath: map[string]*Symbols{}}
}

func (o *objectSymbols) span(pc uint64) *symSpan {
	if g := o.resolve.MapsGen(); g != o.gen {
		o.spans, o.gen = o.spans[:0], g
	}
	for i := range o.spans {
		if s := &o.spans[i]; pc >= s.lo && pc < s.hi {
			return s
		}
	}
	m, ok := o.resolve.CodeAt(pc)
	if !ok || pc < m.Start || pc >= m.End {
		return nil
	}
	s := symSpan{lo: m.Start, hi: m.End, off: m.Off, path: m.Path}
	if f, err := elf.Open(m.Path); err == nil {
		if bias, ok := LoadBias(f, m); ok {
			s.bias, s.biasOK = bias, true
			syms, cached := o.byPath[m.Path]
			if !cached {
				if obj, err := Open(m.Path); err == nil {
					syms, _ = ReadSymbols(obj)
				}
				o.byPath[m.Path] = syms
			}
			s.syms = syms.Rebased(bias)
		}
		f.Close()
	}
	o.spans = append(o.spans, s)
	return &o.spans[len(o.spans)-1]
}

// fn is the function holding pc and its start ("" if none).
func (o *objectSymbols) fn(pc uint64) (string, uint64) {
	if s := o.span(pc); s != nil {
		return s.syms.Func(pc)
	}
	return "", 0
}

// linkName is "object+0xaddr": pc as the address the object was linked
// at (the one objdump and readelf show), whatever symbols cover it; ""
// outside the mapped objects.
func (o *objectSymbols) linkName(pc uint64) string {
	s := o.span(pc)
	if s == nil || !s.biasOK {
		return ""
	}
	return fmt.Sprintf("%s+%#x", filepath.Base(s.path), pc-s.bias)
}

// name is "func+0xoff", else "object+0xfileoffset", else "?".
func (o *objectSymbols) name(pc uint64) string {
	s := o.span(pc)
	if s == nil {
		return "?"
	}
	if n := s.syms.Name(pc); n != "?" {
		return n
	}
	return fmt.Sprintf("%s+%#x", filepath.Base(s.path), pc-s.lo+s.off)
}
