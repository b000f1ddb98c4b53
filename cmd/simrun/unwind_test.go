package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
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
	assert.Contains(t, out, "policy lookup=ra,topmost=enforce,depth=127,gap=stop,pac=strip,signal=stop")
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

// TestUnwindCheckThreads: the thread programs, static and dynamic, both
// architectures, under unwind check with the glibc expectations: every
// thread's truth is its own (each thread's calls match its returns;
// the workers' stacks are shallower than the main thread's, which one
// shared stack could not show), every thread is checked, and SFrame and
// eh_frame agree with the truth wherever they claim coverage except where
// glibc.expect explains it (a new thread's first instructions in clone,
// ld.so's lazy-binding trampoline). A shadow stack shared by the threads
// fails it: a worker's return pops another thread's frame.
func TestUnwindCheckThreads(t *testing.T) {
	expect := filepath.Join("..", "..", "sim", "unwind", "testdata", "glibc.expect")
	names := map[string]bool{"racy": true, "worksplit": true, "prodcons": true, "barrier": true, "tls": true}
	every := "7"
	if testing.Short() {
		names = map[string]bool{"racy": true, "prodcons": true}
		every = "97"
	}
	threadLine := regexp.MustCompile(`(?m)^  thread (\d+): \d+ calls, \d+ returns, max depth (\d+), (\d+) mismatched returns$`)
	tallyLine := regexp.MustCompile(`(?m)^    tid (\d+) +(\d+) checked +\d+ agree +(\d+) diverge`)
	for _, b := range programs.ThreadBinaries("") {
		if !names[b.Name] {
			continue
		}
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			if b.Config.Dynamic {
				if _, err := os.Stat(linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))); err != nil {
					t.Skipf("no %s cross libc to load the program with", b.Config.Arch)
				}
			}
			st, out, errs := run(t, "unwind", "check", "--every", every, "--expect", expect, b.Path)
			require.Equal(t, 0, st, "%s\n%s", out, errs)
			assert.Contains(t, out, "exit status 0")
			assert.Regexp(t, `(?m)^sframe +\d+ +\d+ +0 `, out)
			assert.Regexp(t, `(?m)^eh_frame +\d+ +\d+ +0 `, out)
			assert.Contains(t, out, "truth: ")
			assert.Regexp(t, `(?m)^truth: .*, 0 mismatched returns`, out)
			threads := threadLine.FindAllStringSubmatch(out, -1)
			require.GreaterOrEqual(t, len(threads), 3, "the main thread and its workers each have a truth:\n%s", out)
			require.Equal(t, "1000", threads[0][1])
			mainDepth, _ := strconv.Atoi(threads[0][2])
			for _, th := range threads[1:] {
				d, _ := strconv.Atoi(th[2])
				assert.Less(t, d, mainDepth, "thread %s starts at its start routine, not under main", th[1])
				assert.Equal(t, "0", th[3], "thread %s: mismatched returns", th[1])
			}
			tallies := tallyLine.FindAllStringSubmatch(out, -1)
			require.Len(t, tallies, 2*len(threads), "a by-thread line per thread and method")
			for _, tl := range tallies {
				assert.NotEqual(t, "0", tl[2], "thread %s checked", tl[1])
				assert.Equal(t, "0", tl[3], "thread %s diverges", tl[1])
			}
		})
	}
}

// TestUnwindCheckSignals: a handler's frames sit on a signal frame of the
// truth (handler, trampoline, interrupted pc, its callers) that
// rt_sigreturn pops, so no return of a handler is a mismatch: before,
// the handler's return to the trampoline was one. Each handler that
// returns pops its signal frame.
func TestUnwindCheckSignals(t *testing.T) {
	expect := filepath.Join("..", "..", "sim", "unwind", "testdata", "glibc.expect")
	for _, b := range programs.SignalBinaries("") {
		if b.Name != "handler" {
			continue
		}
		t.Run(b.Config.Name, func(t *testing.T) {
			every := "3"
			if testing.Short() {
				every = "31"
			}
			st, out, errs := run(t, "unwind", "check", "--every", every, "--expect", expect, b.Path)
			require.Equal(t, 0, st, "%s\n%s", out, errs)
			m := regexp.MustCompile(`(?m)^truth: .*, (\d+) mismatched returns, (\d+) signal frames, (\d+) popped by rt_sigreturn$`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			assert.Equal(t, "0", m[1])
			assert.NotEqual(t, "0", m[2])
			assert.Equal(t, m[2], m[3], "every handler of handler.c returns")
		})
	}
}

// TestUnwindSignalPolicy pins what each signal= policy does at the
// trampoline: signal=stop ends the walks made inside a handler there (no
// coverage past it), signal=frame goes on through the signal frame to the
// interrupted function and its callers and agrees with the truth, with
// no divergence the default policy does not also have.
func TestUnwindSignalPolicy(t *testing.T) {
	row := regexp.MustCompile(`(?m)^sframe +(\d+) +(\d+) +(\d+) +(\d+) +\d+$`)
	counts := func(t *testing.T, path, policy string) (checked, agree, diverge, none int) {
		st, out, errs := run(t, "unwind", "check", "--every", "7", "--method", "sframe", "--unwind-policy", policy, path)
		require.Contains(t, []int{0, 1}, st, errs)
		m := row.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		n := make([]int, 4)
		for i := range n {
			n[i], _ = strconv.Atoi(m[i+1])
		}
		return n[0], n[1], n[2], n[3]
	}
	for _, b := range programs.SignalBinaries("") {
		if b.Name != "handler" {
			continue
		}
		t.Run(b.Config.Name, func(t *testing.T) {
			checked, agreeStop, divStop, noneStop := counts(t, b.Path, "signal=stop")
			_, agreeFrame, divFrame, noneFrame := counts(t, b.Path, "signal=frame")
			assert.Greater(t, noneStop, checked/2, "handler.c spends most of its time in handlers: signal=stop leaves them uncovered")
			assert.Less(t, noneFrame, checked/20, "signal=frame walks out of the handlers")
			assert.Equal(t, divStop, divFrame)
			assert.Equal(t, agreeStop+noneStop, agreeFrame+noneFrame)
		})
	}
}
