package linux

import (
	"encoding/binary"

	"simrun/sim/cpu"
)

// The address space: brk, anonymous and file mappings. Placement follows
// qemu-user 7.2 (first fit upward from the last mapping's end), so
// addresses, and with them register traces, match its runs.

func sysBrk(p *Process, a [6]uint64) uint64 {
	want := a[0]
	if want < p.brkStart {
		return p.brk
	}
	oldTop, newTop := alignUp(p.brk, cpu.PageSize), alignUp(want, cpu.PageSize)
	switch {
	case newTop > oldTop:
		if newTop-p.brkStart > brkReserve<<4 || !p.Mem.FreeRange(oldTop, newTop-oldTop) {
			return p.brk
		}
		if err := p.Mem.Map(oldTop, newTop-oldTop, cpu.PermRW); err != nil {
			return p.brk
		}
	case newTop < oldTop:
		p.Mem.Unmap(newTop, oldTop-newTop)
	}
	p.brk = want
	return p.brk
}

// mmap protection and flag bits (identical on arm64 and s390x).
const (
	protRead  = 1
	protWrite = 2
	protExec  = 4

	mapShared         = 0x01
	mapPrivate        = 0x02
	mapSharedValidate = 0x03
	mapFixed          = 0x10
	mapAnonymous      = 0x20
	mapFixedNoReplace = 0x100000
)

func protPerm(prot uint64) cpu.Perm {
	var p cpu.Perm
	if prot&protRead != 0 {
		p |= cpu.PermR
	}
	if prot&protWrite != 0 {
		p |= cpu.PermW | cpu.PermR
	}
	if prot&protExec != 0 {
		p |= cpu.PermX | cpu.PermR
	}
	return p
}

// sharedMap is a MAP_SHARED writable file mapping: its pages go back to
// the file at msync, munmap and exit.
type sharedMap struct {
	addr, size uint64
	file       *openFile
	off        int64
}

func sysMmap(p *Process, a [6]uint64) uint64 {
	addr, length, prot, flags, fd, off := a[0], a[1], a[2], a[3], a[4], a[5]
	if length == 0 || addr&cpu.PageMask != 0 || length > 1<<40 || off&cpu.PageMask != 0 || int64(off) < 0 {
		return errno(EINVAL)
	}
	typ := flags & mapSharedValidate
	if typ == 0 {
		return errno(EINVAL)
	}
	var f *openFile
	if flags&mapAnonymous == 0 {
		var e uint64
		if f, e = p.file(fd); e != 0 {
			return e
		}
		switch f.kind {
		case kindHost:
		case kindZero, kindNull:
			f = nil // /dev/zero maps as anonymous memory
		case kindDir, kindVDir:
			return errno(ENODEV)
		default:
			return errno(ENODEV)
		}
		if f != nil {
			if !f.readable() {
				return errno(EACCES)
			}
			if typ != mapPrivate && prot&protWrite != 0 && !f.writable() {
				return errno(EACCES)
			}
		}
	}
	size := alignUp(length, cpu.PageSize)
	switch {
	case flags&mapFixedNoReplace != 0:
		if !p.Mem.FreeRange(addr, size) {
			return errno(EEXIST)
		}
	case flags&mapFixed != 0:
		if addr == 0 {
			return errno(EPERM)
		}
		p.dropShared(addr, size)
	default:
		from := p.mmapNext
		if addr != 0 && p.Mem.FreeRange(addr, size) {
			from = addr
		}
		var ok bool
		addr, ok = p.Mem.FindFree(from, size, 1<<47)
		if !ok {
			return errno(ENOMEM)
		}
		if addr >= p.mmapNext {
			p.mmapNext = addr + size
		}
	}
	if err := p.Mem.Map(addr, size, protPerm(prot)); err != nil {
		return errno(ENOMEM)
	}
	if typ != mapPrivate {
		p.Mem.MarkShared(addr, size) // a forked child shares the pages
	}
	if f != nil {
		if e := p.fillFromFile(f, addr, length, int64(off)); e != 0 {
			p.Mem.Unmap(addr, size)
			return e
		}
		p.markPastEOF(f, addr, size, off)
		if typ != mapPrivate {
			p.shareFilePages(f, addr, size, off)
		}
		if typ != mapPrivate && prot&protWrite != 0 {
			f.refs++
			p.shared = append(p.shared, sharedMap{addr: addr, size: size, file: f, off: int64(off)})
		}
		p.noteFileMap(f, addr, size, off, prot)
	} else {
		p.forgetFileMaps(addr, size)
	}
	return addr
}

