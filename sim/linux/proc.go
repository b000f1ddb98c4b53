package linux

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"simrun/sim/cpu"
)

// The virtual /proc and /dev: files that describe the guest, not simrun,
// generated when opened, so runs stay deterministic.

// openSpecial opens a virtual file; ok is false for a path that is not
// one (the host's file system then answers).
func (p *Process) openSpecial(path string, flags uint64) (f *openFile, e uint64, ok bool) {
	clean := filepath.Clean(path)
	if clean == sysCPUDir || strings.HasPrefix(clean, sysCPUDir+"/") {
		return p.sysCPU(clean, flags)
	}
	if !strings.HasPrefix(clean, "/proc/") && !strings.HasPrefix(clean, "/dev/") && clean != "/proc" {
		return nil, 0, false
	}
	switch clean {
	case "/dev/null":
		return &openFile{kind: kindNull, flags: flags, path: clean}, 0, true
	case "/dev/zero":
		return &openFile{kind: kindZero, flags: flags, path: clean}, 0, true
	case "/dev/urandom", "/dev/random":
		return &openFile{kind: kindRandom, flags: flags, path: clean}, 0, true
	case "/dev/tty":
		if p.ctty == nil {
			return nil, errno(6), true // ENXIO: no controlling terminal
		}
		return p.openHostAgain(p.ctty.path, flags)
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		fd := map[string]uint64{"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}[clean]
		of, e := p.file(fd)
		if e != 0 {
			return nil, errno(ENOENT), true
		}
		return of, 0, true
	}
	q, self, isProc := p.procDir(clean)
	if !isProc {
		switch clean {
		case "/proc/cpuinfo":
			return p.virtual(clean, flags, p.Arch.CPUInfo(p.sys.cpus))
		case "/proc/meminfo", "/proc/stat", "/proc/filesystems", "/proc/mounts", "/proc/sys/kernel/osrelease",
			"/proc/uptime", "/proc/loadavg":
			return p.virtual(clean, flags, p.procMisc(clean))
		case "/proc":
			// The run's processes, not the host's.
			return p.virtualDir(clean, flags, p.procEntries)
		}
		return nil, 0, false // the rest of /proc and /dev: the host's
	}
	if q == nil || q.ended && !slices.Contains(zombieEntries, dirent{strings.TrimPrefix(self, "/"), dtReg}) && self != "" {
		return nil, errno(ENOENT), true
	}
	// The file is the process's own directory's, reached through the
	// link: /proc/self/fd is /proc/1000/fd, as /proc/self/fd/N then says.
	clean = "/proc/" + strconv.FormatUint(q.pid, 10) + self
	switch self {
	case "":
		if q.ended {
			return p.virtualDir(clean, flags, func() []dirent { return zombieEntries })
		}
		return p.virtualDir(clean, flags, func() []dirent { return procSelfEntries })
	case "/fd":
		f, e, ok := p.virtualDir(clean, flags, q.fdEntries)
		if f != nil {
			f.perm = 0o500 // dr-x------, as Linux's fd directory
		}
		return f, e, ok
	case "/maps":
		return p.virtual(clean, flags, q.maps())
	case "/auxv":
		var b []byte
		for _, a := range q.auxv {
			b = appendU64(q.order(), b, a[0])
			b = appendU64(q.order(), b, a[1])
		}
		return p.virtual(clean, flags, b)
	case "/cmdline":
		if q.ended {
			return p.virtual(clean, flags, nil) // a zombie has no memory to show
		}
		return p.virtual(clean, flags, nulJoin(q.Cfg.Args))
	case "/environ":
		return p.virtual(clean, flags, nulJoin(q.Cfg.Env))
	case "/stat":
		return p.virtual(clean, flags, q.procStat(p))
	case "/status":
		return p.virtual(clean, flags, q.procStatus(p))
	case "/comm":
		return p.virtual(clean, flags, []byte(q.comm()+"\n"))
	case "/exe":
		return p.openHostAgain(q.exe, flags)
	case "/cwd":
		return p.openHostAgain(q.cwd, flags)
	case "/root":
		return p.openHostAgain(cmp.Or(q.root, "/"), flags)
	}
	if strings.HasPrefix(self, "/fd/") {
		n, err := strconv.ParseUint(self[4:], 10, 32)
		if err != nil {
			return nil, errno(ENOENT), true
		}
		of, e := q.file(n)
		if e != 0 {
			return nil, errno(ENOENT), true
		}
		if of.kind == kindHost || of.kind == kindDir {
			return p.openHostAgain(of.path, flags)
		}
		return of, 0, true
	}
	return nil, errno(ENOENT), true
}

// procEntries are the entries of the virtual /proc's listing: a
// directory per process of the run (zombies too, as Linux lists them),
// in pid order, and the files simrun generates (the rest of /proc is the
// host's, reachable by name).
func (p *Process) procEntries() []dirent {
	var out []dirent
	for _, q := range p.sys.procs {
		out = append(out, dirent{strconv.FormatUint(q.pid, 10), dtDir})
	}
	return append(out, dirent{"cpuinfo", dtReg}, dirent{"filesystems", dtReg}, dirent{"loadavg", dtReg}, dirent{"meminfo", dtReg},
		dirent{"mounts", dtReg}, dirent{"self", dtLnk}, dirent{"stat", dtReg}, dirent{"sys", dtDir}, dirent{"uptime", dtReg})
}

// sysCPUDir is where Linux's sysfs describes the CPUs.
const sysCPUDir = "/sys/devices/system/cpu"

// sysCPU opens a file of /sys/devices/system/cpu, which tells a program
// how many CPUs it has (glibc's get_nprocs reads online,
// get_nprocs_conf lists the directory's cpuN): the simulated machine's
// (--cpus), never the host's. The directory holds online, possible,
// present and offline and an empty directory per CPU; nothing else
// (topology, caches, frequencies) is modelled, and its paths give ENOENT.
func (p *Process) sysCPU(clean string, flags uint64) (*openFile, uint64, bool) {
	n := p.sys.cpus
	name := strings.TrimPrefix(strings.TrimPrefix(clean, sysCPUDir), "/")
	switch name {
	case "":
		return p.virtualDir(clean, flags, func() []dirent {
			var out []dirent
			for i := range n {
				out = append(out, dirent{"cpu" + strconv.Itoa(i), dtDir})
			}
			return append(out, dirent{"offline", dtReg}, dirent{"online", dtReg}, dirent{"possible", dtReg}, dirent{"present", dtReg})
		})
	case "online", "possible", "present":
		return p.virtual(clean, flags, []byte(cpuList(1<<n-1)+"\n"))
	case "offline":
		return p.virtual(clean, flags, []byte("\n"))
	}
	if i, err := strconv.Atoi(strings.TrimPrefix(name, "cpu")); err == nil && "cpu"+strconv.Itoa(i) == name && i < n {
		return p.virtualDir(clean, flags, func() []dirent { return nil })
	}
	return nil, errno(ENOENT), true
}

// zombieEntries are what a zombie's /proc directory keeps: its memory,
// descriptors and program are gone.
var zombieEntries = []dirent{{"cmdline", dtReg}, {"comm", dtReg}, {"stat", dtReg}, {"status", dtReg}}

// procSelfEntries are the entries of the virtual /proc/self.
var procSelfEntries = []dirent{
	{"auxv", dtReg}, {"cmdline", dtReg}, {"comm", dtReg}, {"cwd", dtLnk}, {"environ", dtReg},
	{"exe", dtLnk}, {"fd", dtDir}, {"maps", dtReg}, {"root", dtLnk}, {"stat", dtReg}, {"status", dtReg},
}

// fdEntries lists /proc/self/fd: one link per open descriptor.
func (p *Process) fdEntries() []dirent {
	var out []dirent
	for fd, e := range p.fds {
		if e != nil && e.f != nil {
			out = append(out, dirent{strconv.Itoa(fd), dtLnk})
		}
	}
	return out
}

// Directory entry types (d_type).
const (
	dtDir = 4
	dtReg = 8
	dtLnk = 10
)

type dirent struct {
	name string
	typ  uint8
}

// virtualDir opens a generated directory whose entries list gives.
func (p *Process) virtualDir(path string, flags uint64, list func() []dirent) (*openFile, uint64, bool) {
	if flags&oAccmode != oRdonly {
		return nil, errno(EISDIR), true
	}
	return &openFile{kind: kindVDir, flags: flags, path: path, list: list}, 0, true
}

// direntRecords lays out ".", ".." and the entries as host-order
// linux_dirent64 records (getdents64 converts them, as it converts the
// host's).
func direntRecords(entries []dirent) []byte {
	var b []byte
	all := append([]dirent{{".", dtDir}, {"..", dtDir}}, entries...)
	for i, e := range all {
		reclen := (19 + len(e.name) + 1 + 7) &^ 7
		rec := make([]byte, reclen)
		binary.NativeEndian.PutUint64(rec[0:], 0x1000+uint64(i))
		binary.NativeEndian.PutUint64(rec[8:], uint64(i+1))
		binary.NativeEndian.PutUint16(rec[16:], uint16(reclen))
		rec[18] = e.typ
		copy(rec[19:], e.name)
		b = append(b, rec...)
	}
	return b
}

// openHostAgain opens a host file afresh (as opening /proc/self/fd/N or
// /proc/self/exe does).
func (p *Process) openHostAgain(host string, flags uint64) (*openFile, uint64, bool) {
	hf, err := os.OpenFile(host, hostOpenFlags(flags&^(oCreat|oExcl|oTrunc)), 0)
	if err != nil {
		return nil, hostErrno(err), true
	}
	kind := kindHost
	if fi, err := hf.Stat(); err == nil && fi.IsDir() {
		kind = kindDir
	}
	return &openFile{kind: kind, host: hf, path: host, flags: flags}, 0, true
}

func (p *Process) virtual(path string, flags uint64, data []byte) (*openFile, uint64, bool) {
	if flags&oAccmode != oRdonly {
		return nil, errno(EACCES), true
	}
	return &openFile{kind: kindVirtual, flags: flags, path: path, data: data}, 0, true
}

// specialPath is the path openSpecial and procLink are to look at for a
// path argument relative to dirfd (AT_FDCWD: the working directory): its
// absolute form when that directory is under /proc or /dev (busybox's top
// changes to /proc and opens "stat"; procps opens "PID/stat" at a
// descriptor of /proc), else path itself.
func (p *Process) specialPath(dirfd uint64, path string) string {
	if path == "" || path[0] == '/' {
		return path
	}
	base := p.cwd
	if dirfd != atFDCWD && int32(dirfd) != -100 {
		f, e := p.file(dirfd)
		if e != 0 || f.kind != kindVDir && f.kind != kindDir && f.kind != kindPath {
			return path
		}
		base = f.path
	}
	for _, top := range []string{"/proc", "/dev", sysCPUDir} {
		if base == top || strings.HasPrefix(base, top+"/") {
			return base + "/" + path
		}
	}
	return path
}

// isVirtualPath says whether path names one of simrun's virtual files,
// directories or links (not the host's).
func (p *Process) isVirtualPath(path string) bool {
	if _, ok := p.procLink(path); ok {
		return true
	}
	f, _, ok := p.openSpecial(path, oRdonly)
	if f != nil && f.refs == 0 {
		f.refs++
		f.release()
	}
	return ok
}

// procDir splits a clean path under /proc/self or /proc/PID: the
// process it is about and the rest ("" for the directory itself, else
// "/NAME..."). PID may be any process's or thread's id of the run; ok
// with a nil process says the path is a /proc/PID of no such one (the
// host's processes are not the guest's to see).
func (p *Process) procDir(clean string) (q *Process, rest string, ok bool) {
	// /dev/fd is Linux's symbolic link to /proc/self/fd (bash's process
	// substitution names its pipes /dev/fd/N).
	if rest, ok := strings.CutPrefix(clean, "/dev/fd"); ok && (rest == "" || rest[0] == '/') {
		return p, "/fd" + rest, true
	}
	if rest, ok := strings.CutPrefix(clean, "/proc/self"); ok && (rest == "" || rest[0] == '/') {
		return p, rest, true
	}
	num, ok := strings.CutPrefix(clean, "/proc/")
	if !ok {
		return nil, "", false
	}
	if i := strings.IndexByte(num, '/'); i >= 0 {
		num, rest = num[:i], num[i:]
	}
	id, err := strconv.ParseUint(num, 10, 32)
	if err != nil || num != strconv.FormatUint(id, 10) {
		return nil, "", false // /proc/cpuinfo and the like
	}
	for _, q := range p.sys.procs {
		if q.pid == id || !q.ended && slices.ContainsFunc(q.threads, func(t *thread) bool { return t.tid == id }) {
			return q, rest, true
		}
	}
	return nil, rest, true
}

// procLink answers readlink of /proc/self/exe, /proc/self/cwd and
// /proc/self/fd/N.
func (p *Process) procLink(path string) (string, bool) {
	// A path that ends in "/", "." or ".." names what the link resolves
	// to (or that one's parent), never the link itself: "/proc/self/fd/.."
	// is the directory /proc/1000, not the link /proc/self.
	if last := path[strings.LastIndexByte(path, '/')+1:]; last == "" || last == "." || last == ".." {
		return "", false
	}
	clean := filepath.Clean(path)
	q, self, isProc := p.procDir(clean)
	if !isProc || q == nil || q.ended {
		return "", false
	}
	switch self {
	case "":
		if clean == "/proc/self" {
			return strconv.FormatUint(p.pid, 10), true // the guest's pid, not simrun's
		}
		return "", false
	case "/exe":
		return q.exe, true
	case "/cwd":
		return q.guestPath(q.cwd), true
	case "/root":
		return "/", true
	}
	if strings.HasPrefix(self, "/fd/") {
		n, err := strconv.ParseUint(self[4:], 10, 32)
		if err != nil {
			return "", false
		}
		f, e := q.file(n)
		if e != 0 {
			return "", false
		}
		switch f.kind {
		case kindHost, kindDir, kindPath:
			return p.guestPath(f.path), true
		case kindPipe:
			if f.path != "" { // a FIFO
				return p.guestPath(f.path), true
			}
			return "pipe:[" + strconv.FormatUint(f.pipe.ino, 10) + "]", true
		case kindSocket:
			return "socket:[" + strconv.FormatUint(f.sock.ino, 10) + "]", true
		case kindStdin, kindStdout:
			// A standard stream on a host file or device is that file, as
			// fstat already says (stdStat); anything else, a pipe of its
			// own.
			if host := stdHostFile(f); host != nil {
				if st, e := hostStatFile(host); e == 0 && (st.Mode&sIFMT == sIFREG || st.Mode&sIFMT == sIFCHR) {
					if target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(host.Fd()))); err == nil && filepath.IsAbs(target) {
						return q.guestPath(target), true
					}
				}
			}
			return "pipe:[" + strconv.Itoa(4096+f.std) + "]", true
		}
		return f.path, true
	}
	return "", false
}

