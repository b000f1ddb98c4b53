package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/programs"
	"simrun/sim/linux"
)

// run invokes simrun in-process and returns status, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := mainStatus(args, strings.NewReader(""), &out, &errb)
	return st, out.String(), errb.String()
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o755))
	return p
}

// A64 encodings used below.
const (
	a64MovX1_0x100000 = 0xd2a00201 // movz x1, #0x10, lsl #16
	a64MovX1_0x410000 = 0xd2a00821 // movz x1, #0x41, lsl #16
	a64LdrX0X1        = 0xf9400020 // ldr x0, [x1]
	a64BrX1           = 0xd61f0020 // br x1
	a64BSelf          = 0x14000000 // b .
	a64Udf            = 0x00000000 // udf #0
	a64MovX8_94       = 0xd2800bc8 // mov x8, #94 (exit_group)
	a64MovX0_7        = 0xd28000e0 // mov x0, #7
	a64Svc0           = 0xd4000001 // svc #0
)

func a64(words ...uint32) []byte {
	return elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), make([]byte, 64))
}

func TestRunBadInput(t *testing.T) {
	hello, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	helloData, err := os.ReadFile(hello.Path)
	require.NoError(t, err)

	x86 := elftest.Code(elf.EM_X86_64, binary.LittleEndian, []byte{0xc3}, nil)
	outside := (&elftest.File{Machine: elf.EM_AARCH64, Entry: 0x900000, Segments: []elftest.Segment{
		{Vaddr: 0x400000, Data: elftest.Words(binary.LittleEndian, a64Svc0), Flags: elf.PF_R | elf.PF_X}}}).Bytes()

	cases := []struct {
		name   string
		file   []byte
		flags  []string
		status int
		want   []string // substrings of stderr
	}{
		{"not ELF", []byte("#!/bin/sh\necho hi\n"), nil, 1, []string{"not an ELF file"}},
		{"empty file", nil, nil, 1, []string{"not an ELF file"}},
		{"other machine", x86, nil, 1, []string{"ELF machine EM_X86_64 is not supported"}},
		{"truncated segment", helloData[:len(helloData)/4], nil, 1, []string{"truncated"}},
		{"entry outside segments", outside, nil, 1, []string{"entry point 0x900000 is outside every executable segment"}},
		{"undefined instruction", a64(a64Udf), nil, 132, []string{"pc 0x400000", "00000000", "udf", "undefined instruction"}},
		{"unmapped load", a64(a64MovX1_0x100000, a64LdrX0X1), nil, 139,
			[]string{"pc 0x400004", "200040f9", "ldr x0, [x1]", "unmapped address", "0x100000"}},
		{"jump to data", a64(a64MovX1_0x410000, a64BrX1), nil, 139,
			[]string{"pc 0x410000", "bad instruction fetch", "no execute permission"}},
		{"infinite loop", a64(a64BSelf), []string{"--max-insns", "1000"}, 152,
			[]string{"pc 0x400000", "instruction limit reached", "1000 instructions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "prog", tc.file)
			args := append(append([]string{"run"}, tc.flags...), p)
			st, _, stderr := run(t, args...)
			assert.Equal(t, tc.status, st, "stderr: %s", stderr)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
			assert.NotContains(t, stderr, "panic")
			assert.NotContains(t, stderr, "goroutine")
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one-line error, got %q", stderr)
		})
	}
}

func TestRunExitStatusAndStats(t *testing.T) {
	p := writeFile(t, "exit7", a64(a64MovX0_7, a64MovX8_94, a64Svc0))
	st, out, stderr := run(t, "run", "--stats", p)
	assert.Equal(t, 7, st)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "instructions: 3\n")
	assert.Contains(t, stderr, "MIPS: ")
}

// TestRunThreadsStats: --stats counts the threads, the switches between
// them and each one's instructions, which add up to the total; --quantum
// changes the interleaving, not the output.
func TestRunThreadsStats(t *testing.T) {
	var prog string
	for _, b := range programs.ThreadBinaries("arm64") {
		if b.Config.Name == "aarch64-thr-O2" && b.Name == "worksplit" {
			prog = b.Path
		}
	}
	require.NotEmpty(t, prog)
	st, out, stderr := run(t, "run", "--stats", "--cpu", "neoverse-n1", prog)
	require.Equal(t, 0, st, stderr)
	assert.Contains(t, stderr, "threads: 5\n")
	var total, sum, switches uint64
	for _, l := range strings.Split(stderr, "\n") {
		var tid, n uint64
		if _, err := fmt.Sscanf(l, "thread %d: %d instructions", &tid, &n); err == nil {
			sum += n
		}
		fmt.Sscanf(l, "instructions: %d", &total)
		fmt.Sscanf(l, "context switches: %d", &switches)
	}
	assert.Equal(t, total, sum, stderr)
	assert.NotZero(t, switches)
	st, out2, stderr2 := run(t, "run", "--stats", "--quantum", "1000", prog)
	require.Equal(t, 0, st, stderr2)
	assert.Equal(t, out, out2)
	assert.NotContains(t, stderr2, fmt.Sprintf("context switches: %d\n", switches), "another quantum, another interleaving")
	st, _, stderr = run(t, "run", "--sched", "fifo", prog)
	assert.Equal(t, 2, st)
	assert.Contains(t, stderr, `--sched "fifo": want rr or random`)
	st, out3, stderr3 := run(t, "run", "--sched", "random", "--seed", "3", prog)
	require.Equal(t, 0, st, stderr3)
	assert.Equal(t, out, out3)
}

