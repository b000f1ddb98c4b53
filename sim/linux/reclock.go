package linux

import (
	"io"
	"math"
	"slices"
)

// fcntl's record locks (F_GETLK, F_SETLK, F_SETLKW and the open file
// description forms F_OFD_*), kept by the system for the run's
// processes, as fcntl(2) and Linux's fs/locks.c describe them:
//
//   - A lock covers a byte range of a file (one host inode), shared
//     (F_RDLCK, needs the descriptor open for reading) or exclusive
//     (F_WRLCK, for writing). Two locks conflict when their owners differ,
//     their ranges overlap and either is exclusive.
//   - A traditional lock's owner is the process: its threads share it, a
//     forked child does not inherit it, it survives execve, and it goes
//     when the process closes any descriptor of the file, or ends. An OFD
//     lock's owner is the open file description: shared by dup and fork,
//     gone with the description's last descriptor.
//   - Setting a lock replaces the owner's locks over the range (splitting
//     them) and merges it with the owner's adjacent or overlapping locks
//     of the same type; F_UNLCK only removes.
//   - F_SETLK on a conflict gives EAGAIN; F_SETLKW waits (on the
//     scheduler, as a blocking read) until the conflict is gone. Linux's
//     deadlock detection (EDEADLK) is not done: such a wait ends the run
//     as any deadlock does. F_GETLK reports the first conflicting lock
//     (its pid -1 for an OFD lock), or l_type F_UNLCK.
//
// The locks are the run's own: host programs do not see them (the host
// file is not locked), as the run's processes share one host process.
//
// struct flock is the same 32 bytes on arm64 and s390x, in the arch's
// byte order:
//
//	0 l_type (short)  2 l_whence (short)  8 l_start  16 l_len  24 l_pid (int)

// struct flock's l_type values.
const (
	fRdlck = 0
	fWrlck = 1
	fUnlck = 2
)

// lockKey names a locked file: its host inode.
type lockKey struct{ dev, ino uint64 }

// recordLock is one lock: [start, end) of its file (end math.MaxUint64:
// to the end of the file, however it grows).
type recordLock struct {
	proc       *Process  // a traditional lock's owner
	ofd        *openFile // an OFD lock's owner
	write      bool
	start, end uint64
}

func (l *recordLock) sameOwner(m *recordLock) bool { return l.proc == m.proc && l.ofd == m.ofd }

// flockReq is a decoded struct flock.
type flockReq struct {
	typ        uint16
	start, end uint64
	pid        int32
}

// readFlock reads and checks the struct flock at addr for f: l_type,
// l_whence (SEEK_CUR at f's offset, SEEK_END at its size) and the range,
// whose start may not be negative (EINVAL), nor the end overflow
// (EOVERFLOW).
func (p *Process) readFlock(f *openFile, addr uint64) (flockReq, uint64) {
	b, ok := p.readGuest(addr, 32)
	if !ok {
		return flockReq{}, errno(EFAULT)
	}
	o := p.order()
	r := flockReq{typ: o.Uint16(b), pid: int32(o.Uint32(b[24:]))}
	if r.typ > fUnlck {
		return r, errno(EINVAL)
	}
	var base int64
	switch o.Uint16(b[2:]) {
	case 0: // SEEK_SET
	case 1: // SEEK_CUR
		if f.host != nil {
			base = f.seek(0, io.SeekCurrent)
		}
	case 2: // SEEK_END
		if f.host != nil {
			st, e := hostStatFile(f.host)
			if e != 0 {
				return r, e
			}
			base = int64(st.Size)
		}
	default:
		return r, errno(EINVAL)
	}
	start, n := int64(o.Uint64(b[8:])), int64(o.Uint64(b[16:]))
	if start > math.MaxInt64-base {
		return r, errno(EOVERFLOW)
	}
	start += base
	end := int64(math.MaxInt64)
	switch {
	case n > 0:
		if n-1 > math.MaxInt64-start {
			return r, errno(EOVERFLOW)
		}
		end = start + n
	case n < 0:
		start, end = start+n, start
	}
	if start < 0 {
		return r, errno(EINVAL)
	}
	r.start, r.end = uint64(start), uint64(end)
	if n == 0 {
		r.end = math.MaxUint64
	}
	return r, 0
}

// recordLockKey is the inode behind f, for a file that takes record
// locks (a host file); ok is false for any other.
func recordLockKey(f *openFile) (lockKey, bool) {
	if f.kind != kindHost || f.host == nil {
		return lockKey{}, false
	}
	st, e := hostStatFile(f.host)
	if e != 0 {
		return lockKey{}, false
	}
	return lockKey{st.Dev, st.Ino}, true
}