// procLinkStat is lstat of a link procLink answers: Linux's proc links
// have size 0 and mode 0777, but a descriptor's (/proc/self/fd/N) has
// size 64 and the owner's bits of how the file is open: r-x for reading,
// -wx for writing (proc_fd_instantiate in fs/proc/fd.c).
func (p *Process) procLinkStat(path string) Stat {
	st := Stat{Dev: 4, Ino: 0x3000 + uint64(len(path)), Mode: sIFLNK | 0o777, Nlink: 1, Blksize: 1024}
	q, self, _ := p.procDir(filepath.Clean(path))
	if n, ok := strings.CutPrefix(self, "/fd/"); ok && q != nil {
		fd, _ := strconv.ParseUint(n, 10, 32)
		if f, e := q.file(fd); e == 0 {
			st.Mode, st.Size = sIFLNK, 64
			if f.readable() {
				st.Mode |= 0o500
			}
			if f.writable() {
				st.Mode |= 0o300
			}
		}
	}
	return st
}

func nulJoin(s []string) []byte {
	var b []byte
	for _, x := range s {
		b = append(b, x...)
		b = append(b, 0)
	}
	return b
}

func (p *Process) comm() string {
	c := filepath.Base(p.exe)
	if len(c) > 15 {
		c = c[:15]
	}
	return c
}

