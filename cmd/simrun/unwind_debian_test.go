package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs/debian"
	"simrun/sim/linux"
	"simrun/sim/unwind"
)

// debianUnwindSubset are the cases of programs/debian's table that
// TestUnwindDebian checks by default: each crosses the program, libc and
// ld.so (lazy binding included); SIMRUN_UNWIND_ALL=1 checks every case
// (nightly-style: about ten minutes) against testdata/unwind-debian-all.txt,
// SIMRUN_UNWIND_ALL=REGEXP the cases it matches (no golden table; -v
// shows their lines).
var debianUnwindSubset = map[string]bool{"ls-long": true, "sort": true, "grep": true, "sed": true, "gzip-stdout": true, "md5sum": true}

// TestUnwindDebian runs `unwind check` (SFrame and eh_frame, every 5th
// instruction) over Debian programs on both architectures and keeps the
// coverage per object (the program, libc, ld.so) in
// testdata/unwind-debian.txt (-update after a deliberate change). Every
// divergence must be one that programs/debian/unwind.expect explains by
// the object's own unwind data.
func TestUnwindDebian(t *testing.T) {
	f, err := os.Open("../../programs/debian/unwind.expect")
	require.NoError(t, err)
	defer f.Close()
	expect, err := unwind.ParseExpectations(f, "unwind.expect")
	require.NoError(t, err)
	all := os.Getenv("SIMRUN_UNWIND_ALL")
	pick := func(name string) bool { return debianUnwindSubset[name] }
	switch all {
	case "":
	case "1":
		pick = func(string) bool { return true }
	default:
		re, err := regexp.Compile("^(" + all + ")$")
		require.NoError(t, err, "SIMRUN_UNWIND_ALL")
		pick = re.MatchString
	}
	var lines []string
	for _, arch := range []string{"arm64", "s390x"} {
		sysroot, err := debian.Sysroot(arch)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		for _, c := range debian.Cases {
			if !pick(c.Name) {
				continue
			}
			// The steps run one after another in one directory, as
			// programs/debian runs them; each is checked on its own.
			// The directory's name is the same in every run: programs
			// see it (make's CURDIR, getcwd), and a name of another
			// length or other bytes (t.TempDir's random part) changed
			// their instruction counts, so the table's.
			dir := filepath.Join(os.TempDir(), "simrun-unwind-debian", arch+"-"+c.Name)
			require.NoError(t, os.RemoveAll(dir))
			require.NoError(t, os.MkdirAll(dir, 0o755))
			t.Cleanup(func() { os.RemoveAll(dir) })
			require.NoError(t, debian.Prepare(dir))
			for i, st := range c.Steps {
				name := c.Name
				if len(c.Steps) > 1 {
					name = fmt.Sprintf("%s#%d", c.Name, i+1)
				}
				lines = append(lines, checkDebianStep(t, arch, sysroot, dir, name, st, expect)...)
				require.NoError(t, debian.AfterStep(dir, i+1))
			}
		}
	}
	if t.Failed() {
		return
	}
	goldenFile := "unwind-debian.txt"
	switch all {
	case "":
	case "1":
		goldenFile = "unwind-debian-all.txt"
	default: // no golden: the matched cases' lines, for a look (-v)
		t.Log("\n" + strings.Join(lines, "\n"))
		return
	}
	out := "# unwind check --every 5 on Debian programs, per object (go test ./cmd/simrun -run TestUnwindDebian -update; SIMRUN_UNWIND_ALL=1 for every case)\n" +
		"# arch, program, method, object: checked, agree, no coverage, expected divergences\n" + strings.Join(lines, "\n") + "\n"
	golden(t, goldenFile, out)
}

// checkDebianStep runs one step of a Debian case under unwind check and
// returns its lines of the table.
func checkDebianStep(t *testing.T, arch, sysroot, dir, name string, st debian.Step, expect []*unwind.Expectation) []string {
	prog := filepath.Join(sysroot, st.Prog)
	data, err := os.ReadFile(prog)
	require.NoError(t, err)
	m, err := linux.New(prog, data, linux.Config{Args: append([]string{prog}, st.Args...), Stdin: strings.NewReader(st.Stdin),
		Stdout: io.Discard, Stderr: io.Discard, Seed: 1, Sysroot: sysroot, Dir: dir, MaxInsns: 2e9})
	require.NoError(t, err)
	for _, e := range expect {
		e.Matched = 0
	}
	r, err := checkMachine(m, prog, data, unwind.CheckOptions{Every: 5, Expect: expect})
	require.NoError(t, err)
	require.NotNil(t, r.Exit)
	require.Nil(t, r.Exit.Fault, "%s/%s runs to its end", arch, name)
	var lines []string
	for _, mr := range r.Methods {
		if mr.Diverge > 0 {
			var b strings.Builder
			_ = r.Write(&b)
			t.Errorf("%s/%s: %s diverges where unwind.expect explains nothing:\n%s", arch, name, mr.Method, b.String())
		}
		objs := make([]string, 0, len(mr.ByObject))
		for o := range mr.ByObject {
			objs = append(objs, o)
		}
		sort.Strings(objs)
		for _, o := range objs {
			n := mr.ByObject[o]
			lines = append(lines, fmt.Sprintf("%-6s %-7s %-9s %-26s %8d %8d %6d %6d", arch, name, mr.Method,
				filepath.Base(o), n.Checked, n.Agree, n.Incomplete, n.Expected))
		}
	}
	for _, e := range expect {
		if e.Matched > 0 {
			lines = append(lines, fmt.Sprintf("    expected %7d  line %d of unwind.expect", e.Matched, e.Line))
		}
	}
	return lines
}