// markPastEOF marks the pages of the mapping at addr (of size bytes,
// from file offset off) that lie wholly past the file's end: touching
// them raises SIGBUS, as on Linux. The page holding the end reads as
// zeros after it. (Linux decides at each access, so a file that grows
// later makes them valid; here the size at mmap time holds.)
func (p *Process) markPastEOF(f *openFile, addr, size, off uint64) {
	st, err := f.host.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	end := alignUp(uint64(st.Size()), cpu.PageSize)
	if end >= off+size {
		return
	}
	valid := uint64(0)
	if end > off {
		valid = end - off
	}
	p.Mem.MarkPastEOF(addr+valid, size-valid)
}

// fillFromFile copies the file's bytes [off, off+n) (what exists of them)
// into the fresh mapping at addr; the rest of the mapping reads as zeros.
func (p *Process) fillFromFile(f *openFile, addr, n uint64, off int64) uint64 {
	p.sys.syncForRead(f) // a private mapping starts from what the shared ones hold
	buf := make([]byte, min(n, ioChunk))
	var done uint64
	for done < n {
		want := min(n-done, ioChunk)
		k, err := f.host.ReadAt(buf[:want], off+int64(done))
		if k > 0 {
			if err := p.Mem.Poke(addr+done, buf[:k]); err != nil {
				p.Mem.TakeLimitHit() // mmap answers ENOMEM, the process goes on
				return errno(ENOMEM)
			}
		}
		done += uint64(k)
		if err != nil || k == 0 {
			break
		}
	}
	return 0
}

func sysOldMmap(p *Process, a [6]uint64) uint64 {
	b, ok := p.readGuest(a[0], 48)
	if !ok {
		return errno(EFAULT)
	}
	var args [6]uint64
	for i := range args {
		args[i] = p.order().Uint64(b[8*i:])
	}
	return sysMmap(p, args)
}

// syncShared writes the shared writable mappings that overlap
// [addr, addr+size) back to their files.
func (p *Process) syncShared(addr, size uint64) {
	for _, sm := range p.shared {
		lo, hi := max(sm.addr, addr), min(sm.addr+sm.size, addr+size)
		if lo >= hi {
			continue
		}
		st, e := hostStatFile(sm.file.host)
		if e != 0 {
			continue
		}
		// Only the bytes inside the file go back (a mapping past EOF
		// does not grow it).
		fileEnd := sm.addr + uint64(max(int64(st.Size)-sm.off, 0))
		hi = min(hi, fileEnd)
		for a := lo; a < hi; {
			step := min(hi-a, ioChunk)
			if b, err := p.Mem.ReadBytes(a, int(step)); err == nil {
				sm.file.host.WriteAt(b, sm.off+int64(a-sm.addr))
			}
			a += step
		}
	}
}

// dropShared writes back and forgets the shared mappings in a range that
// goes away.
func (p *Process) dropShared(addr, size uint64) {
	if len(p.shared) == 0 {
		return
	}
	p.syncShared(addr, size)
	kept := p.shared[:0]
	for _, sm := range p.shared {
		if sm.addr >= addr && sm.addr+sm.size <= addr+size {
			sm.file.release()
			continue
		}
		kept = append(kept, sm) // partly unmapped: written back whole at exit
	}
	p.shared = kept
}

func sysMsync(p *Process, a [6]uint64) uint64 {
	if a[0]&cpu.PageMask != 0 || a[2]&^7 != 0 || a[2]&5 == 5 {
		return errno(EINVAL)
	}
	size := alignUp(a[1], cpu.PageSize)
	if !p.Mem.IsMapped(a[0], size) {
		return errno(ENOMEM)
	}
	p.syncShared(a[0], size)
	return 0
}

func sysMunmap(p *Process, a [6]uint64) uint64 {
	if a[0]&cpu.PageMask != 0 || a[1] == 0 {
		return errno(EINVAL)
	}
	size := alignUp(a[1], cpu.PageSize)
	p.dropShared(a[0], size)
	p.forgetFileMaps(a[0], size)
	p.Mem.Unmap(a[0], size)
	p.sys.sweepPageCache(p.Mem)
	return 0
}

func sysMprotect(p *Process, a [6]uint64) uint64 {
	if a[0]&cpu.PageMask != 0 {
		return errno(EINVAL)
	}
	if a[1] == 0 {
		return 0
	}
	if err := p.Mem.Protect(a[0], alignUp(a[1], cpu.PageSize), protPerm(a[2])); err != nil {
		return errno(ENOMEM)
	}
	return 0
}

func sysMadvise(p *Process, a [6]uint64) uint64 {
	const madvDontneed = 4
	if a[0]&cpu.PageMask != 0 {
		return errno(EINVAL)
	}
	if a[2] == madvDontneed {
		size := alignUp(a[1], cpu.PageSize)
		if !p.Mem.IsMapped(a[0], size) {
			return errno(ENOMEM)
		}
		p.Mem.Discard(a[0], size)
	}
	return 0
}

