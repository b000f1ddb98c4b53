package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/unwind"
)

// bundled is a bundled binary's path relative to this package, so that
// reports do not depend on where the repository is.
func bundled(config, name string) string {
	return filepath.Join("..", "..", "programs", "bin", config, name)
}

func TestUnwindCheck(t *testing.T) {
	st, out, errs := run(t, "unwind", "check", bundled("aarch64-O2", "fib"), "12")
	require.Equal(t, 0, st, "%s\n%s", out, errs)
	assert.Contains(t, errs, "fib(12) = 144", "the guest's output goes to stderr")
	assert.Contains(t, out, "policy lookup=ra,topmost=enforce,depth=127,gap=stop,pac=strip")
	assert.Regexp(t, `(?m)^sframe +(\d+) +(\d+) +0 +0 `, out)
	assert.Regexp(t, `(?m)^eh_frame +(\d+) +(\d+) +0 +0 `, out)
	assert.NotContains(t, out, "\nfp ")

	// Divergences where the data claims coverage: exit status 1.
	st, out, _ = run(t, "unwind", "check", "--pauth", "--unwind-policy", "pac=keep", "--examples", "1", bundled("aarch64-O2", "pacret"))
	assert.Equal(t, 1, st)
	assert.Contains(t, out, "divergence 1: pc 0x4000f4 main+0x4 (instruction 8): wrong frame 1")
	assert.Regexp(t, `>1 +0x400240 _start\+0x1c +0x[0-9a-f]{1,2}000000400240 \?`, out, "frame 1 is the signed return address")

	// The frame chain diverges but claims no coverage: exit status 0.
	st, out, _ = run(t, "unwind", "check", "--method", "fp", bundled("s390x-O2", "fib"))
	assert.Equal(t, 0, st)
	assert.Contains(t, out, "(no unwind data: does not set the exit status)")

	st, out, errs = run(t, "unwind", "check", "--method", "all", "--stats", bundled("s390x-O2", "fprra"))
	assert.Equal(t, 0, st)
	assert.Contains(t, out, "no coverage: 5 checks stopped by topmost-only rule in an outer frame")
	assert.Regexp(t, `frame checks: \d+ \([0-9.]+ M/s\)`, errs)
	st, out, _ = run(t, "unwind", "check", "--every", "10", bundled("s390x-O2", "fprra"))
	assert.Equal(t, 0, st)
	assert.Contains(t, out, "every 10 instructions")
	assert.Contains(t, out, "9888 instructions, 989 checked")
}

// TestUnwindCheckGuestFlags: unwind check shapes the guest's Linux as
// run does (-L, --strace, --root, --read-only, --max-memory).
func TestUnwindCheckGuestFlags(t *testing.T) {
	wc := filepath.Join("..", "..", "programs", "dynamic", "bin", "aarch64-dyn-O2", "wc")
	st, out, errs := run(t, "unwind", "check", "--strace", "--every", "1000", wc, "unwind_test.go")
	require.Contains(t, out, "exit status 0", errs)
	assert.Less(t, st, 2, "0, or 1 for divergences (in the shared objects: issue [4/8])")
	assert.Contains(t, errs, `openat(AT_FDCWD, "unwind_test.go", O_RDONLY) = 3`)
	st, _, errs = run(t, "unwind", "check", "--every", "1000", "-L", t.TempDir(), wc)
	assert.NotEqual(t, 0, st, "an empty sysroot has no interpreter")
	assert.Contains(t, errs, "ld-linux-aarch64.so.1")
}

// TestUnwindCheckExpect: divergences an expectations file explains do
// not set the exit status, and the report says which line explained how
// many; a bad file is a usage error naming the line.
func TestUnwindCheckExpect(t *testing.T) {
	pacret := bundled("aarch64-O2", "pacret")
	dir := t.TempDir()
	all := filepath.Join(dir, "all.expect")
	require.NoError(t, os.WriteFile(all, []byte("# every divergence of pacret under pac=keep\nat=* -- the signed return addresses (pac=keep)\n"), 0o644))
	st, out, _ := run(t, "unwind", "check", "--pauth", "--unwind-policy", "pac=keep", "--expect", all, pacret)
	assert.Equal(t, 0, st, out)
	assert.Regexp(t, `(?m)^sframe +\d+ +\d+ +0 `, out)
	assert.Regexp(t, `expected divergences \(--expect\): [1-9]\d*, not counted above`, out)
	assert.Regexp(t, `line 2: [1-9]\d* divergences: the signed return addresses \(pac=keep\)`, out)

	main := filepath.Join(dir, "main.expect")
	require.NoError(t, os.WriteFile(main, []byte("at=main -- only main's\n"), 0o644))
	st, _, _ = run(t, "unwind", "check", "--pauth", "--unwind-policy", "pac=keep", "--expect", main, pacret)
	assert.Equal(t, 1, st, "divergences elsewhere still fail")

	bad := filepath.Join(dir, "bad.expect")
	require.NoError(t, os.WriteFile(bad, []byte("\nat=main\n"), 0o644))
	st, _, errs := run(t, "unwind", "check", "--expect", bad, pacret)
	assert.Equal(t, 2, st)
	assert.Contains(t, errs, "bad.expect:2: no reason")
	st, _, errs = run(t, "unwind", "check", "--expect", filepath.Join(dir, "none"), pacret)
	assert.Equal(t, 1, st)
	assert.Contains(t, errs, "--expect: open ")
}

// TestUnwindCheckGolden pins the whole report of a small run.
func TestUnwindCheckGolden(t *testing.T) {
	st, out, errs := run(t, "unwind", "check", "--method", "all", "--examples", "2", bundled("s390x-O0", "hello"))
	require.Equal(t, 0, st, errs)
	golden(t, "unwind-check-hello-s390x-O0.txt", out)
}

func TestUnwindUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"unwind"}, "Subcommands:"},
		{[]string{"unwind", "frob"}, `unknown subcommand "frob"`},
		{[]string{"unwind", "check"}, "no program given"},
		{[]string{"unwind", "check", "--unwind-policy", "lookup=up", "x"}, "lookup=up: want ra or ra-1"},
		{[]string{"unwind", "check", "--method", "guess", "x"}, `unknown unwind method "guess"`},
		{[]string{"unwind", "check", "--sframe", "maybe", "x"}, "want auto, section or emit"},
		{[]string{"unwind", "check", "--sframe-version", "1", "x"}, "want 2 or 3"},
	} {
		st, _, errs := run(t, tc.args...)
		assert.Equal(t, 2, st, "%v", tc.args)
		assert.Contains(t, errs, tc.want, "%v", tc.args)
	}
	st, _, errs := run(t, "unwind", "check", "--pauth", bundled("s390x-O2", "hello"))
	assert.Equal(t, 1, st)
	assert.Contains(t, errs, "--pauth: the s390x core has no pointer authentication")
	st, _, errs = run(t, "unwind", "check", "--sframe", "section", bundled("s390x-O2", "hello"))
	assert.Equal(t, 1, st)
	assert.Contains(t, errs, "no .sframe section")

	st, out, _ := run(t, "unwind", "policies")
	require.Equal(t, 0, st)
	for _, sw := range unwind.PolicySwitches {
		assert.Contains(t, out, sw.Key+"="+sw.Value)
	}
	assert.True(t, strings.HasPrefix(out, "lookup=ra (default)\n"), out)
}
