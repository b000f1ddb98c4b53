package cpu

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The memory limit counts what the host holds: written pages, the
// bookkeeping of mapped ones, decoded code; refunds it when pages go.
func TestMemoryLimit(t *testing.T) {
	const limit = 1 << 20
	m := NewMemory()
	m.SetLimit(limit)
	// A writable mapping that could not be written whole is refused...
	err := m.Map(0x100000, 2<<20, PermRW)
	assert.True(t, errors.Is(err, ErrMemoryLimit), "%v", err)
	assert.Contains(t, err.Error(), "limit of 1 MiB")
	assert.Zero(t, m.Used())
	// ...one that is not written costs its bookkeeping only.
	require.NoError(t, m.Map(0x40000000, 64<<20, PermR))
	meta := m.Used()
	assert.Equal(t, (64<<20)/PageSize*pageMetaBytes+32*chunkBytes, meta)
	m.Unmap(0x40000000, 64<<20)
	assert.Zero(t, m.Used())

	// Two mappings that fit one at a time; writing both passes the limit.
	require.NoError(t, m.Map(0x100000, 512<<10, PermRW))
	require.NoError(t, m.Map(0x200000, 512<<10, PermRW))
	base := m.Used()
	var n int
	var a uint64
	for _, a = range []uint64{0x100000, 0x200000} {
		for off := uint64(0); off < 512<<10; off += PageSize {
			if !m.Store64LE(a+off+8, 1) {
				goto full
			}
			n++
		}
	}
	t.Fatal("every page written")
full:
	assert.Equal(t, int((limit-base)/PageSize), n)
	assert.Equal(t, FaultOutOfMemory, MemFaultKind(m.Fault))
	assert.Equal(t, uint64(limit), m.Fault.Limit)
	assert.Contains(t, m.Fault.Error(), "past the guest memory limit of 1 MiB")
	assert.True(t, m.TakeLimitHit())
	assert.False(t, m.TakeLimitHit())
	// A page already written still takes writes; reads of unwritten ones
	// cost nothing.
	assert.True(t, m.Store64LE(0x100000, 2))
	_, ok := m.Load64LE(0x200000 + 500<<10)
	assert.True(t, ok)
	// Every other way in fails the same way, writing nothing.
	err = m.WriteBytes(0x200000+500<<10, []byte{1})
	var mf MemFault
	require.True(t, errors.As(err, &mf))
	assert.Equal(t, uint64(limit), mf.Limit)
	assert.Error(t, m.Poke(0x200000+500<<10, []byte{1}))
	assert.False(t, m.Store(0x200000+500<<10, 2, 1, nil))
	// Discarding (madvise DONTNEED) and unmapping give the pages back.
	used := m.Used()
	m.Discard(0x100000, 8*PageSize)
	assert.Equal(t, used-8*PageSize, m.Used())
	assert.True(t, m.Store64LE(0x200000+500<<10, 1))
	m.Unmap(0x100000, 512<<10)
	m.Unmap(0x200000, 512<<10)
	assert.Zero(t, m.Used())

	// Decoded code is charged when a page is first executed.
	require.NoError(t, m.Map(0x400000, PageSize, PermR|PermX))
	c := NewICache(m, 2, 4, func(*uint64) {})
	before := m.Used()
	_, f := c.Page(0x400000)
	require.Nil(t, f)
	assert.Greater(t, m.Used(), before+PageSize)
	m.Unmap(0x400000, PageSize)
	assert.Zero(t, m.Used())
	m.SetLimit(2 * PageSize)
	require.NoError(t, m.Map(0x500000, PageSize, PermR|PermX))
	_, f = c.Page(0x500000)
	require.NotNil(t, f)
	assert.Equal(t, FaultOutOfMemory, f.Kind)
	assert.Equal(t, SIGKILL, f.Signal())
}

// Replacing written pages frees them before the new mapping is checked.
func TestMemoryLimitMapFixed(t *testing.T) {
	m := NewMemory()
	require.NoError(t, m.Map(0x100000, 256<<10, PermRW))
	for off := uint64(0); off < 256<<10; off += PageSize {
		require.True(t, m.Store8(0x100000+off, 1))
	}
	m.SetLimit(m.Used())
	require.NoError(t, m.Map(0x100000, 256<<10, PermRW), "the same range again fits: its pages go")
	assert.Equal(t, 64*pageMetaBytes+chunkBytes, m.Used())
}
