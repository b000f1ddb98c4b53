package linux

import "slices"

// epoll(7) and eventfd(2), the readiness APIs of event loops (glib,
// libuv, Python's asyncio, tokio).
//
// An epoll instance keeps its interest list in the order descriptors were
// added and reports ready ones in that order (Linux: in the order they
// became ready; with one simulated CPU and the scheduler's order this is
// deterministic either way). Readiness is poll's (Process.fileReady),
// level-triggered; EPOLLET reports an item again only when its readiness
// changed or its file took new bytes since the last report; EPOLLONESHOT
// disables it after one report until EPOLL_CTL_MOD. An item goes when its
// open file does (the last descriptor closed), as Linux drops it.
//
// struct epoll_event is 16 bytes on arm64 and s390x (the packed 12-byte
// layout is x86-64's only):
//
//	0 events (u32)   4 padding   8 data (u64)

// epoll_ctl's operations and the event bits epoll adds to poll's
// (EPOLLRDHUP is poll's POLLRDHUP).
const (
	epollCtlAdd = 1
	epollCtlDel = 2
	epollCtlMod = 3

	epollExclusive = 1 << 28
	epollWakeup    = 1 << 29
	epollOneshot   = 1 << 30
	epollET        = 1 << 31
)

// epoll is an epoll instance.
type epoll struct {
	items []*epItem
}

// epItem is one watched descriptor.
type epItem struct {
	fd       uint64
	f        *openFile
	events   uint32
	data     uint64
	disabled bool   // EPOLLONESHOT after its report
	lastMask uint64 // EPOLLET: the readiness last reported
	lastGen  uint64 // EPOLLET: the file's generation then
}

func sysEpollCreate1(p *Process, a [6]uint64) uint64 {
	if a[0]&^oCloexec != 0 {
		return errno(EINVAL)
	}
	f := &openFile{kind: kindEpoll, flags: oRdwr, path: "anon_inode:[eventpoll]", ep: &epoll{}}
	return p.install(f, 0, a[0]&oCloexec != 0)
}

// epoll_create (s390x): the size must be positive and is otherwise
// ignored, as since Linux 2.6.8.
func sysEpollCreate(p *Process, a [6]uint64) uint64 {
	if int32(a[0]) <= 0 {
		return errno(EINVAL)
	}
	return sysEpollCreate1(p, [6]uint64{})
}

// epollFile returns the epoll instance of descriptor epfd.
func (p *Process) epollFile(epfd uint64) (*epoll, uint64) {
	f, e := p.file(epfd)
	if e != 0 {
		return nil, e
	}
	if f.kind != kindEpoll {
		return nil, errno(EINVAL)
	}
	return f.ep, 0
}

// pollable reports whether f can be watched: regular files and
// directories cannot (EPERM), nor /dev/null and its kin.
func (p *Process) pollable(f *openFile) bool {
	switch f.kind {
	case kindHost, kindDir, kindPath, kindVirtual, kindVDir, kindNull, kindZero, kindRandom:
		if f.kind == kindHost {
			st, e := hostStatFile(f.host)
			return e == 0 && st.Mode&sIFMT != sIFREG && st.Mode&sIFMT != sIFDIR
		}
		return false
	case kindStdin, kindStdout:
		return p.stdStat(f).Mode&sIFMT != sIFREG
	}
	return true
}

