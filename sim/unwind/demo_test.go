package unwind_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/unwind"
)

var (
	sframeOnly = []unwind.Method{unwind.MethodSFrame, unwind.MethodEHFrame}
	arm64Cfgs  = []string{"aarch64-O0", "aarch64-O2"}
	allCfgs    = []string{"aarch64-O0", "aarch64-O2", "s390x-O0", "s390x-O2", "s390x-z13O2"}
)

func find(t *testing.T, cfg, name string) programs.Binary {
	t.Helper()
	b, err := programs.Find(cfg, name)
	require.NoError(t, err)
	return b
}

// firstExecuted returns the pc of the first executed instruction whose
// word is one of words (found by running the program, independently of
// any unwinder).
func firstExecuted(t *testing.T, b programs.Binary, pauth bool, words ...uint32) uint64 {
	t.Helper()
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	m, err := linux.New(b.Path, data, linux.Config{Seed: 1})
	require.NoError(t, err)
	if pauth {
		m.Core.(interface{ EnablePAuth(uint64) }).EnablePAuth(1)
	}
	found := uint64(0)
	m.Observer = func(m *cpu.Machine) error {
		if found != 0 {
			return nil
		}
		w, ok := m.Mem.Load32LE(m.Core.PC())
		for _, x := range words {
			if ok && w == x {
				found = m.Core.PC()
			}
		}
		return nil
	}
	_, err = m.Run()
	require.NoError(t, err)
	require.NotZero(t, found, "none of %#x executed", words)
	return found
}

// TestPacRetDemo: with --pauth the return addresses in x30 and in the
// frame records are signed; the default policy (strip PACs where the
// rows say RA is signed) agrees with the truth everywhere, pac=keep
// diverges from the first instruction after the first paciasp/pacibsp
// the program executes.
func TestPacRetDemo(t *testing.T) {
	const paciasp, pacibsp = 0xd503233f, 0xd503237f
	for _, cfg := range arm64Cfgs {
		t.Run(cfg, func(t *testing.T) {
			b := find(t, cfg, "pacret")
			def := check(t, b, unwind.CheckOptions{Methods: sframeOnly}, true)
			for _, m := range def.Methods {
				assert.Zero(t, m.Diverge, "%s with --pauth:\n%s", m.Method, report(def))
				assert.Zero(t, m.Incomplete, m.Method.String())
				assert.Equal(t, def.Insns, m.Checked)
			}
			// Without --pauth the hints are NOPs: nothing to strip, so
			// forgetting to strip changes nothing.
			off := check(t, b, unwind.CheckOptions{Methods: sframeOnly, Policy: policy(t, "pac=keep")}, false)
			for _, m := range off.Methods {
				assert.Zero(t, m.Diverge, "%s, pac=keep without --pauth", m.Method)
			}
			assert.Equal(t, def.Insns, off.Insns, "the same instructions with and without --pauth")

			keep := check(t, b, unwind.CheckOptions{Methods: sframeOnly, Policy: policy(t, "pac=keep"), Examples: 1}, true)
			first := firstExecuted(t, b, true, paciasp, pacibsp)
			for _, m := range keep.Methods {
				require.NotZero(t, m.Diverge, "%s, pac=keep with --pauth", m.Method)
				d := m.Examples[0]
				assert.Equal(t, first+4, d.PC, "%s: the first divergence is right after the first paciasp", m.Method)
				assert.Equal(t, 1, d.Frame)
				got, want := d.Walk.PCs[1], d.Expected[1]
				assert.NotEqual(t, want, got)
				assert.Equal(t, want, got&^(0x7f<<48), "frame 1 is the true return address with a PAC in bits 54:48")
				assert.Contains(t, report(keep), "wrong frame 1")
			}
			// The frame chain strips PACs from frame records as the arm64
			// kernel does: signing changes nothing for it either.
			fpOn := check(t, b, unwind.CheckOptions{Methods: []unwind.Method{unwind.MethodFP}}, true)
			fpOff := check(t, b, unwind.CheckOptions{Methods: []unwind.Method{unwind.MethodFP}}, false)
			assert.Equal(t, fpOff.Methods[0].Agree, fpOn.Methods[0].Agree)
		})
	}
}

