package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs/debian"
)

// procsProgram is a bundled program of programs/procs.
func procsProgram(arch, name string) string {
	return filepath.Join("..", "..", "programs", "procs", "bin", arch+"-proc-O2", name)
}

// TestRecordProcesses: a recording of a busybox shell pipeline holds every
// process — perf (the oracle) names each applet's process by its pid and
// comm, the program sort execs by its name, and libc's functions in sort
// by name through --symfs; the side-band records perf report -D prints are
// pinned in a golden file.
func TestRecordProcesses(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	sysroot, err := debian.Sysroot("arm64")
	if err != nil {
		t.Skipf("no Debian arm64 sysroot (programs/debian/fetch.sh): %v", err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	st, out, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "1024", "--callchain", "sframe",
		"--format", "perf,folded,pprof", "-o", data, "-L", sysroot,
		filepath.Join(sysroot, "bin", "busybox"), "sh", "-c", "seq 1000 | /usr/bin/sort -rn | head -3")
	require.Equal(t, 0, st, stderr)
	require.Equal(t, "1000\n999\n998\n", out)

	script, err := exec.Command(perf, "script", "-F", "comm,pid,tid,ip,sym,dso", "--symfs", sysroot, "-i", data).Output()
	require.NoError(t, err)
	perTask := map[string]int{}
	syms := map[string]int{}
	for _, l := range strings.Split(string(script), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.Contains(f[1], "/") {
			perTask[f[0]+" "+f[1]]++
			if len(f) >= 5 && strings.HasSuffix(l, "/libc.so.6)") {
				syms[f[3]]++
			}
		}
	}
	// sh (1000) forks seq (1001), sort (1002, which execs /usr/bin/sort)
	// and head (1003); busybox runs seq and head in the forked shell.
	for _, task := range []string{"busybox 1000/1000", "busybox 1001/1001", "sort 1002/1002", "busybox 1003/1003"} {
		assert.Positive(t, perTask[task], "samples of %s: %v", task, perTask)
	}
	for k := range perTask {
		assert.Regexp(t, `^(busybox (1000/1000|1001/1001|1002/1002|1003/1003)|sort 1002/1002)$`, k)
	}
	assert.Positive(t, syms["malloc"]+syms["fwrite_unlocked"]+syms["_IO_file_xsputn"], "libc functions by name: %v", syms)

	rep, err := exec.Command(perf, "report", "--stdio", "--symfs", sysroot, "--sort", "comm,pid,dso,sym", "-i", data).Output()
	require.NoError(t, err)
	assert.Regexp(t, `(?m)\d+\.\d+% +sort +1002:sort +libc\.so\.6 +\[\.\] [a-z_]+`, string(rep))
	assert.Regexp(t, `(?m)\d+\.\d+% +busybox +1001:busybox +busybox `, string(rep))

	// simrun's own outputs root each stack at its process's comm and tid.
	folded, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
	require.NoError(t, err)
	for _, root := range []string{"busybox-1000;", "busybox-1001;", "sort-1002;", "busybox-1003;"} {
		assert.Contains(t, string(folded), "\n"+root)
	}
	assert.Regexp(t, `(?m)^sort-1002;.*;(malloc|fwrite_unlocked|_IO_file_xsputn)`, string(folded))

	// pprof labels each sample with its process's pid and comm.
	if goTool, err := exec.LookPath("go"); err == nil {
		tags, err := exec.Command(goTool, "tool", "pprof", "-tags", filepath.Join(dir, "perf.pb.gz")).Output()
		require.NoError(t, err)
		assert.Regexp(t, `(?s)comm: Total.*: busybox\n.*: sort\n`, string(tags))
		for _, pid := range []string{"1000", "1001", "1002", "1003"} {
			assert.Regexp(t, `(?s)pid: Total.*: `+pid+`\n`, string(tags))
		}
	}

	// simrun report reads every process back from perf.data: each
	// sample's thread by its own process's comm, its object by file.
	page := filepath.Join(dir, "report.html")
	st, _, stderr = run(t, "report", "-o", page, data)
	require.Equal(t, 0, st, stderr)
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	byThread := regexp.MustCompile(`(?s)id="by-thread">(.*?)</table>`).FindStringSubmatch(string(html))
	require.NotNil(t, byThread)
	for _, th := range []string{"busybox-1000", "busybox-1001", "sort-1002", "busybox-1003"} {
		assert.Contains(t, byThread[1], ">"+th+"<")
	}
	byObject := regexp.MustCompile(`(?s)id="by-object">(.*?)</table>`).FindStringSubmatch(string(html))
	require.NotNil(t, byObject)
	for _, o := range []string{"busybox", "sort", "libc.so.6"} {
		assert.Contains(t, byObject[1], ">"+o+"<")
	}

	dump, err := exec.Command(perf, "report", "-D", "-i", data).Output()
	require.NoError(t, err)
	var side []string
	for _, l := range strings.Split(string(dump), "\n") {
		if m := regexp.MustCompile(`PERF_RECORD_(COMM|FORK|EXIT|MMAP2)\b.*`).FindString(l); m != "" {
			side = append(side, m)
		}
	}
	golden(t, "record-processes-busybox.txt", strings.Join(side, "\n")+"\n")
}

// TestUnwindCheckProcesses: unwind check follows every process of the
// bundled fork/exec programs, both architectures: one truth per thread of
// each process (fork copies the caller's, and so does vfork, whose child
// runs on the caller's stack; execve starts afresh), and
// SFrame and eh_frame agree with it everywhere but at glibc's known
// places (sim/unwind/testdata/glibc.expect).
func TestUnwindCheckProcesses(t *testing.T) {
	expect := filepath.Join("..", "..", "sim", "unwind", "testdata", "glibc.expect")
	for _, arch := range []string{"aarch64", "s390x"} {
		for _, name := range []string{"forkwait", "pipes", "sigchld", "spawn", "vfork"} {
			t.Run(arch+"/"+name, func(t *testing.T) {
				st, out, stderr := run(t, "unwind", "check", "--every", "3", "--expect", expect, procsProgram(arch, name))
				require.Equal(t, 0, st, "%s\n%s", out, stderr)
				assert.Regexp(t, `(?m)^sframe +\d+ +\d+ +0 `, out)
				assert.Regexp(t, `(?m)^eh_frame +\d+ +\d+ +0 `, out)
				assert.Regexp(t, `(?m)^  thread 1001 \(`+name+`\): \d+ calls`, out, "the child's truth")
				assert.Regexp(t, `(?m)^    tid 1001 `+name+` +[1-9]\d* checked`, out, "the child's checks")
			})
		}
	}
}

// TestRecordProcessesExec: a bundled program that re-executes itself in
// children (fork + execve, posix_spawn): perf reads a FORK, an exec COMM
// and an EXIT per child and names each child's functions, both
// architectures.
func TestRecordProcessesExec(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "perf.data")
			st, _, stderr := run(t, "record", "-c", "512", "-o", data, procsProgram(arch, "spawn"))
			require.Equal(t, 0, st, stderr)
			dump, err := exec.Command(perf, "report", "-D", "-i", data).Output()
			require.NoError(t, err)
			for _, child := range []string{"1001", "1002", "1003"} {
				assert.Contains(t, string(dump), "PERF_RECORD_FORK("+child+":"+child+"):(1000:1000)")
				assert.Contains(t, string(dump), "PERF_RECORD_COMM exec: spawn:"+child+"/"+child)
				assert.Contains(t, string(dump), "PERF_RECORD_EXIT("+child+":"+child+"):(1000:1000)")
			}
			rep, err := exec.Command(perf, "report", "--stdio", "--no-children", "-g", "none", "--sort", "pid,sym", "-i", data).Output()
			require.NoError(t, err)
			for _, child := range []string{"1001", "1002", "1003"} {
				assert.Regexp(t, `(?m)\d+\.\d+% +`+child+`:spawn +\[\.\] [_a-z]`, string(rep))
			}
		})
	}
}

