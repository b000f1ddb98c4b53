package linux

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRobustListWalk drives the walk over hand-built lists in guest
// memory: owned words get FUTEX_OWNER_DIED (keeping FUTEX_WAITERS),
// words of other owners are left alone, a pending entry counts once, a
// cyclic list stops at Linux's limit and a misaligned word ends the walk.
func TestRobustListWalk(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			p.Cfg.RobustFutexes = true
			o := p.order()
			tid := p.visibleTid(p.cur)
			head, e1, e2, e3 := buf, buf+0x100, buf+0x200, buf+0x300
			const off = 0x20 // entry + off = the lock word
			put := func(addr, v uint64, size int) { require.True(t, p.Mem.Store(addr, size, v, o)) }
			word := func(e uint64) uint64 { v, ok := p.Mem.Load(e+off, 4, o); require.True(t, ok); return v }
			require.Equal(t, uint64(0), call(t, p, "set_robust_list", head, robustHeadSize))
			require.Equal(t, errno(EINVAL), call(t, p, "set_robust_list", head, 16))

			// head -> e1 -> e2 -> head, e3 pending.
			put(head, e1, 8)
			put(head+8, off, 8)
			put(head+16, e3, 8)
			put(e1, e2, 8)
			put(e2, head, 8)
			put(e1+off, tid|futexWaiters, 4)
			put(e2+off, tid+1, 4) // another thread's
			put(e3+off, tid, 4)
			require.Equal(t, uint64(0), call(t, p, "get_robust_list", 0, buf+0x400, buf+0x408))
			got, _ := p.Mem.Load(buf+0x400, 8, o)
			require.Equal(t, head, got)
			p.walkRobustList()
			require.Equal(t, uint64(futexWaiters|futexOwnerDied), word(e1))
			require.Equal(t, tid+1, word(e2))
			require.Equal(t, uint64(futexOwnerDied), word(e3))
			require.Zero(t, p.cur.robustList, "walked once")

			// A cycle that never returns to the head: the walk ends.
			put(e1, e1, 8)
			put(head, e1, 8)
			put(head+16, 0, 8)
			put(e1+off, tid, 4)
			p.cur.robustList = head
			p.walkRobustList()
			require.Equal(t, uint64(futexOwnerDied), word(e1))

			// A misaligned word stops the walk before the next entry.
			put(head, e1, 8)
			put(head+8, off+1, 8)
			put(e1, e2, 8)
			put(e2, head, 8)
			put(e2+off+1, tid, 4)
			p.cur.robustList = head
			p.walkRobustList()
			v, _ := p.Mem.Load(e2+off+1, 4, o)
			require.Equal(t, tid, v)

			p.Cfg.RobustFutexes = false
			require.Equal(t, errno(ENOSYS), call(t, p, "set_robust_list", head, robustHeadSize))
		})
	}
}

// FuzzRobustList walks lists built from random bytes: it ends, and
// changes only lock words the dying thread owned.
func FuzzRobustList(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, buf := testProcess(t, []string{"arm64", "s390x"}[len(data)%2])
		p.Cfg.RobustFutexes = true
		region := make([]byte, 0x1000)
		for i := range region {
			if len(data) > 0 {
				region[i] = data[i%len(data)] ^ byte(i>>4)
			}
		}
		o := p.order()
		// Pointers in the region point into it (or wherever the bytes say).
		for i := 0; i+8 <= len(region); i += 64 {
			o.PutUint64(region[i:], buf+uint64(region[i+1])*16)
		}
		o.PutUint64(region[8:], uint64(int64(int8(region[9])))*4)
		require.True(t, p.writeGuest(buf, region))
		before := append([]byte(nil), region...)
		p.cur.robustList = buf
		p.walkRobustList()
		after, ok := p.readGuest(buf, uint64(len(region)))
		require.True(t, ok)
		tid := p.visibleTid(p.cur)
		for i := 0; i+4 <= len(region); i += 4 {
			b, a := uint64(o.Uint32(before[i:])), uint64(o.Uint32(after[i:]))
			if a != b && b&futexTidMask != tid && b != 0 {
				t.Fatalf("word at +%#x changed %#x -> %#x but was not the thread's", i, b, a)
			}
		}
	})
}