// conflict is the first lock on key that conflicts with want, or nil.
func (s *System) conflict(key lockKey, want *recordLock) *recordLock {
	for _, l := range s.locks[key] {
		if !l.sameOwner(want) && l.start < want.end && want.start < l.end && (l.write || want.write) {
			return l
		}
	}
	return nil
}

// setLock gives owner want's range with want's type (unlock: none),
// splitting and merging the owner's locks on key.
func (s *System) setLock(key lockKey, want *recordLock, unlock bool) {
	var out []*recordLock
	for _, l := range s.locks[key] {
		if !l.sameOwner(want) || l.end <= want.start || want.end <= l.start {
			// Another owner's, or apart from the range: kept, unless
			// it is the owner's lock of the same type touching the
			// range, which the new one absorbs.
			if !unlock && l.sameOwner(want) && l.write == want.write && (l.end == want.start || want.end == l.start) {
				want.start, want.end = min(want.start, l.start), max(want.end, l.end)
				continue
			}
			out = append(out, l)
			continue
		}
		if !unlock && l.write == want.write {
			want.start, want.end = min(want.start, l.start), max(want.end, l.end)
			continue
		}
		if l.start < want.start {
			left := *l
			left.end = want.start
			out = append(out, &left)
		}
		if want.end < l.end {
			right := *l
			right.start = want.end
			out = append(out, &right)
		}
	}
	if !unlock {
		out = append(out, want)
	}
	slices.SortStableFunc(out, func(a, b *recordLock) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	if len(out) == 0 {
		delete(s.locks, key)
		return
	}
	if s.locks == nil {
		s.locks = map[lockKey][]*recordLock{}
	}
	s.locks[key] = out
}

// closedLocks drops p's traditional locks on file key, as any close of
// a descriptor of the file does, and the OFD locks of f, whose
// descriptor it was, once its last descriptor is gone.
func (p *Process) closedLocks(key lockKey, f *openFile) {
	ls := slices.DeleteFunc(p.sys.locks[key], func(l *recordLock) bool {
		return l.proc == p || l.ofd == f && f.refs <= 0
	})
	if len(ls) == 0 {
		delete(p.sys.locks, key)
	} else {
		p.sys.locks[key] = ls
	}
}

// fcntlLock is F_GETLK, F_SETLK and F_SETLKW (ofd: their F_OFD_ forms)
// on descriptor fd's file f with the struct flock at addr.
func (p *Process) fcntlLock(f *openFile, cmd, addr uint64, ofd bool) uint64 {
	if f.kind == kindPath {
		return errno(EBADF)
	}
	r, e := p.readFlock(f, addr)
	if e != 0 {
		return e
	}
	if ofd && r.pid != 0 {
		return errno(EINVAL) // an OFD lock's l_pid must be 0 (fcntl(2))
	}
	want := &recordLock{write: r.typ == fWrlck, start: r.start, end: r.end}
	if ofd {
		want.ofd = f
	} else {
		want.proc = p
	}
	key, lockable := recordLockKey(f)
	if cmd == fGetlk || cmd == fOfdGetlk {
		if r.typ == fUnlck {
			return errno(EINVAL)
		}
		var c *recordLock
		if lockable {
			c = p.sys.conflict(key, want)
		}
		return p.putFlock(addr, c)
	}
	switch {
	case r.typ == fRdlck && !f.readable(), r.typ == fWrlck && !f.writable():
		return errno(EBADF)
	case !lockable:
		return 0 // not a host file: nothing else can hold it
	}
	if r.typ != fUnlck && p.sys.conflict(key, want) != nil {
		if cmd == fSetlk || cmd == fOfdSetlk {
			return errno(EAGAIN)
		}
		return p.wouldBlock("fcntl F_SETLKW on a range another process (or open file) has locked")
	}
	p.sys.setLock(key, want, r.typ == fUnlck)
	return 0
}

// putFlock writes F_GETLK's answer: the conflicting lock c, or l_type
// F_UNLCK (the rest as the caller gave it).
func (p *Process) putFlock(addr uint64, c *recordLock) uint64 {
	o := p.order()
	if c == nil {
		b := make([]byte, 2)
		o.PutUint16(b, fUnlck)
		if !p.writeGuest(addr, b) {
			return errno(EFAULT)
		}
		return 0
	}
	b := make([]byte, 32)
	o.PutUint16(b, fRdlck)
	if c.write {
		o.PutUint16(b, fWrlck)
	}
	o.PutUint64(b[8:], c.start)
	if c.end != math.MaxUint64 {
		o.PutUint64(b[16:], c.end-c.start)
	}
	pid := int32(-1) // an OFD lock has no process
	if c.proc != nil {
		pid = int32(c.proc.pid)
	}
	o.PutUint32(b[24:], uint32(pid))
	if !p.writeGuest(addr, b) {
		return errno(EFAULT)
	}
	return 0
}
