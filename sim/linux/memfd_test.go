package linux

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemfdCreate: memfd_create gives a read-write anonymous file whose
// seals work as Linux's (F_ADD_SEALS only with MFD_ALLOW_SEALING, a
// sealed size refuses ftruncate with EPERM); bad flags and too long a
// name give EINVAL.
func TestMemfdCreate(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			name := putString(t, p, buf, "buf")
			require.Equal(t, errno(EINVAL), call(t, p, "memfd_create", name, 4 /* MFD_HUGETLB */))
			require.Equal(t, errno(EINVAL), call(t, p, "memfd_create", putString(t, p, buf+0x100, strings.Repeat("x", 250)), 0))

			fd := call(t, p, "memfd_create", name, mfdCloexec|mfdAllowSealing)
			require.Less(t, fd, uint64(1024), "memfd_create: %d", int64(fd))
			require.Equal(t, "/memfd:buf (deleted)", p.fds[fd].f.path)
			require.True(t, p.fds[fd].cloexec)
			data := putString(t, p, buf+0x1000, "hello")
			require.Equal(t, uint64(5), call(t, p, "write", fd, data, 5))
			out := buf + 0x2000
			require.Equal(t, uint64(5), call(t, p, "pread64", fd, out, 16, 0))
			require.Equal(t, []byte("hello"), guestBytes(t, p, out, 5))

			const sealShrink, sealGrow = 2, 4
			require.Equal(t, uint64(0), call(t, p, "fcntl", fd, fGetSeals))
			require.Equal(t, uint64(0), call(t, p, "fcntl", fd, fAddSeals, sealShrink|sealGrow))
			require.Equal(t, uint64(sealShrink|sealGrow), call(t, p, "fcntl", fd, fGetSeals))
			require.Equal(t, errno(EPERM), call(t, p, "ftruncate", fd, 1))

			plain := call(t, p, "memfd_create", name, 0)
			require.Less(t, plain, uint64(1024))
			require.False(t, p.fds[plain].cloexec)
			require.Equal(t, errno(EPERM), call(t, p, "fcntl", plain, fAddSeals, sealGrow), "sealing not allowed")
			require.Equal(t, uint64(1), call(t, p, "fcntl", plain, fGetSeals), "F_SEAL_SEAL")
		})
	}
}

// TestOpenTmpfile: O_TMPFILE makes an unnamed file in the directory,
// written and read like any other, with the guest's mode; without write
// access it is EINVAL.
func TestOpenTmpfile(t *testing.T) {
	dir := t.TempDir()
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			path := putString(t, p, buf, dir)
			tmpfile := oTmpfile | p.Arch.OpenFlags.Directory
			atFdcwd := uint64(0xffffffffffffff9c)
			require.Equal(t, errno(EINVAL), call(t, p, "openat", atFdcwd, path, tmpfile|oRdonly))
			fd := call(t, p, "openat", atFdcwd, path, tmpfile|oRdwr, 0o640)
			if fd == errno(ENOTSUP) {
				t.Skip("the host file system has no O_TMPFILE")
			}
			require.Less(t, fd, uint64(1024), "openat: %d", int64(fd))
			data := putString(t, p, buf+0x1000, "tmp")
			require.Equal(t, uint64(3), call(t, p, "pwrite64", fd, data, 3, 0))
			require.Equal(t, uint64(3), call(t, p, "pread64", fd, buf+0x2000, 8, 0))
			require.Equal(t, []byte("tmp"), guestBytes(t, p, buf+0x2000, 3))
			st, e := hostStatFile(p.fds[fd].f.host)
			require.Zero(t, e)
			require.Equal(t, uint64(0o100640), st.Mode, "mode 0640 (the umask 022 takes nothing)")
			require.Equal(t, uint64(0), st.Nlink)
		})
	}
}
