package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var pauthRegRE = regexp.MustCompile(`(?m)^pauth_([dc])mask\s+0x([0-9a-f]+)\s`)

// TestGDBPAuth: under simrun run --pauth the arm64 target description
// has gdb's pauth feature: `info registers pauth_dmask pauth_cmask` shows
// Linux's masks (bits 54:48), gdb marks the signed return addresses
// [PAC] and strips them, so its backtrace in a signed frame is simrun's
// own stack at the same instruction; without --pauth the registers do
// not exist.
func TestGDBPAuth(t *testing.T) {
	gdb := requireGDB(t)
	prog := "../../programs/bin/aarch64-O2/pacret"
	r := startGDBRun(t, "--pauth", prog)
	out := gdbBatch(t, gdb, prog, r.port, "break mix_leaf", "continue", "info registers pauth_dmask pauth_cmask",
		"bt", "monitor insns", "kill")
	r.wait(t)
	regs := pauthRegRE.FindAllStringSubmatch(out, -1)
	require.Len(t, regs, 2, out)
	for _, m := range regs {
		require.Equal(t, "7f000000000000", m[2], out)
	}
	require.Contains(t, out, "[PAC] in ", "gdb saw signed return addresses:\n%s", out)
	gdbFrames := frames(t, regexp.MustCompile(`(?m)^#(\d+)\s+(?:0x([0-9a-f]+) (?:\[PAC\] )?in )?([A-Za-z_][A-Za-z0-9_]*) `), out)
	require.GreaterOrEqual(t, len(gdbFrames), 3, out)
	ins := insnsRE.FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, ins, out)
	_, _, simErr := run(t, "run", "--pauth", "--max-insns", ins[len(ins)-1][1], prog)
	simFrames := frames(t, simFrameRE, simErr)
	// gdb stops at main (backtrace past-main off); simrun goes on to
	// _start.
	require.Equal(t, len(gdbFrames)+1, len(simFrames), "gdb:\n%s\nsimrun:\n%s", out, simErr)
	require.Equal(t, "_start", simFrames[len(simFrames)-1].name)
	for i := range gdbFrames {
		require.Equal(t, simFrames[i].name, gdbFrames[i].name, "frame %d", i)
		if i > 0 {
			require.Equal(t, simFrames[i].pc, gdbFrames[i].pc, "frame %d", i)
		}
	}

	r = startGDBRun(t, prog)
	out = gdbBatch(t, gdb, prog, r.port, "info registers pauth_dmask", "kill")
	r.wait(t)
	require.True(t, strings.Contains(out, "Invalid register `pauth_dmask'"), out)
}
