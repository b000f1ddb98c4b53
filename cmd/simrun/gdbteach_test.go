package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// teachCmds is the README's teaching session: into fib_rec at its first
// instruction, one stepi that builds the frame record (stp x29, x30,
// [sp, #-48]!: the caller's frame pointer and the return address), one
// that links it (mov x29, sp), the backtrace through it, then back out
// with reverse-stepi to the state before the call's first instruction.
var teachCmds = []string{
	"break *fib_rec",
	"continue",
	"info registers sp x29 x30",
	"stepi",
	"x/2gx $sp",
	"stepi",
	"info registers sp x29",
	"bt",
	"reverse-stepi",
	"reverse-stepi",
	"info registers sp x29 x30",
}

var teachBlockRE = regexp.MustCompile("(?s)(<!-- gdb-session: fib -->\n```text\n)(.*?)(```)")

// TestGDBTeaching runs the README's gdb session against simrun run -g and
// keeps its transcript in README.md (-update rewrites it): the commands
// and gdb's own answers, from the stop at fib_rec's first instruction to
// the reverse-stepi back there.
func TestGDBTeaching(t *testing.T) {
	gdb := requireGDB(t)
	prog := "programs/bin/aarch64-O2/fib"
	r := startGDBRun(t, "../../"+prog, "5")
	cmds := []string{"directory ../../programs"} // where the reader's -ex 'directory programs' points
	for _, c := range teachCmds {
		cmds = append(cmds, "echo (gdb) "+c+"\\n", c)
	}
	cmds = append(cmds, "delete", "continue")
	out := gdbBatch(t, gdb, "../../"+prog, r.port, cmds...)
	r.wait(t)
	i := strings.Index(out, "(gdb) ")
	require.GreaterOrEqual(t, i, 0, out)
	out = out[i:]
	if j := strings.Index(out, "\n[Inferior 1"); j >= 0 {
		out = out[:j+1]
	}
	// gdb warns when the source's mtime is newer than the program's, as
	// a fresh clone may leave them: a fact of the checkout, not the session.
	out = strings.ReplaceAll(out, "warning: Source file is more recent than executable.\n", "")
	transcript := "$ bin/simrun run -g 1234 " + prog + " 5 &\n$ gdb-multiarch -q " + prog + " -ex 'directory programs' -ex 'target remote :1234'\n" + out
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := teachBlockRE.FindSubmatch(readme)
	require.NotNil(t, m, "README.md has no <!-- gdb-session: fib --> block")
	if *update {
		updated := teachBlockRE.ReplaceAllLiteral(readme, []byte(string(m[1])+transcript+string(m[3])))
		require.NoError(t, os.WriteFile("../../README.md", updated, 0o644))
		return
	}
	require.Equal(t, transcript, string(m[2]), "README.md's gdb session (go test ./cmd/simrun -run TestGDBTeaching -update)")
}
