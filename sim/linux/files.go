package linux

import (
	"cmp"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"simrun/sim/cpu"

	"golang.org/x/sys/unix"
)

// ioChunk bounds the host buffer of one transfer step: a syscall moving a
// gigabyte costs a megabyte of host memory at a time.
const ioChunk = 1 << 20

// guestPrefix reads up to n bytes of guest memory at addr, stopping at the
// first page it cannot read (Linux copies up to the fault).
func (p *Process) guestPrefix(addr, n uint64) []byte {
	if b, err := p.Mem.ReadBytes(addr, int(n)); err == nil {
		return b
	}
	var out []byte
	for n > 0 {
		step := min(n, cpu.PageSize-addr&cpu.PageMask)
		b, err := p.Mem.ReadBytes(addr, int(step))
		if err != nil {
			break
		}
		out = append(out, b...)
		addr, n = addr+step, n-step
	}
	return out
}

// putGuestPrefix writes b to guest memory at addr up to the first page it
// cannot write, and returns how many bytes it wrote.
func (p *Process) putGuestPrefix(addr uint64, b []byte) int {
	if p.Mem.WriteBytes(addr, b) == nil {
		return len(b)
	}
	done := 0
	for done < len(b) {
		step := min(len(b)-done, int(cpu.PageSize-(addr+uint64(done))&cpu.PageMask))
		if p.Mem.WriteBytes(addr+uint64(done), b[done:done+step]) != nil {
			break
		}
		done += step
	}
	return done
}

// streaming kinds return from one read with what they have; the others
// fill the request.
func (f *openFile) fills() bool {
	switch f.kind {
	case kindHost, kindVirtual, kindZero, kindRandom, kindNull:
		return true
	}
	return false
}

// readTo reads up to n bytes from f into guest memory at addr (at file
// offset off when off >= 0).
func (p *Process) readTo(f *openFile, addr, n uint64, off int64) uint64 {
	if !f.readable() {
		return errno(EBADF)
	}
	n = min(n, 0x7ffff000) // MAX_RW_COUNT
	buf := make([]byte, min(n, ioChunk))
	var total uint64
	for {
		want := min(n-total, ioChunk)
		at := off
		if off >= 0 {
			at = off + int64(total)
		}
		k, e := p.readFile(f, buf[:want], at)
		if e != 0 {
			if total > 0 {
				return total
			}
			return e
		}
		put := p.putGuestPrefix(addr+total, buf[:k])
		if put < k && f.kind == kindHost && off < 0 {
			f.host.Seek(int64(put-k), io.SeekCurrent) // give back what the guest could not take
		}
		total += uint64(put)
		if put < k {
			if total == 0 {
				return errno(EFAULT)
			}
			return total
		}
		if uint64(k) < want || total == n || !f.fills() {
			return total
		}
	}
}

// writeFrom writes n bytes of guest memory at addr to f.
func (p *Process) writeFrom(f *openFile, addr, n uint64, off int64) uint64 {
	if !f.writable() {
		return errno(EBADF)
	}
	n = min(n, 0x7ffff000)
	var total uint64
	// A blocking write to a pipe writes everything, waiting for the
	// reader as often as it must (Linux's pipe_write): the bytes already
	// written are kept on the thread while it waits and the call runs
	// again.
	blockingPipe := (f.kind == kindPipe || f.kind == kindSocket && !f.sock.message()) && f.flags&oNonblock == 0 && p.msgFlags&msgDontwait == 0
	var before uint64
	if pw := &p.cur.pipeWrite; blockingPipe && pw.f == f && pw.addr == addr && pw.n == n {
		total, before = pw.done, pw.done
	}
	p.cur.pipeWrite = pipeWrite{}
	for total < n {
		want := min(n-total, ioChunk)
		b := p.guestPrefix(addr+total, want)
		if len(b) == 0 && want > 0 {
			if total > 0 {
				return total
			}
			return errno(EFAULT)
		}
		at := off
		if off >= 0 {
			at = off + int64(total)
		}
		k, e := p.writeFile(f, b, at)
		if e == errno(errRestart) && blockingPipe && total > 0 {
			if total > before {
				p.ioProgress = true // the reader may go on while this waits
			}
			p.cur.pipeWrite = pipeWrite{f: f, addr: addr, n: n, done: total}
			return e
		}
		if e != 0 {
			if total > 0 {
				return total
			}
			return e
		}
		total += uint64(k)
		if blockingPipe && k < len(b) && uint64(len(b)) == want {
			continue
		}
		if k < len(b) || uint64(len(b)) < want {
			break
		}
	}
	return total
}

func sysRead(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	return p.readTo(f, a[1], a[2], -1)
}

func sysWrite(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	return p.writeFrom(f, a[1], a[2], -1)
}

func sysPread64(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if int64(a[3]) < 0 {
		return errno(EINVAL)
	}
	if f.kind != kindHost && f.kind != kindVirtual && f.kind != kindZero && f.kind != kindNull {
		return errno(ESPIPE)
	}
	return p.readTo(f, a[1], a[2], int64(a[3]))
}

func sysPwrite64(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if int64(a[3]) < 0 {
		return errno(EINVAL)
	}
	if f.kind != kindHost && f.kind != kindNull && f.kind != kindZero {
		return errno(ESPIPE)
	}
	return p.writeFrom(f, a[1], a[2], int64(a[3]))
}

// iovecs reads an iovec array (at most IOV_MAX entries).
func (p *Process) iovecs(addr, cnt uint64) ([][2]uint64, uint64) {
	if cnt > 1024 {
		return nil, errno(EINVAL)
	}
	b, ok := p.readGuest(addr, cnt*16)
	if !ok {
		return nil, errno(EFAULT)
	}
	o := p.order()
	v := make([][2]uint64, cnt)
	var sum uint64
	for i := range v {
		v[i] = [2]uint64{o.Uint64(b[16*i:]), o.Uint64(b[16*i+8:])}
		if int64(v[i][1]) < 0 || sum+v[i][1] < sum {
			return nil, errno(EINVAL)
		}
		sum += v[i][1]
	}
	return v, 0
}

// vectored runs one transfer per iovec, stopping at a short one; an
// error after some bytes moved returns those bytes, as Linux does.
func (p *Process) vectored(a [6]uint64, off int64, xfer func(f *openFile, addr, n uint64, off int64) uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	iov, e := p.iovecs(a[1], a[2])
	if e != 0 {
		return e
	}
	var total uint64
	for _, v := range iov {
		if v[1] == 0 {
			continue
		}
		at := off
		if off >= 0 {
			at = off + int64(total)
		}
		r := xfer(f, v[0], v[1], at)
		if int64(r) < 0 {
			if total > 0 {
				return total
			}
			return r
		}
		total += r
		if r < v[1] {
			break
		}
	}
	return total
}

// readv and writev on a socket are one receive or send (socket.go), so
// that a datagram's pieces make one message.
func sysReadv(p *Process, a [6]uint64) uint64 {
	if f, e := p.file(a[0]); e == 0 && f.kind == kindSocket {
		iov, e := p.iovecs(a[1], a[2])
		if e != 0 {
			return e
		}
		r, _ := p.sockRead(f, iov, 0)
		return r
	}
	return p.vectored(a, -1, p.readTo)
}

