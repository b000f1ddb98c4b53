//go:build unix

package outfile

import (
	"os"
	"syscall"
)

// writable asks the kernel whether this process may write path (a
// directory: create files in it), as access(2) with W_OK answers: a
// read-only file system says EROFS even to root.
func writable(path string) error {
	return syscall.Access(path, 2 /* W_OK */)
}

// syncDir makes the renames in dir durable (fsync(2) on the directory).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
