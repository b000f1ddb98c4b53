package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSharedFileMappingsShareBytes: two MAP_SHARED mappings of one file
// page see each other's stores at once, as Linux's page cache gives
// them (and as process-shared semaphores in /dev/shm need); once every
// mapping is gone the stores are in the file, the cache lets the bytes
// go, and a new mapping reads the file afresh.
func TestSharedFileMappingsShareBytes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	content := append(bytes.Repeat([]byte("A"), 4096), bytes.Repeat([]byte("B"), 4096)...)
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, content, 0o644))
			p, buf := testProcess(t, arch)
			atFdcwd, oRdwr := uint64(0xffffffffffffff9c), uint64(2)
			fd := call(t, p, "openat", atFdcwd, putString(t, p, buf, file), oRdwr)
			require.Less(t, fd, uint64(1024), "openat: %d", int64(fd))
			used := p.Mem.Used()
			rw := uint64(protRead | protWrite)
			mmap := func(size, flags, off uint64) uint64 {
				a := sysMmap(p, [6]uint64{0, size, rw, flags, fd, off})
				require.Less(t, a, uint64(1)<<48, "mmap: %d", int64(a))
				return a
			}
			whole := mmap(8192, mapShared, 0)
			second := mmap(4096, mapShared, 4096)
			again := mmap(8192, mapShared, 0)
			private := mmap(8192, mapPrivate, 0)

			require.True(t, p.writeGuest(whole+4096, []byte("hello")))
			require.Equal(t, []byte("helloB"), guestBytes(t, p, second, 6), "the same page through another mapping")
			require.Equal(t, []byte("helloB"), guestBytes(t, p, again+4096, 6))
			require.True(t, p.writeGuest(second+5, []byte("!")))
			require.Equal(t, []byte("hello!B"), guestBytes(t, p, whole+4096, 7))
			require.True(t, p.writeGuest(again, []byte("x")))
			require.Equal(t, []byte("xA"), guestBytes(t, p, whole, 2))
			require.True(t, p.writeGuest(private+4096, []byte("private")))
			require.Equal(t, []byte("hello!B"), guestBytes(t, p, whole+4096, 7), "a private mapping's store stays its own")

			for _, m := range [][2]uint64{{whole, 8192}, {second, 4096}, {again, 8192}, {private, 8192}} {
				require.Equal(t, uint64(0), call(t, p, "munmap", m[0], m[1]))
			}
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			require.Equal(t, []byte("xA"), got[:2])
			require.Equal(t, []byte("hello!B"), got[4096:4103])
			require.Empty(t, p.sys.pageCache, "no mapping holds the bytes any more")
			require.Equal(t, used, p.Mem.Used(), "every byte given back")

			got[0] = 'y' // changed behind the mappings' back
			require.NoError(t, os.WriteFile(file, got, 0o644))
			fresh := mmap(4096, mapShared, 0)
			require.Equal(t, []byte("yA"), guestBytes(t, p, fresh, 2))
		})
	}
}
