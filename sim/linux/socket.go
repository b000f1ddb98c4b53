package linux

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Sockets. The run has no network: its sockets are AF_UNIX ones, with
// the semantics of Linux's net/unix/af_unix.c, connected pairs
// (socketpair, or connect and accept on a bound and listening stream or
// seqpacket socket of the run), each end reading the pipe its peer
// writes into. A stream or seqpacket end sees EOF once its peer has
// closed or shut down its sending side, and its sends then fail with
// EPIPE (and SIGPIPE unless MSG_NOSIGNAL); a datagram end's send to a
// closed peer is ECONNREFUSED; datagram and seqpacket ends keep message
// boundaries. Bound names live in the run (System.bound): a path name
// also makes a socket node on the host, as Linux does, but a connect
// reaches only a socket of the run (a host program's socket is
// ECONNREFUSED). Not modelled: other families (EAFNOSUPPORT), datagram
// sockets from socket() (ESOCKTNOSUPPORT: socketpair makes them), and
// ancillary data (SCM_RIGHTS, SCM_CREDENTIALS).

// Socket constants (include/linux/socket.h, net.h, asm-generic/socket.h:
// the same values on arm64 and s390x).
const (
	afUnix        = 1
	afInet        = 2
	afInet6       = 10
	sockStream    = 1
	sockDgram     = 2
	sockSeqpacket = 5
	sockTypeMask  = 0xf

	msgOOB      = 0x1
	msgPeek     = 0x2
	msgTrunc    = 0x20
	msgDontwait = 0x40
	msgWaitall  = 0x100
	msgNosignal = 0x4000

	solSocket   = 1
	soType      = 3
	soError     = 4
	soSndbuf    = 7
	soRcvbuf    = 8
	soPeercred  = 17
	soAcceptcon = 30
	soProtocol  = 38
	soDomain    = 39

	EADDRINUSE      = 98
	ENOTSOCK        = 88
	EMSGSIZE        = 90
	EPROTOTYPE      = 91
	ENOPROTOOPT     = 92
	EPROTONOSUPPORT = 93
	ESOCKTNOSUPPORT = 94
	EAFNOSUPPORT    = 97
	EISCONN         = 106
	ENOTCONN        = 107
	ECONNREFUSED    = 111
)

// sockEnd is an AF_UNIX socket. Once connected (socketpair, connect,
// accept) it reads rx, which its peer writes, and writes tx, which its
// peer reads; before that both are nil. A message socket's pipes
// keep each message's length (pipe.msgs).
type sockEnd struct {
	typ     uint64 // sockStream, sockDgram or sockSeqpacket
	rx, tx  *pipe
	ino     uint64
	creator uint64 // the pid that made the pair (SO_PEERCRED)
	// rdShut: receives see the end of the stream once rx is empty (this
	// end's SHUT_RD, its peer's SHUT_WR or close); wrShut: sends fail
	// (this end's SHUT_WR, its peer's SHUT_RD or close).
	rdShut, wrShut bool
	peer           *sockEnd
	// A socket from socket(): its bound address (sockaddr_un's sun_path
	// bytes, "" unnamed), the host node a path name made, and once it
	// listens the connections waiting for accept (at most backlog+1).
	name     string
	node     string
	sys      *System
	listens  bool
	backlog  int
	pending  []*sockEnd
	peerName string // a connected end's peer's address
}

// message reports whether the socket keeps message boundaries.
func (s *sockEnd) message() bool { return s.typ != sockStream }

// connected reports whether shutting down or closing one end tells the
// other (stream and seqpacket; a datagram end only finds its peer gone).
func (s *sockEnd) connected() bool { return s.typ != sockDgram }

