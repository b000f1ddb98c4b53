package unwind_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// glibcExpectations reads testdata/glibc.expect, the known divergences of
// the glibc programs (a fresh copy: each check counts its own matches).
func glibcExpectations(t *testing.T) []*unwind.Expectation {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "glibc.expect"))
	require.NoError(t, err)
	defer f.Close()
	e, err := unwind.ParseExpectations(f, "glibc.expect")
	require.NoError(t, err)
	return e
}

// TestCheckGlibc runs the check on the glibc programs with the known
// divergences of testdata/glibc.expect (the reasons are there): SFrame and
// eh_frame agree with the truth wherever they claim coverage except where
// that file explains why, and testdata/coverage-glibc.txt pins the counts.
//
// eh_frame also stops inside __longjmp, whose CFI describes the setjmp
// caller's frame (CFA = x0, the jmp_buf) rather than the caller: the
// sanity check rejects it as a bad frame (gas drops that FDE, so SFrame
// has no coverage there).
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
				expect := glibcExpectations(t)
				r := checkAs(t, b, path, unwind.CheckOptions{Every: every, Expect: expect}, false)
				require.NotNil(t, r.Exit)
				require.Nil(t, r.Exit.Fault, "the program runs to its end")
				assert.Zero(t, r.Truth.Mismatched, "every return went to its call")
				line := fmt.Sprintf("%-16s %-10s %9d %5d", b.Config.Name, b.Name, r.Checked, r.Truth.MaxDepth+1)
				for _, m := range r.Methods {
					line += fmt.Sprintf("  %9d %7d %6d %5d", m.Agree, m.Diverge, m.Incomplete, m.Expected)
					if m.Diverge > 0 {
						t.Errorf("%s diverges where testdata/glibc.expect explains nothing:\n%s", m.Method, report(r))
					}
				}
				var places []string
				for _, e := range expect {
					if e.Matched > 0 {
						places = append(places, fmt.Sprintf("    expected %7d  line %d of glibc.expect", e.Matched, e.Line))
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
	out.WriteString("# per method: agree, diverge, no coverage, expected (instructions); then the expectations of testdata/glibc.expect that held\n")
	fmt.Fprintf(&out, "%-16s %-10s %9s %5s  %-31s  %-31s\n", "config", "program", "checked", "depth", "sframe", "eh_frame")
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	golden(t, filepath.Join("testdata", "coverage-glibc.txt"), out.String())
}

// TestExpectNamelessCode: the conditions that find code without a name
// explain in a checked run what the named lines of glibc.expect explain
// in the glibc jumps program: arm64 __longjmp by its row's CFA register
// (cfa=x0), s390x __longjmp's last instruction by its address (pc=).
func TestExpectNamelessCode(t *testing.T) {
	for _, tc := range []struct {
		arch  string
		named string // the line of glibc.expect replaced
		cond  func(r *unwind.Report) []string
	}{
		{"arm64", "method=eh_frame at=__longjmp row=__longjmp", func(*unwind.Report) []string { return []string{"method=eh_frame cfa=x0"} }},
		{"s390x", "at=__longjmp row=__libc_siglongjmp", func(r *unwind.Report) []string {
			// the pcs where the named line's divergences happen, as
			// linked (a static program: its pcs)
			seen := map[uint64]bool{}
			var out []string
			for _, m := range r.Methods {
				for _, d := range m.Examples {
					if !seen[d.PC] {
						seen[d.PC] = true
						out = append(out, fmt.Sprintf("pc=jumps+%#x", d.PC))
					}
				}
			}
			return out
		}},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			var b programs.Binary
			for _, x := range programs.GlibcBinaries(tc.arch) {
				if x.Name == "jumps" {
					b = x
				}
			}
			require.NotEmpty(t, b.Path)
			text, err := os.ReadFile(filepath.Join("testdata", "glibc.expect"))
			require.NoError(t, err)
			line := slices.IndexFunc(strings.Split(string(text), "\n"), func(l string) bool { return strings.HasPrefix(l, tc.named+" -- ") }) + 1
			all := glibcExpectations(t)
			var named *unwind.Expectation
			var rest []*unwind.Expectation
			for _, e := range all {
				if e.Line == line {
					named = e
				} else {
					rest = append(rest, e)
				}
			}
			require.NotNil(t, named, "glibc.expect has %q", tc.named)
			path := "/simrun/programs/glibc/bin/" + b.Config.Name + "/" + b.Name
			with := checkAs(t, b, path, unwind.CheckOptions{Every: 3, Expect: all}, false)
			require.NotZero(t, named.Matched, "the named line explains divergences")
			without := checkAs(t, b, path, unwind.CheckOptions{Every: 3, Expect: rest, Examples: 1000}, false)
			lines := tc.cond(without)
			require.NotEmpty(t, lines)
			var by []*unwind.Expectation
			for _, l := range lines {
				e, err := unwind.ParseExpectations(strings.NewReader(l+" -- nameless\n"), "test")
				require.NoError(t, err)
				by = append(by, e...)
			}
			r := checkAs(t, b, path, unwind.CheckOptions{Every: 3, Expect: append(rest, by...)}, false)
			var matched uint64
			for _, e := range by {
				matched += e.Matched
			}
			assert.Equal(t, named.Matched, matched, "%v explain what %q did", lines, tc.named)
			for i, m := range r.Methods {
				assert.Zero(t, m.Diverge, "%s", m.Method)
				assert.Equal(t, with.Methods[i].Expected, m.Expected, "%s", m.Method)
			}
		})
	}
}
