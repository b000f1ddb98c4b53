package linux

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEpoll pins what programs/threads/epoll (against qemu) does not
// reach: edge-triggered and one-shot reports, nested instances, loops,
// and an item leaving with its file.
func TestEpoll(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			ev := buf + 0x100
			setEvent := func(events uint32, data uint64) uint64 {
				b := make([]byte, 16)
				o.PutUint32(b, events)
				o.PutUint64(b[8:], data)
				require.True(t, p.writeGuest(ev, b))
				return ev
			}
			wait := func(ep uint64) []uint64 { // the data of the events reported
				n := call(t, p, "epoll_pwait", ep, buf+0x200, 8, 0, 0, 8)
				require.Less(t, int64(n), int64(9), "epoll_pwait: %d", int64(n))
				var out []uint64
				for i := uint64(0); i < n; i++ {
					out = append(out, o.Uint64(guestBytes(t, p, buf+0x200+16*i+8, 8)))
				}
				return out
			}
			require.Equal(t, uint64(0), call(t, p, "pipe2", buf, 0))
			r, w := uint64(o.Uint32(guestBytes(t, p, buf, 4))), uint64(o.Uint32(guestBytes(t, p, buf+4, 4)))
			ep := call(t, p, "epoll_create1", 0)
			require.Equal(t, uint64(0), call(t, p, "epoll_ctl", ep, epollCtlAdd, r, setEvent(pollin|epollET, 1)))
			require.Equal(t, uint64(0), call(t, p, "epoll_ctl", ep, epollCtlAdd, w, setEvent(pollout|epollOneshot, 2)))
			require.Equal(t, []uint64{2}, wait(ep), "writable, once")
			require.Empty(t, wait(ep), "one-shot: disabled after its report")
			msg := putString(t, p, buf+0x300, "ab")
			require.Equal(t, uint64(1), call(t, p, "write", w, msg, 1))
			require.Equal(t, []uint64{1}, wait(ep))
			require.Empty(t, wait(ep), "edge-triggered: no new bytes, no report")
			require.Equal(t, uint64(1), call(t, p, "write", w, msg, 1))
			require.Equal(t, []uint64{1}, wait(ep), "new bytes: reported again")
			require.Equal(t, uint64(0), call(t, p, "epoll_ctl", ep, epollCtlMod, w, setEvent(pollout, 2)))
			require.Equal(t, []uint64{2}, wait(ep), "MOD re-arms the one-shot item")

			outer := call(t, p, "epoll_create1", 0)
			require.Equal(t, uint64(0), call(t, p, "epoll_ctl", outer, epollCtlAdd, ep, setEvent(pollin, 9)))
			require.Equal(t, []uint64{9}, wait(outer), "the inner instance has a ready item")
			require.Equal(t, errno(ELOOP), call(t, p, "epoll_ctl", ep, epollCtlAdd, outer, setEvent(pollin, 0)))
			require.Equal(t, errno(EINVAL), call(t, p, "epoll_ctl", ep, epollCtlAdd, ep, setEvent(pollin, 0)))
			require.Equal(t, errno(EINVAL), call(t, p, "epoll_ctl", r, epollCtlAdd, w, setEvent(pollin, 0)), "not an epoll")
			require.Equal(t, errno(EINVAL), call(t, p, "epoll_pwait", ep, buf, 0, 0, 0, 8))
			require.Equal(t, errno(EINVAL), call(t, p, "epoll_create1", 1))

			require.Equal(t, uint64(0), call(t, p, "close", w))
			require.Equal(t, []uint64{1}, wait(ep), "hang-up: the read end")
			require.Len(t, p.fds[ep].f.ep.items, 1, "the write end's item went with it")
			require.Equal(t, uint64(0), call(t, p, "close", r))
			require.Empty(t, wait(ep), "both ends gone: nothing left to report")
			require.Empty(t, p.fds[ep].f.ep.items, "items go with their files")
		})
	}
}

// FuzzEpollCalls drives epoll_create1, epoll_ctl (its operation, target
// and event from the input), epoll_pwait, eventfd2, signalfd4, signals
// blocked and sent, reads and writes of eventfds, signalfds and pipes,
// and close, in the order the input says: simrun answers with an errno
// or a count, never a panic or a hang.
func FuzzEpollCalls(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x11, 3, 1, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0x12, 3, 0x80, 0, 0, 0, 0, 0x80, 3, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, buf := testProcess(t, []string{"arm64", "s390x"}[len(data)%2])
		for i := 0; i+9 <= len(data) && i < 9*64 && !p.Exited(); i += 9 {
			op, arg := data[i], binary.LittleEndian.Uint64(data[i+1:])
			fd := 3 + arg%6
			var ev [16]byte
			p.order().PutUint32(ev[:], uint32(arg>>16))
			p.order().PutUint64(ev[8:], arg>>8)
			p.writeGuest(buf+0x400, ev[:])
			switch op % 9 {
			case 0:
				call(t, p, "epoll_create1", arg>>8&(oCloexec|1))
			case 1:
				call(t, p, "eventfd2", arg>>32, arg>>8&(oNonblock|oCloexec|1|2))
			case 2:
				call(t, p, "epoll_ctl", fd, arg>>4%5, 3+arg>>8%6, arg>>12&1*(buf+0x400))
			case 3:
				call(t, p, "epoll_pwait", fd, buf+0x800, arg>>8%10, 0, 0, 8)
			case 4:
				// A blocking read may wait: the lone thread's wait is a
				// deadlock, reported, never a hang.
				dispatch(t, p, "read", fd, buf+0x900, arg>>8%16)
			case 5:
				p.writeGuest(buf+0x900, ev[8:])
				dispatch(t, p, "write", fd, buf+0x900, arg>>8%16)
			case 6:
				if arg&1 == 0 {
					call(t, p, "close", fd)
				} else {
					call(t, p, "pipe2", buf+0xa00, arg>>8&oNonblock)
				}
			case 7:
				p.writeGuest(buf+0xb00, ev[8:])
				call(t, p, "rt_sigprocmask", 0, buf+0xb00, 0, 8) // SIG_BLOCK
				call(t, p, "signalfd4", uint64(int64(int8(arg>>4))), buf+0xb00, 8-arg>>12%2, arg>>16&(oNonblock|oCloexec))
			case 8:
				call(t, p, "tgkill", p.pid, p.pid, arg>>8%65)
			}
		}
	})
}