func sysWritev(p *Process, a [6]uint64) uint64 {
	if f, e := p.file(a[0]); e == 0 && f.kind == kindSocket {
		iov, e := p.iovecs(a[1], a[2])
		if e != 0 {
			return e
		}
		return p.sockWrite(f, iov, 0)
	}
	return p.vectored(a, -1, p.writeFrom)
}
func sysPreadv(p *Process, a [6]uint64) uint64 {
	if int64(a[3]) < 0 {
		return errno(EINVAL)
	}
	return p.vectored(a, int64(a[3]), p.readTo)
}
func sysPwritev(p *Process, a [6]uint64) uint64 {
	if int64(a[3]) < 0 {
		return errno(EINVAL)
	}
	return p.vectored(a, int64(a[3]), p.writeFrom)
}

func sysClose(p *Process, a [6]uint64) uint64 { return p.closeFD(a[0]) }

func sysOpen(p *Process, a [6]uint64) uint64 {
	return sysOpenat(p, [6]uint64{atFDCWD, a[0], a[1], a[2]})
}

func sysCreat(p *Process, a [6]uint64) uint64 {
	return sysOpenat(p, [6]uint64{atFDCWD, a[0], oCreat | oWronly | oTrunc, a[1]})
}

// genericOpenFlags turns the arch's open flags into the generic values
// this file uses (only O_DIRECTORY, O_NOFOLLOW, O_DIRECT and O_LARGEFILE
// differ), dropping O_LARGEFILE.
func (p *Process) genericOpenFlags(flags uint64) (g uint64, dir, nofollow bool) {
	of := p.Arch.OpenFlags
	dir = flags&of.Directory != 0
	nofollow = flags&of.Nofollow != 0
	return flags &^ (of.Directory | of.Nofollow | of.Direct | of.Largefile), dir, nofollow
}

func sysOpenat(p *Process, a [6]uint64) uint64 {
	path, e := p.readPath(a[1])
	if e != 0 {
		return e
	}
	flags, wantDir, nofollow := p.genericOpenFlags(a[2])
	of := p.Arch.OpenFlags
	archOnly := a[2] & (of.Directory | of.Nofollow | of.Direct)
	if flags&oTmpfile == oTmpfile {
		return p.openTmpfile(a[0], path, flags, a[3], archOnly)
	}
	if f, e, ok := p.openSpecial(p.specialPath(a[0], path), flags); ok {
		if e != 0 {
			return e
		}
		return p.install(f, 0, flags&oCloexec != 0)
	}
	host, e := p.resolve(a[0], path, !nofollow)
	if e != 0 {
		return e
	}
	if p.Cfg.ReadOnly && (flags&oAccmode != oRdonly || flags&(oCreat|oTrunc) != 0) {
		return errno(EROFS)
	}
	mode := (a[3] &^ p.umask) & 0o7777
	var st Stat
	if nofollow || wantDir || flags&oPath != 0 {
		st, e = hostStatPath(host, !nofollow)
		if e == 0 && st.Mode&sIFMT == sIFLNK && flags&oPath == 0 {
			return errno(ELOOP)
		}
		if e == 0 && wantDir && st.Mode&sIFMT != sIFDIR {
			return errno(ENOTDIR)
		}
		if e != 0 && (flags&oCreat == 0 || wantDir) {
			return e
		}
	}
	if flags&oPath != 0 {
		return p.install(&openFile{kind: kindPath, path: host, flags: oPath}, 0, flags&oCloexec != 0)
	}
	if flags&oCreat == 0 || flags&oExcl == 0 {
		s, e := hostStatPath(host, true)
		if e == 0 && s.Mode&sIFMT == sIFIFO {
			return p.openFIFO(host, s, flags, archOnly)
		}
		if e == 0 && s.Mode&sIFMT == sIFDIR {
			if flags&oAccmode != oRdonly || flags&oCreat != 0 {
				return errno(EISDIR)
			}
			hf, err := os.Open(host)
			if err != nil {
				return hostErrno(err)
			}
			return p.install(&openFile{kind: kindDir, host: hf, path: host, flags: flags, archFlags: archOnly}, 0, flags&oCloexec != 0)
		}
	}
	hf, err := os.OpenFile(host, hostOpenFlags(flags), os.FileMode(mode))
	if err != nil {
		return hostErrno(err)
	}
	if mode != 0 && flags&oCreat != 0 {
		// os.OpenFile applies simrun's umask; the guest's applies instead.
		if st, e := hostStatFile(hf); e == 0 && st.Size == 0 && st.Mode&0o7777 != mode {
			hf.Chmod(os.FileMode(mode))
		}
	}
	nf := &openFile{kind: kindHost, host: hf, path: host, flags: flags, archFlags: archOnly}
	fd := p.install(nf, 0, flags&oCloexec != 0)
	if int64(fd) < 0 {
		hf.Close()
		return fd
	}
	p.openedTerminal(nf, flags)
	return fd
}

// openTmpfile opens an unnamed regular file in the directory at path
// (O_TMPFILE): the host makes it, in the host directory, so that it is
// EOPNOTSUPP where the host file system has none, as on Linux. Linux
// wants write access (EINVAL without).
func (p *Process) openTmpfile(dirfd uint64, path string, flags, mode, archOnly uint64) uint64 {
	if flags&oAccmode == oRdonly {
		return errno(EINVAL)
	}
	host, e := p.resolve(dirfd, path, true)
	if e != 0 {
		return e
	}
	if p.Cfg.ReadOnly {
		return errno(EROFS)
	}
	hflags := unix.O_TMPFILE | unix.O_CLOEXEC | unix.O_RDWR
	if flags&oAccmode == oWronly {
		hflags = unix.O_TMPFILE | unix.O_CLOEXEC | unix.O_WRONLY
	}
	if flags&oExcl != 0 {
		hflags |= unix.O_EXCL // never to be linked into the directory
	}
	perm := uint32((mode &^ p.umask) & 0o7777)
	fd, err := unix.Open(host, hflags, perm)
	if err != nil {
		return hostErrno(err)
	}
	hf := os.NewFile(uintptr(fd), host)
	unix.Fchmod(fd, perm) // the guest's umask, not simrun's
	nf := &openFile{kind: kindHost, host: hf, path: host, flags: flags &^ oTmpfile, archFlags: archOnly}
	r := p.install(nf, 0, flags&oCloexec != 0)
	if int64(r) < 0 {
		hf.Close()
	}
	return r
}

func sysLseek(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	whence := int(a[2])
	if whence > 4 {
		return errno(EINVAL)
	}
	switch f.kind {
	case kindHost:
		if whence > 2 { // SEEK_DATA, SEEK_HOLE: every byte is data
			st, e := hostStatFile(f.host)
			if e != 0 {
				return e
			}
			if a[1] >= st.Size {
				return errno(6) // ENXIO
			}
			if whence == 4 {
				return uint64(f.seek(int64(st.Size), io.SeekStart))
			}
			return uint64(f.seek(int64(a[1]), io.SeekStart))
		}
		n, err := f.host.Seek(int64(a[1]), whence)
		if err != nil {
			return hostErrno(err)
		}
		return uint64(n)
	case kindVirtual, kindDir:
		var at int64
		switch whence {
		case 0:
			at = int64(a[1])
		case 1:
			at = f.off + int64(a[1])
		case 2:
			at = int64(len(f.data)) + int64(a[1])
		default:
			return errno(EINVAL)
		}
		if at < 0 {
			return errno(EINVAL)
		}
		if f.kind == kindDir {
			if at != 0 {
				return errno(EINVAL)
			}
			f.host.Seek(0, io.SeekStart)
			f.dir = nil
		}
		f.off = at
		return uint64(at)
	case kindVDir:
		if whence != 0 || a[1] != 0 {
			return errno(EINVAL)
		}
		f.off = 0
		return 0
	case kindNull, kindZero, kindRandom:
		return 0
	}
	return errno(ESPIPE)
}

