package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	_ "simrun/sim/s390x"
)

// testProcess is a process of arch (the bundled hello program, not run)
// with a 64 KiB read-write scratch mapping at the returned address.
func testProcess(t *testing.T, arch string) (*Process, uint64) {
	t.Helper()
	config := map[string]string{"arm64": "aarch64-O2", "s390x": "s390x-O2"}[arch]
	b, err := programs.Find(config, "hello")
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	p, err := NewProcess(b.Path, data, Config{Stdin: strings.NewReader("")})
	require.NoError(t, err)
	scratch := sysMmap(p, [6]uint64{0, 1 << 16, protRead | protWrite, mapPrivate | mapAnonymous, ^uint64(0), 0})
	require.Less(t, scratch, uint64(1)<<48, "mmap failed: %d", int64(scratch))
	return p, scratch
}

// call runs the syscall named name through the arch's table, as the
// dispatcher does: a name the arch does not number fails the test.
func call(t *testing.T, p *Process, name string, args ...uint64) uint64 {
	t.Helper()
	for _, e := range p.table {
		if e.Name == name {
			require.NotNil(t, e.fn, "%s has no handler", name)
			var a [6]uint64
			copy(a[:], args)
			return e.fn(p, a)
		}
	}
	t.Fatalf("%s: no syscall %s", p.Arch.Name, name)
	return 0
}

func putString(t *testing.T, p *Process, addr uint64, s string) uint64 {
	t.Helper()
	require.True(t, p.writeGuest(addr, append([]byte(s), 0)))
	return addr
}

func guestBytes(t *testing.T, p *Process, addr, n uint64) []byte {
	t.Helper()
	b, ok := p.readGuest(addr, n)
	require.True(t, ok)
	return b
}

func TestSysinfo(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			require.Equal(t, uint64(0), call(t, p, "sysinfo", buf))
			b, o := guestBytes(t, p, buf, 112), p.order()
			require.Equal(t, uint64(4<<30), o.Uint64(b[32:]), "totalram")
			require.Equal(t, uint64(3<<30), o.Uint64(b[40:]), "freeram")
			require.Equal(t, uint16(1), o.Uint16(b[80:]), "procs")
			require.Equal(t, uint32(1), o.Uint32(b[104:]), "mem_unit")
			require.Equal(t, errno(EFAULT), call(t, p, "sysinfo", 0))
		})
	}
}

func TestSchedGetaffinity(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		p, buf := testProcess(t, arch)
		for _, c := range []struct {
			pid, size, addr uint64
			want            uint64
		}{
			{0, 128, buf, 8},
			{guestPID, 8, buf, 8},
			{0, 4, buf, errno(EINVAL)},
			{0, 12, buf, errno(EINVAL)},
			{7, 128, buf, errno(ESRCH)},
			{0, 128, 0, errno(EFAULT)},
		} {
			require.Equal(t, c.want, call(t, p, "sched_getaffinity", c.pid, c.size, c.addr), "%s %+v", arch, c)
		}
		require.Equal(t, uint64(1), p.order().Uint64(guestBytes(t, p, buf, 8)), "CPU 0 only")
	}
}

func TestPrctl(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		p, buf := testProcess(t, arch)
		require.Equal(t, uint64(0), call(t, p, "prctl", prGetName, buf))
		require.Equal(t, append([]byte("hello"), make([]byte, 11)...), guestBytes(t, p, buf, 16))
		for _, c := range []struct {
			args []uint64
			want uint64
		}{
			{[]uint64{prSetName, putString(t, p, buf, "other")}, 0},
			{[]uint64{prSetName, 0}, errno(EFAULT)},
			{[]uint64{prGetName, 0}, errno(EFAULT)},
			{[]uint64{prGetDumpable}, 1},
			{[]uint64{prSetDumpable, 1}, 0},
			{[]uint64{prSetDumpable, 2}, errno(EINVAL)},
			{[]uint64{0x59616d61 /* PR_SET_PTRACER */, 0}, errno(EINVAL)},
		} {
			require.Equal(t, c.want, call(t, p, "prctl", c.args...), "%s %v", arch, c.args)
		}
	}
}

