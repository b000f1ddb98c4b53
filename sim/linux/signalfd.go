package linux

// signalfd(2): a descriptor that reads the process's pending signals of
// its mask instead of their delivery (the program blocks them). A read
// takes them as rt_sigtimedwait would (Process.takePending: the reading
// thread's own, then the process's), each as a 128-byte struct
// signalfd_siginfo; with none pending it waits or gives EAGAIN. poll and
// epoll report POLLIN while one is pending. A signal that arrives wakes
// the threads waiting in a read.
//
//	0 ssi_signo  4 ssi_errno  8 ssi_code  12 ssi_pid  16 ssi_uid  20 ssi_fd
//	24 ssi_tid  28 ssi_band  32 ssi_overrun  36 ssi_trapno  40 ssi_status
//	44 ssi_int  48 ssi_ptr  56 ssi_utime  64 ssi_stime  72 ssi_addr  ...128

const signalfdInfoSize = 128

// signalFD is a signalfd's mask.
type signalFD struct{ mask uint64 }

// signalfd4(fd, mask, sizemask, flags): fd -1 makes a new one, else fd's
// mask is replaced. SFD_CLOEXEC and SFD_NONBLOCK are O_CLOEXEC and
// O_NONBLOCK.
func sysSignalfd4(p *Process, a [6]uint64) uint64 {
	if a[2] != 8 || a[3]&^(oCloexec|oNonblock) != 0 {
		return errno(EINVAL)
	}
	b, ok := p.readGuest(a[1], 8)
	if !ok {
		return errno(EFAULT)
	}
	mask := p.order().Uint64(b) &^ unblockable
	if int32(a[0]) != -1 {
		f, e := p.file(a[0])
		if e != 0 {
			return e
		}
		if f.kind != kindSignalFD {
			return errno(EINVAL)
		}
		f.sfd.mask = mask
		return a[0]
	}
	f := &openFile{kind: kindSignalFD, flags: oRdwr | a[3]&oNonblock, path: "anon_inode:[signalfd]", sfd: &signalFD{mask}}
	return p.install(f, 0, a[3]&oCloexec != 0)
}

// signalfd (s390x): signalfd4 without flags.
func sysSignalfd(p *Process, a [6]uint64) uint64 {
	return sysSignalfd4(p, [6]uint64{a[0], a[1], a[2]})
}

// signalfdRead takes pending signals of f's mask into buf, as many whole
// records as fit.
func (p *Process) signalfdRead(f *openFile, buf []byte) (int, uint64) {
	if len(buf) < signalfdInfoSize {
		return 0, errno(EINVAL)
	}
	n := 0
	for n+signalfdInfoSize <= len(buf) {
		in, ok := p.takePending(f.sfd.mask)
		if !ok {
			break
		}
		p.putSignalfdInfo(buf[n:n+signalfdInfoSize], &in)
		n += signalfdInfoSize
	}
	switch {
	case n > 0:
		return n, 0
	case f.flags&oNonblock != 0:
		return 0, errno(EAGAIN)
	}
	return 0, p.wouldBlock("read from a signalfd with none of its signals pending")
}

// putSignalfdInfo encodes in as struct signalfd_siginfo, the fields its
// kind has (Linux's signalfd_copyinfo).
func (p *Process) putSignalfdInfo(b []byte, in *sigInfo) {
	o := p.order()
	clear(b)
	o.PutUint32(b[0:], uint32(in.signo))
	o.PutUint32(b[4:], uint32(in.errno))
	o.PutUint32(b[8:], uint32(in.code))
	var val [8]byte // the sigval union: its int member is its first 4 bytes
	o.PutUint64(val[:], in.value)
	switch in.kind {
	case siKindKill:
		o.PutUint32(b[12:], in.pid)
		o.PutUint32(b[16:], in.uid)
	case siKindRT:
		o.PutUint32(b[12:], in.pid)
		o.PutUint32(b[16:], in.uid)
		copy(b[44:48], val[:4])
		o.PutUint64(b[48:], in.value)
	case siKindTimer:
		o.PutUint32(b[24:], in.timerID)
		o.PutUint32(b[32:], in.overrun)
		copy(b[44:48], val[:4])
		o.PutUint64(b[48:], in.value)
	case siKindChild:
		o.PutUint32(b[12:], in.pid)
		o.PutUint32(b[16:], in.uid)
		o.PutUint32(b[40:], uint32(in.value))
	case siKindFault:
		o.PutUint64(b[72:], in.addr)
	}
}

// signalfdWants reports whether an open signalfd of p takes sig.
func (p *Process) signalfdWants(sig int) bool {
	for _, fe := range p.fds {
		if fe != nil && fe.f != nil && fe.f.kind == kindSignalFD && fe.f.sfd.mask&sigBit(sig) != 0 {
			return true
		}
	}
	return false
}

// signalfdReady is poll's view of a signalfd: readable while a signal of
// its mask is pending for the calling thread or the process.
func (p *Process) signalfdReady(f *openFile, ev uint64) uint64 {
	set := f.sfd.mask
	if p.cur.sig.pick(func(in *sigInfo) bool { return set&sigBit(in.signo) != 0 }) >= 0 {
		return (pollin | pollrdnorm) & ev
	}
	for _, t := range p.threads {
		if t.sig.pick(func(in *sigInfo) bool { return in.process && set&sigBit(in.signo) != 0 }) >= 0 {
			return (pollin | pollrdnorm) & ev
		}
	}
	return 0
}