func (f *openFile) seek(off int64, whence int) int64 {
	n, _ := f.host.Seek(off, whence)
	return n
}

// statOf returns the stat of an open file.
func (p *Process) statOf(f *openFile) (Stat, uint64) {
	switch f.kind {
	case kindHost, kindDir:
		return hostStatFile(f.host)
	case kindPath:
		return hostStatPath(f.path, false)
	case kindStdin, kindStdout:
		return p.stdStat(f), 0
	case kindNull, kindZero, kindRandom:
		dev := map[fileKind]uint64{kindNull: 3, kindZero: 5, kindRandom: 9}[f.kind]
		return Stat{Dev: 5, Ino: dev, Mode: sIFCHR | 0o666, Nlink: 1, Rdev: 1<<8 | dev, Blksize: 4096}, 0
	case kindVirtual:
		return Stat{Dev: 4, Ino: 0x1000 + uint64(len(f.path)), Mode: sIFREG | 0o444, Nlink: 1, Blksize: 1024}, 0
	case kindPipe:
		if f.path != "" { // a FIFO: its node's stat
			return hostStatPath(f.path, true)
		}
		return Stat{Dev: 12, Ino: f.pipe.ino, Mode: sIFIFO | 0o600, Nlink: 1, Blksize: 4096}, 0
	case kindSocket:
		return Stat{Dev: 8, Ino: f.sock.ino, Mode: sIFSOCK | 0o777, Nlink: 1, Blksize: 4096}, 0
	case kindVDir:
		return Stat{Dev: 4, Ino: 0x1000 + uint64(len(f.path)), Mode: sIFDIR | cmp.Or(f.perm, 0o555), Nlink: 2, Blksize: 1024}, 0
	case kindTimerFD, kindEpoll, kindEventFD, kindSignalFD: // an anonymous inode: mode 0600 and no file type
		return Stat{Dev: 14, Ino: 0x3000, Mode: 0o600, Nlink: 1, Blksize: 4096}, 0
	}
	return Stat{}, errno(EBADF)
}

// stdStat describes a standard stream: the host file's own stat when it
// is one (as qemu-user passes fstat through), else a pipe.
func (p *Process) stdStat(f *openFile) Stat {
	if hf := stdHostFile(f); hf != nil {
		if st, e := hostStatFile(hf); e == 0 {
			return st
		}
	}
	return Stat{Dev: 12, Ino: uint64(f.std) + 1, Nlink: 1, Mode: sIFIFO | 0o600, Blksize: 4096}
}

// stdHostFile is the host file behind a standard stream, or nil.
func stdHostFile(f *openFile) *os.File {
	var hf *os.File
	if f.kind == kindStdin {
		hf, _ = f.r.(*os.File)
	} else {
		hf, _ = f.w.(*os.File)
	}
	return hf
}

func (p *Process) putStat(st Stat, addr uint64) uint64 {
	if !p.writeGuest(addr, p.Arch.Stat(p.order(), &st)) {
		return errno(EFAULT)
	}
	return 0
}

func sysFstat(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	st, e := p.statOf(f)
	if e != 0 {
		return e
	}
	return p.putStat(st, a[1])
}

// statAt is fstatat: a path relative to dirfd, or the descriptor itself
// with AT_EMPTY_PATH and an empty path.
func (p *Process) statAt(dirfd, pathAddr, flags uint64) (Stat, uint64) {
	path, e := p.readPath(pathAddr)
	if e != 0 {
		return Stat{}, e
	}
	if flags&^(atSymlinkNofollow|atEmptyPath|0x800 /* AT_NO_AUTOMOUNT */ |0x6000 /* AT_STATX_SYNC_TYPE */) != 0 {
		return Stat{}, errno(EINVAL)
	}
	if path == "" && flags&atEmptyPath != 0 {
		if dirfd == atFDCWD || int32(dirfd) == -100 {
			return hostStatPath(p.cwd, true)
		}
		f, e := p.file(dirfd)
		if e != 0 {
			return Stat{}, e
		}
		return p.statOf(f)
	}
	if special := p.specialPath(dirfd, path); true {
		if _, ok := p.procLink(special); ok && flags&atSymlinkNofollow != 0 {
			// The links of /proc/self (exe, cwd, root, fd/N) are links.
			return p.procLinkStat(special), 0
		}
		path = special
	}
	if f, e, ok := p.openSpecial(path, oRdonly); ok {
		if e != 0 {
			return Stat{}, e
		}
		if f.refs == 0 {
			defer f.release()
			f.refs++
		}
		return p.statOf(f)
	}
	host, e := p.resolve(dirfd, path, flags&atSymlinkNofollow == 0)
	if e != 0 {
		return Stat{}, e
	}
	return hostStatPath(host, flags&atSymlinkNofollow == 0)
}

func sysNewfstatat(p *Process, a [6]uint64) uint64 {
	st, e := p.statAt(a[0], a[1], a[3])
	if e != 0 {
		return e
	}
	return p.putStat(st, a[2])
}

func sysStat(p *Process, a [6]uint64) uint64 {
	return sysNewfstatat(p, [6]uint64{atFDCWD, a[0], a[1], 0})
}

func sysLstat(p *Process, a [6]uint64) uint64 {
	return sysNewfstatat(p, [6]uint64{atFDCWD, a[0], a[1], atSymlinkNofollow})
}

// sysStatx fills struct statx (the same layout on every architecture) from
// the host's stat: the basic fields (STATX_BASIC_STATS), no birth time.
func sysStatx(p *Process, a [6]uint64) uint64 {
	st, e := p.statAt(a[0], a[1], a[2])
	if e != 0 {
		return e
	}
	o := p.order()
	b := make([]byte, 256)
	o.PutUint32(b[0x00:], 0x7ff) // STATX_BASIC_STATS
	o.PutUint32(b[0x04:], uint32(st.Blksize))
	o.PutUint32(b[0x10:], uint32(st.Nlink))
	o.PutUint32(b[0x14:], uint32(st.UID))
	o.PutUint32(b[0x18:], uint32(st.GID))
	o.PutUint16(b[0x1c:], uint16(st.Mode))
	o.PutUint64(b[0x20:], st.Ino)
	o.PutUint64(b[0x28:], st.Size)
	o.PutUint64(b[0x30:], st.Blocks)
	putTS := func(at int, sec, nsec uint64) {
		o.PutUint64(b[at:], sec)
		o.PutUint32(b[at+8:], uint32(nsec))
	}
	putTS(0x40, st.Atime, st.AtimeNsec)
	putTS(0x60, st.Ctime, st.CtimeNsec)
	putTS(0x70, st.Mtime, st.MtimeNsec)
	o.PutUint32(b[0x80:], uint32(major(st.Rdev)))
	o.PutUint32(b[0x84:], uint32(minor(st.Rdev)))
	o.PutUint32(b[0x88:], uint32(major(st.Dev)))
	o.PutUint32(b[0x8c:], uint32(minor(st.Dev)))
	if a[3]&statxBtime != 0 {
		if sec, nsec, ok := p.birthTime(a[0], a[1], a[2]); ok {
			o.PutUint32(b[0x00:], 0x7ff|statxBtime)
			putTS(0x50, uint64(sec), uint64(nsec))
		}
	}
	if !p.writeGuest(a[4], b) {
		return errno(EFAULT)
	}
	return 0
}

