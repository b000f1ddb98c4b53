package linux

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// readDir lists a directory descriptor with getdents64, as the guest
// would, in small reads so records span calls.
func readDir(t *testing.T, p *Process, fd, buf uint64) []string {
	t.Helper()
	var names []string
	o := p.order()
	for range 100 {
		n := call(t, p, "getdents64", fd, buf, 64)
		require.Less(t, int64(n), int64(4096), "getdents64: %d", int64(n))
		if n == 0 {
			return names
		}
		b := guestBytes(t, p, buf, n)
		for len(b) > 0 {
			reclen := int(o.Uint16(b[16:]))
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			names = append(names, string(name))
			b = b[reclen:]
		}
	}
	t.Fatal("getdents64 never reached the end")
	return nil
}

// TestProcSelfDirs: /proc/self and /proc/self/fd list as directories
// (the descriptor being read among the fds), rewind with lseek, and their
// links are links to lstat.
func TestProcSelfDirs(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, scratch := testProcess(t, arch)
			buf := scratch + 0x1000
			dir := p.Arch.OpenFlags.Directory
			fd := call(t, p, "openat", atFDCWD, putString(t, p, scratch, "/proc/self/fd"), oRdonly|dir)
			require.Less(t, fd, uint64(1024))
			names := readDir(t, p, fd, buf)
			assert.Equal(t, []string{".", "..", "0", "1", "2", "3"}, names[:6])
			assert.Contains(t, names, strconv.FormatUint(fd, 10))
			require.Zero(t, call(t, p, "lseek", fd, 0, 0))
			assert.Equal(t, names, readDir(t, p, fd, buf), "after a rewind")
			assert.Equal(t, errno(EISDIR), call(t, p, "read", fd, buf, 16))

			self := call(t, p, "openat", atFDCWD, putString(t, p, scratch, "/proc/self"), oRdonly|dir)
			require.Less(t, self, uint64(1024))
			assert.Subset(t, readDir(t, p, self, buf), []string{"exe", "maps", "fd", "cwd", "status"})
			assert.Equal(t, errno(EISDIR), call(t, p, "openat", atFDCWD, putString(t, p, scratch, "/proc/self/fd"), oWronly))

			// /proc lists the guest alone: no host process shows.
			procfd := call(t, p, "openat", atFDCWD, putString(t, p, scratch, "/proc"), oRdonly|dir)
			require.Less(t, procfd, uint64(1024))
			procNames := readDir(t, p, procfd, buf)
			assert.Subset(t, procNames, []string{"1000", "self", "cpuinfo"})
			assert.NotContains(t, procNames, "1")

			// /proc/self is a link to the guest's pid, as readlink -f and
			// realpath walk it; the virtual entries are not links.
			n := call(t, p, "readlinkat", atFDCWD, putString(t, p, scratch, "/proc/self"), buf, 64)
			assert.Equal(t, "1000", string(guestBytes(t, p, buf, n)))
			assert.Equal(t, errno(EINVAL), call(t, p, "readlinkat", atFDCWD, putString(t, p, scratch, "/proc/1000"), buf, 64))
			assert.Equal(t, errno(EINVAL), call(t, p, "readlinkat", atFDCWD, putString(t, p, scratch, "/proc/self/maps"), buf, 64))
			assert.Equal(t, errno(ENOTSUP), call(t, p, "lgetxattr", putString(t, p, scratch, "/proc/1000"), putString(t, p, scratch+256, "user.x"), buf, 64))
			assert.Equal(t, errno(ENOENT), call(t, p, "openat", atFDCWD, putString(t, p, scratch, "/proc/selfish"), oRdonly), "not /proc/self")

			// lstat sees a link, stat what it points to.
			st, e := p.statAt(atFDCWD, putString(t, p, scratch, "/proc/self/exe"), atSymlinkNofollow)
			require.Zero(t, e)
			assert.Equal(t, uint64(0o120777), st.Mode)
			st, e = p.statAt(atFDCWD, putString(t, p, scratch, "/proc/self/cwd"), 0)
			require.Zero(t, e)
			assert.Equal(t, uint64(sIFDIR), st.Mode&sIFMT)
		})
	}
}