// TestFPRLeafDemo: in fpr_leaf %r14 and %r11 hold -1 while the return
// address and the frame pointer live in FPRs; the default policy follows
// the FPR rules in the topmost frame and agrees with the truth at every
// instruction of the program.
func TestFPRLeafDemo(t *testing.T) {
	for _, cfg := range []string{"s390x-O0", "s390x-O2", "s390x-z13O2"} {
		t.Run(cfg, func(t *testing.T) {
			b := find(t, cfg, "fprra")
			data, err := os.ReadFile(b.Path)
			require.NoError(t, err)
			obj, err := unwind.NewObject(b.Path, data)
			require.NoError(t, err)
			m, err := linux.New(b.Path, data, linux.Config{})
			require.NoError(t, err)
			var trs []*unwind.Tracer
			for _, meth := range sframeOnly {
				tr, err := unwind.NewTracer(obj, unwind.Options{Method: meth})
				require.NoError(t, err)
				trs = append(trs, tr)
			}
			leaf, ok := trs[0].Syms.Addr("fpr_leaf")
			require.True(t, ok)
			sh := unwind.NewShadow(obj.ABI.SP)
			regs := unwind.CoreRegs(m)
			var w unwind.Walk
			var inFPR, checked int
			m.Observer = func(m *cpu.Machine) error {
				sh.Observe(m.Core)
				pc := m.Core.PC()
				if name, _ := trs[0].Syms.Func(pc); name != "fpr_leaf" {
					return nil
				}
				truth := sh.Callchain(pc, nil)
				r14, _ := regs.Reg(14)
				for _, tr := range trs {
					tr.WalkDetail(m.Mem, pc, regs, &w)
					checked++
					require.Equal(t, hex(truth), hex(w.PCs), "%s at %#x (fpr_leaf+%#x)", tr.Method, pc, pc-leaf)
					if r14 == ^uint64(0) {
						inFPR++
						row := w.Frames[0].Row
						assert.Equal(t, unwind.RuleInReg, row.RA.Kind, "%s at %#x: %s", tr.Method, pc, row.Format(obj.ABI))
						assert.GreaterOrEqual(t, row.RA.Reg, uint32(16), "RA in an FPR")
					}
				}
				return nil
			}
			_, err = m.Run()
			require.NoError(t, err)
			assert.NotZero(t, checked)
			assert.NotZero(t, inFPR, "some checks ran with %%r14 = -1 and RA in an FPR")
			t.Logf("%d walks in fpr_leaf, %d of them with r14 = -1", checked, inFPR)

			r := check(t, b, unwind.CheckOptions{Methods: sframeOnly}, false)
			for _, m := range r.Methods {
				assert.Zero(t, m.Diverge, "%s:\n%s", m.Method, report(r))
			}
		})
	}
}

// TestNoreturnBoundary: finish's last instruction calls a noreturn
// function, so the return address it leaves is the first byte after
// finish.  Where after_finish starts right there, a lookup of the return
// address as it is finds after_finish's entry row (RA still in the link
// register): the kernel's rules stop the walk there (no coverage, no
// wrong frame), topmost=ignore re-reads the link register and repeats a
// frame from the first instruction of sys_exit_group on, and ra-1 finds
// finish's own row (complete stacks).  Where padding separates them the
// return address is in no FDE and both policies stop for lack of data.
func TestNoreturnBoundary(t *testing.T) {
	for _, cfg := range allCfgs {
		t.Run(cfg, func(t *testing.T) {
			b := find(t, cfg, "fprra")
			data, err := os.ReadFile(b.Path)
			require.NoError(t, err)
			obj, err := unwind.NewObject(b.Path, data)
			require.NoError(t, err)
			syms, err := unwind.ReadSymbols(obj)
			require.NoError(t, err)
			exit, ok := syms.Addr("sys_exit_group")
			require.True(t, ok)
			after, ok := syms.Addr("after_finish")
			require.True(t, ok)
			var finishEnd uint64
			es, err := obj.ELF.Symbols()
			require.NoError(t, err)
			for _, e := range es {
				if e.Name == "finish" {
					finishEnd = e.Value + e.Size
				}
			}
			require.NotZero(t, finishEnd)
			adjacent := finishEnd == after

			def := check(t, b, unwind.CheckOptions{Methods: sframeOnly}, false)
			ignore := check(t, b, unwind.CheckOptions{Methods: sframeOnly, Policy: policy(t, "topmost=ignore"), Examples: 1}, false)
			ra1 := check(t, b, unwind.CheckOptions{Methods: sframeOnly, Policy: policy(t, "lookup=ra-1")}, false)
			for i := range def.Methods {
				d, ig, r1 := def.Methods[i], ignore.Methods[i], ra1.Methods[i]
				assert.Zero(t, d.Diverge, "%s default", d.Method)
				assert.NotZero(t, d.Incomplete, "%s default: the walks from sys_exit_group stop at finish's return address", d.Method)
				assert.Zero(t, r1.Diverge, "%s ra-1", d.Method)
				assert.Zero(t, r1.Incomplete, "%s ra-1", d.Method)
				if !adjacent {
					assert.Equal(t, d.Incomplete, d.IncompleteBy[unwind.StopNoData], "%s: padding after finish", d.Method)
					assert.Equal(t, d.Diverge, ig.Diverge)
					continue
				}
				assert.Equal(t, d.Incomplete, d.IncompleteBy[unwind.StopTopmostOnly], "%s: RA in the link register at frame 1", d.Method)
				require.NotZero(t, ig.Diverge, "%s topmost=ignore", d.Method)
				assert.Equal(t, d.Incomplete, ig.Diverge, "%s: every check without coverage becomes a wrong one", d.Method)
				x := ig.Examples[0]
				assert.Equal(t, exit, x.PC, "%s: first divergence at sys_exit_group's first instruction", d.Method)
				assert.Equal(t, 2, x.Frame)
				assert.Equal(t, after, x.Walk.PCs[1])
				assert.Equal(t, after, x.Walk.PCs[2], "the frame repeats")
				assert.NotEqual(t, after, x.Expected[2])
			}
		})
	}
}
