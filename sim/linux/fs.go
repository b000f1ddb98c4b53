package linux

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"simrun/sim/cpu"
	"strings"
	"syscall"
)

// Guest paths become host paths the way qemu-user makes them with -L: an
// absolute path that exists under the sysroot is taken from there, any
// other absolute path from the host; a relative path is resolved against
// the process's working directory or the directory descriptor given.
// The guest reads and writes the host's files with simrun's own rights.

const (
	pathMax = 4096        // PATH_MAX, with the NUL
	atFDCWD = ^uint64(99) // AT_FDCWD = -100

	atSymlinkNofollow = 0x100
	atRemovedir       = 0x200
	atSymlinkFollow   = 0x400
	atEmptyPath       = 0x1000
)

// Errno values (the asm-generic numbers, shared by arm64 and s390x, and
// by the x86-64 and arm64 hosts simrun runs on).
const (
	EPERM        = 1
	ENOENT       = 2
	ESRCH        = 3
	EINTR        = 4
	EIO          = 5
	ENXIO        = 6
	ENOEXEC      = 8
	EBADF        = 9
	ECHILD       = 10
	EAGAIN       = 11
	ENOMEM       = 12
	EACCES       = 13
	EFAULT       = 14
	EEXIST       = 17
	EXDEV        = 18
	ENODEV       = 19
	ENOTDIR      = 20
	EISDIR       = 21
	EINVAL       = 22
	EMFILE       = 24
	ENOTTY       = 25
	EFBIG        = 27
	ESPIPE       = 29
	EROFS        = 30
	EPIPE        = 32
	ERANGE       = 34
	EDEADLK      = 35
	EOVERFLOW    = 75
	ENAMETOOLONG = 36
	ENOSYS       = 38
	ELOOP        = 40
	ENOTSUP      = 95
	ETIMEDOUT    = 110
)

func errno(e int) uint64 { return uint64(-int64(e)) }

// hostErrno is the errno for a host error (EIO for one without).
func hostErrno(err error) uint64 {
	var e syscall.Errno
	if errors.As(err, &e) {
		return errno(int(e))
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errno(ENOENT)
	case errors.Is(err, fs.ErrPermission):
		return errno(EACCES)
	case errors.Is(err, fs.ErrExist):
		return errno(EEXIST)
	}
	return errno(EIO)
}

// lookupAbs returns the host path for an absolute guest path, and the
// places it looked.
func (p *Process) lookupAbs(name string) (string, []string) {
	if p.root != "" {
		h, e := p.walk(p.root, name, true)
		if e != 0 {
			h = filepath.Join(p.root, name)
		}
		return h, []string{h}
	}
	if p.Sysroot != "" {
		in := filepath.Join(p.Sysroot, name)
		if exists(in) {
			return in, []string{in}
		}
		return name, []string{in, name}
	}
	return name, []string{name}
}

// readPath reads a NUL-terminated guest path.
func (p *Process) readPath(addr uint64) (string, uint64) {
	s, err := p.Mem.ReadCString(addr, pathMax)
	if err != nil {
		if strings.Contains(err.Error(), "longer") {
			return "", errno(ENAMETOOLONG)
		}
		return "", errno(EFAULT)
	}
	return s, 0
}

// resolve turns a guest path relative to dirfd into a host path. follow
// says whether a symbolic link as the last component is followed (the
// host follows it too when it is); it matters under --root, where simrun
// follows every link itself to keep it inside the root. An empty path is
// ENOENT (callers handle AT_EMPTY_PATH first).
func (p *Process) resolve(dirfd uint64, path string, follow bool) (string, uint64) {
	if path == "" {
		return "", errno(ENOENT)
	}
	if len(path) >= pathMax {
		return "", errno(ENAMETOOLONG)
	}
	var base string
	switch {
	case path[0] == '/':
		if p.root != "" {
			return p.walk(p.root, path, follow)
		}
		h, _ := p.lookupAbs(path)
		return h, 0
	case dirfd == atFDCWD || int32(dirfd) == -100:
		base = p.cwd
	default:
		f, e := p.file(dirfd)
		if e != 0 {
			return "", e
		}
		if f.kind != kindDir && f.kind != kindVDir && !(f.kind == kindPath && isDir(f.path)) {
			return "", errno(ENOTDIR)
		}
		base = f.path
	}
	if p.root != "" {
		return p.walk(base, path, follow)
	}
	return filepath.Join(base, path) + trailingSlash(path), 0
}