// TestPselect6: the sets come back holding the ready descriptors (a pipe
// readable once written, its write end writable), a zero timeout returns
// 0 at once, a closed descriptor is EBADF, no timeout with nothing ready
// ends the run as a wait for ever would.
func TestPselect6(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, scratch := testProcess(t, arch)
			o := p.order()
			require.Zero(t, call(t, p, "pipe2", scratch, 0))
			rfd, wfd := uint64(o.Uint32(guestBytes(t, p, scratch, 4))), uint64(o.Uint32(guestBytes(t, p, scratch+4, 4)))
			rset, wset, ts := scratch+0x100, scratch+0x200, scratch+0x300
			set := func(addr uint64, fds ...uint64) {
				var w uint64
				for _, fd := range fds {
					w |= 1 << fd
				}
				b := make([]byte, 8)
				o.PutUint64(b, w)
				require.True(t, p.writeGuest(addr, b))
			}
			get := func(addr uint64) uint64 { return o.Uint64(guestBytes(t, p, addr, 8)) }
			require.True(t, p.writeGuest(ts, make([]byte, 16)))
			nfds := max(rfd, wfd) + 1

			set(rset, rfd)
			set(wset, wfd)
			assert.Equal(t, uint64(1), call(t, p, "pselect6", nfds, rset, wset, 0, ts, 0))
			assert.Zero(t, get(rset), "empty pipe: not readable")
			assert.Equal(t, uint64(1)<<wfd, get(wset))

			require.Equal(t, uint64(3), call(t, p, "write", wfd, putString(t, p, scratch+0x400, "abc"), 3))
			set(rset, rfd)
			assert.Equal(t, uint64(1), call(t, p, "pselect6", nfds, rset, 0, 0, ts, 0))
			assert.Equal(t, uint64(1)<<rfd, get(rset))

			set(rset, 9)
			assert.Equal(t, errno(EBADF), call(t, p, "pselect6", 10, rset, 0, 0, ts, 0))
			assert.Equal(t, errno(EINVAL), call(t, p, "pselect6", ^uint64(0), rset, 0, 0, ts, 0))

			require.Equal(t, uint64(3), call(t, p, "read", rfd, scratch+0x400, 3))
		})
	}
}

