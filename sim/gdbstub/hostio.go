package gdbstub

import (
	"fmt"
	"io"
	"strings"

	"simrun/sim/linux"
)

// Host I/O (GDB manual, "Host I/O Packets"): gdb reads files of the
// target through vFile packets, as from gdbserver's machine: the shared
// libraries when its sysroot is "target:" (its default), and for gcore
// the process's /proc/PID/smaps (else maps), cmdline and stat, from
// which it chooses the memory to dump and fills the core's notes. The
// files are the guest's, read-only (linux.Process.DebugOpen); nothing
// the guest sees changes.
//
// Replies are "F" RESULT[,ERRNO][;DATA], the numbers in hex; the errno
// values are the protocol's own (GDB manual, "Errno Values"), which are
// Linux's for the ones both have, but ENAMETOOLONG (91).

// gdbMagicPID is the process id gdb gives a remote inferior when the
// stub does not announce multiprocess support (gdb's remote protocol
// code uses 42000 for it): gcore asks for /proc/42000/smaps.
const gdbMagicPID = "42000"

// maxHostFiles bounds the files gdb may hold open (EMFILE past it).
const maxHostFiles = 64

// hostErrno maps a Linux errno to the protocol's.
func hostErrno(e uint64) uint64 {
	switch e {
	case 1, 2, 4, 9, 13, 14, 16, 17, 19, 20, 21, 22, 23, 24, 27, 28, 29, 30:
		return e
	case 36: // ENAMETOOLONG
		return 91
	}
	return 9999 // EUNKNOWN
}

func hostFail(e uint64) string { return fmt.Sprintf("F-1,%x", hostErrno(e)) }

// vFile answers a vFile:OPERATION:ARGS packet ("" for one it does not
// know, so gdb takes the operation as unsupported).
func (s *Stub) vFile(pkt string) string {
	op, args, _ := strings.Cut(strings.TrimPrefix(pkt, "vFile:"), ":")
	a := strings.Split(args, ",")
	num := func(i int) (uint64, bool) {
		if i >= len(a) {
			return 0, false
		}
		v, err := parseHexU64(a[i])
		return v, err == nil
	}
	switch op {
	case "setfs":
		// One process: every pid's file system is the guest's.
		if _, ok := num(0); !ok || len(a) != 1 {
			return hostFail(22)
		}
		return "F0"
	case "open":
		if len(a) != 3 {
			return hostFail(22)
		}
		name, err := decodeHex(a[0])
		flags, ok1 := num(1)
		_, ok2 := num(2)
		if err != nil || !ok1 || !ok2 || len(name) == 0 {
			return hostFail(22)
		}
		if flags != 0 { // the protocol's O_RDONLY; the guest's files are not gdb's to change
			return hostFail(30) // EROFS
		}
		if len(s.files) >= maxHostFiles {
			return hostFail(24) // EMFILE
		}
		path := string(name)
		if rest, ok := strings.CutPrefix(path, "/proc/"+gdbMagicPID); ok && (rest == "" || rest[0] == '/') {
			path = "/proc/self" + rest
		}
		f, e := s.p.DebugOpen(path)
		if e != 0 {
			return hostFail(e)
		}
		if s.files == nil {
			s.files = map[uint64]linux.DebugFile{}
		}
		fd := uint64(0)
		for s.files[fd] != nil {
			fd++
		}
		s.files[fd] = f
		return fmt.Sprintf("F%x", fd)
	case "close":
		fd, ok := num(0)
		if !ok || len(a) != 1 || s.files[fd] == nil {
			return hostFail(9) // EBADF
		}
		s.files[fd].Close()
		delete(s.files, fd)
		return "F0"
	case "pread":
		fd, ok := num(0)
		n, ok1 := num(1)
		off, ok2 := num(2)
		if !ok || !ok1 || !ok2 || len(a) != 3 {
			return hostFail(22)
		}
		f := s.files[fd]
		if f == nil {
			return hostFail(9)
		}
		if int64(off) < 0 {
			return hostFail(22)
		}
		// Escaped data can take twice its length: stay in one packet.
		n = min(n, maxPacket/2-32)
		buf := make([]byte, n)
		k, err := f.ReadAt(buf, int64(off))
		if err != nil && err != io.EOF {
			return hostFail(5) // EIO
		}
		return string(escape([]byte(fmt.Sprintf("F%x;", k)), buf[:k]))
	case "fstat":
		fd, ok := num(0)
		if !ok || len(a) != 1 || s.files[fd] == nil {
			return hostFail(9)
		}
		// The protocol's struct stat: big-endian, 32-bit dev, ino, mode,
		// nlink, uid, gid, rdev, 64-bit size, blksize, blocks, 32-bit
		// atime, mtime, ctime. Only the size and a regular file's mode
		// matter to gdb; the rest is 0.
		var st [64]byte
		putBE32(st[8:], 0o100444)
		putBE32(st[12:], 1)
		size := uint64(s.files[fd].Size())
		putBE64(st[28:], size)
		putBE64(st[36:], 4096)
		putBE64(st[44:], (size+511)/512)
		return string(escape([]byte(fmt.Sprintf("F%x;", len(st))), st[:]))
	}
	return ""
}

func putBE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func putBE64(b []byte, v uint64) {
	putBE32(b, uint32(v>>32))
	putBE32(b[4:], uint32(v))
}

// closeFiles closes what gdb left open (at the end of the session).
func (s *Stub) closeFiles() {
	for fd, f := range s.files {
		f.Close()
		delete(s.files, fd)
	}
}
