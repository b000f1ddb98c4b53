package unwind_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/linux"
	"simrun/sim/unwind"
)

// buildCorrupt builds testdata/corrupt for arch with the cross compiler.
func buildCorrupt(t *testing.T, arch string) string {
	t.Helper()
	cc := oracle.RequireTool(t, arch+"-linux-gnu-gcc", "gcc-"+arch+"-linux-gnu")
	out := filepath.Join(t.TempDir(), "corrupt")
	cmd := exec.Command(cc, "-O1", "-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-no-pie", "-fno-pie",
		"-fasynchronous-unwind-tables", "-Wl,--build-id=none", "-o", out,
		filepath.Join(programs.Dir(), "rt", "start_"+arch+".S"),
		filepath.Join("testdata", "corrupt", "main.c"),
		filepath.Join("testdata", "corrupt", "victim_"+arch+".S"))
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// TestCorruptStack: a guest that overwrites its saved return address
// (with 0x1234) and its frame record / back chain (with a pointer to
// itself), calls a leaf and returns into 0x1234.  Every walk ends with a
// reason, the divergences name the wrong frame, the truth reports the
// mismatched return and the run ends with the guest's SIGSEGV.
func TestCorruptStack(t *testing.T) {
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := buildCorrupt(t, arch)
			data, err := os.ReadFile(prog)
			require.NoError(t, err)
			m, err := linux.New(prog, data, linux.Config{})
			require.NoError(t, err)
			obj, err := unwind.NewObject(prog, data)
			require.NoError(t, err)
			c, err := unwind.NewChecker(m, obj, unwind.CheckOptions{Methods: unwind.Methods, Examples: 100})
			require.NoError(t, err)
			r, err := c.Run()
			require.NoError(t, err)
			require.NotNil(t, r.Exit.Fault)
			assert.Equal(t, uint64(0x1234), r.Exit.Fault.PC)
			assert.Equal(t, 139, r.Exit.Status)

			require.Equal(t, uint64(1), r.Truth.Mismatched)
			mm := r.Truth.Mismatches[0]
			assert.Equal(t, uint64(0x1234), mm.Target)
			name, _ := r.Syms.Func(mm.PC)
			assert.Equal(t, "victim", name)
			assert.True(t, r.Failed(), "unwind data that leads to a wrong frame is a divergence")

			leaf, ok := r.Syms.Addr("leaf")
			require.True(t, ok)
			sawCycle := false
			for _, meth := range r.Methods {
				require.NotZero(t, meth.Diverge, meth.Method.String())
				for _, d := range meth.Examples {
					assert.NotEqual(t, unwind.StopNone, d.Walk.Stop.Kind)
					assert.LessOrEqual(t, len(d.Walk.PCs), 4)
					if meth.Method.HasData() && d.Frame == 1 {
						assert.Equal(t, uint64(0x1234), d.Walk.PCs[1], "%s at %#x", meth.Method, d.PC)
					}
					// From the leaf, the chain reaches the record that
					// points at itself and must stop there.
					if st := d.Walk.Stop; meth.Method == unwind.MethodFP && d.PC >= leaf && st.Kind == unwind.StopBadFrame &&
						(st.Cause == unwind.CauseSPNotAbove || st.Cause == unwind.CauseFPBelowSP) {
						sawCycle = true
					}
				}
			}
			assert.True(t, sawCycle, "the frame chain stops at the cycle")
		})
	}
}

// TestDepthLimit: a recursion deeper than the limit (callconv's mutual
// recursion, 1503 frames at -O0) agrees up to the limit and no walk
// returns more frames.
func TestDepthLimit(t *testing.T) {
	for _, cfg := range []string{"aarch64-O0", "s390x-O0"} {
		b := find(t, cfg, "callconv")
		r := check(t, b, unwind.CheckOptions{Methods: unwind.Methods, Policy: policy(t, "depth=16"), Every: 7}, false)
		for _, m := range r.Methods {
			if m.HasData {
				assert.NotZero(t, m.DepthLimited, "%s %s", cfg, m.Method)
				assert.Zero(t, m.Diverge, "%s %s", cfg, m.Method)
			}
			for _, d := range m.Examples {
				assert.LessOrEqual(t, len(d.Walk.PCs), 16)
			}
		}
		assert.Greater(t, r.Truth.MaxDepth, 1000)
	}
}

// TestProgramSFrame uses a program's own .sframe: fib built with
// Debian's gas 2.40 --gsframe, which writes SFrame V1 and knows no
// RA-undefined rows, so _start's row says "RA in x30".  Once main has
// returned, x30 still holds the address main returned to, and the walk
// from _start finds one frame too many: exactly the two instructions
// after the call, nowhere else.  The same program's SFrame as gas 2.46
// would emit it (V3, from .eh_frame) agrees everywhere.
func TestProgramSFrame(t *testing.T) {
	cc := oracle.RequireTool(t, "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu")
	rt := filepath.Join(programs.Dir(), "rt")
	prog := filepath.Join(t.TempDir(), "fib")
	out, err := exec.Command(cc, "-O2", "-static", "-nostdlib", "-ffreestanding", "-fno-stack-protector", "-no-pie", "-fno-pie",
		"-fasynchronous-unwind-tables", "-Wa,--gsframe", "-Wl,--build-id=none", "-I"+rt, "-o", prog,
		filepath.Join(rt, "start_aarch64.S"), filepath.Join(rt, "rt.c"), filepath.Join(programs.Dir(), "src", "fib.c"), "-lgcc").CombinedOutput()
	require.NoError(t, err, "%s", out)
	b := programs.Binary{Name: "fib", Path: prog}

	own := check(t, b, unwind.CheckOptions{Methods: []unwind.Method{unwind.MethodSFrame}, Examples: 10}, false)
	m := own.Methods[0]
	assert.Contains(t, m.Source, "the program's .sframe (V1,")
	start, ok := own.Syms.Addr("_start")
	require.True(t, ok)
	require.Equal(t, uint64(2), m.Diverge, "\n%s", report(own))
	for i, d := range m.Examples {
		assert.Equal(t, start+0x1c+4*uint64(i), d.PC, "after bl main")
		assert.Equal(t, "1 frames past the outermost", d.What)
		assert.Equal(t, []uint64{d.PC}, d.Expected)
		assert.Equal(t, start+0x1c, d.Walk.PCs[1], "x30 = the address main returned to")
	}
	assert.Equal(t, m.Checked-2, m.Agree)

	emitted := check(t, b, unwind.CheckOptions{Methods: []unwind.Method{unwind.MethodSFrame}, SFrame: unwind.SFrameEmit}, false)
	assert.Contains(t, emitted.Methods[0].Source, "SFrame V3 emitted from .eh_frame")
	assert.Zero(t, emitted.Methods[0].Diverge)
	assert.Equal(t, emitted.Checked, emitted.Methods[0].Agree)
}
