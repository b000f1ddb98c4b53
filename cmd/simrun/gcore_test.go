package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

var euFrameRE = regexp.MustCompile(`(?m)^#\d+\s+0x([0-9a-f]+)`)

// TestGDBGcore: gdb's gcore against simrun's stub writes a core that gdb
// loads with the backtrace the live session showed, on both
// architectures, for a static program and (aarch64) a dynamically linked
// one, whose libraries gdb reads through the stub's host I/O (no set
// sysroot in the live session) and whose relocated read-only data (the
// link map gdb finds the libraries by) the core holds; eu-stack reads
// the same frames from it.
func TestGDBGcore(t *testing.T) {
	gdb := requireGDB(t)
	cases := []struct {
		name, prog, brk string
		args            []string
		sysroot         string
	}{
		{"aarch64", "../../programs/bin/aarch64-O2/fib", "break fib_rec if n == 2", []string{"6"}, ""},
		{"s390x", "../../programs/bin/s390x-O2/fib", "break fib_rec if n == 2", []string{"6"}, ""},
		{"aarch64-dynamic", "../../programs/dynamic/bin/aarch64-dyn-O2/printf", "break puts", nil, linux.DefaultSysroot(cpu.ArchByName("arm64"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.sysroot != "" {
				if _, err := os.Stat(c.sysroot); err != nil {
					t.Skip("no aarch64 cross libc (Debian's libc6-dev-arm64-cross) to load the program with")
				}
			}
			core := filepath.Join(t.TempDir(), "gcore.core")
			r := startGDBRun(t, append([]string{c.prog}, c.args...)...)
			live := gdbBatch(t, gdb, c.prog, r.port, c.brk, "continue", "bt", "gcore "+core, "kill")
			r.wait(t)
			require.Contains(t, live, "Saved corefile "+core)
			liveBt := btLineRE.FindAllString(live, -1)
			require.GreaterOrEqual(t, len(liveBt), 2, live)

			cmds := []string{"bt"}
			if c.sysroot != "" {
				cmds = append([]string{"set sysroot " + c.sysroot}, cmds...)
			}
			dead := gdbCore(t, gdb, c.prog, core, cmds...)
			// The bt command's frames (after the one gdb prints on
			// loading the core, before the sysroot is set), by pc and
			// function: the libraries' paths differ (target:/lib/...
			// live, the sysroot's in the core).
			i := strings.LastIndex(dead, "\n#0 ")
			require.GreaterOrEqual(t, i, 0, dead)
			liveFrames := frames(t, frameRE, strings.Join(liveBt, "\n")+"\n")
			require.Equal(t, liveFrames, frames(t, frameRE, dead[i+1:]), "live:\n%s\ncore:\n%s", live, dead)
			require.Len(t, liveFrames, len(liveBt))
			require.Contains(t, dead, "[New LWP 1000]")

			if eu, err := exec.LookPath("eu-stack"); err == nil && c.sysroot == "" {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				out, _ := exec.CommandContext(ctx, eu, "--core", core, "-e", c.prog).CombinedOutput()
				pcs := hexAll(t, euFrameRE, string(out))
				var gdbPCs []uint64
				for _, f := range frames(t, frameRE, strings.Join(liveBt, "\n")+"\n") {
					if f.pc != 0 {
						gdbPCs = append(gdbPCs, f.pc)
					}
				}
				require.NotEmpty(t, gdbPCs)
				require.Subset(t, pcs, gdbPCs, "eu-stack:\n%s", out)
			}
		})
	}
}
