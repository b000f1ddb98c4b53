package linux

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simrun/internal/ptytest"
)

// TestTerminal runs programs/procs/ttyjob on a pty on both
// architectures: the controlling terminal's job control as Linux does
// it (testdata/procs/ttyjob.out, the same for both); the host pty's own
// foreground group is left alone.
func TestTerminal(t *testing.T) {
	golden := filepath.Join("testdata", "procs", "ttyjob.out")
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			master, pts := ptytest.Open(t)
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
