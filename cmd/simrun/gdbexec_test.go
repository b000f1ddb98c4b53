package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGDBExec: gdb follows the program through execve (exec events),
// into the other architecture's program too: `catch exec` stops at the
// new program's entry with its registers (aarch64 → s390x and back), a
// breakpoint set in the new program stops with its backtrace, and the
// run ends with the output and status it has without gdb; a program that
// re-executes itself twice (exectimers) runs to its end under continue.
func TestGDBExec(t *testing.T) {
	gdb := requireGDB(t)
	for _, c := range []struct{ from, to, pc string }{{"aarch64", "s390x", "pswa"}, {"s390x", "aarch64", "pc"}} {
		t.Run(c.from+"-to-"+c.to, func(t *testing.T) {
			prog := "../../programs/procs/bin/" + c.from + "-proc-O2/crossexec"
			target, err := filepath.Abs("../../programs/procs/bin/" + c.to + "-proc-O2/forkwait")
			require.NoError(t, err)
			plainSt, plainOut, _ := run(t, "run", prog, "exec", target)
			require.Equal(t, 3, plainSt)
			r := startGDBRun(t, prog, "exec", target)
			out := gdbBatch(t, gdb, prog, r.port, "catch exec", "continue", "info registers "+c.pc, "break waitpid", "continue", "bt",
				"delete", "continue")
			st := r.wait(t)
			require.Equal(t, plainSt, st, "gdb:\n%s", out)
			require.Equal(t, plainOut, r.stdout.String())
			require.Contains(t, out, "process 1000 is executing new program: "+target)
			m := regexp.MustCompile(`Catchpoint 1 \(exec'd [^)]*\), 0x0*([0-9a-f]+) in _start \(\)`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			require.Regexp(t, `(?m)^`+c.pc+`\s+0x`+m[1]+`\s`, out, "the new program's entry")
			require.Contains(t, out, "Breakpoint 2, ")
			require.Regexp(t, `#1  0x[0-9a-f]+ in main \(\) at src/forkwait.c`, out)
			require.Contains(t, out, "exited with code 03]")
			require.Contains(t, r.stderr.String(), "simrun: gdb: the program ran execve: now "+target+" ("+map[string]string{"s390x": "s390x", "aarch64": "arm64"}[c.to]+")")
		})
	}
	t.Run("reexec", func(t *testing.T) {
		prog := "../../programs/procs/bin/aarch64-proc-O2/exectimers"
		plainSt, plainOut, _ := run(t, "run", prog)
		r := startGDBRun(t, prog)
		out := gdbBatch(t, gdb, prog, r.port, "continue")
		st := r.wait(t)
		require.Equal(t, plainSt, st, "gdb:\n%s", out)
		require.Equal(t, plainOut, r.stdout.String())
		require.Equal(t, 2, strings.Count(out, "is executing new program"), out)
	})
}
