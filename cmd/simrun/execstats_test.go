package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunStatsAfterExec: when the first process calls execve (here the
// aarch64 crossexec runs the s390x fib), --stats counts the program it
// ended in, as a run of that program alone does, and a fault is
// explained in that program's symbols.
func TestRunStatsAfterExec(t *testing.T) {
	const exec = "../../programs/procs/bin/aarch64-proc-O2/crossexec"
	const fib = "../../programs/bin/s390x-O2/fib"
	stat := func(args ...string) (string, string) {
		var stdout, stderr bytes.Buffer
		st := mainStatus(append([]string{"run", "--clean-env", "--stats"}, args...), strings.NewReader(""), &stdout, &stderr)
		line := regexp.MustCompile(`(?m)^instructions: \d+\nsyscalls: \d+$`).FindString(stderr.String())
		require.NotEmpty(t, line, stderr.String())
		return stdout.String() + "status " + strconv.Itoa(st), line
	}
	out, direct := stat(fib, "20")
	eout, after := stat(exec, "exec", fib, fib, "20")
	require.Equal(t, out, eout)
	require.Equal(t, direct, after, "the exec'd program's figures")

	var stdout, stderr bytes.Buffer
	require.Equal(t, 152, mainStatus([]string{"run", "--clean-env", "--max-insns", "1000000", exec, "exec", fib, fib, "30"},
		strings.NewReader(""), &stdout, &stderr))
	require.Regexp(t, `s390x fault at pc 0x[0-9a-f]+: instruction limit reached: .* in fib_rec\+0x[0-9a-f]+ \(src/fib.c:\d+\)\n`, stderr.String())
	require.Contains(t, stderr.String(), "in main+", "the backtrace is fib's")
}
