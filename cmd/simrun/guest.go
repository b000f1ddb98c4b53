package main

import (
	"flag"
	"io"
	"os"

	"simrun/sim/linux"
)

// guestFlags are the flags of every command that runs a guest program and
// shape the Linux around it.
type guestFlags struct {
	sysroot  *string
	strace   *bool
	root     *string
	readOnly *bool
}

func addGuestFlags(fs *flag.FlagSet) *guestFlags {
	return &guestFlags{
		sysroot:  fs.String("L", "", "look absolute guest paths (the interpreter, libraries, files) up under `DIR` first, as qemu-user's -L (default: $SIMRUN_LD_PREFIX, else Debian's /usr/TRIPLE cross sysroot for a dynamically linked program)"),
		strace:   fs.Bool("strace", false, "print each syscall the guest makes on stderr, as strace does"),
		root:     fs.String("root", "", "confine every guest path to `DIR`, as chroot would (\"..\" and symbolic links stay inside; the program itself is read from the path given)"),
		readOnly: fs.Bool("read-only", false, "refuse every change to the file system with EROFS (stdout, stderr and /dev/null still take writes)"),
	}
}

// apply sets cfg's sysroot and syscall trace from the flags and the
// environment.
func (g *guestFlags) apply(cfg *linux.Config, stderr io.Writer) {
	cfg.Sysroot = *g.sysroot
	if cfg.Sysroot == "" {
		cfg.Sysroot = os.Getenv("SIMRUN_LD_PREFIX")
	}
	cfg.Root = *g.root
	cfg.ReadOnly = *g.readOnly
	if *g.strace {
		cfg.Strace = stderr
	}
}