// socketpair(domain, type, protocol, sv[2]).
func sysSocketpair(p *Process, a [6]uint64) uint64 {
	typ := a[1] & sockTypeMask
	switch {
	case a[0] == afInet || a[0] == afInet6:
		return errno(ENOTSUP) // families that exist but make no pairs
	case a[0] != afUnix:
		return errno(EAFNOSUPPORT)
	case a[1]&^(sockTypeMask|oNonblock|oCloexec) != 0:
		return errno(EINVAL)
	case typ != sockStream && typ != sockDgram && typ != sockSeqpacket:
		return errno(ESOCKTNOSUPPORT)
	case a[2] != 0 && a[2] != afUnix:
		return errno(EPROTONOSUPPORT)
	}
	ab := &pipe{readers: 1, writers: 1} // a writes it, b reads it
	ba := &pipe{readers: 1, writers: 1}
	sa := &sockEnd{typ: typ, rx: ba, tx: ab, ino: p.sys.newPipeIno(), creator: p.pid, sys: p.sys}
	sb := &sockEnd{typ: typ, rx: ab, tx: ba, ino: p.sys.newPipeIno(), creator: p.pid, sys: p.sys, peer: sa}
	sa.peer = sb
	flags := oRdwr | a[1]&oNonblock
	return p.installPair(&openFile{kind: kindSocket, sock: sa, flags: flags}, &openFile{kind: kindSocket, sock: sb, flags: flags}, a[1]&oCloexec != 0, a[3])
}

// release lets go of the end's pipes (its last descriptor closed); a
// connected peer is shut down both ways, as Linux's unix_release_sock
// does.
func (s *sockEnd) release() {
	if key := sockKey(s.name, s.node, s.typ); s.name != "" && s.sys.bound[key] == s {
		delete(s.sys.bound, key) // the host node stays, as on Linux
	}
	for _, q := range s.pending { // connections never accepted
		q.release()
	}
	s.pending = nil
	if s.rx == nil {
		return
	}
	s.rx.readers--
	s.tx.writers--
	if s.connected() {
		s.peer.rdShut, s.peer.wrShut = true, true
	}
}

// sock returns the open socket of descriptor fd, or the errno of a
// socket call on a descriptor that is none.
func (p *Process) sock(fd uint64) (*openFile, uint64) {
	f, e := p.file(fd)
	if e != 0 {
		return nil, e
	}
	if f.kind != kindSocket {
		return nil, errno(ENOTSOCK)
	}
	return f, 0
}

// sockRecv takes what one receive takes from f's socket into buf and
// returns how many bytes it put there and the length it received: for a
// stream what is there (with MSG_WAITALL, once buf's length, or as much
// as the pipe holds, has come; MSG_TRUNC changes nothing, as in Linux's
// unix_stream_read_generic), for a message socket the next message,
// whose excess is lost. MSG_PEEK leaves what it read.
func (p *Process) sockRecv(f *openFile, buf []byte, flags uint64) (n, whole int, e uint64) {
	s := f.sock
	if s.rx == nil {
		return 0, 0, errno(EINVAL) // not connected
	}
	rx := s.rx
	waitAll := flags&msgWaitall != 0 && !s.message() && len(rx.buf) < min(len(buf), pipeCapacity)
	if len(rx.buf) == 0 && len(rx.msgs) == 0 || waitAll && !s.rdShut {
		switch {
		case s.rdShut || len(buf) == 0 && !s.message():
			// the end of the stream, or a read of nothing
		case f.flags&oNonblock != 0 || flags&msgDontwait != 0:
			return 0, 0, errno(EAGAIN)
		default:
			return 0, 0, p.wouldBlock("receive on a socket whose peer is open in this run")
		}
	}
	whole = min(len(buf), len(rx.buf))
	if s.message() {
		if len(rx.msgs) == 0 {
			return 0, 0, 0
		}
		whole = rx.msgs[0]
	}
	n = min(whole, len(buf))
	copy(buf, rx.buf[:n])
	if flags&msgPeek == 0 {
		rx.buf = rx.buf[whole:]
		if s.message() {
			rx.msgs = rx.msgs[1:]
		}
	}
	return n, whole, 0
}

