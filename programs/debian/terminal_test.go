package debian_test

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/internal/ptytest"
	"simrun/programs/debian"
	"simrun/sim/linux"
)

// TestDebianTerminal starts an interactive busybox sh, then bash, on a
// pty the test opened: the shell's job-control set-up (tcgetpgrp,
// setpgid, tcsetpgrp on its controlling terminal) succeeds, a pipeline
// runs as a job in its own foreground group, and the exit status is the
// one typed. qemu-user
// cannot be the oracle here (its guest would take the host pty as its
// real controlling terminal), so what to see is stated.
func TestDebianTerminal(t *testing.T) {
	shells := []struct {
		name, prog string
		sh         []string // the shell that opens the pty: prog's argv[1:]
		start      string   // the interactive shell it execs
		bad        []string // what the shell says when job control fails
	}{
		{"busybox", "/bin/busybox", []string{"sh"}, "exec sh -i", []string{"job control turned off", "can't access tty"}},
		{"bash", "/bin/bash-static", nil, "exec /bin/bash-static --norc --noprofile -i", []string{"no job control", "cannot set terminal process group"}},
	}
	for _, arch := range arches {
		for _, sh := range shells {
			t.Run(arch+"/"+sh.name, func(t *testing.T) {
				sysroot, err := debian.Sysroot(arch)
				if err != nil {
					t.Skipf("%v", err)
				}
				master, pts := ptytest.Open(t)

				// What is typed, before the shell starts (the terminal keeps it).
				_, err = master.WriteString("echo job-$((6 * 7)) | cat; jobs; exit 3\n")
				require.NoError(t, err)
				var screen bytes.Buffer
				done := make(chan struct{})
				go func() {
					io.Copy(&screen, master) // until the last slave descriptor closes (EIO)
					close(done)
				}()
				stop := time.AfterFunc(2*time.Minute, func() { master.Close() }) // a shell that waits for more input
				defer stop.Stop()

				prog := filepath.Join(sysroot, sh.prog)
				var out, errb bytes.Buffer
				m, err := linux.Load(prog, linux.Config{
					Args: append(append([]string{prog}, sh.sh...), "-c", sh.start+" <>"+pts+" >&0 2>&0"),
					Env:  []string{"PS1=$ ", "TERM=dumb"}, Stdout: &out, Stderr: &errb,
					Seed: 1, MaxInsns: 300_000_000, Sysroot: sysroot, Dir: t.TempDir(),
				})
				require.NoError(t, err)
				exit, err := linux.Run(m)
				require.NoError(t, err)
				require.Nil(t, exit.Fault, "%v", exit.Fault)
				<-done
				s := screen.String()
				require.Equal(t, 3, exit.Status, "screen: %q, stderr: %q", s, errb.String())
				require.Contains(t, s, "job-42")
				for _, b := range sh.bad {
					require.NotContains(t, s, b)
				}
			})
		}
	}
}
