package unwind_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/unwind"
)

// TestBackChainProgram checks the s390x back-chain facts on real code:
// fib built with -mbackchain is followed by the frame chain at most
// instructions (all but prologues, epilogues and leaves, where the chain
// does not describe the frame yet), the bundled build without it at
// almost none.
func TestBackChainProgram(t *testing.T) {
	cc := oracle.RequireTool(t, "s390x-linux-gnu-gcc", "gcc-s390x-linux-gnu")
	rt := filepath.Join(programs.Dir(), "rt")
	prog := filepath.Join(t.TempDir(), "fib")
	out, err := exec.Command(cc, "-O2", "-mbackchain", "-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-no-pie", "-fno-pie",
		"-fasynchronous-unwind-tables", "-Wl,--build-id=none", "-I"+rt, "-o", prog,
		filepath.Join(rt, "start_s390x.S"), filepath.Join(rt, "rt.c"), filepath.Join(programs.Dir(), "src", "fib.c"), "-lgcc").CombinedOutput()
	require.NoError(t, err, "%s", out)
	with := check(t, programs.Binary{Name: "fib", Path: prog}, unwind.CheckOptions{Methods: unwind.Methods}, false)
	fp := with.Methods[2]
	require.Equal(t, unwind.MethodFP, fp.Method)
	assert.Greater(t, float64(fp.Agree)/float64(fp.Checked), 0.8, "back chain agrees")
	assert.Zero(t, with.Methods[0].Diverge)
	assert.Zero(t, with.Methods[1].Diverge)

	without := check(t, find(t, "s390x-O2", "fib"), unwind.CheckOptions{Methods: []unwind.Method{unwind.MethodFP}}, false)
	assert.Less(t, float64(without.Methods[0].Agree)/float64(without.Methods[0].Checked), 0.01)
}
