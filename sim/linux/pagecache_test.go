package linux

import (
	"bytes"
	"fmt"
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

// TestMremapSharedFileMapping: a shared file mapping that mremap grows,
// in place or by moving it, stays a shared mapping of the file: stores
// made before and after reach the file (Python's mmap.resize), and a
// moved mapping keeps sharing its bytes with the file's other mappings.
func TestMremapSharedFileMapping(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	for _, arch := range []string{"arm64", "s390x"} {
		for _, move := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/move=%v", arch, move), func(t *testing.T) {
				require.NoError(t, os.WriteFile(file, make([]byte, 4096), 0o644))
				p, buf := testProcess(t, arch)
				atFdcwd, oRdwr := uint64(0xffffffffffffff9c), uint64(2)
				fd := call(t, p, "openat", atFdcwd, putString(t, p, buf, file), oRdwr)
				require.Less(t, fd, uint64(1024), "openat: %d", int64(fd))
				rw := uint64(protRead | protWrite)
				other := sysMmap(p, [6]uint64{0, 4096, rw, mapShared, fd, 0})
				require.Less(t, other, uint64(1)<<48)
				// a free place of 4 pages, for the mapping and its growth
				m := sysMmap(p, [6]uint64{0, 4 * 4096, rw, mapPrivate | mapAnonymous, ^uint64(0), 0})
				require.Equal(t, uint64(0), call(t, p, "munmap", m, 4*4096))
				require.Equal(t, m, sysMmap(p, [6]uint64{m, 4096, rw, mapShared | mapFixed, fd, 0}))
				if move { // something right after it: mremap must move it
					require.Equal(t, m+4096, sysMmap(p, [6]uint64{m + 4096, 4096, rw, mapPrivate | mapAnonymous | mapFixed, ^uint64(0), 0}))
				}
				require.True(t, p.writeGuest(m, []byte("first")))
				require.Equal(t, uint64(0), call(t, p, "ftruncate", fd, 3*4096))
				n := call(t, p, "mremap", m, 4096, 3*4096, 1 /* MREMAP_MAYMOVE */)
				require.Less(t, n, uint64(1)<<48, "mremap: %d", int64(n))
				require.Equal(t, move, n != m, "moved")
				require.True(t, p.writeGuest(n+2*4096, []byte("tail")))
				require.True(t, p.writeGuest(n+5, []byte("after")))
				require.Equal(t, []byte("firstafter"), guestBytes(t, p, other, 10), "still the other mapping's bytes")
				require.Equal(t, uint64(0), call(t, p, "munmap", n, 3*4096))
				got, err := os.ReadFile(file)
				require.NoError(t, err)
				require.Equal(t, []byte("firstafter"), got[:10])
				require.Equal(t, []byte("tail"), got[2*4096:2*4096+4])
			})
		}
	}
}

// TestSharedMappingReadWriteCoherent: read(2) of a file returns what a
// shared mapping of it stored, and the mapping sees what write(2) and
// pwrite(2) store, whatever the descriptors were opened for, as Linux's
// one page cache gives; the stale mapping no longer overwrites the
// writes when it goes.
func TestSharedMappingReadWriteCoherent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, bytes.Repeat([]byte("0123456789"), 1000), 0o644))
			p, buf := testProcess(t, arch)
			atFdcwd := uint64(0xffffffffffffff9c)
			path := putString(t, p, buf, file)
			open := func(flags uint64) uint64 {
				fd := call(t, p, "openat", atFdcwd, path, flags)
				require.Less(t, fd, uint64(1024), "openat: %d", int64(fd))
				return fd
			}
			rdwr, rdonly, wronly := open(2), open(0), open(1)
			m := sysMmap(p, [6]uint64{0, 10000, protRead | protWrite, mapShared, rdwr, 0})
			require.Less(t, m, uint64(1)<<48)

			require.True(t, p.writeGuest(m+4096, []byte("abc")))
			out := buf + 0x1000
			require.Equal(t, uint64(5), call(t, p, "pread64", rdonly, out, 5, 4096))
			require.Equal(t, []byte("abc90"), guestBytes(t, p, out, 5), "read sees the mapping's store")

			data := putString(t, p, buf+0x2000, "XYZ")
			require.Equal(t, uint64(3), call(t, p, "pwrite64", wronly, data, 3, 4099))
			require.Equal(t, []byte("abcXYZ"), guestBytes(t, p, m+4096, 6), "the mapping sees pwrite")
			require.Equal(t, uint64(5000), call(t, p, "lseek", wronly, 5000, 0))
			require.Equal(t, uint64(3), call(t, p, "write", wronly, data, 3))
			require.Equal(t, []byte("XYZ"), guestBytes(t, p, m+5000, 3), "the mapping sees write")

			require.Equal(t, uint64(0), call(t, p, "munmap", m, 10000))
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			require.Equal(t, []byte("abcXYZ"), got[4096:4102])
			require.Equal(t, []byte("XYZ"), got[5000:5003])
		})
	}
}
