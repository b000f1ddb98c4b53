package linux

import "simrun/sim/cpu"

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
// mapping reads the file again. Stores through a mapping reach the file
// at msync, munmap and exit, as before; read(2) and write(2) do not see
// the cached bytes in between.

// pageKey names one page of a file: its inode and page index.
type pageKey struct {
	file lockKey
	page uint64
}

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
	if s.pageCache == nil {
		s.pageCache = map[pageKey]cpu.SharedPage{}
	}
	s.sweepPageCache(p.Mem)
	for a := uint64(0); a < size && off+a < uint64(st.Size); a += cpu.PageSize {
		k := pageKey{key, (off + a) / cpu.PageSize}
		if sp, ok := s.pageCache[k]; ok {
			if p.Mem.SharedHolders(sp) > 1 && p.Mem.AttachShared(addr+a, sp) {
				continue
			}
			p.Mem.ReleaseShared(sp) // stale: no mapping holds it
			delete(s.pageCache, k)
		}
		if sp, ok := p.Mem.HoldShared(addr + a); ok {
			s.pageCache[k] = sp
		}
	}
}

// sweepPageCache drops the cache entries no mapping holds any more,
// giving their bytes back to the memory account (at munmap, and before
// a shared file mapping is made; a process's exit leaves them to the
// next).
func (s *System) sweepPageCache(m *cpu.Memory) {
	for k, sp := range s.pageCache {
		if m.SharedHolders(sp) <= 1 {
			m.ReleaseShared(sp)
			delete(s.pageCache, k)
		}
	}
}
