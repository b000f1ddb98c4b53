package unwind_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/linux"
	"simrun/sim/unwind"
)

// check runs `unwind check` on a bundled binary.
func check(t *testing.T, b programs.Binary, opt unwind.CheckOptions, pauth bool) *unwind.Report {
	return checkAs(t, b, b.Path, opt, pauth)
}

// checkAs is check with the guest seeing the program at path (argv[0],
// AT_EXECFN, /proc/self/exe): glibc's start-up work depends on its length.
func checkAs(t *testing.T, b programs.Binary, path string, opt unwind.CheckOptions, pauth bool) *unwind.Report {
	t.Helper()
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	m, err := linux.New(path, data, linux.Config{Args: append([]string{path}, b.Args...), Seed: 1})
	require.NoError(t, err)
	if pauth {
		m.Core.(interface{ EnablePAuth(uint64) }).EnablePAuth(1)
	}
	obj, err := unwind.NewObject(b.Path, data)
	require.NoError(t, err)
	c, err := unwind.NewChecker(m, obj, opt)
	require.NoError(t, err)
	r, err := c.Run()
	require.NoError(t, err)
	return r
}

func report(r *unwind.Report) string {
	var b bytes.Buffer
	_ = r.Write(&b)
	return b.String()
}

// TestCheckPrograms is the acceptance check: on every bundled program in
// every configuration, SFrame (emitted from .eh_frame, V3) and eh_frame
// agree with the truth at every instruction they cover, prologues and
// epilogues included; the frame chain is reported too.  The coverage is
// kept in testdata/coverage.txt (go test -run TestCheckPrograms -update
// after a deliberate change).  With -short every 29th instruction is
// checked and the file is not compared.
func TestCheckPrograms(t *testing.T) {
	every := uint64(1)
	if testing.Short() {
		every = 29
	}
	bins := programs.Binaries("")
	lines := make([]string, len(bins))
	var mu sync.Mutex
	t.Run("all", func(t *testing.T) {
		for i, b := range bins {
			t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
				t.Parallel()
				r := check(t, b, unwind.CheckOptions{Methods: unwind.Methods, Every: every}, false)
				require.NotNil(t, r.Exit)
				require.Nil(t, r.Exit.Fault, "the program runs to its end")
				_, status, err := b.Expected()
				require.NoError(t, err)
				assert.Equal(t, status, r.Exit.Status)
				assert.Zero(t, r.Truth.Mismatched, "every return went to its call")
				line := fmt.Sprintf("%-12s %-10s %9d %5d", b.Config.Name, b.Name, r.Checked, r.Truth.MaxDepth+1)
				for _, m := range r.Methods {
					assert.Equal(t, m.Checked, m.Agree+m.Diverge+m.Incomplete)
					if m.HasData {
						assert.Zero(t, m.Diverge, "%s diverges:\n%s", m.Method, report(r))
					}
					line += fmt.Sprintf("  %9d %9d %6d", m.Agree, m.Diverge, m.Incomplete)
				}
				mu.Lock()
				lines[i] = line
				mu.Unlock()
			})
		}
	})
	if testing.Short() || t.Failed() {
		return
	}
	var out strings.Builder
	out.WriteString("# unwind check --method all --every 1 on every bundled program (go test ./sim/unwind -run TestCheckPrograms -update)\n")
	out.WriteString("# per method: agree, diverge, no coverage (instructions)\n")
	fmt.Fprintf(&out, "%-12s %-10s %9s %5s  %-26s  %-26s  %-26s\n", "config", "program", "checked", "depth", "sframe", "eh_frame", "fp (no unwind data)")
	sort.Strings(lines)
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	golden(t, filepath.Join("testdata", "coverage.txt"), out.String())
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run go test ./sim/unwind -run %s -update", t.Name())
	assert.Equal(t, string(want), got, "%s differs (if the change is deliberate: go test ./sim/unwind -run %s -update)", file, t.Name())
}

// TestCheckCanFail: the checker is not blind — the frame chain diverges
// on an -O2 program whose leaves have no frame records, and an SFrame
// section emitted as binutils 2.45 did (V2, no RA-undefined rows, so
// _start has no FDE) leaves the outermost frame without coverage.
func TestCheckCanFail(t *testing.T) {
	b, err := programs.Find("aarch64-O2", "fib")
	require.NoError(t, err)
	r := check(t, b, unwind.CheckOptions{Methods: []unwind.Method{unwind.MethodFP}}, false)
	fp := r.Methods[0]
	assert.NotZero(t, fp.Diverge)
	assert.False(t, r.Failed(), "the frame chain claims no coverage")
	require.NotEmpty(t, fp.Examples)
	d := fp.Examples[0]
	assert.NotEqual(t, d.Expected, d.Walk.PCs)

}