// sysMremap resizes a mapping: in place when it shrinks or the pages
// after it are free, else (with MREMAP_MAYMOVE) by moving its bytes to
// a new place.
func sysMremap(p *Process, a [6]uint64) uint64 {
	const (
		mayMove   = 1
		fixed     = 2
		dontUnmap = 4
	)
	old, oldSize, newSize, flags := a[0], alignUp(a[1], cpu.PageSize), alignUp(a[2], cpu.PageSize), a[3]
	if old&cpu.PageMask != 0 || newSize == 0 || flags&^(mayMove|fixed|dontUnmap) != 0 || flags&(fixed|dontUnmap) != 0 {
		if flags&(fixed|dontUnmap) != 0 && flags&^(mayMove|fixed|dontUnmap) == 0 {
			return errno(EINVAL) // MREMAP_FIXED and MREMAP_DONTUNMAP are not offered
		}
		return errno(EINVAL)
	}
	if oldSize == 0 || !p.Mem.IsMapped(old, oldSize) || newSize > 1<<40 {
		return errno(EFAULT)
	}
	perm := p.Mem.PageAt(old).Perm
	switch {
	case newSize <= oldSize:
		if newSize < oldSize {
			p.dropShared(old+newSize, oldSize-newSize)
			p.forgetFileMaps(old+newSize, oldSize-newSize)
			p.Mem.Unmap(old+newSize, oldSize-newSize)
		}
		return old
	case p.Mem.FreeRange(old+oldSize, newSize-oldSize):
		if err := p.Mem.Map(old+oldSize, newSize-oldSize, perm); err != nil {
			return errno(ENOMEM)
		}
		if i := p.sharedMapIndex(old, oldSize); i >= 0 {
			if e := p.fillShared(p.shared[i], old+oldSize, oldSize, newSize-oldSize); e != 0 {
				p.Mem.Unmap(old+oldSize, newSize-oldSize)
				return e
			}
			p.shared[i].size = newSize
		}
		return old
	case flags&mayMove == 0:
		return errno(ENOMEM)
	}
	to, ok := p.Mem.FindFree(p.mmapNext, newSize, 1<<47)
	if !ok {
		return errno(ENOMEM)
	}
	if to >= p.mmapNext {
		p.mmapNext = to + newSize
	}
	if err := p.Mem.Map(to, newSize, perm); err != nil {
		return errno(ENOMEM)
	}
	if i := p.sharedMapIndex(old, oldSize); i >= 0 {
		// A shared file mapping moves as Linux moves it: the new pages
		// are the file's pages, the bytes the old ones hold (the page
		// cache hands them over), and its stores still reach the file.
		sm := p.shared[i]
		if e := p.fillShared(sm, to, 0, newSize); e != 0 {
			p.Mem.Unmap(to, newSize)
			return e
		}
		p.shared[i].addr, p.shared[i].size = to, newSize
		p.moveFileMaps(old, oldSize, to)
		p.Mem.Unmap(old, oldSize)
		p.sys.sweepPageCache(p.Mem)
		return to
	}
	for off := uint64(0); off < oldSize; off += cpu.PageSize {
		src := p.Mem.PageAt(old + off)
		if src == nil {
			continue
		}
		if b := src.Bytes(); *b != ([cpu.PageSize]byte{}) {
			if p.Mem.Poke(to+off, b[:]) != nil { // past the memory limit
				p.Mem.TakeLimitHit()
				p.Mem.Unmap(to, newSize)
				return errno(ENOMEM)
			}
		}
	}
	p.moveFileMaps(old, oldSize, to)
	p.Mem.Unmap(old, oldSize)
	return to
}

// sharedMapIndex is the index in p.shared of the shared writable file
// mapping that is exactly [addr, addr+size), -1 if none is.
func (p *Process) sharedMapIndex(addr, size uint64) int {
	for i, sm := range p.shared {
		if sm.addr == addr && sm.size == size {
			return i
		}
	}
	return -1
}

// fillShared makes the fresh pages [at, at+n) the part of the shared
// file mapping sm from byte from of the mapping on (mremap growing or
// moving it): marked shared, holding the file's bytes, or the cached
// bytes of its pages that another mapping (the old place, when it
// moves) holds.
func (p *Process) fillShared(sm sharedMap, at, from, n uint64) uint64 {
	p.syncShared(sm.addr, sm.size) // what the cache lacks must be in the file
	p.Mem.MarkShared(at, n)
	off := uint64(sm.off) + from
	if e := p.fillFromFile(sm.file, at, n, int64(off)); e != 0 {
		return e
	}
	p.markPastEOF(sm.file, at, n, off)
	p.shareFilePages(sm.file, at, n, off)
	return 0
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

func appendU64(order binary.ByteOrder, b []byte, v uint64) []byte {
	var w [8]byte
	order.PutUint64(w[:], v)
	return append(b, w[:]...)
}
