package linux

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimerfd: timerfd_create's checks, settime/gettime, the expiry
// count read returns (EAGAIN with TFD_NONBLOCK and none), a blocking read
// that moves the idle clock to the expiry, a periodic timer's count,
// TFD_TIMER_ABSTIME in the past, poll readiness and the errors Linux gives.
func TestTimerfd(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			require.Equal(t, errno(EINVAL), call(t, p, "timerfd_create", 2, 0), "CPU clock")
			require.Equal(t, errno(EINVAL), call(t, p, "timerfd_create", clockMonotonic, 1), "bad flags")
			fd := call(t, p, "timerfd_create", clockMonotonic, oNonblock|oCloexec)
			require.Less(t, fd, p.fdLimit())
			require.Equal(t, errno(EINVAL), call(t, p, "timerfd_gettime", 1, buf), "not a timerfd")
			require.Equal(t, errno(EBADF), call(t, p, "timerfd_gettime", 99, buf))
			require.Equal(t, uint64(0), call(t, p, "timerfd_gettime", fd, buf))
			require.Equal(t, make([]byte, 32), mustRead(t, p, buf, 32), "disarmed")
			require.Equal(t, errno(EAGAIN), call(t, p, "read", fd, buf, 8))

			spec := putTimespecs(t, p, buf+0x100, 0, 2_000_000) // 2 ms one-shot
			require.Equal(t, errno(EINVAL), call(t, p, "timerfd_settime", fd, 4, spec, 0), "bad flags")
			require.Equal(t, errno(EFAULT), call(t, p, "timerfd_settime", fd, 0, 8, 0))
			bad := buf + 0x140
			require.True(t, p.writeGuest(bad, appendU64(o, appendU64(o, appendU64(o, appendU64(o, nil, 0), 0), 0), 1e9)))
			require.Equal(t, errno(EINVAL), call(t, p, "timerfd_settime", fd, 0, bad, 0), "nsec out of range")
			require.Equal(t, uint64(0), call(t, p, "timerfd_settime", fd, 0, spec, 0))
			require.Equal(t, uint64(0), call(t, p, "timerfd_gettime", fd, buf))
			left := u64At(t, p, buf+16)*1e9 + u64At(t, p, buf+24)
			require.True(t, left > 1_900_000 && left <= 2_000_000, "left %d", left)
			require.Equal(t, errno(EAGAIN), call(t, p, "read", fd, buf, 8))
			require.Equal(t, errno(EINVAL), call(t, p, "read", fd, buf, 4), "short buffer")
			require.Equal(t, errno(EINVAL), call(t, p, "write", fd, buf, 8))

			// Blocking: the lone thread waits, the idle clock jumps to
			// the expiry and the read, run again, returns 1.
			require.Equal(t, uint64(0), call(t, p, "fcntl", fd, 4 /* F_SETFL */, 0))
			start := p.monoNow()
			dispatch(t, p, "read", fd, buf, 8)
			require.False(t, p.Exited(), "no deadlock: the expiry wakes it")
			require.Equal(t, uint64(8), dispatch(t, p, "read", fd, buf, 8))
			require.Equal(t, uint64(1), o.Uint64(mustRead(t, p, buf, 8)))
			require.GreaterOrEqual(t, p.monoNow()-start, uint64(1_900_000))

			// Periodic, 1 ms: after 5.5 ms of instructions the count is 5.
			spec = putTimespecs(t, p, buf+0x100, 1_000_000, 1_000_000)
			require.Equal(t, uint64(0), call(t, p, "timerfd_settime", fd, 0, spec, 0))
			pfd := buf + 0x200
			pollIn := func() uint64 {
				b := append(appendU32(p, nil, uint32(fd)), 0, 0, 0, 0)
				o.PutUint16(b[4:], pollin)
				require.True(t, p.writeGuest(pfd, b))
				return call(t, p, "ppoll", pfd, 1, putTimespecs(t, p, buf+0x300, 0), 0, 8)
			}
			require.Equal(t, uint64(0), pollIn(), "not ready before the first expiry")
			p.clockOff += 5_500_000
			require.Equal(t, uint64(1), pollIn())
			require.Equal(t, uint64(8), call(t, p, "read", fd, buf, 8))
			require.Equal(t, uint64(5), o.Uint64(mustRead(t, p, buf, 8)))

			// Absolute, in the past: expired at once; the old setting
			// comes back.
			abs := putTimespecs(t, p, buf+0x100, 0, 1)
			require.Equal(t, uint64(0), call(t, p, "timerfd_settime", fd, tfdTimerAbstime, abs, buf+0x400))
			require.Equal(t, uint64(1_000_000), u64At(t, p, buf+0x408), "old interval")
			require.Equal(t, uint64(8), call(t, p, "read", fd, buf, 8))
			require.Equal(t, uint64(1), o.Uint64(mustRead(t, p, buf, 8)))
			require.Equal(t, uint64(0), call(t, p, "close", fd))
			require.Empty(t, p.liveTimerFDs())
		})
	}
}

func mustRead(t *testing.T, p *Process, addr, n uint64) []byte {
	t.Helper()
	b, ok := p.readGuest(addr, n)
	require.True(t, ok)
	return b
}

// FuzzTimerfdCalls drives timerfd_create, timerfd_settime (its
// itimerspec and flags from the input), timerfd_gettime, read, ppoll,
// close and retired instructions in the order the input says: simrun
// answers with an errno or a count, never a panic or a hang.
func FuzzTimerfdCalls(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x10, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x41, 8, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 5, 0x40, 0x42, 0xf, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, buf := testProcess(t, []string{"arm64", "s390x"}[len(data)%2])
		for i := 0; i+9 <= len(data) && i < 9*64 && !p.Exited(); i += 9 {
			op, arg := data[i], binary.LittleEndian.Uint64(data[i+1:])
			var b [32]byte
			binary.LittleEndian.PutUint64(b[:], arg>>40)
			binary.LittleEndian.PutUint64(b[8:], arg%1_100_000_000)
			binary.LittleEndian.PutUint64(b[16:], arg>>32%4)
			binary.LittleEndian.PutUint64(b[24:], arg>>8%3_000_000)
			p.writeGuest(buf+0x400, b[:])
			fd := 3 + arg%3
			switch op % 6 {
			case 0:
				call(t, p, "timerfd_create", arg%10, arg>>8&(oNonblock|oCloexec|1))
			case 1:
				call(t, p, "timerfd_settime", fd, arg>>16%4, buf+0x400, arg>>24&1*(buf+0x900))
			case 2:
				call(t, p, "timerfd_gettime", fd, buf+0x900)
			case 3:
				// A blocking read may wait: the idle clock then jumps to
				// the expiry, or the lone thread's wait is a deadlock.
				dispatch(t, p, "read", fd, buf+0x900, arg%16)
			case 4:
				pfd := append(appendU32(p, nil, uint32(fd)), 0, 0, 0, 0)
				p.order().PutUint16(pfd[4:], pollin)
				p.writeGuest(buf+0xa00, pfd)
				call(t, p, "ppoll", buf+0xa00, 1, putTimespecs(t, p, buf+0xb00, 0), 0, 8)
			case 5:
				if arg&1 == 0 {
					call(t, p, "close", fd)
				} else {
					runInsns(p, arg%100000)
				}
			}
		}
	})
}
