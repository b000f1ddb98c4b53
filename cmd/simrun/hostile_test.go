package main

// The hostile-input suite (issue 40): simrun is built once and every case
// runs it as a child under an address-space limit (RLIMIT_AS, set by
// `sh -c 'ulimit -v'` before it execs simrun) and a timeout. Each case asserts the exit
// status, the message, the files left behind (what the case writes and
// nothing else: no temp files) and the peak memory (the child's
// rusage.Maxrss).

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/programs"
)

func TestMain(m *testing.M) {
	if os.Getenv(docsMainEnv) == "1" {
		os.Exit(docsMain())
	}
	// Guests in these tests start with an empty environment, whatever the
	// machine's, so that their outputs (stack addresses included) match.
	hostEnviron = func() []string { return nil }
	// Every calm scheduling decision on several CPUs is checked against
	// the full one (sim/linux's calmDecision).
	os.Setenv("SIMRUN_CHECK_SCHED", "1")
	// A host tool the tests run (gdb, qemu-user) that crashes leaves no
	// core file in the package's directory (the soft limit: a test that
	// wants qemu's core raises it again).
	var core syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_CORE, &core) == nil {
		core.Cur = 0
		syscall.Setrlimit(syscall.RLIMIT_CORE, &core)
	}
	st := m.Run()
	if hostileBuild.path != "" {
		os.RemoveAll(filepath.Dir(hostileBuild.path))
	}
	os.Exit(st)
}

var hostileBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// hostileSimrun builds simrun once for the suite.
func hostileSimrun(t *testing.T) string {
	t.Helper()
	b := &hostileBuild
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "simrun-hostile-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "simrun")
		b.out, b.err = exec.Command("go", "build", "-o", b.path, "simrun/cmd/simrun").CombinedOutput()
	})
	require.NoError(t, b.err, "%s", b.out)
	return b.path
}

// Guest programs (arm64, no libc): words assembled with
// aarch64-linux-gnu-as; the source is beside each word.
var (
	// touch16G maps 1024 pieces of 16 MiB of anonymous memory (exit with
	// the errno when a mapping fails), then writes one byte in each page
	// of the 16 GiB (they are placed one after the other, upward, as
	// under qemu-user).
	touch16G = []uint32{
		0xd2808013, //   mov x19, #1024
		0xd2800014, //   mov x20, #0
		0xd2800000, // 1: mov x0, #0
		0xd2a02001, //   mov x1, #0x1000000
		0xd2800062, //   mov x2, #3 (PROT_READ|PROT_WRITE)
		0xd2800443, //   mov x3, #0x22 (MAP_PRIVATE|MAP_ANONYMOUS)
		0x92800004, //   mov x4, #-1
		0xd2800005, //   mov x5, #0
		0xd2801bc8, //   mov x8, #222 (mmap)
		0xd4000001, //   svc #0
		0xb13ffc1f, //   cmn x0, #4095
		0x540001a8, //   b.hi 3f
		0xb5000054, //   cbnz x20, 2f
		0xaa0003f4, //   mov x20, x0
		0xf1000673, // 2: subs x19, x19, #1
		0x54fffe61, //   b.ne 1b
		0xd2c00081, //   mov x1, #0x400000000
		0x39000288, // 4: strb w8, [x20]
		0x91400694, //   add x20, x20, #4096
		0xf1400421, //   subs x1, x1, #4096
		0x54ffffa1, //   b.ne 4b
		0xd2800000, //   mov x0, #0
		0xd2800ba8, //   mov x8, #93 (exit)
		0xd4000001, //   svc #0
		0xcb0003e0, // 3: neg x0, x0
		0xd2800ba8, //   mov x8, #93
		0xd4000001, //   svc #0
	}
	// read1G maps 1 GiB and reads stdin into it with one read(0, buf,
	// 1 GiB); the exit status is what read returned.
	read1G = []uint32{
		0xd2800000, // mov x0, #0
		0xd2a80001, // mov x1, #0x40000000
		0xd2800062, // mov x2, #3
		0xd2800443, // mov x3, #0x22
		0x92800004, // mov x4, #-1
		0xd2800005, // mov x5, #0
		0xd2801bc8, // mov x8, #222 (mmap)
		0xd4000001, // svc #0
		0xaa0003e1, // mov x1, x0
		0xd2800000, // mov x0, #0
		0xd2a80002, // mov x2, #0x40000000
		0xd28007e8, // mov x8, #63 (read)
		0xd4000001, // svc #0
		0xd2800ba8, // mov x8, #93 (exit)
		0xd4000001, // svc #0
	}
)

