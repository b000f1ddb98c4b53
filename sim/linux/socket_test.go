package linux

import (
	"encoding/binary"
	"testing"
)

// FuzzSocketCalls drives the socket calls with arbitrary arguments on
// descriptors 3 to 8 (socketpairs, named sockets, pipes, closed ones)
// and arbitrary guest bytes for addresses and message headers: every
// call answers with a result or an errno, never a panic or a hang (a
// lone thread's blocking call is reported as a deadlock).
func FuzzSocketCalls(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 5, 0, 0, 0, 0, 0, 0, 0, 7, 0x41, 0, 0, 0, 0, 0, 0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 0, 9, 3, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, buf := testProcess(t, []string{"arm64", "s390x"}[len(data)%2])
		dir := t.TempDir()
		p.cwd = dir
		for i := 0; i+9 <= len(data) && i < 9*64 && !p.Exited(); i += 9 {
			op, arg := data[i], binary.LittleEndian.Uint64(data[i+1:])
			fd := 3 + arg%6
			// Scratch guest bytes: an address, a msghdr, an iovec.
			var b [64]byte
			for j := range b {
				b[j] = byte(arg >> (j % 8 * 8))
			}
			p.writeGuest(buf+0x400, b[:])
			sa := make([]byte, 16)
			p.order().PutUint16(sa, uint16(1+arg>>60%2))
			copy(sa[2:], []byte{byte(arg >> 8 % 3 * 'a'), 's', 0})
			p.writeGuest(buf+0x500, sa)
			hdr := make([]byte, msghdrSize)
			p.order().PutUint64(hdr[16:], buf+0x600)
			p.order().PutUint64(hdr[24:], arg>>8%3)
			p.order().PutUint64(hdr[40:], arg>>12%2*8)
			p.writeGuest(buf+0x580, hdr)
			iov := make([]byte, 32)
			p.order().PutUint64(iov[0:], buf+0x700)
			p.order().PutUint64(iov[8:], arg>>16%70000)
			p.order().PutUint64(iov[16:], buf+0x400)
			p.order().PutUint64(iov[24:], 8)
			p.writeGuest(buf+0x600, iov)
			p.Mem.Store(buf+0x800, 4, arg>>20%40, p.order())
			flags := arg >> 24 & (msgPeek | msgTrunc | msgDontwait | msgWaitall | msgNosignal | msgOOB)
			switch op % 12 {
			case 0:
				call(t, p, "socketpair", 1+arg>>8%3, arg>>12%7|arg>>16&(oNonblock|oCloexec), arg>>20%2, buf+0x900)
			case 1:
				call(t, p, "socket", 1+arg>>8%2, arg>>12%7|arg>>16&(oNonblock|oCloexec), 0)
			case 2:
				call(t, p, "bind", fd, buf+0x500, arg>>8%20)
			case 3:
				call(t, p, "listen", fd, arg>>8)
			case 4:
				dispatch(t, p, "connect", fd, buf+0x500, arg>>8%20)
			case 5:
				dispatch(t, p, "accept4", fd, arg>>8%2*(buf+0x400), buf+0x800, arg>>12&(oNonblock|oCloexec|1))
			case 6:
				dispatch(t, p, "sendto", fd, buf+0x700, arg>>8%70000, flags, arg>>30%2*(buf+0x500), 16)
			case 7:
				dispatch(t, p, "recvfrom", fd, buf+0x700, arg>>8%70000, flags, arg>>30%2*(buf+0x400), buf+0x800)
			case 8:
				dispatch(t, p, []string{"sendmsg", "recvmsg"}[arg>>8%2], fd, buf+0x580, flags)
			case 9:
				call(t, p, "shutdown", fd, arg>>8%4)
			case 10:
				call(t, p, []string{"getsockopt", "setsockopt"}[arg>>8%2], fd, arg>>12%3, arg>>16%40, buf+0x400, buf+0x800)
				call(t, p, []string{"getsockname", "getpeername"}[arg>>9%2], fd, buf+0x400, buf+0x800)
			case 11:
				if arg&1 == 0 {
					call(t, p, "close", fd)
				} else {
					dispatch(t, p, []string{"read", "write", "readv", "writev"}[arg>>8%4], fd, buf+0x600, 2)
				}
			}
		}
	})
}
