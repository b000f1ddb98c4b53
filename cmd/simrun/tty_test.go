package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"simrun/internal/ptytest"
)

// TestRunTTY: with --tty a standard input on a terminal is the guest's
// controlling terminal, its group in the foreground; without, it is no
// terminal to the guest.
func TestRunTTY(t *testing.T) {
	_, pts := ptytest.Open(t)
	slave, err := os.OpenFile(pts, os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer slave.Close()
	prog := "../../programs/procs/bin/aarch64-proc-O2/ttyjob"
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--tty"}, "stdin: foreground is our group 1, session ours 1\n"},
		{nil, "stdin: foreground is our group 0, session ours 0\n"},
	} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"run", "--clean-env"}, tc.flags...), prog, "--stdin")
		require.Equal(t, 0, mainStatus(args, slave, &stdout, &stderr), stderr.String())
		require.Equal(t, tc.want, stdout.String(), strings.Join(tc.flags, " "))
	}
}
