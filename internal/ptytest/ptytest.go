// Package ptytest opens pseudo-terminals for tests of terminal behaviour
// (job control, --tty).
package ptytest

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal pair: the master, closed when the test
// ends, and the slave's path. A machine without /dev/ptmx skips the test.
func Open(t testing.TB) (*os.File, string) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	master := os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN) // ptsname
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	return master, "/dev/pts/" + strconv.Itoa(n)
}
