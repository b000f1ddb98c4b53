package linux

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRusage pins getrusage and times, their errors, and the children's
// figures a reaping wait adds.
func TestRusage(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			p.Insns = 2_500_000_123                               // 2.5 s of virtual CPU time
			require.True(t, p.writeGuest(buf, make([]byte, 144))) // its page counted
			require.Equal(t, uint64(0), call(t, p, "getrusage", rusageSelf, buf))
			b := guestBytes(t, p, buf, 144)
			require.Equal(t, uint64(2), o.Uint64(b[0:]), "ru_utime.tv_sec")
			require.Equal(t, uint64(500000), o.Uint64(b[8:]), "ru_utime.tv_usec")
			require.Equal(t, uint64(0), o.Uint64(b[16:])|o.Uint64(b[24:]), "ru_stime")
			require.Equal(t, p.Mem.Used()>>10, o.Uint64(b[32:]), "ru_maxrss")
			require.Equal(t, uint64(0), call(t, p, "getrusage", rusageChildren, buf))
			require.Equal(t, make([]byte, 144), guestBytes(t, p, buf, 144), "no child waited for")
			require.Equal(t, errno(EINVAL), call(t, p, "getrusage", 2, buf))
			require.Equal(t, errno(EFAULT), call(t, p, "getrusage", rusageSelf, 0))
			ticks := call(t, p, "times", buf)
			require.Equal(t, p.monoNow()*ticksPerSecond/1e9, ticks)
			require.Equal(t, uint64(250), o.Uint64(guestBytes(t, p, buf, 8)), "tms_utime in ticks")
			require.Equal(t, ticks, call(t, p, "times", 0), "buf may be NULL")
			require.Equal(t, errno(EFAULT), call(t, p, "times", 8))

			c, _ := testProcess(t, arch)
			c.Insns, c.maxRSS, c.childCPU, c.childMaxRSS = 1_000_000, 300, 2_000_000, 900
			ru := p.reaped(c)
			require.Equal(t, uint64(3000), o.Uint64(ru[8:]), "the child's utime: its own and its children's, in µs")
			require.Equal(t, uint64(900), o.Uint64(ru[32:]), "the child's maxrss")
			require.Equal(t, uint64(0), call(t, p, "getrusage", rusageChildren, buf))
			b = guestBytes(t, p, buf, 144)
			require.Equal(t, uint64(3000), o.Uint64(b[8:]))
			require.Equal(t, uint64(900), o.Uint64(b[32:]))
		})
	}
}