const statxBtime = 0x800 // STATX_BTIME

// birthTime is the creation time of the host file statx names, when the
// host's file system keeps one (as qemu-user passes statx through);
// simrun's virtual files have none.
func (p *Process) birthTime(dirfd, pathAddr, flags uint64) (int64, uint32, bool) {
	path, e := p.readPath(pathAddr)
	if e != 0 || p.isVirtualPath(p.specialPath(dirfd, path)) {
		return 0, 0, false
	}
	var host string
	if path == "" && flags&atEmptyPath != 0 {
		if dirfd == atFDCWD || int32(dirfd) == -100 {
			host = p.cwd
		} else {
			f, e := p.file(dirfd)
			if e != 0 || (f.kind != kindHost && f.kind != kindDir && f.kind != kindPath) {
				return 0, 0, false
			}
			host = f.path
		}
	} else if host, e = p.resolve(dirfd, path, flags&atSymlinkNofollow == 0); e != 0 {
		return 0, 0, false
	}
	hostFlags := unix.AT_STATX_SYNC_AS_STAT
	if flags&atSymlinkNofollow != 0 {
		hostFlags |= unix.AT_SYMLINK_NOFOLLOW
	}
	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, host, hostFlags, unix.STATX_BTIME, &stx) != nil || stx.Mask&unix.STATX_BTIME == 0 {
		return 0, 0, false
	}
	return stx.Btime.Sec, stx.Btime.Nsec, true
}

// major and minor split a Linux dev_t (new_encode_dev's layout).
func major(dev uint64) uint64 { return (dev>>8)&0xfff | uint64(uint32(dev>>32))&^0xfff }
func minor(dev uint64) uint64 { return dev&0xff | uint64(uint32(dev>>12))&^0xff }

func sysGetdents64(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind != kindDir && f.kind != kindVDir {
		return errno(ENOTDIR)
	}
	count := min(a[2], 1<<16)
	if f.kind == kindVDir {
		if f.off == 0 {
			// Listed when read from the start, so /proc/self/fd shows
			// the descriptor being read too, as on Linux.
			f.data = direntRecords(f.list())
		}
		f.dir = f.data[min(int(f.off), len(f.data)):]
	} else if len(f.dir) == 0 {
		buf := make([]byte, 1<<16)
		n, err := syscall.Getdents(int(f.host.Fd()), buf)
		if err != nil {
			return hostErrno(err)
		}
		f.dir = buf[:n]
	}
	// The host's records (linux_dirent64) in the guest's byte order, as
	// many whole records as fit.
	var out []byte
	o := p.order()
	for len(f.dir) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(f.dir[16:]))
		if reclen < 19 || reclen > len(f.dir) {
			f.dir = nil
			break
		}
		if uint64(len(out)+reclen) > count {
			break
		}
		rec := append([]byte(nil), f.dir[:reclen]...)
		o.PutUint64(rec[0:], binary.NativeEndian.Uint64(f.dir[0:]))
		o.PutUint64(rec[8:], binary.NativeEndian.Uint64(f.dir[8:]))
		o.PutUint16(rec[16:], uint16(reclen))
		out = append(out, rec...)
		f.dir = f.dir[reclen:]
	}
	if len(out) == 0 && len(f.dir) > 0 {
		return errno(EINVAL) // the buffer holds no record
	}
	if f.kind == kindVDir {
		f.off = int64(len(f.data) - len(f.dir))
	}
	if !p.writeGuest(a[1], out) {
		return errno(EFAULT)
	}
	return uint64(len(out))
}

func sysReadlink(p *Process, a [6]uint64) uint64 {
	return sysReadlinkat(p, [6]uint64{atFDCWD, a[0], a[1], a[2]})
}

func sysReadlinkat(p *Process, a [6]uint64) uint64 {
	path, e := p.readPath(a[1])
	if e != 0 {
		return e
	}
	if int64(a[3]) <= 0 {
		return errno(EINVAL)
	}
	var target string
	if t, ok := p.procLink(p.specialPath(a[0], path)); ok {
		target = t
	} else if f, e, ok := p.openSpecial(p.specialPath(a[0], path), oRdonly); ok {
		// A virtual file or directory: not a link.
		if f != nil && f.refs == 0 {
			f.refs++
			f.release()
		}
		if e != 0 {
			return e
		}
		return errno(EINVAL)
	} else {
		host, e := p.resolve(a[0], path, false)
		if e != 0 {
			return e
		}
		t, err := os.Readlink(host)
		if err != nil {
			return hostErrno(err)
		}
		target = t
	}
	b := []byte(target)
	if uint64(len(b)) > a[3] {
		b = b[:a[3]]
	}
	if !p.writeGuest(a[2], b) {
		return errno(EFAULT)
	}
	return uint64(len(b))
}

func sysAccess(p *Process, a [6]uint64) uint64 {
	return sysFaccessat2(p, [6]uint64{atFDCWD, a[0], a[1], 0})
}

func sysFaccessat(p *Process, a [6]uint64) uint64 {
	return sysFaccessat2(p, [6]uint64{a[0], a[1], a[2], 0})
}

func sysFaccessat2(p *Process, a [6]uint64) uint64 {
	path, e := p.readPath(a[1])
	if e != 0 {
		return e
	}
	mode := a[2]
	if mode&^7 != 0 {
		return errno(EINVAL)
	}
	if f, e, ok := p.openSpecial(p.specialPath(a[0], path), oRdonly); ok {
		if f != nil && f.refs == 0 {
			f.refs++
			f.release()
		}
		return e
	}
	host, e := p.resolve(a[0], path, true)
	if e != 0 {
		return e
	}
	if err := syscall.Access(host, uint32(mode)); err != nil {
		return hostErrno(err)
	}
	return 0
}

func sysDup(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	return p.install(f, 0, false)
}

func sysDup2(p *Process, a [6]uint64) uint64 {
	if a[0] == a[1] {
		if _, e := p.file(a[0]); e != 0 {
			return e
		}
		return a[1]
	}
	return sysDup3(p, [6]uint64{a[0], a[1], 0})
}

func sysDup3(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if a[0] == a[1] || a[2]&^oCloexec != 0 {
		return errno(EINVAL)
	}
	if a[1] >= p.fdLimit() {
		return errno(EBADF)
	}
	if a[1] < uint64(len(p.fds)) && p.fds[a[1]] != nil {
		if p.fds[a[1]].reserved {
			p.fds[a[1]] = nil
		} else {
			p.closeFD(a[1])
		}
	}
	return p.install(f, a[1], a[2]&oCloexec != 0)
}