func hostileProgram(words []uint32) []byte {
	return elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), make([]byte, 64))
}

type hostileCase struct {
	name   string
	args   []string          // after simrun; files named here are in the case's directory
	files  map[string][]byte // the directory's contents before the run
	sparse map[string]int64  // files made with this size and no data
	stdin  string
	as     uint64 // RLIMIT_AS (default 1 GiB)
	status int
	want   []string // substrings of stderr
	// maxRSS bounds the child's peak resident memory (default 150 MiB).
	maxRSS uint64
	// leaves lists the files the case adds to its directory.
	leaves []string
}

func TestHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds simrun and runs it as a child")
	}
	simrun := hostileSimrun(t)
	hello, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	helloELF, err := os.ReadFile(hello.Path)
	require.NoError(t, err)
	// A recording of hello to corrupt.
	rec := t.TempDir()
	out, _ := exec.Command(simrun, "record", "--quiet", "-o", filepath.Join(rec, "p.data"), hello.Path).CombinedOutput() // hello exits 42
	perfData, err := os.ReadFile(filepath.Join(rec, "p.data"))
	require.NoError(t, err, "%s", out)
	// A perf.data cut inside its header's data section.
	require.Greater(t, len(perfData), 200)
	// Corrupt ELF: the program headers said to lie past the end.
	corrupt := bytes.Clone(helloELF)
	binary.LittleEndian.PutUint64(corrupt[0x20:], 1<<40) // e_phoff
	corruptPerf := bytes.Clone(perfData)
	binary.LittleEndian.PutUint64(corruptPerf[0x28:], 1<<60) // data section size
	touch := hostileProgram(touch16G)

	var cases []hostileCase
	// Inputs that are not what a command reads: one line, status 1.
	inputs := []struct {
		name, file string
		files      map[string][]byte
		sparse     map[string]int64
		want       string
	}{
		{"dev-zero", "/dev/zero", nil, nil, "character device"},
		{"directory", ".", nil, nil, "is a directory"},
		{"sparse-64G", "big", nil, map[string]int64{"big": 64 << 30}, "too large"},
	}
	for _, in := range inputs {
		for _, cmd := range [][]string{{"run"}, {"report"}, {"sframe"}, {"spe", "dump"}} {
			cases = append(cases, hostileCase{name: strings.Join(cmd, "-") + "/" + in.name,
				args: append(slices.Clone(cmd), in.file), sparse: in.sparse, status: 1, want: []string{in.want}})
		}
	}
	cases = append(cases,
		hostileCase{name: "run/truncated-elf", args: []string{"run", "prog"}, files: map[string][]byte{"prog": helloELF[:100]},
			status: 1, want: []string{"prog", "malformed ELF"}},
		hostileCase{name: "sframe/truncated-elf", args: []string{"sframe", "prog"}, files: map[string][]byte{"prog": helloELF[:100]},
			status: 1, want: []string{"prog", "malformed ELF"}},
		hostileCase{name: "run/corrupt-elf", args: []string{"run", "prog"}, files: map[string][]byte{"prog": corrupt},
			status: 1, want: []string{"prog"}},
		hostileCase{name: "record/corrupt-elf", args: []string{"record", "-o", "out.data", "prog"}, files: map[string][]byte{"prog": corrupt},
			status: 1, want: []string{"prog"}},
		hostileCase{name: "report/truncated-perf", args: []string{"report", "p.data"}, files: map[string][]byte{"p.data": perfData[:120]},
			status: 1, want: []string{"p.data"}},
		hostileCase{name: "report/corrupt-perf", args: []string{"report", "p.data"}, files: map[string][]byte{"p.data": corruptPerf},
			status: 1, want: []string{"p.data"}},
		hostileCase{name: "spe-dump/truncated-perf", args: []string{"spe", "dump", "p.data"}, files: map[string][]byte{"p.data": perfData[:120]},
			status: 1, want: []string{"p.data"}},
		hostileCase{name: "spe-dump/corrupt-perf", args: []string{"spe", "dump", "p.data"}, files: map[string][]byte{"p.data": corruptPerf},
			status: 1, want: []string{"p.data"}},
		// A guest that touches 16 GiB: under `ulimit -v` 2 GiB the
		// default limit is half of what the Go runtime leaves (256 MiB);
		// the guest ends as the OOM killer ends it, with the reason.
		hostileCase{name: "run/touch-16G-default", args: []string{"run", "touch"}, files: map[string][]byte{"touch": touch},
			as: 2 << 30, status: 137, maxRSS: 256<<20 + 150<<20,
			want: []string{"out of memory", "needs a new page past the guest memory limit of 256 MiB"}},
		// Within a smaller limit the mappings' bookkeeping alone is too
		// much: mmap says ENOMEM (12), the guest exits with it.
		hostileCase{name: "run/touch-16G-enomem", args: []string{"run", "--max-memory", "64M", "touch"}, files: map[string][]byte{"touch": touch},
			status: 12},
		// record keeps what it recorded of a guest the limit ended.
		hostileCase{name: "record/touch-16G", args: []string{"record", "--quiet", "--callchain", "none", "--max-memory", "256M", "-o", "out.data", "touch"},
			files: map[string][]byte{"touch": touch}, as: 2 << 30, status: 137, maxRSS: 256<<20 + 200<<20,
			want: []string{"out of memory"}, leaves: []string{"out.data"}},
		// read(0, buf, 1 GiB) with 3 bytes waiting costs what it reads.
		hostileCase{name: "run/read-1G", args: []string{"run", "--max-memory", "2G", "read"}, files: map[string][]byte{"read": hostileProgram(read1G)},
			stdin: "abc", status: 3},
		hostileCase{name: "run/bad-max-memory", args: []string{"run", "--max-memory", "1.5G", "read"}, files: map[string][]byte{"read": hostileProgram(read1G)},
			status: 2, want: []string{"max-memory", "whole number"}},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runHostile(t, simrun, tc) })
	}
}

