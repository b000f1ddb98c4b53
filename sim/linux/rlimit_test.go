package linux

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRlimit pins prlimit64/setrlimit: the defaults, a lowered NOFILE
// enforced on new descriptors and dup2, raising as root, Linux's errors,
// and inheritance by a forked copy.
func TestRlimit(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			get := func(res uint64) (uint64, uint64) {
				require.Equal(t, uint64(0), call(t, p, "prlimit64", 0, res, 0, buf))
				b := guestBytes(t, p, buf, 16)
				return o.Uint64(b), o.Uint64(b[8:])
			}
			set := func(res, cur, max uint64) uint64 {
				b := appendU64(o, appendU64(o, nil, cur), max)
				require.True(t, p.writeGuest(buf+0x100, b))
				return call(t, p, "setrlimit", res, buf+0x100)
			}
			cur, max := get(rlimitNofile)
			require.Equal(t, [2]uint64{1024, 4096}, [2]uint64{cur, max})
			cur, _ = get(rlimitStack)
			require.Equal(t, uint64(stackSize), cur)

			require.Equal(t, uint64(0), set(rlimitNofile, 5, 4096))
			fd := call(t, p, "dup", 1)
			require.Equal(t, uint64(3), fd)
			require.Equal(t, uint64(4), call(t, p, "dup", 1))
			require.Equal(t, errno(EMFILE), call(t, p, "dup", 1), "NOFILE 5: descriptors 0-4")
			require.Equal(t, errno(EBADF), call(t, p, "dup3", 1, 5, 0))
			require.Equal(t, uint64(0), set(rlimitNofile, 100000, 100000), "root raises the hard limit")
			require.Equal(t, uint64(5), call(t, p, "dup3", 1, 5, 0))
			require.Equal(t, errno(EPERM), set(rlimitNofile, 10, nrOpen+1), "past nr_open")
			require.Equal(t, errno(EINVAL), set(rlimitCPU, 10, 5), "soft above hard")
			require.Equal(t, errno(EINVAL), call(t, p, "prlimit64", 0, rlimitCount, 0, buf))
			require.Equal(t, errno(ESRCH), call(t, p, "prlimit64", 4242, rlimitNofile, 0, buf))
			require.Equal(t, uint64(0), set(rlimitCPU, 7, 9))
			cur, max = get(rlimitCPU)
			require.Equal(t, [2]uint64{7, 9}, [2]uint64{cur, max}, "kept and reported")

			c := *p // a fork copies the process struct
			cur, max, _ = c.rlimit(rlimitCPU)
			require.Equal(t, [2]uint64{7, 9}, [2]uint64{cur, max}, "inherited")
		})
	}
}

const rlimitCPU = 0