// fcntl commands.
const (
	fDupfd        = 0
	fGetfd        = 1
	fSetfd        = 2
	fGetfl        = 3
	fSetfl        = 4
	fGetlk        = 5
	fSetlk        = 6
	fSetlkw       = 7
	fSetown       = 8
	fGetown       = 9
	fOfdGetlk     = 36
	fOfdSetlk     = 37
	fOfdSetlkw    = 38
	fDupfdCloexec = 1030
	fGetpipeSz    = 1032
	fSetpipeSz    = 1031
	fAddSeals     = 1033
	fGetSeals     = 1034
)

func sysFcntl(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	ent := p.fds[a[0]]
	switch a[1] {
	case fDupfd, fDupfdCloexec:
		if a[2] >= p.fdLimit() {
			return errno(EINVAL)
		}
		return p.install(f, a[2], a[1] == fDupfdCloexec)
	case fGetfd:
		if ent.cloexec {
			return 1
		}
		return 0
	case fSetfd:
		ent.cloexec = a[2]&1 != 0
		return 0
	case fGetfl:
		// As qemu-user reports them: the open flags less the ones that
		// act only at open, with the arch's O_DIRECTORY, O_NOFOLLOW and
		// O_DIRECT as given, and no O_LARGEFILE.
		return f.flags&^(oCreat|oExcl|oNoctty|oTrunc|oCloexec) | f.archFlags
	case fSetfl:
		// Only O_APPEND, O_NONBLOCK, O_ASYNC, O_DIRECT and O_NOATIME
		// change; the rest are kept.
		const settable = oAppend | oNonblock | 0o20000 | oNoatime
		g, _, _ := p.genericOpenFlags(a[2])
		f.flags = f.flags&^settable | g&settable
		if f.kind == kindHost {
			hostFlags := 0
			if f.flags&oAppend != 0 {
				hostFlags |= syscall.O_APPEND
			}
			syscall.Syscall(syscall.SYS_FCNTL, f.host.Fd(), syscall.F_SETFL, uintptr(hostFlags))
		}
		return 0
	case fGetlk, fSetlk, fSetlkw:
		return p.fcntlLock(f, a[1], a[2], false) // reclock.go
	case fOfdGetlk, fOfdSetlk, fOfdSetlkw:
		return p.fcntlLock(f, a[1], a[2], true)
	case fSetown, fGetown:
		return 0
	case fGetpipeSz:
		if f.kind != kindPipe {
			return errno(EBADF)
		}
		return pipeCapacity
	case fSetpipeSz:
		if f.kind != kindPipe {
			return errno(EBADF)
		}
		return pipeCapacity
	case fAddSeals, fGetSeals:
		if f.kind != kindHost {
			return errno(EINVAL)
		}
		// The host file keeps the seals (a memfd's; any other file
		// refuses them with EINVAL, as Linux does).
		r, err := unix.FcntlInt(f.host.Fd(), int(a[1]), int(uint32(a[2])))
		if err != nil {
			return hostErrno(err)
		}
		return uint64(r)
	}
	return errno(EINVAL)
}

// Terminal ioctls.
const (
	tcgets     = 0x5401
	tiocgwinsz = 0x5413
	fionread   = 0x541b
	fioclex    = 0x5451
	fionclex   = 0x5450
	fionbio    = 0x5421
)

func sysIoctl(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	switch a[1] {
	case fioclex, fionclex:
		p.fds[a[0]].cloexec = a[1] == fioclex
		return 0
	case fionbio:
		v, ok := p.Mem.Load(a[2], 4, p.order())
		if !ok {
			return errno(EFAULT)
		}
		if v != 0 {
			f.flags |= oNonblock
		} else {
			f.flags &^= oNonblock
		}
		return 0
	case fionread:
		var n uint64
		switch f.kind {
		case kindHost:
			st, e := hostStatFile(f.host)
			if e != 0 {
				return e
			}
			pos := f.seek(0, io.SeekCurrent)
			if int64(st.Size) > pos {
				n = st.Size - uint64(pos)
			}
		case kindPipe:
			n = uint64(len(f.pipe.buf))
		case kindSocket: // SIOCINQ: a stream's bytes, a message socket's next message
			if f.sock.rx == nil {
				return errno(EINVAL) // listening or not connected
			}
			n = uint64(len(f.sock.rx.buf))
			if f.sock.message() {
				n = 0
				if len(f.sock.rx.msgs) > 0 {
					n = uint64(f.sock.rx.msgs[0])
				}
			}
		case kindVirtual:
			n = uint64(max(int64(len(f.data))-f.off, 0))
		default:
			return errno(ENOTTY)
		}
		if !p.Mem.Store(a[2], 4, n, p.order()) {
			return errno(EFAULT)
		}
		return 0
	}
	// Only a host terminal is one (tty.go): standard streams are not,
	// unless Config.Terminal, so runs do not depend on where their output
	// goes; files and pipes are not either.
	if t, h := p.terminalOf(f); t != nil {
		if r, ok := p.ttyIoctl(t, h, a[1], a[2]); ok {
			return r
		}
		return errno(ENOTTY) // tty_ioctl's answer to a request it does not know
	}
	return errno(ENOTTY)
}

func sysGetcwd(p *Process, a [6]uint64) uint64 {
	cwd := p.guestPath(p.cwd)
	if a[1] < uint64(len(cwd)+1) {
		return errno(ERANGE)
	}
	if !p.writeGuest(a[0], append([]byte(cwd), 0)) {
		return errno(EFAULT)
	}
	return uint64(len(cwd) + 1)
}

// guestPath is how the guest names a host path: without the sysroot
// prefix when it lies inside it.
func (p *Process) guestPath(host string) string {
	if p.root != "" {
		rel, err := filepath.Rel(p.root, host)
		if err != nil || rel == ".." || startsDotDot(rel) {
			return "/"
		}
		return filepath.Join("/", rel)
	}
	if p.Sysroot != "" {
		if rel, err := filepath.Rel(p.Sysroot, host); err == nil && rel != ".." && !filepath.IsAbs(rel) && !startsDotDot(rel) {
			return filepath.Join("/", rel)
		}
	}
	return host
}

func startsDotDot(rel string) bool { return len(rel) >= 3 && rel[:3] == "../" }

func sysChdir(p *Process, a [6]uint64) uint64 {
	path, e := p.readPath(a[0])
	if e != 0 {
		return e
	}
	if f, e, ok := p.openSpecial(p.specialPath(atFDCWD, path), oRdonly); ok {
		if f != nil && f.refs == 0 {
			f.refs++
			f.release()
		}
		switch {
		case e != 0:
			return e
		case f.kind != kindVDir:
			return errno(ENOTDIR)
		}
		p.cwd = f.path // a virtual directory: /proc/1000, say
		return 0
	}
	host, e := p.resolve(atFDCWD, path, true)
	if e != 0 {
		return e
	}
	return p.chdir(host)
}