func runHostile(t *testing.T, simrun string, tc hostileCase) {
	dir := t.TempDir()
	for name, data := range tc.files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o755))
	}
	for name, size := range tc.sparse {
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, f.Truncate(size))
		require.NoError(t, f.Close())
	}
	before := dirNames(t, dir)
	as := tc.as
	if as == 0 {
		as = 1 << 30
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The shell sets the limit and execs simrun: a launcher of our own
	// (this test binary) would need memory of its own under the limit.
	script := `ulimit -v "$1" && shift && exec "$@"`
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, "sh", strconv.FormatUint(as>>10, 10), simrun}, tc.args...)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(tc.stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "timed out")
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
	}
	msg := stderr.String()
	assert.Equal(t, tc.status, cmd.ProcessState.ExitCode(), "stderr: %s", msg)
	for _, w := range tc.want {
		assert.Contains(t, msg, w)
	}
	for _, bad := range []string{"panic", "goroutine", "fatal error", "sh: "} {
		assert.NotContains(t, msg, bad)
	}
	if tc.status == 1 {
		assert.Equal(t, 1, strings.Count(strings.TrimRight(msg, "\n"), "\n")+1, "one-line error, got %q", msg)
	}
	maxRSS := tc.maxRSS
	if maxRSS == 0 {
		maxRSS = 150 << 20
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	assert.LessOrEqual(t, uint64(ru.Maxrss)<<10, maxRSS, "peak RSS %d KiB", ru.Maxrss)
	want := append(before, tc.leaves...)
	slices.Sort(want)
	assert.Equal(t, want, dirNames(t, dir), "files left behind")
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := []string{}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestStaticBinary: simrun links no C (package net's resolver would bring
// cgo, and the C library's pages would cost every command's peak RSS a
// megabyte and more: docs/promises.md).
func TestStaticBinary(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command")
	}
	out, err := exec.Command(goTool, "list", "-deps", "simrun/cmd/simrun").Output()
	require.NoError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		assert.NotEqual(t, "runtime/cgo", pkg)
		assert.NotEqual(t, "net", pkg, "package net links cgo's resolver")
	}
}
