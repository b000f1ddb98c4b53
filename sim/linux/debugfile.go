package linux

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"simrun/sim/cpu"
)

// Files for a debugger: gdb reads the target's files through its remote
// protocol's host I/O (vFile:open, vFile:pread), as gdbserver serves
// them from the machine the program runs on: the program's shared
// libraries when its sysroot is "target:" (gdb's default), and
// /proc/PID/smaps, maps, cmdline and stat for gcore. The debugger sees
// the guest's file system as the guest does, read-only.

// DebugFile is a file a debugger opened (DebugOpen).
type DebugFile interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// debugProc are the generated files of /proc/PID a debugger may read.
var debugProc = map[string]bool{"/maps": true, "/smaps": true, "/cmdline": true, "/environ": true,
	"/stat": true, "/status": true, "/comm": true, "/auxv": true}

// DebugOpen opens the guest file at the absolute path name for a
// debugger to read. The process's own /proc directory (/proc/self, or
// /proc/PID with the pid the program sees) gives the generated files
// the guest reads there (maps, cmdline, environ, stat, status, comm,
// auxv) and smaps, the mappings with how much of each a core dump holds
// (Anonymous), which the guest itself cannot open; the rest of /proc and
// /dev give ENOENT. Any other path is looked up as the guest's open(2)
// would (the sysroot, --root) and must be a regular file. The result is
// a Linux errno (positive) on failure.
func (p *Process) DebugOpen(name string) (DebugFile, uint64) {
	f, e := p.debugOpen(name)
	return f, uint64(-int64(e)) // the kernel's errors are negated errnos
}

func (p *Process) debugOpen(name string) (DebugFile, uint64) {
	if !strings.HasPrefix(name, "/") {
		return nil, errno(ENOENT)
	}
	if len(name) >= pathMax {
		return nil, errno(ENAMETOOLONG)
	}
	clean := filepath.Clean(name)
	if q, self, ok := p.procDir(clean); ok && q == p && !strings.HasPrefix(clean, "/dev/") {
		if !debugProc[self] {
			return nil, errno(ENOENT)
		}
		var data []byte
		if self == "/smaps" {
			data = p.smaps()
		} else {
			f, e, _ := p.openSpecial(clean, oRdonly)
			if e != 0 {
				return nil, e
			}
			data = f.data
		}
		return nopCloser{bytes.NewReader(data)}, 0
	}
	if clean == "/proc" || strings.HasPrefix(clean, "/proc/") || strings.HasPrefix(clean, "/dev/") {
		return nil, errno(ENOENT)
	}
	host, e := p.resolve(atFDCWD, clean, true)
	if e != 0 {
		return nil, e
	}
	f, err := os.Open(host)
	if err != nil {
		return nil, hostErrno(err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil && st.IsDir() {
			return nil, errno(EISDIR)
		}
		return nil, errno(EACCES)
	}
	return hostDebugFile{f, st.Size()}, 0
}

type hostDebugFile struct {
	*os.File
	size int64
}

func (f hostDebugFile) Size() int64 { return f.size }

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// smaps is /proc/self/smaps as proc(5) describes it, for a debugger:
// each mapping's maps line, then its sizes in kB: Size, KernelPageSize,
// MMUPageSize, Rss (the pages that hold bytes), Anonymous (what a core
// dump of the process holds of it: coreMaps, coredump_filter 0x33), and
// VmFlags (rd, wr, ex, "sh" for a shared mapping). gdb's gcore dumps a
// mapping with Anonymous pages, so it writes what --core writes.
func (p *Process) smaps() []byte {
	lines := strings.SplitAfter(string(p.maps()), "\n")
	var b strings.Builder
	for i, m := range p.coreMaps() {
		if i >= len(lines) {
			break
		}
		b.WriteString(lines[i])
		rss := uint64(0)
		for a := m.start; a < m.end; a += cpu.PageSize {
			if pg := p.Mem.PageAt(a); pg != nil && pg.Touched() {
				rss += cpu.PageSize
			}
		}
		anon := m.dump
		if isFileName(m.name) && m.perm&cpu.PermW == 0 && !p.wroteFileMap(m.start, m.end) {
			anon = 0 // at most an ELF header page: gdb dumps it by its own rule
		}
		fmt.Fprintf(&b, "Size:           %8d kB\nKernelPageSize: %8d kB\nMMUPageSize:    %8d kB\nRss:            %8d kB\nAnonymous:      %8d kB\n",
			(m.end-m.start)/1024, cpu.PageSize/1024, cpu.PageSize/1024, rss/1024, anon/1024)
		var flags []string
		for _, f := range []struct {
			bit  cpu.Perm
			name string
		}{{cpu.PermR, "rd"}, {cpu.PermW, "wr"}, {cpu.PermX, "ex"}} {
			if m.perm&f.bit != 0 {
				flags = append(flags, f.name)
			}
		}
		if p.sharedAt(m.start) {
			flags = append(flags, "sh")
		}
		fmt.Fprintf(&b, "VmFlags: %s \n", strings.Join(flags, " "))
	}
	return []byte(b.String())
}
