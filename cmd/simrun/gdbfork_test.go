package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGDBFork: gdb on a program that forks and waits (twice; the second
// child is killed by its parent). gdb follows the parent, as its default
// follow-fork-mode parent with detach-on-fork: the children run without
// it — a breakpoint on getppid, which only the first child calls, never
// stops — while the parent waits; a breakpoint in the parent's waitpid
// stops each time, and continue reaches the end with the output and the
// exit status of a run without gdb, on both architectures.
func TestGDBFork(t *testing.T) {
	gdb := requireGDB(t)
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := "../../programs/procs/bin/" + arch + "-proc-O2/forkwait"
			plainSt, plainOut, _ := run(t, "run", prog)
			require.Equal(t, 3, plainSt)
			r := startGDBRun(t, prog)
			out := gdbBatch(t, gdb, prog, r.port, "break getppid", "break waitpid", "continue", "bt", "continue", "continue", "continue",
				"delete", "continue")
			st := r.wait(t)
			require.Equal(t, plainSt, st, "gdb:\n%s", out)
			require.Equal(t, plainOut, r.stdout.String())
			require.Equal(t, 4, strings.Count(out, "Breakpoint 2, "), out)
			require.NotContains(t, out, "Breakpoint 1, ", "the child's getppid does not stop")
			require.Regexp(t, `#1  0x[0-9a-f]+ in main \(\)`, out)
			require.Contains(t, out, "exited with code 03]")
		})
	}
}
