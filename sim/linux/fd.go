package linux

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// The guest's descriptor table. Guest descriptors are the process's own:
// no host descriptor number is ever visible to the guest, and a guest
// descriptor reaches only what the guest opened (or the three standard
// streams simrun hands it).

type fileKind uint8

const (
	kindStdin    fileKind = iota // simrun's stdin (Config.Stdin)
	kindStdout                   // simrun's stdout or stderr (Config.Stdout, Config.Stderr)
	kindHost                     // a host file
	kindDir                      // a host directory
	kindPath                     // O_PATH: a location only
	kindVirtual                  // generated content (/proc files): read-only bytes
	kindNull                     // /dev/null
	kindZero                     // /dev/zero
	kindRandom                   // /dev/urandom, /dev/random: the seeded stream
	kindPipe                     // one end of a pipe inside the process
	kindVDir                     // a virtual directory (/proc/self, /proc/self/fd): data holds its dirent64 records
	kindTimerFD                  // a timerfd (timerfd.go)
	kindEpoll                    // an epoll instance (epoll.go)
	kindEventFD                  // an eventfd (epoll.go)
	kindSignalFD                 // a signalfd (signalfd.go)
	kindSocket                   // one end of a socketpair (socket.go)
)

// openFile is an open file description, shared by dup'ed descriptors.
type openFile struct {
	kind  fileKind
	flags uint64 // status flags and access mode, as the guest gave them (generic values)
	// archFlags are the arch-valued O_DIRECTORY, O_NOFOLLOW and O_DIRECT
	// the file was opened with (F_GETFL reports them).
	archFlags uint64
	path      string // host path (kindHost, kindDir, kindPath), or the guest path of a virtual file
	host      *os.File
	r         io.Reader       // kindStdin
	w         io.Writer       // kindStdout
	std       int             // kindStdin/kindStdout: which standard stream
	eof       bool            // kindStdin: the host stream failed or ended
	data      []byte          // kindVirtual; kindVDir: its records
	list      func() []dirent // kindVDir: lists the entries (again at each rewind)
	perm      uint64          // kindVDir: its permission bits (0: 0555)
	off       int64           // kindVirtual, kindDir (entries handed out)
	dir       []byte          // kindDir: host dirent64 records not yet handed out
	pipe      *pipe
	write     bool      // kindPipe: the write end (a FIFO opened O_RDWR is both ends, with write false)
	tfd       *timerFD  // kindTimerFD
	ep        *epoll    // kindEpoll
	efd       *eventFD  // kindEventFD
	sfd       *signalFD // kindSignalFD
	sock      *sockEnd  // kindSocket
	refs      int
}

type fdEntry struct {
	f        *openFile
	cloexec  bool
	reserved bool // taken by no file (Config.ReservedFDs)
}

// Access modes and the flags with one value on every architecture.
const (
	oAccmode  = 3
	oRdonly   = 0
	oWronly   = 1
	oRdwr     = 2
	oCreat    = 0o100
	oExcl     = 0o200
	oNoctty   = 0o400
	oTrunc    = 0o1000
	oAppend   = 0o2000
	oNonblock = 0o4000
	oDsync    = 0o10000
	oNoatime  = 0o1000000
	oCloexec  = 0o2000000
	oSync     = 0o4010000
	oPath     = 0o10000000
	oTmpfile  = 0o20000000
)

func (p *Process) initFDs() {
	p.fds = []*fdEntry{
		{f: &openFile{kind: kindStdin, r: p.Cfg.Stdin, std: 0, flags: oRdonly, refs: 1}},
		{f: &openFile{kind: kindStdout, w: p.Cfg.Stdout, std: 1, flags: oWronly, refs: 1}},
		{f: &openFile{kind: kindStdout, w: p.Cfg.Stderr, std: 2, flags: oWronly, refs: 1}},
	}
	for i := 0; i < min(p.Cfg.ReservedFDs, 64); i++ {
		p.fds = append(p.fds, &fdEntry{reserved: true})
	}
}

// file returns the open file behind a guest descriptor.
func (p *Process) file(fd uint64) (*openFile, uint64) {
	if fd >= uint64(len(p.fds)) || p.fds[fd] == nil || p.fds[fd].reserved {
		return nil, errno(EBADF)
	}
	return p.fds[fd].f, 0
}