func sysEpollCtl(p *Process, a [6]uint64) uint64 {
	ep, e := p.epollFile(a[0])
	if e != 0 {
		return e
	}
	op, fd := a[1], a[2]
	f, e := p.file(fd)
	if e != 0 {
		return e
	}
	if fd == a[0] || op < epollCtlAdd || op > epollCtlMod {
		return errno(EINVAL)
	}
	if !p.pollable(f) {
		return errno(EPERM)
	}
	var events uint32
	var data uint64
	if op != epollCtlDel {
		b, ok := p.readGuest(a[3], 16)
		if !ok {
			return errno(EFAULT)
		}
		events, data = p.order().Uint32(b), p.order().Uint64(b[8:])
		if events&epollExclusive != 0 && (op == epollCtlMod || events&epollOneshot != 0 || f.kind == kindEpoll) {
			return errno(EINVAL)
		}
	}
	ep.items = slices.DeleteFunc(ep.items, func(it *epItem) bool { return it.f.refs <= 0 })
	i := slices.IndexFunc(ep.items, func(it *epItem) bool { return it.fd == fd && it.f == f })
	switch op {
	case epollCtlAdd:
		if i >= 0 {
			return errno(EEXIST)
		}
		if f.kind == kindEpoll && (f.ep == ep || f.ep.watches(ep, 0)) {
			return errno(ELOOP)
		}
		ep.items = append(ep.items, &epItem{fd: fd, f: f, events: events, data: data})
	case epollCtlDel:
		if i < 0 {
			return errno(ENOENT)
		}
		ep.items = slices.Delete(ep.items, i, i+1)
	case epollCtlMod:
		if i < 0 {
			return errno(ENOENT)
		}
		if ep.items[i].events&epollExclusive != 0 {
			return errno(EINVAL)
		}
		*ep.items[i] = epItem{fd: fd, f: f, events: events, data: data}
	}
	return 0
}

// watches reports whether ep watches target, directly or through other
// epoll instances (a loop would make ELOOP; Linux allows 5 levels).
func (ep *epoll) watches(target *epoll, depth int) bool {
	if depth > 5 {
		return true
	}
	for _, it := range ep.items {
		if it.f.kind == kindEpoll && (it.f.ep == target || it.f.ep.watches(target, depth+1)) {
			return true
		}
	}
	return false
}

// ready returns the items of ep to report now with their events (at most
// max), updating the edge-triggered and one-shot state when report is
// set.
func (p *Process) epollReady(ep *epoll, max int, report bool, depth int) ([]*epItem, []uint64) {
	ep.items = slices.DeleteFunc(ep.items, func(it *epItem) bool { return it.f.refs <= 0 })
	var items []*epItem
	var evs []uint64
	for _, it := range ep.items {
		if len(items) == max {
			break
		}
		if it.disabled {
			continue
		}
		want := uint64(it.events) | pollerr | pollhup
		var rev uint64
		if it.f.kind == kindEpoll {
			if depth < 5 {
				if r, _ := p.epollReady(it.f.ep, 1, false, depth+1); len(r) > 0 {
					rev = pollin & want
				}
			}
		} else {
			rev = p.fileReady(it.f, want&^(epollExclusive|epollWakeup|epollOneshot|epollET))
		}
		gen := it.f.generation()
		if it.events&epollET != 0 && rev == it.lastMask && gen == it.lastGen {
			continue
		}
		if report && it.events&epollET != 0 {
			it.lastMask, it.lastGen = rev, gen
		}
		if rev == 0 {
			continue
		}
		if report && it.events&epollOneshot != 0 {
			it.disabled = true
		}
		items, evs = append(items, it), append(evs, rev)
	}
	return items, evs
}

// generation counts the bytes f's pipe or eventfd took, for EPOLLET.
func (f *openFile) generation() uint64 {
	switch {
	case f.pipe != nil:
		return f.pipe.gen
	case f.sock != nil && f.sock.rx != nil:
		return f.sock.rx.gen
	case f.sock != nil:
		return uint64(len(f.sock.pending))
	case f.efd != nil:
		return f.efd.gen
	}
	return 0
}

// epoll_pwait(epfd, events, maxevents, timeout ms, sigmask, sigsetsize).
func sysEpollPwait(p *Process, a [6]uint64) uint64 {
	if r := p.pollMask(a[4], a[5]); r != 0 {
		return r
	}
	return p.epollWait(a[0], a[1], a[2], int32(a[3]))
}

// epoll_wait (s390x): epoll_pwait without a mask.
func sysEpollWait(p *Process, a [6]uint64) uint64 {
	return p.epollWait(a[0], a[1], a[2], int32(a[3]))
}