// TestProcOtherProcesses: /proc lists the run's processes (a zombie
// too) and no host process; /proc/PID of another process of the run is
// that process's (stat, exe), of a zombie only what it keeps, and of no
// process of the run ENOENT. The links and the fd directory have Linux's
// modes and sizes, and a path ending in ".." is the directory, not the
// link before it.
func TestProcOtherProcesses(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, scratch := testProcess(t, arch)
			buf := scratch + 0x1000
			dir := p.Arch.OpenFlags.Directory
			path := func(s string) uint64 { return putString(t, p, scratch, s) }
			readFile := func(name string) string {
				fd := call(t, p, "openat", atFDCWD, path(name), oRdonly)
				require.Less(t, fd, uint64(1024), "open %s: %d", name, int64(fd))
				n := call(t, p, "read", fd, buf, 512)
				require.Less(t, n, uint64(513))
				require.Zero(t, call(t, p, "close", fd))
				return string(guestBytes(t, p, buf, n))
			}
			listProc := func() []string {
				fd := call(t, p, "openat", atFDCWD, path("/proc"), oRdonly|dir)
				require.Less(t, fd, uint64(1024))
				defer call(t, p, "close", fd)
				return readDir(t, p, fd, buf)
			}

			var child uint64
			if arch == "s390x" { // clone(stack, flags, ...)
				child = call(t, p, "clone", 0, sigCHLD)
			} else {
				child = call(t, p, "clone", sigCHLD)
			}
			require.Equal(t, uint64(guestPID+1), child)
			assert.Subset(t, listProc(), []string{"1000", "1001", "self"})
			assert.Regexp(t, `^1001 \(hello\) R 1000 `, readFile("/proc/1001/stat"))
			assert.Regexp(t, `^1000 \(hello\) R 1 `, readFile("/proc/self/stat"))
			n := call(t, p, "readlinkat", atFDCWD, path("/proc/1001/exe"), buf, 256)
			require.Less(t, n, uint64(257))
			assert.Equal(t, p.exe, string(guestBytes(t, p, buf, n)))
			assert.Equal(t, errno(ENOENT), call(t, p, "openat", atFDCWD, path("/proc/1/stat"), oRdonly), "a host process")
			_, e := p.statAt(atFDCWD, path("/proc/4242"), 0)
			assert.Equal(t, errno(ENOENT), e)

			// The child ends: a zombie until its parent waits.
			q := p.sys.byPid(child)
			p.sys.ended(q, &cpu.Exit{Status: 7})
			assert.Contains(t, listProc(), "1001")
			assert.Regexp(t, `^1001 \(hello\) Z 1000 `, readFile("/proc/1001/stat"))
			assert.Equal(t, errno(ENOENT), call(t, p, "readlinkat", atFDCWD, path("/proc/1001/exe"), buf, 256))
			assert.Equal(t, errno(ENOENT), call(t, p, "openat", atFDCWD, path("/proc/1001/maps"), oRdonly))
			require.Equal(t, child, call(t, p, "wait4", child, 0, 0, 0))
			assert.NotContains(t, listProc(), "1001")
			assert.Equal(t, errno(ENOENT), call(t, p, "openat", atFDCWD, path("/proc/1001/stat"), oRdonly))

			// Modes and sizes: the fd links by how the file is open, the
			// fd directory dr-x------, /proc/self 0 bytes.
			st, e := p.statAt(atFDCWD, path("/proc/self/fd/1"), atSymlinkNofollow)
			require.Zero(t, e)
			assert.Equal(t, [2]uint64{sIFLNK | 0o300, 64}, [2]uint64{st.Mode, st.Size})
			st, e = p.statAt(atFDCWD, path("/proc/self/fd/0"), atSymlinkNofollow)
			require.Zero(t, e)
			assert.Equal(t, [2]uint64{sIFLNK | 0o500, 64}, [2]uint64{st.Mode, st.Size})
			st, e = p.statAt(atFDCWD, path("/proc/self"), atSymlinkNofollow)
			require.Zero(t, e)
			assert.Equal(t, [2]uint64{sIFLNK | 0o777, 0}, [2]uint64{st.Mode, st.Size})
			st, e = p.statAt(atFDCWD, path("/proc/self/fd"), 0)
			require.Zero(t, e)
			assert.Equal(t, uint64(sIFDIR|0o500), st.Mode)
			st, e = p.statAt(atFDCWD, path("/proc/self/fd/.."), atSymlinkNofollow)
			require.Zero(t, e)
			assert.Equal(t, uint64(sIFDIR|0o555), st.Mode, "/proc/self/fd/.. is /proc/1000")
			assert.Equal(t, errno(EINVAL), call(t, p, "readlinkat", atFDCWD, path("/proc/self/fd/.."), buf, 64))

			// A descriptor opened through /proc/self names /proc/PID.
			fd := call(t, p, "openat", atFDCWD, path("/proc/self/maps"), oRdonly)
			require.Less(t, fd, uint64(1024))
			n = call(t, p, "readlinkat", atFDCWD, path("/proc/self/fd/"+strconv.FormatUint(fd, 10)), buf, 64)
			assert.Equal(t, "/proc/1000/maps", string(guestBytes(t, p, buf, n)))
		})
	}
}