// TestStatfs checks the two layouts of struct statfs against the host's
// answer for the same directory.
func TestStatfs(t *testing.T) {
	dir := t.TempDir()
	var host syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &host))
	for _, c := range []struct {
		arch, name string
		size       uint64 // statfs64's size argument; 0 = statfs
		typ, bsize func(o []byte, p *Process) uint64
		blocks     int
	}{
		{arch: "arm64", name: "statfs", blocks: 16,
			typ:   func(b []byte, p *Process) uint64 { return p.order().Uint64(b) },
			bsize: func(b []byte, p *Process) uint64 { return p.order().Uint64(b[8:]) }},
		{arch: "s390x", name: "statfs64", size: 88, blocks: 8,
			typ:   func(b []byte, p *Process) uint64 { return uint64(p.order().Uint32(b)) },
			bsize: func(b []byte, p *Process) uint64 { return uint64(p.order().Uint32(b[4:])) }},
		{arch: "s390x", name: "statfs", blocks: 8,
			typ:   func(b []byte, p *Process) uint64 { return uint64(p.order().Uint32(b)) },
			bsize: func(b []byte, p *Process) uint64 { return uint64(p.order().Uint32(b[4:])) }},
	} {
		t.Run(c.arch+"/"+c.name, func(t *testing.T) {
			p, buf := testProcess(t, c.arch)
			path := putString(t, p, buf+0x1000, dir)
			args := []uint64{path, buf}
			if c.size != 0 {
				args = []uint64{path, c.size, buf}
			}
			require.Equal(t, uint64(0), call(t, p, c.name, args...))
			b := guestBytes(t, p, buf, 120)
			require.Equal(t, uint64(host.Type), c.typ(b, p), "f_type")
			require.Equal(t, uint64(host.Bsize), c.bsize(b, p), "f_bsize")
			require.Equal(t, host.Blocks, p.order().Uint64(b[c.blocks:]), "f_blocks")

			args[0] = putString(t, p, buf+0x1000, filepath.Join(dir, "missing"))
			require.Equal(t, errno(ENOENT), call(t, p, c.name, args...))
			if c.size != 0 {
				require.Equal(t, errno(EINVAL), call(t, p, c.name, path, 80, buf), "wrong size")
			}
			// fstatfs of stdin (a pipe here): pipefs.
			fname := "f" + c.name
			fargs := []uint64{0, buf}
			if c.size != 0 {
				fargs = []uint64{0, c.size, buf}
			}
			require.Equal(t, uint64(0), call(t, p, fname, fargs...))
			require.Equal(t, uint64(0x50495045), c.typ(guestBytes(t, p, buf, 8), p))
			fargs[0] = 77
			require.Equal(t, errno(EBADF), call(t, p, fname, fargs...))
		})
	}
}

