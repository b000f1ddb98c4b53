package linux

import (
	"syscall"
)

// Named pipes (FIFOs, fifo(7)). mknod makes the node on the host; every
// guest open of it connects to one in-simulator pipe per node (device and
// inode), shared by all the run's processes, with Linux's open rules:
//
//	O_RDONLY             waits until a writer opens (any writer since the
//	                     wait began counts), unless O_NONBLOCK
//	O_WRONLY             waits until a reader opens; with O_NONBLOCK and no
//	                     reader, ENXIO
//	O_RDWR               never waits (Linux's documented extension)
//
// The data stays inside the simulator (a host FIFO would block simrun's
// one host thread): a host process outside the run that opens the same
// node is not connected to the guest's end. When every end is closed, the
// pipe and its unread bytes go, as Linux frees the pipe.

// fifoKey names a FIFO node on the host.
type fifoKey struct{ dev, ino uint64 }

// fifoPipe returns the pipe of the node key, made on first use.
func (s *System) fifoPipe(key fifoKey) *pipe {
	if pp := s.fifos[key]; pp != nil {
		return pp
	}
	if s.fifos == nil {
		s.fifos = map[fifoKey]*pipe{}
	}
	pp := &pipe{fifo: s, key: key}
	s.fifos[key] = pp
	return pp
}

// fifoWait is a thread's open of a FIFO that waits for the other end: its
// end is counted already, and seen is the other side's open count when
// the wait began.
type fifoWait struct {
	pipe  *pipe
	flags uint64
	seen  uint64
}

// openFIFO opens the FIFO node at host (st its stat) with the guest's
// flags.
func (p *Process) openFIFO(host string, st Stat, flags, archOnly uint64) uint64 {
	pp := p.sys.fifoPipe(fifoKey{st.Dev, st.Ino})
	acc, nonblock := flags&oAccmode, flags&oNonblock != 0
	t := p.cur
	w := t.fifoWait
	if w == nil || w.pipe != pp || w.flags != flags {
		if w != nil {
			w.pipe.drop(w.flags & oAccmode) // an abandoned wait (a signal ended it)
		}
		if acc == oWronly && nonblock && pp.readers == 0 {
			return errno(ENXIO)
		}
		w = &fifoWait{pipe: pp, flags: flags}
		switch acc {
		case oRdonly:
			pp.readers++
			pp.readOpens++
			w.seen = pp.writeOpens
		case oWronly:
			pp.writers++
			pp.writeOpens++
			w.seen = pp.readOpens
		default:
			pp.readers++
			pp.writers++
			pp.readOpens++
			pp.writeOpens++
		}
		t.fifoWait = w
	}
	if !nonblock {
		switch {
		case acc == oRdonly && pp.writers == 0 && pp.writeOpens == w.seen:
			return p.wouldBlock("open of a FIFO for reading, until a writer opens it")
		case acc == oWronly && pp.readers == 0 && pp.readOpens == w.seen:
			return p.wouldBlock("open of a FIFO for writing, until a reader opens it")
		}
	}
	t.fifoWait = nil
	f := &openFile{kind: kindPipe, pipe: pp, write: acc == oWronly, path: host, flags: flags, archFlags: archOnly}
	fd := p.install(f, 0, flags&oCloexec != 0)
	if int64(fd) < 0 {
		pp.drop(acc)
	}
	return fd
}

// drop closes one end of access mode acc; the last close of a FIFO's
// pipe forgets it.
func (pp *pipe) drop(acc uint64) {
	if acc != oWronly {
		pp.readers--
	}
	if acc != oRdonly {
		pp.writers--
	}
	if pp.fifo != nil && pp.readers == 0 && pp.writers == 0 {
		delete(pp.fifo.fifos, pp.key)
		pp.buf = nil
	}
}

// mknodat makes a FIFO, an empty regular file or a socket node on the
// host, with the guest's umask. Device nodes give EPERM: simrun does not
// make them on the host (as Linux answers a caller without CAP_MKNOD).
func sysMknodat(p *Process, a [6]uint64) uint64 {
	mode := a[2]
	switch mode & sIFMT {
	case 0, sIFREG, sIFIFO, sIFSOCK:
	case sIFCHR, sIFBLK:
		return errno(EPERM)
	default:
		return errno(EINVAL)
	}
	host, e := p.modifyAt(a[0], a[1], false)
	if e != 0 {
		return e
	}
	typ := mode & sIFMT
	if typ == 0 {
		typ = sIFREG
	}
	return hostResult(syscall.Mknod(host, uint32(typ|mode&^p.umask&0o7777), 0))
}

func sysMknod(p *Process, a [6]uint64) uint64 {
	return sysMknodat(p, [6]uint64{atFDCWD, a[0], a[1], a[2]})
}
