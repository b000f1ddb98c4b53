package linux

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSysproc pins the small calls of sysproc.go as Linux answers them.
func TestSysproc(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			o := p.order()
			require.Equal(t, uint64(0), call(t, p, "mlock", buf, 4096))
			require.Equal(t, errno(EINVAL), call(t, p, "mlock", ^uint64(0), 2))
			require.Equal(t, errno(EINVAL), call(t, p, "mlock2", buf, 4096, 2))
			require.Equal(t, uint64(0), call(t, p, "mlockall", 3))
			require.Equal(t, errno(EINVAL), call(t, p, "mlockall", 0))
			require.Equal(t, errno(EINVAL), call(t, p, "mlockall", 4), "MCL_ONFAULT alone")
			require.Equal(t, uint64(0), call(t, p, "munlockall"))

			require.True(t, p.writeGuest(buf, []byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}))
			require.Equal(t, uint64(0), call(t, p, "getresuid", buf, buf+4, buf+8))
			require.Equal(t, make([]byte, 12), guestBytes(t, p, buf, 12))
			require.Equal(t, errno(EFAULT), call(t, p, "getresgid", buf, 0, buf))

			require.Equal(t, uint64(schedOther), call(t, p, "sched_getscheduler", 0))
			require.Equal(t, uint64(schedOther), call(t, p, "sched_getscheduler", p.pid))
			require.Equal(t, errno(ESRCH), call(t, p, "sched_getscheduler", 7))
			require.Equal(t, errno(EINVAL), call(t, p, "sched_getscheduler", ^uint64(0)))
			require.Equal(t, uint64(0), call(t, p, "sched_getparam", 0, buf))
			require.Equal(t, uint32(0), o.Uint32(guestBytes(t, p, buf, 4)))
			require.Equal(t, errno(EINVAL), call(t, p, "sched_getparam", 0, 0))
			require.Equal(t, uint64(99), call(t, p, "sched_get_priority_max", schedFIFO))
			require.Equal(t, uint64(1), call(t, p, "sched_get_priority_min", schedRR))
			require.Equal(t, uint64(0), call(t, p, "sched_get_priority_max", schedOther))
			require.Equal(t, errno(EINVAL), call(t, p, "sched_get_priority_min", 4))
			require.True(t, p.writeGuest(buf, []byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}))
			require.Equal(t, uint64(0), call(t, p, "sched_rr_get_interval", 0, buf))
			require.Equal(t, make([]byte, 16), guestBytes(t, p, buf, 16), "a zero timespec")
			require.Equal(t, errno(ESRCH), call(t, p, "sched_rr_get_interval", 7, buf))
			require.Equal(t, errno(EINVAL), call(t, p, "sched_rr_get_interval", ^uint64(0), buf))
			require.Equal(t, errno(EFAULT), call(t, p, "sched_rr_get_interval", 0, 0))

			require.Equal(t, uint64(0), call(t, p, "personality", 0xffffffff))
			require.Equal(t, uint64(0), call(t, p, "personality", 0x0040000)) // ADDR_NO_RANDOMIZE
			require.Equal(t, uint64(0x0040000), call(t, p, "personality", 0xffffffff))

			require.Equal(t, uint64(0), call(t, p, "sync"))
			require.Equal(t, uint64(0), call(t, p, "syncfs", 1))
			require.Equal(t, errno(EBADF), call(t, p, "syncfs", 99))

			dir := t.TempDir()
			path := putString(t, p, buf, filepath.Join(dir, "f"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644))
			fd1 := call(t, p, "openat", atFDCWD, path, oRdonly)
			fd2 := call(t, p, "openat", atFDCWD, path, oRdonly)
			require.Less(t, fd2, uint64(1024))
			require.Equal(t, uint64(0), call(t, p, "sync_file_range", fd1, 0, 0, 0))
			require.Equal(t, errno(EINVAL), call(t, p, "sync_file_range", fd1, 0, 0, 8))
			require.Equal(t, uint64(0), call(t, p, "readahead", fd1, 0, 100))
			require.Equal(t, errno(EINVAL), call(t, p, "readahead", 1, 0, 100), "not a regular file")
			require.Equal(t, uint64(0), call(t, p, "flock", fd1, lockEX))
			require.Equal(t, errno(EAGAIN), call(t, p, "flock", fd2, lockSH|lockNB), "held through the other open file")
			require.Equal(t, uint64(0), call(t, p, "flock", fd1, lockUN))
			require.Equal(t, uint64(0), call(t, p, "flock", fd2, lockSH|lockNB))
			require.Equal(t, errno(EINVAL), call(t, p, "flock", fd2, 0))

			require.Equal(t, errno(EINVAL), call(t, p, "close_range", fd2, fd1))
			require.Equal(t, errno(EINVAL), call(t, p, "close_range", 0, 10, 1))
			require.Equal(t, uint64(0), call(t, p, "close_range", fd1, fd1, 4))
			require.True(t, p.fds[fd1].cloexec)
			require.Equal(t, uint64(0), call(t, p, "close_range", fd1, ^uint64(0)>>32))
			_, e := p.file(fd1)
			require.Equal(t, errno(EBADF), e)
			_, e = p.file(fd2)
			require.Equal(t, errno(EBADF), e)
		})
	}
}