func isDir(host string) bool {
	st, err := os.Stat(host)
	return err == nil && st.IsDir()
}

// maxSymlinks is how many symbolic links one lookup follows before ELOOP
// (Linux's MAXSYMLINKS).
const maxSymlinks = 40

// walk resolves path from base (a host directory inside the root, with no
// symbolic link in it) one component at a time, as a chrooted Linux
// process's lookup goes: ".." stops at the root, an absolute link target
// starts again at the root, a relative one continues from the link's
// directory. What it returns is inside the root and free of links, but
// for a last component that is a link when follow is false.
func (p *Process) walk(base, path string, follow bool) (string, uint64) {
	cur := base
	if strings.HasPrefix(path, "/") {
		cur = p.root
	}
	rest := strings.Split(path, "/")
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur != p.root {
				cur = filepath.Dir(cur)
			} else {
				p.confined = true
			}
			continue
		}
		next := filepath.Join(cur, c)
		last := len(rest) == 0 || allEmpty(rest)
		if last && !follow {
			return next + trailingSlash(path), 0
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if last {
				return next + trailingSlash(path), 0 // it may be about to be created
			}
			return "", hostErrno(err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if !last && !fi.IsDir() {
				return "", errno(ENOTDIR)
			}
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", errno(ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", hostErrno(err)
		}
		if strings.HasPrefix(target, "/") {
			cur = p.root
			p.confined = true
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur, 0
}

func allEmpty(parts []string) bool {
	for _, s := range parts {
		if s != "" && s != "." {
			return false
		}
	}
	return true
}

// trailingSlash keeps a path's trailing slash (it makes the host demand
// a directory, as Linux does).
func trailingSlash(path string) string {
	if len(path) > 1 && strings.HasSuffix(path, "/") {
		return "/"
	}
	return ""
}

// File types: the S_IFMT field of st_mode (include/uapi/linux/stat.h).
// Every Linux architecture, the host's included, has these values, so a
// host stat's mode passes to the guest unchanged (guestStat) and a
// guest's mknod mode to the host.
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
)

// guestStat converts a host stat.
func guestStat(hs *syscall.Stat_t) Stat {
	return Stat{
		Dev: uint64(hs.Dev), Ino: hs.Ino, Mode: uint64(hs.Mode), Nlink: uint64(hs.Nlink),
		UID: uint64(hs.Uid), GID: uint64(hs.Gid), Rdev: uint64(hs.Rdev), Size: uint64(hs.Size),
		Blksize: uint64(hs.Blksize), Blocks: uint64(hs.Blocks),
		Atime: uint64(hs.Atim.Sec), AtimeNsec: uint64(hs.Atim.Nsec),
		Mtime: uint64(hs.Mtim.Sec), MtimeNsec: uint64(hs.Mtim.Nsec),
		Ctime: uint64(hs.Ctim.Sec), CtimeNsec: uint64(hs.Ctim.Nsec),
	}
}

func hostStatPath(path string, follow bool) (Stat, uint64) {
	var hs syscall.Stat_t
	var err error
	if follow {
		err = syscall.Stat(path, &hs)
	} else {
		err = syscall.Lstat(path, &hs)
	}
	if err != nil {
		return Stat{}, hostErrno(err)
	}
	return guestStat(&hs), 0
}

func hostStatFile(f *os.File) (Stat, uint64) {
	var hs syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &hs); err != nil {
		return Stat{}, hostErrno(err)
	}
	return guestStat(&hs), 0
}

// Stat is the content of a struct stat (the arch encodes it).
type Stat = cpu.Stat
