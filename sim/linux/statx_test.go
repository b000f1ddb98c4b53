package linux

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestStatxBirthTime: statx gives the host file's birth time when the
// host keeps one (as qemu-user's pass-through does) and the guest asks
// for it; virtual files have none.
func TestStatxBirthTime(t *testing.T) {
	p, scratch := testProcess(t, "s390x")
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	var host unix.Statx_t
	require.NoError(t, unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME, &host))
	buf := scratch + 0x1000
	o := p.order()

	require.Zero(t, call(t, p, "statx", atFDCWD, putString(t, p, scratch, path), 0, 0xfff, buf))
	b := guestBytes(t, p, buf, 256)
	if host.Mask&unix.STATX_BTIME == 0 {
		assert.Zero(t, o.Uint32(b)&statxBtime, "the host keeps no birth time")
	} else {
		assert.Equal(t, uint32(0xfff), o.Uint32(b))
		assert.Equal(t, uint64(host.Btime.Sec), o.Uint64(b[0x50:]))
		assert.Equal(t, host.Btime.Nsec, o.Uint32(b[0x58:]))
	}

	require.Zero(t, call(t, p, "statx", atFDCWD, putString(t, p, scratch, path), 0, 0x7ff, buf))
	assert.Equal(t, uint32(0x7ff), o.Uint32(guestBytes(t, p, buf, 4)), "not asked for")
	require.Zero(t, call(t, p, "statx", atFDCWD, putString(t, p, scratch, "/proc/self/maps"), 0, 0xfff, buf))
	assert.Equal(t, uint32(0x7ff), o.Uint32(guestBytes(t, p, buf, 4)), "a virtual file")
}