func (p *Process) chdir(host string) uint64 {
	st, e := hostStatPath(host, true)
	if e != 0 {
		return e
	}
	if st.Mode&sIFMT != sIFDIR {
		return errno(ENOTDIR)
	}
	if err := syscall.Access(host, 1); err != nil {
		return hostErrno(err)
	}
	if real, err := filepath.EvalSymlinks(host); err == nil {
		host = real
	}
	p.cwd = filepath.Clean(host)
	return 0
}

func sysFchdir(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind == kindVDir {
		p.cwd = f.path
		return 0
	}
	if f.kind != kindDir && f.kind != kindPath {
		return errno(ENOTDIR)
	}
	return p.chdir(f.path)
}

// pathOp resolves the path argument at index i (with dirfd at i-1 when
// hasDir) and runs op on the host path.
func (p *Process) pathAt(dirfd, addr uint64, follow bool) (string, uint64) {
	path, e := p.readPath(addr)
	if e != 0 {
		return "", e
	}
	return p.resolve(dirfd, path, follow)
}

// modifyAt is pathAt for an operation that changes the file system:
// EROFS under --read-only.
func (p *Process) modifyAt(dirfd, addr uint64, follow bool) (string, uint64) {
	host, e := p.pathAt(dirfd, addr, follow)
	if e == 0 && p.Cfg.ReadOnly {
		return "", errno(EROFS)
	}
	return host, e
}

func sysMkdirat(p *Process, a [6]uint64) uint64 {
	host, e := p.modifyAt(a[0], a[1], false)
	if e != 0 {
		return e
	}
	return hostResult(syscall.Mkdir(host, uint32(a[2]&^p.umask&0o7777)))
}

func sysMkdir(p *Process, a [6]uint64) uint64 {
	return sysMkdirat(p, [6]uint64{atFDCWD, a[0], a[1]})
}

func hostResult(err error) uint64 {
	if err != nil {
		return hostErrno(err)
	}
	return 0
}

func sysUnlinkat(p *Process, a [6]uint64) uint64 {
	if a[2]&^atRemovedir != 0 {
		return errno(EINVAL)
	}
	host, e := p.modifyAt(a[0], a[1], false)
	if e != 0 {
		return e
	}
	if a[2]&atRemovedir != 0 {
		return hostResult(syscall.Rmdir(host))
	}
	return hostResult(syscall.Unlink(host))
}

func sysUnlink(p *Process, a [6]uint64) uint64 {
	return sysUnlinkat(p, [6]uint64{atFDCWD, a[0], 0})
}

func sysRmdir(p *Process, a [6]uint64) uint64 {
	return sysUnlinkat(p, [6]uint64{atFDCWD, a[0], atRemovedir})
}

func sysRenameat2(p *Process, a [6]uint64) uint64 {
	const renameNoreplace = 1
	if a[4]&^renameNoreplace != 0 {
		return errno(EINVAL) // RENAME_EXCHANGE and RENAME_WHITEOUT are not offered
	}
	from, e := p.modifyAt(a[0], a[1], false)
	if e != 0 {
		return e
	}
	to, e := p.modifyAt(a[2], a[3], false)
	if e != 0 {
		return e
	}
	if a[4]&renameNoreplace != 0 {
		if _, e := hostStatPath(to, false); e == 0 {
			return errno(EEXIST)
		}
	}
	return hostResult(syscall.Rename(from, to))
}

func sysRenameat(p *Process, a [6]uint64) uint64 {
	return sysRenameat2(p, [6]uint64{a[0], a[1], a[2], a[3], 0})
}

func sysRename(p *Process, a [6]uint64) uint64 {
	return sysRenameat2(p, [6]uint64{atFDCWD, a[0], atFDCWD, a[1], 0})
}

func sysLinkat(p *Process, a [6]uint64) uint64 {
	if a[4]&^(atSymlinkFollow|atEmptyPath) != 0 {
		return errno(EINVAL)
	}
	from, e := p.modifyAt(a[0], a[1], a[4]&atSymlinkFollow != 0)
	if e != 0 {
		return e
	}
	to, e := p.modifyAt(a[2], a[3], false)
	if e != 0 {
		return e
	}
	if a[4]&atSymlinkFollow != 0 {
		if real, err := filepath.EvalSymlinks(from); err == nil {
			from = real
		}
	}
	return hostResult(syscall.Link(from, to))
}

func sysLink(p *Process, a [6]uint64) uint64 {
	return sysLinkat(p, [6]uint64{atFDCWD, a[0], atFDCWD, a[1], 0})
}

func sysSymlinkat(p *Process, a [6]uint64) uint64 {
	target, e := p.readPath(a[0])
	if e != 0 {
		return e
	}
	if target == "" {
		return errno(ENOENT)
	}
	at, e := p.modifyAt(a[1], a[2], false)
	if e != 0 {
		return e
	}
	return hostResult(syscall.Symlink(target, at))
}

func sysSymlink(p *Process, a [6]uint64) uint64 {
	return sysSymlinkat(p, [6]uint64{a[0], atFDCWD, a[1]})
}

func sysFchmodat(p *Process, a [6]uint64) uint64 {
	host, e := p.modifyAt(a[0], a[1], true)
	if e != 0 {
		return e
	}
	return hostResult(syscall.Chmod(host, uint32(a[2]&0o7777)))
}

func sysChmod(p *Process, a [6]uint64) uint64 {
	return sysFchmodat(p, [6]uint64{atFDCWD, a[0], a[1]})
}

func sysFchmod(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind != kindHost && f.kind != kindDir {
		return errno(EBADF)
	}
	if p.Cfg.ReadOnly {
		return errno(EROFS)
	}
	return hostResult(f.host.Chmod(os.FileMode(a[1] & 0o777)))
}

func sysFchownat(p *Process, a [6]uint64) uint64 {
	host, e := p.modifyAt(a[0], a[1], a[4]&atSymlinkNofollow == 0)
	if e != 0 {
		return e
	}
	if a[4]&atSymlinkNofollow != 0 {
		return hostResult(syscall.Lchown(host, int(int32(a[2])), int(int32(a[3]))))
	}
	return hostResult(syscall.Chown(host, int(int32(a[2])), int(int32(a[3]))))
}

func sysChown(p *Process, a [6]uint64) uint64 {
	return sysFchownat(p, [6]uint64{atFDCWD, a[0], a[1], a[2], 0})
}

func sysLchown(p *Process, a [6]uint64) uint64 {
	return sysFchownat(p, [6]uint64{atFDCWD, a[0], a[1], a[2], atSymlinkNofollow})
}

func sysFchown(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind != kindHost && f.kind != kindDir {
		return errno(EBADF)
	}
	if p.Cfg.ReadOnly {
		return errno(EROFS)
	}
	return hostResult(f.host.Chown(int(int32(a[1])), int(int32(a[2]))))
}