// maps lists the guest's mappings in /proc/self/maps' format, naming the
// program's and the interpreter's pages by their files.
func (p *Process) maps() []byte {
	var b strings.Builder
	for _, r := range p.Mem.Regions() {
		for _, part := range p.splitByObject(r) {
			perm := []byte("---p")
			if part.Perm&cpu.PermR != 0 {
				perm[0] = 'r'
			}
			if part.Perm&cpu.PermW != 0 {
				perm[1] = 'w'
			}
			if part.Perm&cpu.PermX != 0 {
				perm[2] = 'x'
			}
			name, off, dev, ino := p.regionName(part.Start)
			line := fmt.Sprintf("%08x-%08x %s %08x %02x:%02x %d", part.Start, part.End, perm, off, major(dev), minor(dev), ino)
			// Padded to column 73 whether or not a name follows, as
			// qemu-user 7.2 prints it (Linux pads only before a name).
			line = fmt.Sprintf("%-72s %s", line, name)
			b.WriteString(line + "\n")
		}
	}
	return []byte(b.String())
}

// splitByObject splits a region where it crosses an object's bounds or
// the stack's.
func (p *Process) splitByObject(r cpu.Region) []cpu.Region {
	cuts := []uint64{p.stackTop - stackSize, p.stackTop}
	for _, img := range []*cpu.Image{p.Image, p.Interp} {
		if img != nil {
			cuts = append(cuts, img.Start, img.End)
		}
	}
	for _, m := range p.fileMaps {
		cuts = append(cuts, m.start, m.end)
	}
	slices.Sort(cuts)
	out := []cpu.Region{r}
	for _, c := range cuts {
		last := out[len(out)-1]
		if c > last.Start && c < last.End {
			out[len(out)-1].End = c
			out = append(out, cpu.Region{Start: c, End: last.End, Perm: last.Perm})
		}
	}
	return out
}

