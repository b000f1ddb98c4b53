package cpu

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type codeSpy struct{ calls [][2]int }

func (c *codeSpy) InvalidateCode(off, n int) { c.calls = append(c.calls, [2]int{off, n}) }

func TestMemoryLoadStore(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x10000, 2*PageSize, PermRW))
	// Little and big endian, within a page and across the boundary.
	for _, a := range []uint64{0x10008, 0x10ffd} {
		require.True(t, m.Store64LE(a, 0x0102030405060708))
		v, ok := m.Load64LE(a)
		require.True(t, ok)
		assert.Equal(t, uint64(0x0102030405060708), v)
		b, ok := m.Load8(a)
		require.True(t, ok)
		assert.Equal(t, uint8(0x08), b)
		v, ok = m.Load64BE(a)
		require.True(t, ok)
		assert.Equal(t, uint64(0x0807060504030201), v)
		require.True(t, m.Store32BE(a, 0xaabbccdd))
		w, _ := m.Load32LE(a)
		assert.Equal(t, uint32(0xddccbbaa), w)
		h, _ := m.Load16BE(a + 2)
		assert.Equal(t, uint16(0xccdd), h)
	}
	// Unmapped and read-only accesses fail with a reason.
	_, ok := m.Load32LE(0x20000)
	assert.False(t, ok)
	assert.Equal(t, MemFault{Addr: 0x20000, Size: 4, Access: AccessRead, Unmapped: true}, m.Fault)
	assert.False(t, m.Store64LE(0x11ffc, 1), "store crossing into an unmapped page")
	v, _ := m.Load32LE(0x11ffc)
	assert.Equal(t, uint32(0), v, "a failed store writes nothing")
	require.NoError(t, m.Protect(0x11000, PageSize, PermR))
	assert.False(t, m.Store8(0x11000, 1))
	assert.False(t, m.Fault.Unmapped)
	assert.Equal(t, AccessWrite, m.Fault.Access)
	_, ok = m.Load8(0x11000)
	assert.True(t, ok)
}

func TestMemoryZeroPagesAndTLB(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x400000, PageSize, PermRW))
	v, ok := m.Load64LE(0x400100) // caches the shared zero page
	require.True(t, ok)
	assert.Zero(t, v)
	require.True(t, m.Store64LE(0x400100, 42))
	v, _ = m.Load64LE(0x400100)
	assert.Equal(t, uint64(42), v, "read cache must follow the page's first write")
	m.Discard(0x400000, PageSize)
	v, _ = m.Load64LE(0x400100)
	assert.Zero(t, v)
	assert.Zero(t, zeroPage[0x100], "the shared zero page stays zero")
}

func TestMemoryCodeInvalidation(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x400000, PageSize, PermRW|PermX))
	p := m.PageAt(0x400000)
	require.True(t, m.Store32LE(0x400010, 1)) // cached for writing
	spy := &codeSpy{}
	m.MarkCode(p, spy, 0x400000)
	require.True(t, m.Store32LE(0x400010, 2))
	assert.False(t, m.Store64LE(0x400ffc, 3)) // crosses into an unmapped page: fails, writes nothing
	assert.Equal(t, [][2]int{{0x10, 4}}, spy.calls)
	m.Unmap(0x400000, PageSize)
	assert.Equal(t, [2]int{0, PageSize}, spy.calls[len(spy.calls)-1])
}