func sysUtimensat(p *Process, a [6]uint64) uint64 {
	const utimeNow, utimeOmit = (1 << 30) - 1, (1 << 30) - 2
	var host string
	if a[1] == 0 {
		f, e := p.file(a[0])
		if e != 0 {
			return e
		}
		if f.kind != kindHost && f.kind != kindDir {
			return errno(EBADF)
		}
		host = f.path
	} else {
		var e uint64
		host, e = p.modifyAt(a[0], a[1], a[3]&atSymlinkNofollow == 0)
		if e != 0 {
			return e
		}
	}
	st, e := hostStatPath(host, a[3]&atSymlinkNofollow == 0)
	if e != 0 {
		return e
	}
	now := time.Unix(0, int64(p.realtimeNanos()))
	times := [2]time.Time{now, now}
	if a[2] != 0 {
		b, ok := p.readGuest(a[2], 32)
		if !ok {
			return errno(EFAULT)
		}
		old := [2]time.Time{time.Unix(int64(st.Atime), int64(st.AtimeNsec)), time.Unix(int64(st.Mtime), int64(st.MtimeNsec))}
		for i := range times {
			sec, nsec := int64(p.order().Uint64(b[16*i:])), int64(p.order().Uint64(b[16*i+8:]))
			switch nsec {
			case utimeNow:
			case utimeOmit:
				times[i] = old[i]
			default:
				if nsec < 0 || nsec >= 1e9 {
					return errno(EINVAL)
				}
				times[i] = time.Unix(sec, nsec)
			}
		}
	}
	if a[3]&atSymlinkNofollow != 0 && st.Mode&sIFMT == sIFLNK {
		return 0 // the link's own times: not offered by the std lib; left as they are
	}
	return hostResult(os.Chtimes(host, times[0], times[1]))
}

func sysFtruncate(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if int64(a[1]) < 0 {
		return errno(EINVAL)
	}
	if f.kind != kindHost || !f.writable() {
		return errno(EINVAL)
	}
	return hostResult(f.host.Truncate(int64(a[1])))
}

func sysTruncate(p *Process, a [6]uint64) uint64 {
	host, e := p.modifyAt(atFDCWD, a[0], true)
	if e != 0 {
		return e
	}
	if int64(a[1]) < 0 {
		return errno(EINVAL)
	}
	return hostResult(os.Truncate(host, int64(a[1])))
}

func sysFallocate(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind != kindHost || !f.writable() {
		return errno(EBADF)
	}
	mode, off, n := a[1], int64(a[2]), int64(a[3])
	if off < 0 || n <= 0 {
		return errno(EINVAL)
	}
	if mode != 0 && mode != 1 { // 0, FALLOC_FL_KEEP_SIZE
		return errno(ENOTSUP)
	}
	st, e := hostStatFile(f.host)
	if e != 0 {
		return e
	}
	if mode == 0 && uint64(off+n) > st.Size {
		return hostResult(f.host.Truncate(off + n))
	}
	return 0
}

func sysFsync(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind == kindHost {
		return hostResult(f.host.Sync())
	}
	return 0
}

func sysFadvise64(p *Process, a [6]uint64) uint64 {
	f, e := p.file(a[0])
	if e != 0 {
		return e
	}
	if f.kind == kindPipe || f.kind == kindSocket {
		return errno(ESPIPE)
	}
	if a[3] > 5 {
		return errno(EINVAL)
	}
	return 0
}

func sysUmask(p *Process, a [6]uint64) uint64 {
	old := p.umask
	p.umask = a[0] & 0o777
	return old
}

func sysPipe2(p *Process, a [6]uint64) uint64 {
	if a[1]&^(oCloexec|oNonblock|0o40000 /* O_DIRECT */) != 0 {
		return errno(EINVAL)
	}
	pp := &pipe{readers: 1, writers: 1, ino: p.sys.newPipeIno()}
	r := &openFile{kind: kindPipe, pipe: pp, flags: oRdonly | a[1]&oNonblock}
	w := &openFile{kind: kindPipe, pipe: pp, write: true, flags: oWronly | a[1]&oNonblock}
	return p.installPair(r, w, a[1]&oCloexec != 0, a[0])
}

// installPair installs the two files pipe2 and socketpair make and
// writes their descriptors to the int[2] at addr; on any failure neither
// stays open.
func (p *Process) installPair(f0, f1 *openFile, cloexec bool, addr uint64) uint64 {
	fd0 := p.install(f0, 0, cloexec)
	if int64(fd0) < 0 {
		return fd0
	}
	fd1 := p.install(f1, 0, cloexec)
	if int64(fd1) < 0 {
		p.closeFD(fd0)
		return fd1
	}
	b := make([]byte, 8)
	p.order().PutUint32(b, uint32(fd0))
	p.order().PutUint32(b[4:], uint32(fd1))
	if !p.writeGuest(addr, b) {
		p.closeFD(fd0)
		p.closeFD(fd1)
		return errno(EFAULT)
	}
	return 0
}

func sysPipe(p *Process, a [6]uint64) uint64 { return sysPipe2(p, [6]uint64{a[0], 0}) }

// sysSendfile copies between descriptors through a bounded buffer.
func sysSendfile(p *Process, a [6]uint64) uint64 {
	out, e := p.file(a[0])
	if e != 0 {
		return e
	}
	in, e := p.file(a[1])
	if e != 0 {
		return e
	}
	if !in.readable() || !out.writable() {
		return errno(EBADF)
	}
	off := int64(-1)
	if a[2] != 0 {
		v, ok := p.Mem.Load(a[2], 8, p.order())
		if !ok {
			return errno(EFAULT)
		}
		off = int64(v)
		if off < 0 {
			return errno(EINVAL)
		}
	}
	n, e := p.copyFiles(in, out, off, -1, a[3])
	if a[2] != 0 && n > 0 {
		p.Mem.Store(a[2], 8, uint64(off)+n, p.order())
	}
	if e != 0 && n == 0 {
		return e
	}
	return n
}

func sysCopyFileRange(p *Process, a [6]uint64) uint64 {
	in, e := p.file(a[0])
	if e != 0 {
		return e
	}
	out, e := p.file(a[2])
	if e != 0 {
		return e
	}
	if a[5] != 0 {
		return errno(EINVAL)
	}
	if in.kind != kindHost || out.kind != kindHost {
		return errno(EINVAL)
	}
	if !in.readable() || !out.writable() || out.flags&oAppend != 0 {
		return errno(EBADF)
	}
	offs := [2]int64{-1, -1}
	for i, addr := range []uint64{a[1], a[3]} {
		if addr != 0 {
			v, ok := p.Mem.Load(addr, 8, p.order())
			if !ok {
				return errno(EFAULT)
			}
			offs[i] = int64(v)
			if offs[i] < 0 {
				return errno(EINVAL)
			}
		}
	}
	n, e := p.copyFiles(in, out, offs[0], offs[1], a[4])
	for i, addr := range []uint64{a[1], a[3]} {
		if addr != 0 && n > 0 {
			p.Mem.Store(addr, 8, uint64(offs[i])+n, p.order())
		}
	}
	if e != 0 && n == 0 {
		return e
	}
	return n
}

// copyFiles moves up to n bytes from in to out (at the offsets when >= 0).
func (p *Process) copyFiles(in, out *openFile, inOff, outOff int64, n uint64) (uint64, uint64) {
	n = min(n, 0x7ffff000)
	buf := make([]byte, min(n, ioChunk))
	var total uint64
	for total < n {
		want := min(n-total, ioChunk)
		at := int64(-1)
		if inOff >= 0 {
			at = inOff + int64(total)
		}
		k, e := p.readFile(in, buf[:want], at)
		if e != 0 || k == 0 {
			return total, e
		}
		wat := int64(-1)
		if outOff >= 0 {
			wat = outOff + int64(total)
		}
		w, e := p.writeFile(out, buf[:k], wat)
		total += uint64(w)
		if e != 0 || w < k || uint64(k) < want || !in.fills() {
			return total, e
		}
	}
	return total, 0
}