// install puts f at the lowest free descriptor at or above min.
func (p *Process) install(f *openFile, min uint64, cloexec bool) uint64 {
	for fd := min; fd < p.fdLimit(); fd++ {
		if fd >= uint64(len(p.fds)) {
			p.fds = append(p.fds, make([]*fdEntry, fd+1-uint64(len(p.fds)))...)
		}
		if p.fds[fd] == nil {
			p.fds[fd] = &fdEntry{f: f, cloexec: cloexec}
			f.refs++
			return fd
		}
	}
	return errno(EMFILE)
}

// closeFD closes a guest descriptor.
func (p *Process) closeFD(fd uint64) uint64 {
	f, e := p.file(fd)
	if e != 0 {
		return e
	}
	p.fds[fd] = nil
	if len(p.sys.locks) == 0 {
		f.release()
		return 0
	}
	key, lockable := recordLockKey(f) // before release closes the host file
	f.release()
	if lockable {
		p.closedLocks(key, f)
	}
	return 0
}

func (f *openFile) release() {
	f.refs--
	if f.refs > 0 {
		return
	}
	if f.host != nil {
		f.host.Close()
	}
	if f.pipe != nil {
		f.pipe.drop(f.flags & oAccmode)
	}
	if f.sock != nil {
		f.sock.release()
	}
}

// closeAll closes every descriptor (at exit).
func (p *Process) closeAll() {
	for fd := range p.fds {
		if p.fds[fd] != nil && !p.fds[fd].reserved {
			p.closeFD(uint64(fd))
		}
	}
}

func (f *openFile) readable() bool { return f.flags&oAccmode != oWronly && f.kind != kindPath }
func (f *openFile) writable() bool {
	return f.flags&oAccmode != oRdonly && f.kind != kindPath
}

// pipe is an in-process pipe: a bounded buffer with its ends counted.
type pipe struct {
	buf     []byte
	readers int
	writers int
	// A FIFO's pipe (fifo.go): the system that keeps it by key, and how
	// often each side was opened (an open waiting for the other side
	// goes on once that count moves).
	fifo                  *System
	key                   fifoKey
	readOpens, writeOpens uint64
	gen                   uint64 // writes that added bytes (epoll's EPOLLET)
	// msgs are the lengths of the messages in buf, oldest first, when
	// the pipe carries a datagram or seqpacket socket's (socket.go).
	msgs []int
	ino  uint64 // an anonymous pipe's inode number in pipefs (fstat, /proc/self/fd)
}

const pipeCapacity = 65536 // Linux's default pipe size