func TestMemoryFindFreeAndRegions(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x10000, 3*PageSize, PermRW))
	require.NoError(t, m.Map(0x14000, PageSize, PermR))
	a, ok := m.FindFree(0x10000, 2*PageSize, 1<<47)
	require.True(t, ok)
	assert.Equal(t, uint64(0x15000), a)
	a, ok = m.FindFree(0x10000, PageSize, 1<<47)
	require.True(t, ok)
	assert.Equal(t, uint64(0x13000), a)
	_, ok = m.FindFree(0x10000, 16*PageSize, 0x18000)
	assert.False(t, ok)
	assert.Equal(t, []Region{{0x10000, 0x13000, PermRW}, {0x14000, 0x15000, PermR}}, m.Regions())
	assert.True(t, m.IsMapped(0x10000, 3*PageSize))
	assert.False(t, m.IsMapped(0x10000, 4*PageSize))
	assert.True(t, m.FreeRange(0x13000, PageSize))
	assert.Error(t, m.Protect(0x12000, 2*PageSize, PermR))
}

func TestMemoryHugeRangesAreCheap(t *testing.T) {
	m := NewMemory()
	start := time.Now()
	require.NoError(t, m.Map(0x7f0000000000, 1<<30, PermRW)) // 1 GiB
	m.Unmap(0, ^uint64(0))                                   // everything
	assert.False(t, m.IsMapped(0x7f0000000000, PageSize))
	assert.True(t, m.FreeRange(0, 1<<47))
	assert.Error(t, m.Map(0, 1<<40, PermRW), "16+ GiB in one mapping is refused")
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestMemoryBytes(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x10000, 2*PageSize, PermRW))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i)
	}
	require.NoError(t, m.WriteBytes(0x10100, data))
	got, err := m.ReadBytes(0x10100, len(data))
	require.NoError(t, err)
	assert.Equal(t, data, got)
	assert.Error(t, m.WriteBytes(0x11f00, make([]byte, 0x200)), "runs off the mapping")
	b, _ := m.ReadBytes(0x11f00, 0x100)
	assert.Equal(t, make([]byte, 0x100), b, "nothing written by the failed call")
	require.NoError(t, m.Poke(0x10000, []byte("hi\x00")))
	s, err := m.ReadCString(0x10000, 16)
	require.NoError(t, err)
	assert.Equal(t, "hi", s)
	v, ok := m.Load(0x10000, 2, binary.BigEndian)
	require.True(t, ok)
	assert.Equal(t, uint64(0x6869), v)
}

// TestMemoryPastEOF: pages MarkPastEOF marks fault with PastEOF on every
// access their rights allow (a denied access stays a permission fault),
// keep their rights through Protect and in Regions, and are ordinary
// again once mapped anew.
func TestMemoryPastEOF(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x10000, 3*PageSize, PermR))
	_, ok := m.Load8(0x11000) // the page exists and is cached before the mark
	require.True(t, ok)
	m.MarkPastEOF(0x11000, 2*PageSize)
	_, ok = m.Load8(0x10fff)
	assert.True(t, ok, "the page before the end")
	_, ok = m.Load32BE(0x11008)
	assert.False(t, ok)
	assert.Equal(t, MemFault{Addr: 0x11008, Size: 4, Access: AccessRead, PastEOF: true}, m.Fault)
	assert.Equal(t, "read of 4 bytes: past the end of the mapped file at 0x11008", m.Fault.Error())
	assert.False(t, m.Store8(0x12000, 1))
	assert.False(t, m.Fault.PastEOF, "a write the rights deny is a permission fault")
	assert.Equal(t, []Region{{Start: 0x10000, End: 0x13000, Perm: PermR}}, m.Regions())

	require.NoError(t, m.Protect(0x10000, 3*PageSize, PermRW))
	assert.False(t, m.Store8(0x12000, 1))
	assert.True(t, m.Fault.PastEOF, "after mprotect the write is allowed, and past the end")
	assert.True(t, m.Store8(0x10000, 1))
	assert.Equal(t, []Region{{Start: 0x10000, End: 0x13000, Perm: PermRW}}, m.Regions())

	require.NoError(t, m.Map(0x11000, PageSize, PermRW))
	assert.True(t, m.Store8(0x11000, 1), "mapped anew: an ordinary page")
	assert.False(t, m.Store8(0x12000, 1))
	assert.True(t, m.Fault.PastEOF)
}
