package linux

import (
	"os"
	"slices"
	"syscall"

	"simrun/sim/cpu"
)

// fileMap is a live mapping of a host file made by the guest's mmap: what
// /proc/self/maps names, with the file's device and inode as Linux shows
// them.
type fileMap struct {
	start, end uint64 // page-aligned guest range
	off        uint64 // file offset of start
	path       string // host path
	dev, ino   uint64
}

// CodeMap is a file mapping that was executable when the guest made it:
// the program, its interpreter and every shared object the interpreter
// mapped. A recording names them (perf's MMAP2 records), so samples in a
// shared object are attributed to its file and offset.
type CodeMap struct {
	Start, Len, Pgoff uint64
	Prot              uint32 // PROT_READ=1, PROT_WRITE=2, PROT_EXEC=4
	Path              string // host path
}

// CodeMaps lists the executable file mappings of objects other than the
// program itself, in the order they were made: the interpreter's
// segments, then the guest's own mmaps with PROT_EXEC (a range unmapped
// later stays listed: perf resolves an address by the latest mapping over
// it).
func (p *Process) CodeMaps() []CodeMap {
	var out []CodeMap
	if img := p.Interp; img != nil {
		path := exePath(img.Path)
		for _, s := range img.Segments {
			if s.Perm&cpu.PermX == 0 {
				continue
			}
			start := s.Vaddr &^ cpu.PageMask
			out = append(out, CodeMap{Start: start, Len: s.Vaddr + s.Memsz - start,
				Pgoff: s.Offset &^ cpu.PageMask, Prot: protOf(s.Perm), Path: path})
		}
	}
	return append(out, p.codeMaps...)
}

func protOf(perm cpu.Perm) uint32 {
	var prot uint32
	if perm&cpu.PermR != 0 {
		prot |= protRead
	}
	if perm&cpu.PermW != 0 {
		prot |= protWrite
	}
	if perm&cpu.PermX != 0 {
		prot |= protExec
	}
	return uint32(prot)
}

// noteFileMap records a new file mapping of f over [addr, addr+size).
func (p *Process) noteFileMap(f *openFile, addr, size, off, prot uint64) {
	m := fileMap{start: addr, end: addr + size, off: off, path: f.path}
	var st syscall.Stat_t
	if syscall.Fstat(int(f.host.Fd()), &st) == nil {
		m.dev, m.ino = uint64(st.Dev), st.Ino
	}
	p.forgetFileMaps(addr, size)
	i, _ := slices.BinarySearchFunc(p.fileMaps, addr, func(m fileMap, a uint64) int { return cmpU64(m.start, a) })
	p.fileMaps = slices.Insert(p.fileMaps, i, m)
	if prot&protExec != 0 {
		p.codeMaps = append(p.codeMaps, CodeMap{Start: addr, Len: size, Pgoff: off, Prot: uint32(prot & 7), Path: f.path})
		p.threadEvent(ThreadEvent{Kind: CodeMapped, Tid: p.cur.tid, PC: addr})
	}
}

// MapsGen counts the changes that took file mappings away (munmap, a
// mapping over one, mremap): what CodeAt said before a change may no
// longer hold (unwind.Resolver).
func (p *Process) MapsGen() uint64 { return p.mapsGen }

// forgetFileMaps drops [addr, addr+size) from the file mappings (munmap,
// or a new mapping over it), keeping what lies outside the range.
func (p *Process) forgetFileMaps(addr, size uint64) {
	if len(p.fileMaps) == 0 {
		return
	}
	end := addr + size
	var kept []fileMap
	for _, m := range p.fileMaps {
		if m.end <= addr || m.start >= end {
			kept = append(kept, m)
			continue
		}
		p.mapsGen++
		if m.start < addr {
			lo := m
			lo.end = addr
			kept = append(kept, lo)
		}
		if m.end > end {
			hi := m
			hi.off += end - m.start
			hi.start = end
			kept = append(kept, hi)
		}
	}
	p.fileMaps = kept
}

// moveFileMaps follows mremap: the mappings in [from, from+size) now live
// at to.
func (p *Process) moveFileMaps(from, size, to uint64) {
	var moved []fileMap
	for _, m := range p.fileMaps {
		lo, hi := max(m.start, from), min(m.end, from+size)
		if lo < hi {
			c := m
			c.off += lo - m.start
			c.start, c.end = lo-from+to, hi-from+to
			moved = append(moved, c)
		}
	}
	p.forgetFileMaps(from, size)
	for _, m := range moved {
		p.forgetFileMaps(m.start, m.end-m.start)
		i, _ := slices.BinarySearchFunc(p.fileMaps, m.start, func(m fileMap, a uint64) int { return cmpU64(m.start, a) })
		p.fileMaps = slices.Insert(p.fileMaps, i, m)
	}
}

// fileMapAt is the file mapping holding addr, if any.
func (p *Process) fileMapAt(addr uint64) (fileMap, bool) {
	i, found := slices.BinarySearchFunc(p.fileMaps, addr, func(m fileMap, a uint64) int { return cmpU64(m.start, a) })
	if found {
		return p.fileMaps[i], true
	}
	if i > 0 && addr < p.fileMaps[i-1].end {
		return p.fileMaps[i-1], true
	}
	return fileMap{}, false
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// devIno is the device and inode of a host file, as /proc/self/maps shows
// them (0, 0 when it cannot be read).
func devIno(path string) (uint64, uint64) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// CodeAt is the file mapping that holds addr: a segment of the program
// or its interpreter, or a file the guest mapped (false: none, as for
// anonymous memory). Unwinders ask it which object's data covers a pc.
func (p *Process) CodeAt(addr uint64) (CodeMap, bool) {
	for _, img := range []*cpu.Image{p.Image, p.Interp} {
		if img == nil || addr < img.Start || addr >= img.End {
			continue
		}
		for _, s := range img.Segments {
			start := s.Vaddr &^ cpu.PageMask
			if addr >= start && addr < s.Vaddr+s.Memsz {
				return CodeMap{Start: start, Len: s.Vaddr + s.Memsz - start, Pgoff: s.Offset &^ cpu.PageMask,
					Prot: protOf(s.Perm), Path: exePath(img.Path)}, true
			}
		}
	}
	if m, ok := p.fileMapAt(addr); ok {
		return CodeMap{Start: m.start, Len: m.end - m.start, Pgoff: m.off, Path: m.path}, true
	}
	return CodeMap{}, false
}
