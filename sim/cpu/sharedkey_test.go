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

// TestHoldAttachShared: bytes HoldShared holds in one space and
// AttachShared gives a MarkShared page of another space on the account
// are one set of bytes, keyed alike for futexes, charged once, and
// refunded when the last holder lets go.
func TestHoldAttachShared(t *testing.T) {
	a := cpu.NewMemory()
	b := a.Empty()
	for _, m := range []*cpu.Memory{a, b} {
		if err := m.Map(0x10000, cpu.PageSize, cpu.PermRW); err != nil {
			t.Fatal(err)
		}
		m.MarkShared(0x10000, cpu.PageSize)
	}
	base := a.Used()
	sp, ok := a.HoldShared(0x10000)
	if !ok || a.Used() != base+cpu.PageSize {
		t.Fatalf("HoldShared: ok %v, used %d, want %d", ok, a.Used(), base+cpu.PageSize)
	}
	if !b.AttachShared(0x10000, sp) || a.Used() != base+cpu.PageSize {
		t.Fatalf("AttachShared: used %d, want %d (charged once)", a.Used(), base+cpu.PageSize)
	}
	if !a.Store32LE(0x10004, 0xabcd) {
		t.Fatal("store")
	}
	if v, _ := b.Load32LE(0x10004); v != 0xabcd {
		t.Fatalf("the other space reads %#x, want 0xabcd", v)
	}
	ka, _ := a.SharedKey(0x10004)
	kb, _ := b.SharedKey(0x10004)
	if ka != kb {
		t.Fatal("futex keys differ")
	}
	if got := a.SharedHolders(sp); got != 3 {
		t.Fatalf("holders %d, want 3 (two pages and the hold)", got)
	}
	a.Unmap(0x10000, cpu.PageSize)
	b.Unmap(0x10000, cpu.PageSize)
	if got := a.SharedHolders(sp); got != 1 {
		t.Fatalf("holders after unmapping %d, want 1", got)
	}
	before := a.Used()
	a.ReleaseShared(sp)
	if got, want := a.Used(), before-cpu.PageSize; got != want {
		t.Fatalf("used %d after the last hold went, want %d", got, want)
	}
	if b.AttachShared(0x10000, sp) {
		t.Fatal("AttachShared on an unmapped page")
	}
}
