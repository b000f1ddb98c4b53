package linux

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// putFlockArgs writes a struct flock for p's arch at addr.
func putFlockArgs(t testing.TB, p *Process, addr uint64, typ, whence uint16, start, n int64, pid int32) uint64 {
	t.Helper()
	o := p.order()
	b := make([]byte, 32)
	o.PutUint16(b, typ)
	o.PutUint16(b[2:], whence)
	o.PutUint64(b[8:], uint64(start))
	o.PutUint64(b[16:], uint64(n))
	o.PutUint32(b[24:], uint32(pid))
	require.True(t, p.writeGuest(addr, b))
	return addr
}

// TestRecordLockChecks: fcntl's lock calls check struct flock as Linux
// does, and a process's own locks split and merge: unlocking the middle
// of a range leaves two, F_GETLK from an OFD then sees the first.
func TestRecordLockChecks(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, scratch := testProcess(t, arch)
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, make([]byte, 100), 0o600))
			rw := call(t, p, "openat", atFDCWD, putString(t, p, scratch, path), oRdwr)
			ro := call(t, p, "openat", atFDCWD, putString(t, p, scratch, path), oRdonly)
			require.Less(t, rw|ro, uint64(1024))
			fl := scratch + 0x100
			lock := func(fd, cmd uint64, typ uint16, whence uint16, start, n int64, pid int32) uint64 {
				return call(t, p, "fcntl", fd, cmd, putFlockArgs(t, p, fl, typ, whence, start, n, pid))
			}
			require.Equal(t, errno(EINVAL), lock(rw, fSetlk, 3, 0, 0, 0, 0), "bad l_type")
			require.Equal(t, errno(EINVAL), lock(rw, fSetlk, fWrlck, 3, 0, 0, 0), "bad l_whence")
			require.Equal(t, errno(EINVAL), lock(rw, fSetlk, fWrlck, 0, -1, 0, 0), "negative start")
			require.Equal(t, errno(EINVAL), lock(rw, fSetlk, fWrlck, 0, 5, -6, 0), "negative start by a negative length")
			require.Equal(t, errno(EOVERFLOW), lock(rw, fSetlk, fWrlck, 0, math.MaxInt64, 2, 0))
			require.Equal(t, errno(EBADF), lock(ro, fSetlk, fWrlck, 0, 0, 0, 0), "write lock, read-only descriptor")
			require.Equal(t, errno(EINVAL), lock(rw, fGetlk, fUnlck, 0, 0, 0, 0))
			require.Equal(t, errno(EINVAL), lock(rw, fOfdSetlk, fRdlck, 0, 0, 0, 1), "OFD lock with a pid")
			require.Equal(t, errno(EFAULT), call(t, p, "fcntl", rw, fSetlk, 8))

			// 10-29 locked, 15-19 unlocked: two locks, 10-14 and 20-29
			// (SEEK_END: the file is 100 bytes).
			require.Zero(t, lock(rw, fSetlk, fWrlck, 0, 10, 20, 0))
			require.Zero(t, lock(rw, fSetlk, fUnlck, 2, -85, 5, 0))
			ls := p.sys.locks[func() lockKey { f, _ := p.file(rw); k, _ := recordLockKey(f); return k }()]
			require.Len(t, ls, 2)
			require.Equal(t, [4]uint64{10, 15, 20, 30}, [4]uint64{ls[0].start, ls[0].end, ls[1].start, ls[1].end})
			// The OFD of ro conflicts with the process's locks.
			require.Zero(t, lock(ro, fOfdGetlk, fRdlck, 0, 0, 0, 0))
			b := guestBytes(t, p, fl, 32)
			o := p.order()
			require.Equal(t, uint16(fWrlck), o.Uint16(b))
			require.Equal(t, []uint64{10, 5, guestPID}, []uint64{o.Uint64(b[8:]), o.Uint64(b[16:]), uint64(o.Uint32(b[24:]))})
			require.Equal(t, errno(EAGAIN), lock(ro, fOfdSetlk, fRdlck, 0, 12, 1, 0))
			require.Zero(t, lock(ro, fOfdSetlk, fRdlck, 0, 15, 5, 0), "the hole is free")
			// Merging: 15-19 written by the process joins both sides.
			require.Zero(t, lock(ro, fOfdSetlk, fUnlck, 0, 0, 0, 0))
			require.Zero(t, lock(rw, fSetlk, fWrlck, 0, 15, 5, 0))
			require.Len(t, p.sys.locks, 1)
			for _, l := range p.sys.locks {
				require.Len(t, l, 1)
				require.Equal(t, [2]uint64{10, 30}, [2]uint64{l[0].start, l[0].end})
			}
			// Any close of the file drops the process's locks.
			require.Zero(t, call(t, p, "close", ro))
			require.Empty(t, p.sys.locks)
		})
	}
}

// FuzzRecordLocks sets and clears locks of three owners (two processes'
// and an open file description's) over a small range in the order the
// input says: no two owners' conflicting locks ever overlap, and an
// owner's own locks never overlap each other.
func FuzzRecordLocks(f *testing.F) {
	f.Add([]byte{0, 1, 2, 5, 1, 0, 3, 4, 2, 2, 0, 9})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 1, 1, 2, 1, 0, 7, 0, 2, 1, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &System{}
		a, b := &Process{}, &Process{}
		ofd := &openFile{}
		owners := []*recordLock{{proc: a}, {proc: b}, {ofd: ofd}}
		key := lockKey{1, 2}
		for i := 0; i+4 <= len(data) && i < 4*200; i += 4 {
			o := owners[int(data[i])%3]
			typ := data[i+1] % 3
			start := uint64(data[i+2] % 32)
			end := start + uint64(data[i+3]%16) + 1
			if data[i+3] >= 240 {
				end = math.MaxUint64
			}
			want := &recordLock{proc: o.proc, ofd: o.ofd, write: typ == fWrlck, start: start, end: end}
			if typ != fUnlck && s.conflict(key, want) != nil {
				continue
			}
			s.setLock(key, want, typ == fUnlck)
			ls := s.locks[key]
			for x := range ls {
				for y := range ls {
					if x == y || ls[x].end <= ls[y].start || ls[y].end <= ls[x].start {
						continue
					}
					require.False(t, ls[x].sameOwner(ls[y]), "an owner's locks overlap: %+v %+v", ls[x], ls[y])
					require.False(t, ls[x].write || ls[y].write, "conflicting locks overlap: %+v %+v", ls[x], ls[y])
				}
			}
		}
	})
}