// regionName names the object mapped at addr for /proc/self/maps: its
// path, the file offset of addr, the file's device and inode.
func (p *Process) regionName(addr uint64) (name string, off, dev, ino uint64) {
	if addr >= p.stackTop-stackSize && addr < p.stackTop {
		return "[stack]", 0, 0, 0
	}
	if m, ok := p.fileMapAt(addr); ok {
		name := m.path
		if p.root != "" {
			name = p.guestPath(m.path)
		}
		return name, m.off + addr - m.start, m.dev, m.ino
	}
	for _, img := range []*cpu.Image{p.Image, p.Interp} {
		if img == nil || addr < img.Start || addr >= img.End {
			continue
		}
		for _, s := range img.Segments {
			if addr >= s.Vaddr&^cpu.PageMask && addr < s.Vaddr+s.Memsz {
				host := exePath(img.Path)
				name := host
				if img == p.Image {
					name = p.exe
				}
				dev, ino := devIno(host)
				return name, s.Offset&^cpu.PageMask + (addr - s.Vaddr&^cpu.PageMask), dev, ino
			}
		}
	}
	return "", 0, 0, 0
}

// procState is the state letter and name /proc/PID/stat and status give
// p when process reader looks: the reader runs; another process runs
// when one of its threads may (the scheduler has it in line), else it
// sleeps; a zombie is one.
func (p *Process) procState(reader *Process) (string, string) {
	switch {
	case p == reader:
		return "R", "running"
	case p.ended:
		return "Z", "zombie"
	case slices.ContainsFunc(p.threads, func(t *thread) bool { return t.state == threadRunnable }):
		return "R", "running"
	}
	return "S", "sleeping"
}

