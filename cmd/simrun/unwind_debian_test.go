package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs/debian"
	"simrun/sim/linux"
	"simrun/sim/unwind"
)

// debianUnwindCases are the Debian programs TestUnwindDebian checks: each
// crosses the program, libc and ld.so (lazy binding included).
var debianUnwindCases = []struct {
	name string
	args []string
}{
	{"ls", []string{"/bin/ls", "-l", "-n", "--time-style=+%Y", "tree"}},
	{"sort", []string{"/usr/bin/sort", "text.txt"}},
	{"grep", []string{"/bin/grep", "-c", "the", "text.txt"}},
	{"sed", []string{"/bin/sed", "s/e/E/g", "text.txt"}},
	{"gzip", []string{"/bin/gzip", "-c", "text.txt"}},
	{"md5sum", []string{"/usr/bin/md5sum", "text.txt"}},
}

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
	var lines []string
	for _, arch := range []string{"arm64", "s390x"} {
		sysroot, err := debian.Sysroot(arch)
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		for _, c := range debianUnwindCases {
			dir := t.TempDir()
			require.NoError(t, debian.Prepare(dir))
			prog := filepath.Join(sysroot, c.args[0])
			data, err := os.ReadFile(prog)
			require.NoError(t, err)
			m, err := linux.New(prog, data, linux.Config{Args: append([]string{prog}, c.args[1:]...),
				Seed: 1, Sysroot: sysroot, Dir: dir, MaxInsns: 2e8})
			require.NoError(t, err)
			for _, e := range expect {
				e.Matched = 0
			}
			r, err := checkMachine(m, prog, data, unwind.CheckOptions{Every: 5, Expect: expect})
			require.NoError(t, err)
			require.NotNil(t, r.Exit)
			require.Nil(t, r.Exit.Fault, "%s/%s runs to its end", arch, c.name)
			for _, mr := range r.Methods {
				if mr.Diverge > 0 {
					var b strings.Builder
					_ = r.Write(&b)
					t.Errorf("%s/%s: %s diverges where unwind.expect explains nothing:\n%s", arch, c.name, mr.Method, b.String())
				}
				objs := make([]string, 0, len(mr.ByObject))
				for o := range mr.ByObject {
					objs = append(objs, o)
				}
				sort.Strings(objs)
				for _, o := range objs {
					n := mr.ByObject[o]
					lines = append(lines, fmt.Sprintf("%-6s %-7s %-9s %-26s %8d %8d %6d %6d", arch, c.name, mr.Method,
						filepath.Base(o), n.Checked, n.Agree, n.Incomplete, n.Expected))
				}
			}
			for _, e := range expect {
				if e.Matched > 0 {
					lines = append(lines, fmt.Sprintf("    expected %7d  line %d of unwind.expect", e.Matched, e.Line))
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	out := "# unwind check --every 5 on Debian programs, per object (go test ./cmd/simrun -run TestUnwindDebian -update)\n" +
		"# arch, program, method, object: checked, agree, no coverage, expected divergences\n" + strings.Join(lines, "\n") + "\n"
	golden(t, "unwind-debian.txt", out)
}
