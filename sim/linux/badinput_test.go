package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
)

// TestBadSyscallArguments: what a careless or hostile guest passes gets
// the errno Linux gives, never a panic: an over-long path, a symlink
// loop, negative descriptors, bad iovecs, a mapping past the end of its
// file.
func TestBadSyscallArguments(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, scratch := testProcess(t, arch)
			dir := t.TempDir()
			neg := func(fd int64) uint64 { return uint64(fd) }

			// A path of 100,000 bytes: getname stops at PATH_MAX.
			long := scratch + 0x1000
			buf := sysMmap(p, [6]uint64{0, 1 << 17, protRead | protWrite, mapPrivate | mapAnonymous, ^uint64(0), 0})
			require.Less(t, buf, uint64(1)<<48)
			putString(t, p, buf, strings.Repeat("a", 100000))
			assert.Equal(t, errno(ENAMETOOLONG), call(t, p, "openat", atFDCWD, buf, oRdonly))
			// The same with no NUL before the end of the mapping.
			end := buf + 1<<17 - 10
			require.True(t, p.writeGuest(end, []byte("0123456789")))
			assert.Equal(t, errno(EFAULT), call(t, p, "openat", atFDCWD, end, oRdonly))

			// A symlink loop.
			require.NoError(t, os.Symlink("b", filepath.Join(dir, "a")))
			require.NoError(t, os.Symlink("a", filepath.Join(dir, "b")))
			assert.Equal(t, errno(ELOOP), call(t, p, "openat", atFDCWD, putString(t, p, long, filepath.Join(dir, "a")), oRdonly))

			// Negative descriptors.
			assert.Equal(t, errno(EBADF), call(t, p, "read", neg(-1), scratch, 8))
			assert.Equal(t, errno(EBADF), call(t, p, "close", neg(-1)))
			assert.Equal(t, errno(EBADF), call(t, p, "fstat", neg(-5), scratch))
			assert.Equal(t, errno(EBADF), call(t, p, "openat", neg(-5), putString(t, p, long, "relative"), oRdonly))
			assert.Equal(t, errno(EBADF), call(t, p, "dup3", 1, neg(-2), 0))
			abs := call(t, p, "openat", neg(-5), putString(t, p, long, dir), oRdonly|p.Arch.OpenFlags.Directory)
			assert.Less(t, abs, uint64(1024), "an absolute path ignores dirfd")

			// Bad iovecs: unmapped, too many, a negative length; and a
			// good first one before an unmapped second moves the first.
			unmapped := uint64(0x10)
			assert.Equal(t, errno(EFAULT), call(t, p, "writev", 1, unmapped, 1))
			assert.Equal(t, errno(EINVAL), call(t, p, "writev", 1, scratch, 1025))
			iov := scratch + 0x2000
			o := p.order()
			var v [32]byte
			o.PutUint64(v[0:], scratch)
			o.PutUint64(v[8:], 1<<63)
			require.True(t, p.writeGuest(iov, v[:16]))
			assert.Equal(t, errno(EINVAL), call(t, p, "writev", 1, iov, 1))
			out := filepath.Join(dir, "out")
			ofd := call(t, p, "openat", atFDCWD, putString(t, p, long, out), oWronly|oCreat, 0o644)
			require.Less(t, ofd, uint64(1024))
			putString(t, p, scratch, "abc")
			o.PutUint64(v[0:], scratch)
			o.PutUint64(v[8:], 3)
			o.PutUint64(v[16:], unmapped)
			o.PutUint64(v[24:], 5)
			require.True(t, p.writeGuest(iov, v[:]))
			assert.Equal(t, uint64(3), call(t, p, "writev", ofd, iov, 2))
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, "abc", string(got))

			// A mapping longer than its file is allowed; the bytes past
			// the end of the file in the last page read as zeros.
			short := filepath.Join(dir, "short")
			require.NoError(t, os.WriteFile(short, []byte("xyz"), 0o644))
			sfd := call(t, p, "openat", atFDCWD, putString(t, p, long, short), oRdonly)
			m := sysMmap(p, [6]uint64{0, 3 * 4096, protRead, mapPrivate, sfd, 0})
			require.Less(t, m, uint64(1)<<48)
			assert.Equal(t, []byte("xyz\x00"), guestBytes(t, p, m, 4))
			// An offset that is not a page multiple, a negative one.
			assert.Equal(t, errno(EINVAL), sysMmap(p, [6]uint64{0, 4096, protRead, mapPrivate, sfd, 100}))
			assert.Equal(t, errno(EINVAL), sysMmap(p, [6]uint64{0, 4096, protRead, mapPrivate, sfd, neg(-4096)}))
			assert.Equal(t, errno(EBADF), sysMmap(p, [6]uint64{0, 4096, protRead, mapPrivate, neg(-1), 0}))
		})
	}
}