// sockSend puts b into f's socket's peer: for a stream what fits, for a
// message socket all of b as one message or nothing.
func (p *Process) sockSend(f *openFile, b []byte, flags uint64) (int, uint64) {
	s := f.sock
	tx := s.tx
	switch {
	case tx == nil:
		return 0, errno(ENOTCONN)
	case s.wrShut:
		if flags&msgNosignal == 0 {
			p.signalSelf(sigPIPE)
		}
		return 0, errno(EPIPE)
	case tx.readers == 0: // a datagram end's peer is gone
		return 0, errno(ECONNREFUSED)
	case s.message() && len(b) > pipeCapacity:
		return 0, errno(EMSGSIZE)
	}
	room := pipeCapacity - len(tx.buf)
	if room == 0 && len(b) > 0 || s.message() && room < len(b) {
		if f.flags&oNonblock != 0 || flags&msgDontwait != 0 {
			return 0, errno(EAGAIN)
		}
		return 0, p.wouldBlock("send on a socket whose peer's buffer is full")
	}
	n := min(room, len(b))
	tx.buf = append(tx.buf, b[:n]...)
	if s.message() {
		tx.msgs = append(tx.msgs, n)
	}
	tx.gen++
	return n, 0
}

// sockReady is what poll reports for socket end s asked for ev (Linux's
// unix_poll): readable with data or at the end of the stream, hung up
// once shut down both ways, writable while the peer's buffer has room
// or a send would fail at once.
func sockReady(s *sockEnd, ev uint64) uint64 {
	var rev uint64
	switch {
	case s.listens:
		if len(s.pending) > 0 {
			rev = (pollin | pollrdnorm) & ev
		}
		return rev
	case s.rx == nil: // neither connected nor listening
		if s.rdShut {
			rev = (pollin | pollrdnorm | pollrdhup) & ev
		}
		return rev | pollhup | (pollout|pollwrnorm)&ev
	}
	if len(s.rx.buf) > 0 || len(s.rx.msgs) > 0 || s.rdShut {
		rev |= (pollin | pollrdnorm) & ev
	}
	if s.rdShut {
		rev |= pollrdhup & ev
	}
	if s.rdShut && s.wrShut {
		rev |= pollhup
	}
	if len(s.tx.buf) < pipeCapacity || s.wrShut || s.tx.readers == 0 {
		rev |= (pollout | pollwrnorm) & ev
	}
	return rev
}

// shutdown(fd, how): SHUT_RD, SHUT_WR or both, connected or not; a
// connected peer learns of it (its receives end, or its sends fail).
func sysShutdown(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	if a[1] > 2 {
		return errno(EINVAL)
	}
	s := f.sock
	rd, wr := a[1] != 1, a[1] != 0
	s.rdShut = s.rdShut || rd
	s.wrShut = s.wrShut || wr
	if s.connected() && s.peer != nil {
		s.peer.wrShut = s.peer.wrShut || rd
		s.peer.rdShut = s.peer.rdShut || wr
	}
	return 0
}

// sendto(fd, buf, len, flags, dest_addr, addrlen): stream and seqpacket
// sockets take no destination (EISCONN), a datagram one comes from
// socketpair and is connected.
func sysSendto(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	if a[4] != 0 {
		return errno(EISCONN)
	}
	return p.sockWrite(f, [][2]uint64{{a[1], a[2]}}, a[3])
}

// recvfrom(fd, buf, len, flags, src_addr, addrlen): the peer of a
// socketpair has no address, so *addrlen becomes 0.
func sysRecvfrom(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	r, _ := p.sockRead(f, [][2]uint64{{a[1], a[2]}}, a[3])
	if int64(r) >= 0 && a[4] != 0 && a[5] != 0 && !p.Mem.Store(a[5], 4, 0, p.order()) {
		return errno(EFAULT)
	}
	return r
}

