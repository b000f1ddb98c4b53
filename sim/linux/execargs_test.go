package linux

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExecveStringBounds: execve's argument and environment strings are
// read up to Linux's bounds: one string of MAX_ARG_STRLEN bytes with its
// NUL passes, one byte more is E2BIG (not EFAULT, as bash then says
// "Argument list too long"), as are strings and pointers past 2 MiB; an
// unreadable string is EFAULT.
func TestExecveStringBounds(t *testing.T) {
	p, scratch := testProcess(t, "arm64")
	big := sysMmap(p, [6]uint64{0, 4 << 20, protRead | protWrite, mapPrivate | mapAnonymous, ^uint64(0), 0})
	require.Less(t, big, uint64(1)<<48)
	o := p.order()
	vec := func(ptrs ...uint64) uint64 {
		var b []byte
		for _, q := range append(ptrs, 0) {
			b = appendU64(o, b, q)
		}
		require.True(t, p.writeGuest(scratch, b))
		return scratch
	}
	str := func(at uint64, n int) uint64 { return putString(t, p, at, strings.Repeat("x", n)) }

	got, e := p.readStrings(vec(str(big, maxArgStrlen-1)))
	require.Zero(t, e)
	require.Len(t, got[0], maxArgStrlen-1)
	_, e = p.readStrings(vec(str(big, maxArgStrlen)))
	require.Equal(t, errno(E2BIG), e, "one byte past MAX_ARG_STRLEN")
	_, e = p.readStrings(vec(0x10))
	require.Equal(t, errno(EFAULT), e, "an unmapped string")

	// Sixteen strings of 128 KiB with their NULs and pointers are 2 MiB
	// exactly; a seventeenth, empty, is one too many.
	s := str(big, maxArgStrlen-9)
	ptrs := make([]uint64, 16)
	for i := range ptrs {
		ptrs[i] = s
	}
	_, e = p.readStrings(vec(ptrs...))
	require.Zero(t, e)
	_, e = p.readStrings(vec(append(ptrs, str(big+maxArgStrlen, 0))...))
	require.Equal(t, errno(E2BIG), e)
}
