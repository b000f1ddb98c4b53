package cpu_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// TestSharedKey: a MarkShared page has one key in a space and its fork;
// a private page (copy on write) has none, nor does an unmapped one.
func TestSharedKey(t *testing.T) {
	m := cpu.NewMemory()
	require.NoError(t, m.Map(0x10000, 2*cpu.PageSize, cpu.PermRW))
	m.MarkShared(0x10000, cpu.PageSize)
	require.True(t, m.Store64LE(0x11000, 1))
	c, err := m.Fork()
	require.NoError(t, err)
	k1, ok := m.SharedKey(0x10008)
	require.True(t, ok)
	k2, ok := c.SharedKey(0x10ff0)
	require.True(t, ok)
	require.Equal(t, k1, k2, "the same shared bytes")
	_, ok = c.SharedKey(0x11000)
	require.False(t, ok, "a private page")
	_, ok = m.SharedKey(0x40000)
	require.False(t, ok, "unmapped")
}
