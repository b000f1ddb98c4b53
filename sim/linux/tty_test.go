package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair: the master and the slave's path.
func openPty(t *testing.T) (*os.File, string) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	master := os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)) // unlockpt
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)                       // ptsname
	require.NoError(t, err)
	return master, "/dev/pts/" + strconv.Itoa(n)
}

// TestTerminal runs programs/procs/ttyjob on a pty on both
// architectures: the controlling terminal's job control as Linux does
// it (testdata/procs/ttyjob.out, the same for both); the host pty's own
// foreground group is left alone.
func TestTerminal(t *testing.T) {
	golden := filepath.Join("testdata", "procs", "ttyjob.out")
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			master, pts := openPty(t)
			path := filepath.Join("..", "..", "programs", "procs", "bin", procsConfigs[arch], "ttyjob")
			var out bytes.Buffer
			m, err := Load(path, Config{Args: []string{path, pts}, Stdout: &out, MaxInsns: 2e9})
			require.NoError(t, err)
			exit, err := Run(m)
			require.NoError(t, err)
			require.Nil(t, exit.Fault, "%v\n%s", exit.Fault, out.String())
			got := out.String() + "status " + itoa(exit.Status) + "\n"
			if *updateProcs && arch == "arm64" {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, string(want), got)
			// The pty belongs to no host session: had simrun passed
			// TIOCSCTTY or TIOCSPGRP on, the host would say otherwise.
			pgrp, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP)
			require.NoError(t, err)
			require.Zero(t, pgrp, "the host pty has no foreground group")
			_, err = unix.IoctlGetInt(int(master.Fd()), unix.TIOCGSID)
			require.Error(t, err, "the host pty has no session")
		})
	}
}