func TestXattr(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	link := filepath.Join(dir, "l")
	require.NoError(t, os.Symlink("f", link))
	if err := syscall.Setxattr(file, "user.probe", []byte("1"), 0); err != nil {
		t.Skipf("the host file system keeps no user attributes here: %v", err)
	}
	require.NoError(t, syscall.Removexattr(file, "user.probe"))
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := testProcess(t, arch)
			path := putString(t, p, buf, file)
			lpath := putString(t, p, buf+0x1000, link)
			name := putString(t, p, buf+0x2000, "user.simrun")
			val, out := buf+0x3000, buf+0x4000
			require.True(t, p.writeGuest(val, []byte("value")))

			require.Equal(t, errno(ENODATA), call(t, p, "getxattr", path, name, out, 64))
			require.Equal(t, uint64(0), call(t, p, "setxattr", path, name, val, 5, 0))
			require.Equal(t, errno(EEXIST), call(t, p, "setxattr", path, name, val, 5, 1 /* XATTR_CREATE */))
			require.Equal(t, errno(EINVAL), call(t, p, "setxattr", path, name, val, 5, 4))
			require.Equal(t, uint64(5), call(t, p, "getxattr", path, name, 0, 0), "size query")
			require.Equal(t, uint64(5), call(t, p, "getxattr", path, name, out, 64))
			require.Equal(t, []byte("value"), guestBytes(t, p, out, 5))
			require.Equal(t, errno(ERANGE), call(t, p, "getxattr", path, name, out, 2))
			// Through the link: getxattr follows it, lgetxattr does not
			// (user attributes are not allowed on a link: ENODATA).
			require.Equal(t, uint64(5), call(t, p, "getxattr", lpath, name, out, 64))
			require.Equal(t, errno(ENODATA), call(t, p, "lgetxattr", lpath, name, out, 64))
			n := call(t, p, "listxattr", path, out, 256)
			require.Less(t, n, uint64(256))
			require.Contains(t, string(guestBytes(t, p, out, n)), "user.simrun\x00")

			// The descriptor forms.
			fd := call(t, p, "openat", atFDCWD, path, oRdonly, 0)
			require.Less(t, fd, uint64(1024))
			require.Equal(t, uint64(5), call(t, p, "fgetxattr", fd, name, out, 64))
			require.Equal(t, call(t, p, "listxattr", path, 0, 0), call(t, p, "flistxattr", fd, 0, 0))
			require.Equal(t, errno(ENOTSUP), call(t, p, "fgetxattr", 0, name, out, 64), "stdin")
			require.Equal(t, errno(EBADF), call(t, p, "fgetxattr", 99, name, out, 64))
			require.Equal(t, uint64(0), call(t, p, "fremovexattr", fd, name))
			require.Equal(t, errno(ENODATA), call(t, p, "removexattr", path, name))

			// Names: empty or longer than XATTR_NAME_MAX is ERANGE.
			require.Equal(t, errno(ERANGE), call(t, p, "getxattr", path, putString(t, p, buf+0x2000, ""), out, 64))
			long := putString(t, p, buf+0x2000, "user."+strings.Repeat("n", 300))
			require.Equal(t, errno(ERANGE), call(t, p, "setxattr", path, long, val, 5, 0))
			require.Equal(t, errno(EFAULT), call(t, p, "getxattr", path, 0, out, 64))
			require.Equal(t, errno(E2BIG), call(t, p, "setxattr", path, putString(t, p, buf+0x2000, "user.simrun"), val, xattrSizeMax+1, 0))
		})
	}
}

