package oracle

import (
	"os"
	"syscall"
	"unsafe"
)

// limitChild sets RLIMIT_CORE of the started qemu to 0, so that a guest
// killed by a signal leaves neither a qemu guest core file
// (qemu_PROG_DATE_PID.core in the working directory) nor a host core dump.
// Best effort: qemu needs milliseconds to start, long before the guest can
// fault.
func limitChild(pid int) {
	lim := syscall.Rlimit{Cur: 0, Max: 0}
	syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_CORE,
		uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
}

// growPipe tries to enlarge the FIFO's buffer (default 64 KiB) to 1 MiB and
// returns its size.
func growPipe(f *os.File) int {
	const fSetPipeSz, fGetPipeSz = 1031, 1032 // F_SETPIPE_SZ, F_GETPIPE_SZ
	size := 64 << 10
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
			if n, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0); e == 0 {
				size = int(n)
			}
		})
	}
	return size
}