func TestRunHelloAndArgs(t *testing.T) {
	hello, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	st, out, _ := run(t, "run", hello.Path, "one", "two")
	assert.Equal(t, 44, st)
	assert.Contains(t, out, "hello, world\n")
	assert.Contains(t, out, "argc 3\n")
}

func TestRunUsage(t *testing.T) {
	st, _, stderr := run(t, "run")
	assert.Equal(t, 2, st)
	assert.Contains(t, stderr, "no program given")
	st, _, stderr = run(t, "frobnicate")
	assert.Equal(t, 2, st)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
	st, _, stderr = run(t, "run", "--no-such-flag", "x")
	assert.Equal(t, 2, st)
	assert.Contains(t, stderr, "flag provided but not defined")
	st, _, stderr = run(t, "run", filepath.Join(t.TempDir(), "missing"))
	assert.Equal(t, 1, st)
	assert.Contains(t, stderr, "no such file")
}

func TestRunTrace(t *testing.T) {
	p := writeFile(t, "exit7", a64(a64MovX0_7, a64MovX8_94, a64Svc0))
	st, _, stderr := run(t, "run", "--trace", p)
	assert.Equal(t, 7, st)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Regexp(t, `^\s+0  0x400000\s+e00080d2\s+mov x0, #0x7\s+x0=0x7$`, lines[0])
	assert.Regexp(t, `^\s+1  0x400004\s+c80b80d2\s+mov x8, #0x5e\s+x8=0x5e$`, lines[1])
	assert.Regexp(t, `^\s+2  0x400008\s+010000d4\s+svc #0x0$`, lines[2])
	assert.Equal(t, "exit status 7 after 3 instructions", lines[3])

	jf := filepath.Join(t.TempDir(), "t.jsonl")
	st, _, _ = run(t, "run", "--trace-json", jf, "--trace-fp", p)
	assert.Equal(t, 7, st)
	b, err := os.ReadFile(jf)
	require.NoError(t, err)
	jl := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, jl, 5)
	assert.Contains(t, jl[0], `"kind":"header"`)
	assert.Contains(t, jl[0], `"arch":"aarch64"`)
	assert.Contains(t, jl[1], `{"n":0,"pc":"0x400000","r":["0x0",`)
	assert.Contains(t, jl[2], `{"n":1,"pc":"0x400004","r":["0x7",`)
	assert.Contains(t, jl[1], `"v":["0x0",`)
	assert.Contains(t, jl[4], `"insns":3`)
	assert.Contains(t, jl[4], `"status":7`)
}

// TestFaultBacktrace: a fault in a program with symbols and line tables
// names the function and line in its one-line message, and the stack
// below it (the SFrame walk from the faulting context), on both
// architectures.
func TestFaultBacktrace(t *testing.T) {
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := filepath.Join("testdata", "crash", "crash-"+arch)
			st, out, stderr := run(t, "run", prog)
			assert.Equal(t, 139, st)
			assert.Empty(t, out)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			require.GreaterOrEqual(t, len(lines), 5, stderr)
			assert.Regexp(t, `^simrun: .*crash-`+arch+`: \w+ fault at pc 0x[0-9a-f]+ .*unmapped address 0x0 \(read of 8 bytes\) in last_value\+0x[0-9a-f]+ \(crash\.c:11\)$`, lines[0])
			assert.Regexp(t, `^    #0  0x[0-9a-f]+ in last_value\+0x[0-9a-f]+ \(crash\.c:11\)$`, lines[1])
			assert.Regexp(t, `^    #1  0x[0-9a-f]+ in sum_lists\+0x[0-9a-f]+ \(crash\.c:19\)$`, lines[2])
			assert.Regexp(t, `^    #2  0x[0-9a-f]+ in main\+0x[0-9a-f]+ \(crash\.c:26\)$`, lines[3])
			assert.Equal(t, "    (SFrame walk: outermost frame)", lines[len(lines)-1])
		})
	}
}

// TestGuestEnvironment: the guest inherits simrun's environment as under
// qemu-user; --unset/-U removes, --env/-E sets (replacing an inherited
// value in place of it), --clean-env starts empty.
func TestGuestEnvironment(t *testing.T) {
	saved := hostEnviron
	defer func() { hostEnviron = saved }()
	hostEnviron = func() []string { return []string{"HOME=/root", "LANG=C.UTF-8", "PATH=/bin"} }
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"HOME=/root", "LANG=C.UTF-8", "PATH=/bin"}},
		{[]string{"-U", "LANG", "--unset", "HOME"}, []string{"PATH=/bin"}},
		{[]string{"--env", "LANG=C", "-E", "X=1"}, []string{"HOME=/root", "PATH=/bin", "LANG=C", "X=1"}},
		{[]string{"--clean-env", "-E", "A=b"}, []string{"A=b"}},
		{[]string{"--clean-env"}, []string{}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		g := addGuestFlags(fs)
		require.NoError(t, fs.Parse(tt.args))
		var cfg linux.Config
		require.NoError(t, g.apply(&cfg, io.Discard))
		assert.Equal(t, tt.want, cfg.Env, "%q", tt.args)
	}
}