// TestBadInterpreter: a dynamically linked program whose interpreter is
// corrupt, or built for the other architecture, is one clear error
// naming the file; a library of the wrong machine is the guest ld.so's
// own message and status, as under qemu-user.
func TestBadInterpreter(t *testing.T) {
	var wc programs.Binary
	for _, b := range programs.DynamicBinaries("arm64") {
		if b.Name == "wc" {
			wc = b
		}
	}
	require.NotEmpty(t, wc.Path)
	data, err := os.ReadFile(wc.Path)
	require.NoError(t, err)
	interp := "/lib/ld-linux-aarch64.so.1"

	sysroot := t.TempDir()
	ld := filepath.Join(sysroot, interp)
	require.NoError(t, os.MkdirAll(filepath.Dir(ld), 0o755))

	require.NoError(t, os.WriteFile(ld, []byte("\x7fELF\x02\x01\x01garbage"), 0o755))
	_, err = New(wc.Path, data, Config{Sysroot: sysroot})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interpreter")
	assert.Contains(t, err.Error(), wc.Path)

	// The s390x loader where the arm64 one should be.
	s390x := DefaultSysroot(cpu.ArchByName("s390x"))
	other := filepath.Join(s390x, "lib/ld64.so.1")
	if _, err := os.Stat(other); err != nil {
		t.Skipf("no s390x cross libc for the wrong-machine cases: %v", err)
	}
	odata, err := os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, os.Remove(ld))
	require.NoError(t, os.WriteFile(ld, odata, 0o755))
	_, err = New(wc.Path, data, Config{Sysroot: sysroot})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "s390x")
	t.Log(err)

	// A real arm64 loader with an s390x libc.so.6: ld.so skips the
	// incompatible file and says the library cannot be found.
	arm := DefaultSysroot(cpu.ArchByName("arm64"))
	adata, err := os.ReadFile(filepath.Join(arm, "lib/ld-linux-aarch64.so.1"))
	if err != nil {
		t.Skipf("no arm64 cross libc: %v", err)
	}
	require.NoError(t, os.WriteFile(ld, adata, 0o755))
	libc, err := os.ReadFile(filepath.Join(s390x, "lib/libc.so.6"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(sysroot, "lib/libc.so.6"), libc, 0o644))
	var stderr bytes.Buffer
	m, err := New(wc.Path, data, Config{Sysroot: sysroot, Args: []string{wc.Path}, Stderr: &stderr, Stdout: &stderr, MaxInsns: 50_000_000})
	require.NoError(t, err)
	exit, err := m.Run()
	require.NoError(t, err)
	assert.Nil(t, exit.Fault)
	assert.Equal(t, 127, exit.Status, stderr.String())
	assert.Contains(t, stderr.String(), "libc.so.6")
	t.Log(stderr.String())
}

// TestDenialsTold: a failure that is simrun's doing is told once, in
// strace's form, through the dispatcher; the program's own failures are
// not.
func TestDenialsTold(t *testing.T) {
	p, scratch := testProcess(t, "arm64")
	var notes bytes.Buffer
	p.Cfg.Notes = &notes
	var a [6]uint64
	p.tellDenial("clone", a, errno(ENOSYS))
	p.tellDenial("clone", a, errno(ENOSYS))
	p.tellDenial("openat", [6]uint64{atFDCWD, putString(t, p, scratch, "/nope")}, errno(ENOENT))
	p.Cfg.ReadOnly = true
	p.tellDenial("openat", [6]uint64{atFDCWD, putString(t, p, scratch, "/x"), oWronly | oCreat, 0o644}, errno(EROFS))
	lines := strings.Split(strings.TrimSpace(notes.String()), "\n")
	require.Len(t, lines, 2, notes.String())
	assert.Contains(t, lines[0], "clone(")
	assert.Contains(t, lines[0], "= -1 ENOSYS (Function not implemented) (denied: simrun starts threads and processes, not namespaces or other sharing; reported once)")
	assert.Contains(t, lines[1], `openat(AT_FDCWD, "/x", O_WRONLY|O_CREAT, 0644) = -1 EROFS (Read-only file system) (--read-only denies it; reported once)`)
}

// TestRootConfinementTold: a lookup that climbs out of --root and then
// fails is told once; one that stays inside is not.
func TestRootConfinementTold(t *testing.T) {
	p, _, outside := rootProcess(t, false)
	var notes bytes.Buffer
	p.Cfg.Notes = &notes
	at := uint64(0x500000)
	require.NoError(t, p.Mem.Map(at, 4096, cpu.PermRW))
	open := func(path string) {
		a := [6]uint64{atFDCWD, putString(t, p, at, path), oRdonly}
		p.confined = false
		if r := call(t, p, "openat", a[:3]...); int64(r) < 0 {
			p.tellDenial("openat", a, r)
		}
	}
	open("/missing")
	assert.Empty(t, notes.String(), "a missing file inside the root is the program's business")
	open("/../.." + outside + "/secret")
	assert.Contains(t, notes.String(), "/secret\", O_RDONLY) = -1 ENOENT (No such file or directory) (--root keeps the path inside")
	open("/../../x")
	assert.Equal(t, 1, strings.Count(notes.String(), "\n"), notes.String())
}