// readFile reads at most n bytes of f at its offset (or at off when
// off >= 0, pread) into buf's room. It returns the bytes read.
func (p *Process) readFile(f *openFile, buf []byte, off int64) (int, uint64) {
	switch f.kind {
	case kindStdin:
		if off >= 0 {
			return 0, errno(ESPIPE)
		}
		if f.r == nil || f.eof || len(buf) == 0 {
			return 0, 0
		}
		n, err := f.r.Read(buf)
		if err != nil && n == 0 {
			f.eof = true
			if !errors.Is(err, io.EOF) {
				// A host read error is EIO once; the stream then ends,
				// as a terminal that went away.
				return 0, errno(EIO)
			}
		}
		return n, 0
	case kindHost:
		p.sys.syncForRead(f)
		var n int
		var err error
		if off >= 0 {
			n, err = f.host.ReadAt(buf, off)
		} else {
			n, err = io.ReadFull(f.host, buf)
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && n == 0 {
			return 0, hostErrno(err)
		}
		return n, 0
	case kindDir, kindVDir:
		return 0, errno(EISDIR)
	case kindVirtual:
		at := f.off
		if off >= 0 {
			at = off
		}
		if at >= int64(len(f.data)) {
			return 0, 0
		}
		n := copy(buf, f.data[at:])
		if off < 0 {
			f.off += int64(n)
		}
		return n, 0
	case kindNull:
		return 0, 0
	case kindZero:
		clear(buf)
		return len(buf), 0
	case kindRandom:
		p.rng.fill(buf)
		return len(buf), 0
	case kindPipe:
		if off >= 0 {
			return 0, errno(ESPIPE)
		}
		pp := f.pipe
		if len(pp.buf) == 0 {
			if pp.writers == 0 || len(buf) == 0 {
				return 0, 0
			}
			if f.flags&oNonblock != 0 {
				return 0, errno(EAGAIN)
			}
			return 0, p.wouldBlock("read from an empty pipe whose write end is open in this process")
		}
		n := copy(buf, pp.buf)
		pp.buf = pp.buf[n:]
		return n, 0
	case kindSocket:
		if off >= 0 {
			return 0, errno(ESPIPE)
		}
		n, _, e := p.sockRecv(f, buf, 0)
		return n, e
	case kindTimerFD:
		return p.timerfdRead(f, buf)
	case kindEventFD:
		return p.eventfdRead(f, buf)
	case kindSignalFD:
		return p.signalfdRead(f, buf)
	case kindEpoll:
		return 0, errno(EINVAL)
	}
	return 0, errno(EBADF)
}

// writeFile writes b to f at its offset (or at off when off >= 0).
func (p *Process) writeFile(f *openFile, b []byte, off int64) (int, uint64) {
	switch f.kind {
	case kindStdout:
		if off >= 0 {
			return 0, errno(ESPIPE)
		}
		n, err := f.w.Write(b)
		if err != nil && n == 0 {
			return 0, errno(EIO)
		}
		return n, 0
	case kindHost:
		var n int
		var err error
		if off >= 0 {
			n, err = f.host.WriteAt(b, off)
		} else {
			n, err = f.host.Write(b)
		}
		if err != nil && n == 0 {
			return 0, hostErrno(err)
		}
		if len(p.sys.pageCache) != 0 {
			at := off
			if at < 0 { // where the write went: just before the offset now
				end, _ := f.host.Seek(0, io.SeekCurrent)
				at = end - int64(n)
			}
			p.sys.syncAfterWrite(f, at, n)
		}
		return n, 0
	case kindNull, kindZero, kindRandom:
		return len(b), 0
	case kindPipe:
		if off >= 0 {
			return 0, errno(ESPIPE)
		}
		pp := f.pipe
		if pp.readers == 0 {
			p.signalSelf(sigPIPE)
			return 0, errno(EPIPE)
		}
		room := pipeCapacity - len(pp.buf)
		if room == 0 && len(b) > 0 {
			if f.flags&oNonblock != 0 {
				return 0, errno(EAGAIN)
			}
			return 0, p.wouldBlock("write to a full pipe whose read end is open in this process")
		}
		n := min(room, len(b))
		pp.buf = append(pp.buf, b[:n]...)
		if n > 0 {
			pp.gen++
		}
		return n, 0
	case kindSocket:
		if off >= 0 {
			return 0, errno(ESPIPE)
		}
		return p.sockSend(f, b, p.msgFlags)
	case kindTimerFD, kindEpoll, kindSignalFD:
		return 0, errno(EINVAL) // no write operation, as Linux's vfs_write says
	case kindEventFD:
		return p.eventfdWrite(f, b)
	}
	return 0, errno(EBADF)
}

const sigPIPE = 13

// errRestart is Linux's kernel-internal ERESTARTSYS: wouldBlock's
// result, never seen by the guest.
const errRestart = 512

// wouldBlock is the result of a call that must wait for another thread
// (what says for what): the dispatcher blocks the thread and restarts
// the call when another thread's syscall may have changed things, or,
// with no other thread, ends the run (see Process.waitIO). A call that
// moved some bytes first returns those instead, as Linux does.
func (p *Process) wouldBlock(what string) uint64 {
	p.blockWhat = what
	return errno(errRestart)
}

// hostOpenFlags translates guest open flags for os.OpenFile.
func hostOpenFlags(flags uint64) int {
	var h int
	switch flags & oAccmode {
	case oRdonly:
		h = os.O_RDONLY
	case oWronly:
		h = os.O_WRONLY
	default:
		h = os.O_RDWR
	}
	if flags&oCreat != 0 {
		h |= os.O_CREATE
	}
	if flags&oExcl != 0 {
		h |= os.O_EXCL
	}
	if flags&oTrunc != 0 {
		h |= os.O_TRUNC
	}
	if flags&oAppend != 0 {
		h |= os.O_APPEND
	}
	if flags&oSync == oSync {
		h |= os.O_SYNC
	}
	return h | syscall.O_NOCTTY
}