// TestSockets: socket() makes AF_UNIX sockets only (no network);
// socketpair makes a connected AF_UNIX pair (programs/procs/sockets,
// compared with qemu-user, covers the semantics); the socket calls on what is no
// socket say so; s390x reaches every call through socketcall too.
func TestSockets(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		p, buf := testProcess(t, arch)
		require.Equal(t, errno(EAFNOSUPPORT), call(t, p, "socket", 2, 1, 0), arch)
		require.Equal(t, errno(ESOCKTNOSUPPORT), call(t, p, "socket", 1, 2, 0), arch)
		require.Equal(t, uint64(0), call(t, p, "socketpair", 1, 1, 0, buf), arch)
		sv0, _ := p.Mem.Load(buf, 4, p.order())
		sv1, _ := p.Mem.Load(buf+4, 4, p.order())
		require.True(t, p.writeGuest(buf+0x100, []byte("ping")))
		require.Equal(t, uint64(4), call(t, p, "sendto", sv0, buf+0x100, 4, 0, 0, 0), arch)
		require.Equal(t, errno(EISCONN), call(t, p, "sendto", sv0, buf+0x100, 4, 0, buf, 2), arch)
		require.Equal(t, uint64(4), call(t, p, "read", sv1, buf+0x200, 64), arch)
		got, _ := p.readGuest(buf+0x200, 4)
		require.Equal(t, "ping", string(got))
		require.Equal(t, errno(EFAULT), call(t, p, "socketpair", 1, 1, 0, 8), arch)
		require.Equal(t, errno(EINVAL), call(t, p, "bind", sv0, buf, 2), arch)
		for _, name := range []string{"getpeername", "getsockname", "connect", "bind", "listen", "accept4", "sendto", "recvfrom", "shutdown", "sendmsg", "recvmsg", "getsockopt", "setsockopt"} {
			require.Equal(t, errno(ENOTSOCK), call(t, p, name, 0, buf, buf+64), "%s %s on stdin", arch, name)
			require.Equal(t, errno(EBADF), call(t, p, name, 55, buf, buf+64), "%s %s on a closed descriptor", arch, name)
		}
	}
	// s390x's glibc may reach them through socketcall.
	p, buf := testProcess(t, "s390x")
	args := buf + 0x100
	require.True(t, p.writeGuest(args, bytes.Repeat([]byte{0}, 48))) // fd 0, null pointers
	for _, c := range []struct {
		call, args, want uint64
	}{
		{7 /* SYS_GETPEERNAME */, args, errno(ENOTSOCK)},
		{3 /* SYS_CONNECT */, args, errno(ENOTSOCK)},
		{1 /* SYS_SOCKET */, args, errno(EAFNOSUPPORT)},
		{0, args, errno(EINVAL)},
		{21, args, errno(EINVAL)},
		{7, 0, errno(EFAULT)},
	} {
		require.Equal(t, c.want, call(t, p, "socketcall", c.call, c.args), "%+v", c)
	}
	require.True(t, p.writeGuest(args, appendU64(p.order(), nil, 40)))
	require.Equal(t, errno(EBADF), call(t, p, "socketcall", 7, args))
	// SYS_SOCKETPAIR(AF_UNIX, SOCK_DGRAM, 0, sv), then SYS_SEND and SYS_RECV
	// of one datagram.
	var b []byte
	for _, v := range []uint64{1, 2, 0, buf} {
		b = appendU64(p.order(), b, v)
	}
	require.True(t, p.writeGuest(args, b))
	require.Equal(t, uint64(0), call(t, p, "socketcall", 8, args))
	sv0, _ := p.Mem.Load(buf, 4, p.order())
	sv1, _ := p.Mem.Load(buf+4, 4, p.order())
	require.True(t, p.writeGuest(buf+0x200, []byte("dgram")))
	b = nil
	for _, v := range []uint64{sv0, buf + 0x200, 5, 0} {
		b = appendU64(p.order(), b, v)
	}
	require.True(t, p.writeGuest(args, b))
	require.Equal(t, uint64(5), call(t, p, "socketcall", 9, args))
	b = nil
	for _, v := range []uint64{sv1, buf + 0x300, 3, 0x20 /* MSG_TRUNC */} {
		b = appendU64(p.order(), b, v)
	}
	require.True(t, p.writeGuest(args, b))
	require.Equal(t, uint64(5), call(t, p, "socketcall", 10, args), "MSG_TRUNC: the datagram's length")
	got, _ := p.readGuest(buf+0x300, 4)
	require.Equal(t, "dgr\x00", string(got))
	_, ok := cpu.ArchByName("arm64").Syscalls["socketcall"]
	require.False(t, ok, "arm64 has no socketcall")
}

// TestSetIDs: the guest is root and stays root: the set*id calls accept
// 0 and -1 (unchanged) for each id they take, EPERM for another id;
// getresuid and getresgid report zeros.
func TestSetIDs(t *testing.T) {
	const keep = 0xffffffff
	for _, arch := range []string{"arm64", "s390x"} {
		p, buf := testProcess(t, arch)
		require.Equal(t, uint64(0), call(t, p, "setuid", 0, 77, 77), "%s: setuid reads one id", arch)
		require.Equal(t, errno(EPERM), call(t, p, "setuid", 1000), arch)
		require.Equal(t, uint64(0), call(t, p, "setreuid", keep, 0, 77), arch)
		require.Equal(t, errno(EPERM), call(t, p, "setregid", 0, 5), arch)
		require.Equal(t, uint64(0), call(t, p, "setresuid", keep, 0, keep), arch)
		require.Equal(t, errno(EPERM), call(t, p, "setresgid", 0, 0, 9), arch)
		require.Equal(t, uint64(0), call(t, p, "setgroups", 0, 0), arch)
		require.Equal(t, errno(EPERM), call(t, p, "setgroups", 1, buf), arch)
		require.True(t, p.writeGuest(buf, bytes.Repeat([]byte{0xff}, 12)))
		require.Equal(t, uint64(0), call(t, p, "getresuid", buf, buf+4, buf+8), arch)
		require.Equal(t, make([]byte, 12), guestBytes(t, p, buf, 12), arch)
		require.Equal(t, errno(EFAULT), call(t, p, "getresgid", buf, 0, buf), arch)
	}
}