// TestRecordThreadsDynamic: a recording of Debian's xz compressing with
// two worker threads (dynamically linked: liblzma, libc, ld.so) holds
// each thread's samples, and perf script (the oracle, through --symfs)
// shows their callchains crossing the objects by name: a worker's stack
// ends in libc's start_thread, named from libc6-dbg's debug file as
// perf finds it.
func TestRecordThreadsDynamic(t *testing.T) {
	perf := oracle.RequireTool(t, "perf", "linux-perf")
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			sysroot, err := debian.Sysroot(arch)
			if err != nil {
				t.Skipf("no Debian %s sysroot (programs/debian/fetch.sh): %v", arch, err)
			}
			dir := t.TempDir()
			require.NoError(t, debian.Prepare(dir))
			data := filepath.Join(dir, "perf.data")
			st, _, stderr := run(t, "record", "--quiet", "-e", "arm_spe/ts_enable=1/", "-c", "4096", "--callchain", "sframe",
				"-L", sysroot, "-o", data, filepath.Join(sysroot, "usr", "bin", "xz"), "-T2", "--block-size=16KiB", "-1", "-c",
				filepath.Join(dir, "big.txt"))
			require.Equal(t, 0, st, stderr)
			out, err := exec.Command(perf, "script", "-i", data, "--symfs", sysroot, "-F", "comm,tid,ip,sym,dso").Output()
			require.NoError(t, err)
			perTid := map[string]int{}
			workerChains := 0
			for _, block := range strings.Split(string(out), "\n\n") {
				f := strings.Fields(block)
				if len(f) < 2 || f[0] != "xz" {
					continue
				}
				perTid[f[1]]++
				if (f[1] == "1001" || f[1] == "1002") && strings.Contains(block, " start_thread (") && strings.Contains(block, "/libc.so.6)") {
					workerChains++
				}
			}
			assert.Positive(t, perTid["1001"], "%v", perTid)
			assert.Positive(t, perTid["1002"], "%v", perTid)
			assert.Positive(t, workerChains, "a worker's callchain ends in libc's start_thread:\n%.3000s", out)
		})
	}
}