// procThreads is the thread count /proc/PID/stat and status give.
func (p *Process) procThreads() int {
	if p.ended {
		return 1 // the zombie's leader, as Linux counts it
	}
	return len(p.threads)
}

func (p *Process) procStat(reader *Process) []byte {
	// pid (comm) state ppid pgrp session tty_nr tpgid flags ... (proc(5)).
	pid := strconv.FormatUint(p.pid, 10)
	state, _ := p.procState(reader)
	fields := []string{pid, "(" + p.comm() + ")", state, strconv.FormatUint(p.ppid, 10), strconv.FormatUint(p.pgid, 10), strconv.FormatUint(p.sid, 10), "0", "-1", "4194304"}
	for len(fields) < 52 {
		fields = append(fields, "0")
	}
	fields[19] = strconv.Itoa(p.procThreads()) // num_threads
	fields[27] = strconv.FormatUint(p.stackTop, 10)
	return []byte(strings.Join(fields, " ") + "\n")
}

func (p *Process) procStatus(reader *Process) []byte {
	state, name := p.procState(reader)
	return []byte(fmt.Sprintf("Name:\t%s\nUmask:\t%04o\nState:\t%s (%s)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t\nThreads:\t%d\nSigQ:\t0/63432\nSigPnd:\t%016x\nShdPnd:\t0000000000000000\nSigBlk:\t%016x\nCpus_allowed:\t%x\nCpus_allowed_list:\t%s\n",
		p.comm(), p.umask, state, name, p.pid, p.pid, p.ppid, p.procThreads(), p.sig.pendingSet(), p.sig.mask, p.cur.affinity, cpuList(p.cur.affinity)))
}