// sockWrite sends the bytes of iov with flags: a stream's through
// writeFrom (a blocking send waits until all went, as write does), a
// message's as one message.
func (p *Process) sockWrite(f *openFile, iov [][2]uint64, flags uint64) uint64 {
	if flags&msgOOB != 0 {
		return errno(ENOTSUP)
	}
	if !f.sock.message() {
		p.msgFlags = flags
		defer func() { p.msgFlags = 0 }()
		var total uint64
		for _, v := range iov {
			if v[1] == 0 {
				continue
			}
			r := p.writeFrom(f, v[0], v[1], -1)
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
	var msg []byte
	for _, v := range iov {
		if uint64(len(msg))+v[1] > pipeCapacity {
			return errno(EMSGSIZE)
		}
		b, ok := p.readGuest(v[0], v[1])
		if !ok {
			return errno(EFAULT)
		}
		msg = append(msg, b...)
	}
	n, e := p.sockSend(f, msg, flags)
	if e != 0 {
		return e
	}
	return uint64(n)
}

// sockRead receives into the buffers of iov with flags. It returns the
// length received (with MSG_TRUNC on a message socket the message's
// whole length) and whether a message was cut short.
func (p *Process) sockRead(f *openFile, iov [][2]uint64, flags uint64) (uint64, bool) {
	if flags&msgOOB != 0 {
		return errno(ENOTSUP), false
	}
	var room uint64
	for _, v := range iov {
		room += v[1]
	}
	buf := make([]byte, min(room, pipeCapacity))
	n, whole, e := p.sockRecv(f, buf, flags)
	if e != 0 {
		return e, false
	}
	got := buf[:n]
	for _, v := range iov {
		if len(got) == 0 {
			break
		}
		k := min(uint64(len(got)), v[1])
		if !p.writeGuest(v[0], got[:k]) {
			return errno(EFAULT), false
		}
		got = got[k:]
	}
	if f.sock.message() && flags&msgTrunc != 0 {
		return uint64(whole), whole > n
	}
	return uint64(n), whole > n
}

// struct msghdr on both 64-bit ABIs:
//
//	 0 msg_name      8 msg_namelen (+4)  16 msg_iov      24 msg_iovlen
//	32 msg_control  40 msg_controllen    48 msg_flags (+4)
const msghdrSize = 56

// sendmsg(fd, msg, flags): the iovecs as one send; ancillary data
// (msg_controllen > 0) is not carried, so a message with some is refused
// with EOPNOTSUPP rather than sent without it.
func sysSendmsg(p *Process, a [6]uint64) uint64 {
	f, h, iov, e := p.msghdr(a)
	if e != 0 {
		return e
	}
	o := p.order()
	if o.Uint64(h[0:]) != 0 && o.Uint32(h[8:]) != 0 {
		return errno(EISCONN)
	}
	if o.Uint64(h[40:]) != 0 {
		return errno(ENOTSUP)
	}
	return p.sockWrite(f, iov, a[2])
}

// msghdr reads sendmsg's or recvmsg's socket (a[0]), struct msghdr (at
// a[1]) and the iovecs it points to.
func (p *Process) msghdr(a [6]uint64) (*openFile, []byte, [][2]uint64, uint64) {
	f, e := p.sock(a[0])
	if e != 0 {
		return nil, nil, nil, e
	}
	h, ok := p.readGuest(a[1], msghdrSize)
	if !ok {
		return nil, nil, nil, errno(EFAULT)
	}
	iov, e := p.iovecs(p.order().Uint64(h[16:]), p.order().Uint64(h[24:]))
	return f, h, iov, e
}

// recvmsg(fd, msg, flags): msg_namelen and msg_controllen become 0 (no
// address, no ancillary data), msg_flags MSG_TRUNC when a message did
// not fit.
func sysRecvmsg(p *Process, a [6]uint64) uint64 {
	f, _, iov, e := p.msghdr(a)
	if e != 0 {
		return e
	}
	o := p.order()
	r, cut := p.sockRead(f, iov, a[2])
	if int64(r) < 0 {
		return r
	}
	var mflags uint64
	if cut {
		mflags = msgTrunc
	}
	if !p.Mem.Store(a[1]+8, 4, 0, o) || !p.Mem.Store(a[1]+40, 8, 0, o) || !p.Mem.Store(a[1]+48, 4, mflags, o) {
		return errno(EFAULT)
	}
	return r
}

// getsockname and getpeername: the socket's bound address or its
// peer's (a socketpair's ends are unnamed: the family alone, 2 bytes).
func sysGetsockname(p *Process, a [6]uint64) uint64 {
	return p.sockName(a, false)
}

func sysGetpeername(p *Process, a [6]uint64) uint64 {
	return p.sockName(a, true)
}

func (p *Process) sockName(a [6]uint64, peer bool) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	name := f.sock.name
	if peer {
		if f.sock.rx == nil {
			return errno(ENOTCONN)
		}
		name = f.sock.peerName
	}
	return p.putSockaddr(name, a[1], a[2])
}

// putSockaddr writes sockaddr_un with name at addr, cut to *lenAddr,
// and its whole length into *lenAddr (the path with its NUL; an
// abstract name as long as it is).
func (p *Process) putSockaddr(name string, addr, lenAddr uint64) uint64 {
	if addr == 0 || lenAddr == 0 {
		return 0
	}
	l, ok := p.Mem.Load(lenAddr, 4, p.order())
	if !ok {
		return errno(EFAULT)
	}
	if int32(l) < 0 {
		return errno(EINVAL)
	}
	sa := make([]byte, 2, 2+len(name)+1)
	p.order().PutUint16(sa, afUnix)
	sa = append(sa, name...)
	if name != "" && name[0] != 0 {
		sa = append(sa, 0)
	}
	if !p.writeGuest(addr, sa[:min(l, uint64(len(sa)))]) || !p.Mem.Store(lenAddr, 4, uint64(len(sa)), p.order()) {
		return errno(EFAULT)
	}
	return 0
}

// getsockopt(fd, level, name, value, len) at SOL_SOCKET: the type,
// domain, protocol, pending error (none), buffer sizes, whether it
// listens and the peer's credentials (the creator's pid, uid and gid
// 0).
func sysGetsockopt(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	if a[1] != solSocket {
		return errno(ENOTSUP) // AF_UNIX has no options at other levels
	}
	o := p.order()
	l, ok := p.Mem.Load(a[4], 4, o)
	if !ok {
		return errno(EFAULT)
	}
	if int32(l) < 0 {
		return errno(EINVAL)
	}
	var v []byte
	put := func(x uint64) { v = o.(binary.AppendByteOrder).AppendUint32(v, uint32(x)) }
	switch a[2] {
	case soType:
		put(f.sock.typ)
	case soDomain:
		put(afUnix)
	case soProtocol, soError:
		put(0)
	case soAcceptcon:
		put(map[bool]uint64{true: 1}[f.sock.listens])
	case soSndbuf, soRcvbuf:
		put(2 * pipeCapacity) // what Linux reports for its default (doubled) size
	case soPeercred:
		put(f.sock.creator)
		put(0)
		put(0)
	default:
		return errno(ENOPROTOOPT)
	}
	if l > uint64(len(v)) || a[2] == soPeercred {
		l = uint64(len(v))
	}
	if !p.writeGuest(a[3], v[:l]) || !p.Mem.Store(a[4], 4, l, o) {
		return errno(EFAULT)
	}
	return 0
}

// setsockopt at SOL_SOCKET is accepted and changes nothing (buffer
// sizes, SO_PASSCRED, timeouts... the pair has fixed 64 KiB buffers);
// other levels are EOPNOTSUPP, as for an AF_UNIX socket on Linux.
func sysSetsockopt(p *Process, a [6]uint64) uint64 {
	if _, e := p.sock(a[0]); e != 0 {
		return e
	}
	if a[1] != solSocket {
		return errno(ENOTSUP)
	}
	if int32(a[4]) < 0 {
		return errno(EINVAL)
	}
	return 0
}

// socket(domain, type, protocol): an AF_UNIX stream or seqpacket
// socket, neither bound nor connected.
func sysSocket(p *Process, a [6]uint64) uint64 {
	typ := a[1] & sockTypeMask
	switch {
	case a[0] != afUnix:
		return errno(EAFNOSUPPORT)
	case a[1]&^(sockTypeMask|oNonblock|oCloexec) != 0:
		return errno(EINVAL)
	case typ != sockStream && typ != sockSeqpacket:
		return errno(ESOCKTNOSUPPORT)
	case a[2] != 0 && a[2] != afUnix:
		return errno(EPROTONOSUPPORT)
	}
	s := &sockEnd{typ: typ, ino: p.sys.newPipeIno(), creator: p.pid, sys: p.sys}
	return p.install(&openFile{kind: kindSocket, sock: s, flags: oRdwr | a[1]&oNonblock}, 0, a[1]&oCloexec != 0)
}

// sockAddr reads sockaddr_un (addr, n) as bind and connect take it: its
// name (sun_path up to its NUL, or an abstract name whole) and for a
// path the host path it resolves to.
func (p *Process) sockAddr(addr, n uint64) (name, host string, e uint64) {
	if n < 2 || n > 110 {
		return "", "", errno(EINVAL)
	}
	b, ok := p.readGuest(addr, n)
	if !ok {
		return "", "", errno(EFAULT)
	}
	if p.order().Uint16(b) != afUnix {
		return "", "", errno(EINVAL)
	}
	path := b[2:]
	if len(path) == 0 {
		return "", "", errno(EINVAL)
	}
	if path[0] == 0 {
		return string(path), "", 0 // abstract
	}
	if i := indexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	host, e = p.resolve(atFDCWD, string(path), false)
	return string(path), host, e
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// sockKey is the run's key of a bound address: the host path of a path
// name; an abstract name with the socket's type, since Linux looks
// those up by name and type (a connect of another type finds nothing).
func sockKey(name, host string, typ uint64) string {
	if host != "" {
		return host
	}
	return name + "\x00" + strconv.FormatUint(typ, 10)
}

// bind(fd, addr, len): a path name makes a socket node on the host
// (EADDRINUSE if something is there) and an abstract name is the run's.
func sysBind(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	s := f.sock
	if s.name != "" || s.rx != nil {
		return errno(EINVAL)
	}
	name, host, e := p.sockAddr(a[1], a[2])
	if e != 0 {
		return e
	}
	key := sockKey(name, host, s.typ)
	if _, ok := p.sys.bound[key]; ok {
		return errno(EADDRINUSE)
	}
	if host != "" {
		if p.Cfg.ReadOnly {
			return errno(EROFS)
		}
		if err := syscall.Mknod(host, uint32(sIFSOCK|0o777&^p.umask), 0); err != nil {
			if errors.Is(err, syscall.EEXIST) {
				return errno(EADDRINUSE)
			}
			return hostErrno(err)
		}
	}
	if p.sys.bound == nil {
		p.sys.bound = map[string]*sockEnd{}
	}
	p.sys.bound[key] = s
	s.name, s.node = name, host
	return 0
}

// listen(fd, backlog): a bound socket waits for connections.
func sysListen(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	s := f.sock
	if s.name == "" || s.rx != nil {
		return errno(EINVAL)
	}
	s.listens = true
	s.backlog = int(min(uint64(max(int32(a[1]), 0)), 4096)) // SOMAXCONN
	return 0
}

// connect(fd, addr, len): to a listening socket of the run; the
// connection waits in its queue for accept, this end connected at once.
func sysConnect(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	s := f.sock
	switch {
	case s.rx != nil:
		return errno(EISCONN)
	case s.listens:
		return errno(EINVAL)
	}
	name, host, e := p.sockAddr(a[1], a[2])
	if e != 0 {
		return e
	}
	l := p.sys.bound[sockKey(name, host, s.typ)]
	if l == nil {
		if host != "" {
			if _, err := os.Lstat(host); err != nil {
				return hostErrno(err)
			}
		}
		return errno(ECONNREFUSED)
	}
	switch {
	case l.typ != s.typ: // a path name's socket of another type
		return errno(EPROTOTYPE)
	case !l.listens:
		return errno(ECONNREFUSED)
	case len(l.pending) > l.backlog:
		if f.flags&oNonblock != 0 {
			return errno(EAGAIN)
		}
		return p.wouldBlock("connect to a socket whose queue is full")
	}
	up := &pipe{readers: 1, writers: 1} // s writes, the accepted end reads
	down := &pipe{readers: 1, writers: 1}
	srv := &sockEnd{typ: s.typ, rx: up, tx: down, ino: p.sys.newPipeIno(), creator: l.creator, sys: p.sys, name: l.name, peerName: s.name, peer: s}
	s.rx, s.tx, s.peer, s.peerName = down, up, srv, l.name
	l.pending = append(l.pending, srv)
	return 0
}

// accept4(fd, addr, addrlen, flags) and accept: the oldest waiting
// connection, as a new descriptor.
func sysAccept4(p *Process, a [6]uint64) uint64 {
	f, e := p.sock(a[0])
	if e != 0 {
		return e
	}
	if a[3]&^(oNonblock|oCloexec) != 0 {
		return errno(EINVAL)
	}
	s := f.sock
	if !s.listens {
		return errno(EINVAL)
	}
	if len(s.pending) == 0 {
		if f.flags&oNonblock != 0 {
			return errno(EAGAIN)
		}
		return p.wouldBlock("accept on a socket no one has connected to")
	}
	c := s.pending[0]
	if e := p.putSockaddr(c.peerName, a[1], a[2]); e != 0 {
		return e
	}
	fd := p.install(&openFile{kind: kindSocket, sock: c, flags: oRdwr | a[3]&oNonblock}, 0, a[3]&oCloexec != 0)
	if int64(fd) >= 0 {
		s.pending = s.pending[1:]
	}
	return fd
}

func sysAccept(p *Process, a [6]uint64) uint64 {
	return sysAccept4(p, [6]uint64{a[0], a[1], a[2], 0})
}

// socketcall (s390x) multiplexes the socket calls: call number, then a
// pointer to the arguments as an array of longs (net/socket.c).
func sysSocketcall(p *Process, a [6]uint64) uint64 {
	// The calls by number, with their argument counts.
	calls := [...]struct {
		n  int
		do func(*Process, [6]uint64) uint64
	}{
		1: {3, sysSocket}, 2: {3, sysBind}, 3: {3, sysConnect}, 4: {2, sysListen},
		5: {3, sysAccept}, 6: {3, sysGetsockname}, 7: {3, sysGetpeername}, 8: {4, sysSocketpair},
		9: {4, sysSendto}, 10: {4, sysRecvfrom}, 11: {6, sysSendto}, 12: {6, sysRecvfrom},
		13: {2, sysShutdown}, 14: {5, sysSetsockopt}, 15: {5, sysGetsockopt}, 16: {3, sysSendmsg},
		17: {3, sysRecvmsg}, 18: {4, sysAccept4}, 19: {5, sysNotSockMmsg}, 20: {4, sysNotSockMmsg},
	}
	if a[0] == 0 || a[0] >= uint64(len(calls)) {
		return errno(EINVAL)
	}
	c := calls[a[0]]
	b, ok := p.readGuest(a[1], uint64(8*c.n))
	if !ok {
		return errno(EFAULT)
	}
	var args [6]uint64
	for i := range c.n {
		args[i] = p.order().Uint64(b[8*i:])
	}
	switch a[0] {
	case 9, 10: // send and recv: sendto and recvfrom without an address
		args[4], args[5] = 0, 0
	}
	return c.do(p, args)
}

// sysNotSockMmsg answers recvmmsg and sendmmsg, which simrun does not
// batch: ENOSYS on a socket, ENOTSOCK (or EBADF) on anything else.
func sysNotSockMmsg(p *Process, a [6]uint64) uint64 {
	if _, e := p.sock(a[0]); e != 0 {
		return e
	}
	return errno(ENOSYS)
}