// sysPpoll reports every descriptor ready for what it asks, except an
// empty pipe with a writer (not readable) and a full pipe (not writable);
// with nothing ready it waits for another thread's syscall or its timeout
// on the virtual clock (timer.go); with one thread and no timeout nothing
// changes while it waits, so a call that would wait for ever is a
// deadlock.
func sysPpoll(p *Process, a [6]uint64) uint64 {
	var timeout uint64
	if a[2] != 0 {
		ns, r := p.readTimeout(a[2])
		if r != 0 {
			return r
		}
		timeout = ns
	}
	if r := p.pollMask(a[3], a[4]); r != 0 {
		return r
	}
	return p.poll(a[0], a[1], a[2] != 0, timeout, a[2])
}

func sysPoll(p *Process, a [6]uint64) uint64 {
	ms := int32(a[2])
	return p.poll(a[0], a[1], ms >= 0, uint64(max(ms, 0))*1e6, 0)
}

// Poll events (asm-generic poll.h).
const (
	pollin     = 0x1
	pollpri    = 0x2
	pollout    = 0x4
	pollerr    = 0x8
	pollhup    = 0x10
	pollnval   = 0x20
	pollrdnorm = 0x40
	pollwrnorm = 0x100
	pollrdhup  = 0x2000 // the peer shut down its sending side (sockets)
)

// readiness is what poll reports for fd asked for ev: files are always
// ready, pipes as their contents and their other ends say.
func (p *Process) readiness(fd uint64, ev uint64) uint64 {
	f, e := p.file(fd)
	if e != 0 {
		return pollnval
	}
	return p.fileReady(f, ev)
}

// fileReady is what poll reports for open file f asked for ev.
func (p *Process) fileReady(f *openFile, ev uint64) uint64 {
	switch {
	case f.kind == kindPipe:
		var rev uint64
		if f.readable() {
			if len(f.pipe.buf) > 0 {
				rev = (pollin | pollrdnorm) & ev
			}
			if f.pipe.writers == 0 {
				rev |= pollhup
			}
		}
		if f.writable() {
			if f.pipe.readers == 0 {
				return pollerr
			}
			if len(f.pipe.buf) < pipeCapacity {
				rev |= (pollout | pollwrnorm) & ev
			}
		}
		return rev
	case f.kind == kindSocket:
		return sockReady(f.sock, ev)
	case f.kind == kindTimerFD:
		return p.timerfdReady(f, ev)
	case f.kind == kindEventFD:
		return eventfdReady(f.efd, ev)
	case f.kind == kindSignalFD:
		return p.signalfdReady(f, ev)
	case f.kind == kindEpoll:
		if r, _ := p.epollReady(f.ep, 1, false, 0); len(r) > 0 {
			return (pollin | pollrdnorm) & ev
		}
		return 0
	}
	return ev & (pollin | pollout | pollrdnorm | pollwrnorm)
}

func (p *Process) poll(addr, n uint64, timed bool, timeout, tsAddr uint64) uint64 {
	if n > p.fdLimit() {
		return errno(EINVAL)
	}
	b, ok := p.readGuest(addr, n*8)
	if !ok {
		return errno(EFAULT)
	}
	o := p.order()
	var ready uint64
	for i := uint64(0); i < n; i++ {
		fd := int32(o.Uint32(b[8*i:]))
		ev := uint64(o.Uint16(b[8*i+4:]))
		var rev uint64
		if fd >= 0 {
			rev = p.readiness(uint64(fd), ev)
		}
		o.PutUint16(b[8*i+6:], uint16(rev))
		if rev != 0 {
			ready++
		}
	}
	if !p.writeGuest(addr, b) {
		return errno(EFAULT)
	}
	deadline, timed := p.pollDeadline(timeout, timed)
	if ready == 0 {
		if r := p.pollBlock("poll with no descriptor ready", deadline, timed); r != 0 {
			return r
		}
	}
	if tsAddr != 0 && !p.pollLeft(tsAddr, deadline) {
		return errno(EFAULT)
	}
	return ready
}

// sysPselect6 is pselect6(nfds, readfds, writefds, exceptfds, timeout,
// sigmask): the sets are arrays of longs in the guest's byte order, fd i
// at bit i%64 of long i/64. Readable is POLLIN or a hang-up, writable
// POLLOUT or an error; nothing is ever exceptional. With none ready it
// returns at once for a zero timeout, else waits as poll does, and
// writes back the time left, as Linux does.
func sysPselect6(p *Process, a [6]uint64) uint64 {
	nfds := a[0]
	if int32(nfds) < 0 || nfds > p.fdLimit() {
		return errno(EINVAL)
	}
	var timeout uint64
	if a[4] != 0 {
		ns, r := p.readTimeout(a[4])
		if r != 0 {
			return r
		}
		timeout = ns
	}
	if a[5] != 0 { // struct { const sigset_t *ss; size_t ss_len; }
		b, ok := p.readGuest(a[5], 16)
		if !ok {
			return errno(EFAULT)
		}
		if r := p.pollMask(p.order().Uint64(b), p.order().Uint64(b[8:])); r != 0 {
			return r
		}
	}
	deadline, timed := p.pollDeadline(timeout, a[4] != 0)
	words := (nfds + 63) / 64
	o := p.order()
	sets := [3][]uint64{}
	for k := range sets {
		if a[1+k] == 0 || words == 0 {
			continue
		}
		b, ok := p.readGuest(a[1+k], words*8)
		if !ok {
			return errno(EFAULT)
		}
		sets[k] = make([]uint64, words)
		for w := range sets[k] {
			sets[k][w] = o.Uint64(b[8*w:])
		}
	}
	var out [3][]uint64
	var ready uint64
	for fd := uint64(0); fd < nfds; fd++ {
		w, bit := fd/64, uint64(1)<<(fd%64)
		var want [3]bool
		any := false
		for k := range sets {
			if sets[k] != nil && sets[k][w]&bit != 0 {
				want[k], any = true, true
			}
		}
		if !any {
			continue
		}
		rev := p.readiness(fd, pollin|pollout|pollpri)
		if rev&pollnval != 0 {
			return errno(EBADF)
		}
		got := [3]bool{rev&(pollin|pollhup|pollerr) != 0, rev&(pollout|pollerr) != 0, rev&pollpri != 0}
		for k := range out {
			if want[k] && got[k] {
				if out[k] == nil {
					out[k] = make([]uint64, words)
				}
				out[k][w] |= bit
				ready++
			}
		}
	}
	if ready == 0 {
		if r := p.pollBlock("pselect6 with no descriptor ready", deadline, timed); r != 0 {
			return r
		}
	}
	if a[4] != 0 && !p.pollLeft(a[4], deadline) {
		return errno(EFAULT)
	}
	for k := range sets {
		if sets[k] == nil {
			continue
		}
		b := make([]byte, words*8)
		for w := range out[k] {
			o.PutUint64(b[8*w:], out[k][w])
		}
		if !p.writeGuest(a[1+k], b) {
			return errno(EFAULT)
		}
	}
	return ready
}