// TestProcRelative: the virtual /proc answers paths relative to a
// working directory or a descriptor inside it (busybox's top changes to
// /proc and opens "meminfo"; procps opens "PID/stat" at a descriptor of
// /proc), and the working directory may be a virtual directory. The
// machine /proc/meminfo describes is sysinfo's; /proc/uptime and
// /proc/loadavg are the run's, not the host's.
func TestProcRelative(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, scratch := testProcess(t, arch)
			buf := scratch + 0x1000
			path := func(s string) uint64 { return putString(t, p, scratch, s) }
			readAt := func(dirfd uint64, name string) string {
				fd := call(t, p, "openat", dirfd, path(name), oRdonly)
				require.Less(t, fd, uint64(1024), "open %s: %d", name, int64(fd))
				n := call(t, p, "read", fd, buf, 512)
				require.Less(t, n, uint64(513))
				require.Zero(t, call(t, p, "close", fd))
				return string(guestBytes(t, p, buf, n))
			}
			cwd := func() string {
				n := call(t, p, "getcwd", buf, 256)
				require.Less(t, n, uint64(257))
				return string(guestBytes(t, p, buf, n-1))
			}

			require.Zero(t, call(t, p, "chdir", path("/proc")))
			assert.Equal(t, "MemTotal:        4194304 kB\nMemFree:         3145728 kB\nMemAvailable:    3145728 kB\n", readAt(atFDCWD, "meminfo"))
			assert.Regexp(t, `^1000 \(hello\) R `, readAt(atFDCWD, "self/stat"))
			assert.Regexp(t, `^\d+\.\d\d 0\.00\n$`, readAt(atFDCWD, "uptime"))
			assert.Equal(t, "0.00 0.00 0.00 1/1 1000\n", readAt(atFDCWD, "loadavg"))
			require.Zero(t, call(t, p, "sysinfo", buf))
			assert.Equal(t, uint64(4<<30), p.order().Uint64(guestBytes(t, p, buf+32, 8)), "sysinfo's totalram is meminfo's")

			procfd := call(t, p, "openat", atFDCWD, path("/proc"), oRdonly|p.Arch.OpenFlags.Directory)
			require.Less(t, procfd, uint64(1024))
			require.Zero(t, call(t, p, "chdir", path("/")))
			assert.Equal(t, "hello\n", readAt(procfd, "1000/comm"))
			n := call(t, p, "readlinkat", procfd, path("self"), buf, 64)
			assert.Equal(t, "1000", string(guestBytes(t, p, buf, n)))
			assert.Equal(t, errno(ENOENT), call(t, p, "openat", procfd, path("nothing-here"), oRdonly))

			require.Zero(t, call(t, p, "chdir", path("/proc/self")))
			assert.Equal(t, "/proc/1000", cwd())
			assert.Equal(t, "hello\n", readAt(atFDCWD, "comm"))
			assert.Equal(t, errno(ENOTDIR), call(t, p, "chdir", path("/proc/self/comm")))
			require.Zero(t, call(t, p, "fchdir", procfd))
			assert.Equal(t, "/proc", cwd())
		})
	}
}

// TestProcStdLinks: /proc/self/fd/N of a standard stream on a host file
// names that file, as fstat describes it; a stream that is no host file
// is a pipe of its own.
func TestProcStdLinks(t *testing.T) {
	p, scratch := testProcess(t, "arm64")
	out, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	require.NoError(t, err)
	defer out.Close()
	p.fds[1].f.w = out
	n := call(t, p, "readlinkat", atFDCWD, putString(t, p, scratch, "/proc/self/fd/1"), scratch+0x100, 256)
	require.Less(t, n, uint64(257))
	assert.Equal(t, out.Name(), string(guestBytes(t, p, scratch+0x100, n)))
	p.fds[1].f.w = &strings.Builder{}
	n = call(t, p, "readlinkat", atFDCWD, putString(t, p, scratch, "/proc/self/fd/1"), scratch+0x100, 256)
	assert.Equal(t, "pipe:[4097]", string(guestBytes(t, p, scratch+0x100, n)))
}