func (p *Process) epollWait(epfd, addr, maxEvents uint64, ms int32) uint64 {
	n := int64(int32(maxEvents))
	if n <= 0 || n > 1<<26 {
		return errno(EINVAL)
	}
	ep, e := p.epollFile(epfd)
	if e != 0 {
		return e
	}
	deadline, timed := p.pollDeadline(uint64(max(ms, 0))*1e6, ms >= 0)
	items, evs := p.epollReady(ep, int(n), true, 0)
	if len(items) == 0 {
		if r := p.pollBlock("epoll_wait with no descriptor ready", deadline, timed); r != 0 {
			return r
		}
		return 0
	}
	o := p.order()
	b := make([]byte, 16*len(items))
	for i, it := range items {
		o.PutUint32(b[16*i:], uint32(evs[i]))
		o.PutUint64(b[16*i+8:], it.data)
	}
	if !p.writeGuest(addr, b) {
		return errno(EFAULT)
	}
	return uint64(len(items))
}

// eventFD is an eventfd's counter.
type eventFD struct {
	count     uint64
	semaphore bool
	gen       uint64
}

const eventfdMax = 1<<64 - 2 // the counter's largest value

// eventfd2(initval, flags): EFD_SEMAPHORE (1), EFD_CLOEXEC, EFD_NONBLOCK.
func sysEventfd2(p *Process, a [6]uint64) uint64 {
	const semaphore = 1
	if a[1]&^(semaphore|oCloexec|oNonblock) != 0 {
		return errno(EINVAL)
	}
	f := &openFile{kind: kindEventFD, flags: oRdwr | a[1]&oNonblock, path: "anon_inode:[eventfd]",
		efd: &eventFD{count: uint64(uint32(a[0])), semaphore: a[1]&semaphore != 0}}
	return p.install(f, 0, a[1]&oCloexec != 0)
}

// eventfd (s390x): eventfd2 without flags.
func sysEventfd(p *Process, a [6]uint64) uint64 { return sysEventfd2(p, [6]uint64{a[0]}) }

// eventfdRead takes the counter (or 1 of it in semaphore mode) into an
// 8-byte buffer; a zero counter waits, or EAGAIN.
func (p *Process) eventfdRead(f *openFile, buf []byte) (int, uint64) {
	ev := f.efd
	if len(buf) < 8 {
		return 0, errno(EINVAL)
	}
	if ev.count == 0 {
		if f.flags&oNonblock != 0 {
			return 0, errno(EAGAIN)
		}
		return 0, p.wouldBlock("read from an eventfd whose counter is 0")
	}
	v := ev.count
	if ev.semaphore {
		v = 1
	}
	ev.count -= v
	p.order().PutUint64(buf, v)
	return 8, 0
}

// eventfdWrite adds an 8-byte value to the counter; a sum past its
// maximum waits, or EAGAIN; all-ones is EINVAL.
func (p *Process) eventfdWrite(f *openFile, b []byte) (int, uint64) {
	ev := f.efd
	if len(b) < 8 {
		return 0, errno(EINVAL)
	}
	v := p.order().Uint64(b)
	if v == 1<<64-1 {
		return 0, errno(EINVAL)
	}
	if v > eventfdMax-ev.count {
		if f.flags&oNonblock != 0 {
			return 0, errno(EAGAIN)
		}
		return 0, p.wouldBlock("write to an eventfd whose counter would overflow")
	}
	ev.count += v
	if v > 0 {
		ev.gen++
	}
	return 8, 0
}

// eventfdReady is poll's view of an eventfd.
func eventfdReady(ev *eventFD, want uint64) uint64 {
	var rev uint64
	if ev.count > 0 {
		rev |= (pollin | pollrdnorm) & want
	}
	if ev.count < eventfdMax {
		rev |= (pollout | pollwrnorm) & want
	}
	return rev
}