func (p *Process) procMisc(path string) []byte {
	switch path {
	case "/proc/meminfo":
		return []byte(fmt.Sprintf("MemTotal:       %8d kB\nMemFree:        %8d kB\nMemAvailable:   %8d kB\n", machineRAM>>10, machineFree>>10, machineFree>>10))
	case "/proc/uptime":
		// Seconds since boot (the virtual clock) and idle time: none.
		ns := p.monoNow()
		return []byte(fmt.Sprintf("%d.%02d 0.00\n", ns/1e9, ns%1e9/1e7))
	case "/proc/loadavg":
		// Load 0; runnable and all threads (the reader runs); the last
		// pid given out.
		running := 0
		for _, q := range p.sys.procs {
			if !q.ended {
				for _, t := range q.threads {
					if t.state == threadRunnable || t == p.cur {
						running++
					}
				}
			}
		}
		return []byte(fmt.Sprintf("0.00 0.00 0.00 %d/%d %d\n", max(running, 1), p.sys.threadCount(), p.sys.nextID-1))
	case "/proc/stat":
		b := []byte("cpu  0 0 0 0 0 0 0 0 0 0\n")
		for i := range p.sys.cpus { // one line per CPU (--cpus)
			b = fmt.Appendf(b, "cpu%d 0 0 0 0 0 0 0 0 0 0\n", i)
		}
		return append(b, "btime 1767225600\nprocesses 1\nprocs_running 1\n"...)
	case "/proc/filesystems":
		return []byte("nodev\tproc\n\text4\n")
	case "/proc/mounts":
		return []byte("/dev/root / ext4 rw 0 0\nproc /proc proc rw 0 0\n")
	case "/proc/sys/kernel/osrelease":
		return []byte("6.1.0\n")
	}
	return nil
}
