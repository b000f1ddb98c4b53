package linux

import (
	"fmt"
	"os"

	"simrun/sim/cpu"
)

// The page cache of MAP_SHARED file mappings. On Linux every shared
// mapping of a file page, in whatever process, maps the one page-cache
// page that holds it, so a store through one mapping is seen at once
// through every other (mmap(2): "updates to the mapping are visible to
// other processes mapping the same region"). Process-shared semaphores
// rely on that: sem_open maps a /dev/shm file in each process that opens
// the name (Python's multiprocessing locks between spawned processes).
// Here the cache hands the bytes of a file page, keyed by the file's
// inode and the page's index, to each shared mapping made while some
// mapping still holds them. When none does the entry is stale (the
// mappings wrote it back when they went) and is dropped: the next
// mapping reads the file again. read(2) and write(2) on the file keep
// in step with the cached bytes (syncForRead, syncAfterWrite), as they
// go through the same page cache on Linux; stores through a mapping
// reach the file also at msync, munmap and exit.

// filePages is the cached bytes of one file's pages, by page index.
type filePages map[uint64]cpu.SharedPage

// shareFilePages makes the pages of the fresh shared mapping [addr,
// addr+size) of f at file offset off, which fillFromFile filled from the
// file, hold the cached bytes of their file pages where a live mapping
// holds them, and puts the others' bytes in the cache. Pages past the
// file's end (markPastEOF's) stay out.
func (p *Process) shareFilePages(f *openFile, addr, size, off uint64) {
	key, ok := recordLockKey(f)
	if !ok {
		return
	}
	st, e := hostStatFile(f.host)
	if e != 0 {
		return
	}
	s := p.sys
	s.sweepPageCache(p.Mem)
	if s.pageCache == nil {
		s.pageCache = map[lockKey]filePages{}
	}
	pages := s.pageCache[key]
	if pages == nil {
		pages = filePages{}
		s.pageCache[key] = pages
	}
	for a := uint64(0); a < size && off+a < uint64(st.Size); a += cpu.PageSize {
		k := (off + a) / cpu.PageSize
		if sp, ok := pages[k]; ok {
			if p.Mem.SharedHolders(sp) > 1 && p.Mem.AttachShared(addr+a, sp) {
				continue
			}
			p.Mem.ReleaseShared(sp) // stale: no mapping holds it
			delete(pages, k)
		}
		if sp, ok := p.Mem.HoldShared(addr + a); ok {
			pages[k] = sp
		}
	}
}

// sweepPageCache drops the cache entries no mapping holds any more,
// giving their bytes back to the memory account (at munmap, and before
// a shared file mapping is made; a process's exit leaves them to the
// next).
func (s *System) sweepPageCache(m *cpu.Memory) {
	for key, pages := range s.pageCache {
		for k, sp := range pages {
			if m.SharedHolders(sp) <= 1 {
				m.ReleaseShared(sp)
				delete(pages, k)
			}
		}
		if len(pages) == 0 {
			delete(s.pageCache, key)
		}
	}
}

// cachedPages is the cached pages of f's file, with the file's size;
// nil when it has none.
func (s *System) cachedPages(f *openFile) (filePages, int64) {
	if len(s.pageCache) == 0 {
		return nil, 0
	}
	key, ok := recordLockKey(f)
	if !ok || s.pageCache[key] == nil {
		return nil, 0
	}
	st, e := hostStatFile(f.host)
	if e != 0 {
		return nil, 0
	}
	return s.pageCache[key], int64(st.Size)
}

// syncForRead writes the cached pages of f's file to it before a read:
// what the mappings stored is what read(2) returns. Only the bytes
// inside the file go (a mapping does not grow its file).
func (s *System) syncForRead(f *openFile) {
	pages, size := s.cachedPages(f)
	if len(pages) == 0 {
		return
	}
	h, err := reopenRW(f)
	if err != nil {
		return
	}
	defer h.Close()
	for k, sp := range pages {
		at := int64(k * cpu.PageSize)
		if at < size {
			h.WriteAt(sp.Bytes()[:min(size-at, cpu.PageSize)], at)
		}
	}
}

// reopenRW opens f's file anew for reading and writing: the page cache
// moves bytes both ways whatever f was opened for, as Linux's does.
func reopenRW(f *openFile) (*os.File, error) {
	return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.host.Fd()), os.O_RDWR, 0)
}

// syncAfterWrite reads the cached pages that the n bytes just written
// at off changed back from f's file: the mappings see what write(2)
// stored.
func (s *System) syncAfterWrite(f *openFile, off int64, n int) {
	if n <= 0 {
		return
	}
	pages, _ := s.cachedPages(f)
	if len(pages) == 0 {
		return
	}
	h, err := reopenRW(f)
	if err != nil {
		return
	}
	defer h.Close()
	for k := uint64(off) / cpu.PageSize; k <= uint64(off+int64(n)-1)/cpu.PageSize; k++ {
		if sp, ok := pages[k]; ok {
			h.ReadAt(sp.Bytes()[:], int64(k*cpu.PageSize))
		}
	}
}