// TestSFrameVersions: V3 marks _start's return address undefined (the
// walk ends at the outermost frame); V2, as binutils 2.45 emitted it, has
// no FDE for _start (the walk ends for lack of data, after the same
// frames).
func TestSFrameVersions(t *testing.T) {
	b, err := programs.Find("s390x-O2", "fib")
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	obj, err := unwind.NewObject(b.Path, data)
	require.NoError(t, err)
	m, err := linux.New(b.Path, data, linux.Config{})
	require.NoError(t, err)
	_, err = m.RunFor(20) // into main
	require.NoError(t, err)
	for _, tc := range []struct {
		version uint8
		stop    unwind.StopKind
	}{{3, unwind.StopOutermost}, {2, unwind.StopNoData}} {
		tr, err := unwind.NewTracer(obj, unwind.Options{Method: unwind.MethodSFrame, SFrame: unwind.SFrameEmit, SFrameVersion: tc.version})
		require.NoError(t, err)
		assert.Contains(t, tr.Source, fmt.Sprintf("SFrame V%d emitted", tc.version))
		var w unwind.Walk
		tr.Walk(m.Mem, m.Core.PC(), unwind.CoreRegs(m), &w)
		assert.Len(t, w.PCs, 2, "main and _start")
		name, _ := tr.Syms.Func(w.PCs[1])
		assert.Equal(t, "_start", name)
		assert.Equal(t, tc.stop, w.Stop.Kind, "V%d: %s", tc.version, w.Stop)
	}
}

// glibcCheckArches are the architectures whose glibc programs run to their
// end in simrun (s390x joins when its glibc start-up runs; issue 8).
var glibcCheckArches = []string{"arm64", "s390x"}

// ehReturnFuncs are libgcc's functions that leave through
// __builtin_eh_return: before their epilogue jumps to the landing pad,
// uw_install_context_1 overwrites the registers they saved with the
// handler's values, so every unwinder that reads those slots (SFrame and
// eh_frame alike) finds the handler's frame there instead of the caller.
var ehReturnFuncs = map[string]bool{"_Unwind_RaiseException": true, "_Unwind_Resume": true,
	"_Unwind_Resume_or_Rethrow": true, "_Unwind_ForcedUnwind": true}

// TestCheckGlibc runs the check on the glibc programs.  SFrame and
// eh_frame agree with the truth wherever they claim coverage except at
// two documented places, which the test pins:
//   - __wrap_main: glibc's start.S places it inside _start, whose FDE
//     marks the return address undefined, so every CFI unwinder takes
//     it for the outermost frame (2 instructions per program);
//   - the eh_return window of ehReturnFuncs (exceptions only);
//   - s390x __longjmp's last instruction (br %r4): it runs after
//     lgr %r15,%r5 has loaded the setjmp caller's stack pointer, but
//     glibc's CFI still says CFA = r15+160 there, so the step from
//     __libc_siglongjmp reads the wrong frame (once per longjmp).
//
// eh_frame also stops inside __longjmp, whose CFI describes the setjmp
// caller's frame (CFA = x0, the jmp_buf) rather than the caller: the
// sanity check rejects it as a bad frame (gas drops that FDE, so SFrame
// has no coverage there).  Coverage is kept in
// testdata/coverage-glibc.txt.
func TestCheckGlibc(t *testing.T) {
	every := uint64(3)
	if testing.Short() {
		every = 101
	}
	var bins []programs.Binary
	for _, a := range glibcCheckArches {
		bins = append(bins, programs.GlibcBinaries(a)...)
	}
	require.NotEmpty(t, bins)
	lines := make([]string, len(bins))
	t.Run("all", func(t *testing.T) {
		for i, b := range bins {
			t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
				t.Parallel()
				// The same path wherever the repository is, so the counts
				// do not depend on the checkout.
				path := "/simrun/programs/glibc/bin/" + b.Config.Name + "/" + b.Name
				r := checkAs(t, b, path, unwind.CheckOptions{Every: every}, false)
				require.NotNil(t, r.Exit)
				require.Nil(t, r.Exit.Fault, "the program runs to its end")
				assert.Zero(t, r.Truth.Mismatched, "every return went to its call")
				line := fmt.Sprintf("%-16s %-10s %9d %5d", b.Config.Name, b.Name, r.Checked, r.Truth.MaxDepth+1)
				var places []string
				for _, m := range r.Methods {
					line += fmt.Sprintf("  %9d %7d %6d", m.Agree, m.Diverge, m.Incomplete)
					for _, p := range m.TopPlaces(len(m.ByPlace)) {
						fn, row := r.Syms.Name(p.Func), r.Syms.Name(p.Row)
						places = append(places, fmt.Sprintf("    %-8s %7d  in %s, row of %s", m.Method, p.N, fn, row))
						switch {
						case fn == "__wrap_main" && row == fn:
						case ehReturnFuncs[row] && b.Name == "exceptions":
						case m.Method == unwind.MethodEHFrame && fn == "__longjmp" && row == fn:
						case b.Config.Arch == "s390x" && fn == "__longjmp" && row == "__libc_siglongjmp":
						default:
							t.Errorf("%s diverges in %s (row of %s) %d times:\n%s", m.Method, fn, row, p.N, report(r))
						}
					}
				}
				lines[i] = strings.Join(append([]string{line}, places...), "\n")
			})
		}
	})
	if testing.Short() || t.Failed() {
		return
	}
	var out strings.Builder
	fmt.Fprintf(&out, "# unwind check --every %d on the glibc programs (go test ./sim/unwind -run TestCheckGlibc -update)\n", every)
	out.WriteString("# per method: agree, diverge, no coverage (instructions); then where each method diverges\n")
	fmt.Fprintf(&out, "%-16s %-10s %9s %5s  %-24s  %-24s\n", "config", "program", "checked", "depth", "sframe", "eh_frame")
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	golden(t, filepath.Join("testdata", "coverage-glibc.txt"), out.String())
}
