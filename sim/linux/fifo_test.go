package linux

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFIFO opens a FIFO made by mknodat without blocking, as fifo(7)
// says: a writer without a reader gets ENXIO, the bytes written reach the
// reader, EOF comes once every writer closed, and the pipe is forgotten
// when the last end closes. Device nodes give EPERM. The blocking opens
// are in the Debian table's bash-fifo case, against qemu.
func TestFIFO(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			path := putString(t, p, buf, filepath.Join(t.TempDir(), "f"))
			require.Equal(t, uint64(0), call(t, p, "mknodat", atFDCWD, path, sIFIFO|0o644, 0))
			require.Equal(t, errno(EEXIST), call(t, p, "mknodat", atFDCWD, path, sIFIFO|0o644, 0))
			require.Equal(t, errno(EPERM), call(t, p, "mknodat", atFDCWD, path, sIFCHR|0o644, 1<<8|3))
			require.Equal(t, errno(EINVAL), call(t, p, "mknodat", atFDCWD, path, sIFMT, 0))
			open := func(flags uint64) uint64 { return call(t, p, "openat", atFDCWD, path, flags) }
			require.Equal(t, errno(ENXIO), open(oWronly|oNonblock), "no reader")
			r := open(oRdonly | oNonblock)
			require.Less(t, int64(r), int64(1024), "reader: %d", int64(r))
			w := open(oWronly | oNonblock)
			require.Less(t, int64(w), int64(1024), "writer: %d", int64(w))
			msg := putString(t, p, buf+0x1000, "through the fifo")
			require.Equal(t, uint64(16), call(t, p, "write", w, msg, 16))
			require.Equal(t, uint64(16), call(t, p, "read", r, buf+0x2000, 100))
			require.Equal(t, "through the fifo", string(guestBytes(t, p, buf+0x2000, 16)))
			require.Equal(t, errno(EAGAIN), call(t, p, "read", r, buf+0x2000, 100), "empty, a writer open")
			require.Equal(t, uint64(0), call(t, p, "close", w))
			require.Equal(t, uint64(0), call(t, p, "read", r, buf+0x2000, 100), "EOF: no writer")
			require.Len(t, p.sys.fifos, 1)
			require.Equal(t, uint64(0), call(t, p, "close", r))
			require.Empty(t, p.sys.fifos, "the last close forgets the pipe")
			rw := open(oRdwr)
			require.Less(t, int64(rw), int64(1024), "O_RDWR never waits: %d", int64(rw))
			require.Equal(t, uint64(3), call(t, p, "write", rw, msg, 3))
			require.Equal(t, uint64(3), call(t, p, "read", rw, buf+0x2000, 100))
			require.Equal(t, uint64(0), call(t, p, "close", rw))
			require.Empty(t, p.sys.fifos)
		})
	}
}

// TestFileTypesAreTheHosts: the guest's file-type values (fs.go) are the
// host's, which guestStat and mknodat pass through unchanged.
func TestFileTypesAreTheHosts(t *testing.T) {
	require.Equal(t,
		[]uint64{syscall.S_IFMT, syscall.S_IFSOCK, syscall.S_IFLNK, syscall.S_IFREG, syscall.S_IFBLK, syscall.S_IFDIR, syscall.S_IFCHR, syscall.S_IFIFO},
		[]uint64{sIFMT, sIFSOCK, sIFLNK, sIFREG, sIFBLK, sIFDIR, sIFCHR, sIFIFO})
}
