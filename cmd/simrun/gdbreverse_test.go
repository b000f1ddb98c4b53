package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// sections splits gdb's output at the markers `echo ==NAME==\n` printed.
func sections(out string) map[string]string {
	got := map[string]string{}
	parts := regexp.MustCompile(`(?m)^==([A-Za-z0-9]+)==$`).Split(out, -1)
	names := regexp.MustCompile(`(?m)^==([A-Za-z0-9]+)==$`).FindAllStringSubmatch(out, -1)
	for i, n := range names {
		got[n[1]] = parts[i+1]
	}
	return got
}

// regLines is the register lines of an `info registers` section.
func regLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if regexp.MustCompile(`^[a-z][a-z0-9_]*\s+0x`).MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

var fibBreakRE = regexp.MustCompile(`Breakpoint 1, fib_rec \(n=(?:n@entry=)?(\d+)\)`)

// TestGDBReverse: reverse-stepi returns to the registers seen going
// forward, exactly, and reverse-continue stops at the breakpoint hits
// met backwards, then at the start of the history; the run then ends as
// without gdb, its output written once.
func TestGDBReverse(t *testing.T) {
	gdb := requireGDB(t)
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := "../../programs/bin/" + arch + "-O2/fib"
			plainSt, plainOut, _ := run(t, "run", prog, "7")
			r := startGDBRun(t, prog, "7")
			cmds := []string{"break fib_rec", "continue", "continue", "continue"}
			for i := range 4 {
				if i > 0 {
					cmds = append(cmds, "stepi")
				}
				cmds = append(cmds, "echo =="+"F"+string(rune('0'+i))+"==\\n", "info registers")
			}
			for i := 2; i >= 0; i-- {
				cmds = append(cmds, "reverse-stepi", "echo =="+"B"+string(rune('0'+i))+"==\\n", "info registers")
			}
			cmds = append(cmds, "reverse-continue", "reverse-continue", "reverse-continue",
				"echo ==START==\\n", "info registers pc", "delete", "continue")
			out := gdbBatch(t, gdb, prog, r.port, cmds...)
			st := r.wait(t)
			require.Equal(t, plainSt, st, "gdb output:\n%s", out)
			require.Equal(t, plainOut, r.stdout.String(), "the output, once")

			sec := sections(out)
			for i := range 3 {
				f, b := regLines(sec["F"+string(rune('0'+i))]), regLines(sec["B"+string(rune('0'+i))])
				require.GreaterOrEqual(t, len(f), 18, out)
				require.Equal(t, f, b, "registers after %d stepi, forward and back:\n%s", i, out)
			}
			require.NotEqual(t, regLines(sec["F0"]), regLines(sec["F1"]))
			var ns []string
			for _, m := range fibBreakRE.FindAllStringSubmatch(out, -1) {
				ns = append(ns, m[1])
			}
			// Forward 7, 6, 5; reverse-stepi back onto the breakpoint (5);
			// reverse-continue to 6, then 7.
			require.Equal(t, []string{"7", "6", "5", "5", "6", "7"}, ns, out)
			require.Contains(t, out, "No more reverse-execution history.")
			entry := hexAll(t, pcRE, sec["START"])
			require.Len(t, entry, 1, out)
			f, _, err := cpu.ParseELF(prog, mustRead(t, prog))
			require.NoError(t, err)
			require.Equal(t, f.Entry, entry[0], "the start of history is the first instruction (fib is static)")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestGDBReverseWatch: reverse-continue stops at a write to a watched
// global met backwards, before the store (the old value back in
// memory); stepping over the store again stops where the forward run
// stopped.
func TestGDBReverseWatch(t *testing.T) {
	gdb := requireGDB(t)
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := "../../programs/bin/" + arch + "-O2/fib"
			plainSt, plainOut, _ := run(t, "run", prog, "7")
			r := startGDBRun(t, prog, "7")
			out := gdbBatch(t, gdb, prog, r.port,
				"break main", "continue", "watch olen", "continue", "echo ==FWD==\\n", "info registers pc", "print olen",
				"stepi", "stepi", "stepi", "reverse-continue", "echo ==BACK==\\n", "info registers pc", "print olen",
				"stepi", "echo ==AGAIN==\\n", "info registers pc", "print olen", "delete", "continue")
			st := r.wait(t)
			require.Equal(t, plainSt, st, "gdb output:\n%s", out)
			require.Equal(t, plainOut, r.stdout.String(), "the output, once")
			sec := sections(out)
			fwd, back, again := hexAll(t, pcRE, sec["FWD"]), hexAll(t, pcRE, sec["BACK"]), hexAll(t, pcRE, sec["AGAIN"])
			require.Len(t, fwd, 1, out)
			require.Len(t, back, 1, out)
			require.Len(t, again, 1, out)
			require.NotEqual(t, fwd[0], back[0], "backwards, the stop is before the store:\n%s", out)
			require.Equal(t, fwd[0], again[0], out)
			require.Contains(t, sec["BACK"], "$2 = 0", "olen is 0 again before the store:\n%s", out)
			require.Contains(t, out, "Old value = 0")
			// Set, hit forward, hit backwards, hit by the stepi that replays
			// the store.
			require.Equal(t, 4, strings.Count(out, "atchpoint 2: olen\n"), out)
		})
	}
}

// TestGDBReverseOutputOnce: a dynamically linked program that reads a
// file (and the loader its libraries) and writes to stdout, taken back
// to the start of its history after the write and run to its end
// again: the replay runs no syscall against the host, so the output is
// written once.
func TestGDBReverseOutputOnce(t *testing.T) {
	gdb := requireGDB(t)
	for _, c := range []struct{ arch, cfg string }{{"arm64", "aarch64-dyn-O2"}, {"s390x", "s390x-dyn-O2"}} {
		t.Run(c.arch, func(t *testing.T) {
			root := linux.DefaultSysroot(cpu.ArchByName(c.arch))
			if _, err := os.Stat(root); err != nil {
				t.Skipf("no %s cross libc (Debian's libc6-dev-*-cross) to load the program with", c.arch)
			}
			prog := filepath.Join("../../programs/dynamic/bin", c.cfg, "wc")
			in := filepath.Join(t.TempDir(), "in.txt")
			require.NoError(t, os.WriteFile(in, []byte(strings.Repeat("one two three\n", 40)), 0o644))
			plainSt, plainOut, _ := run(t, "run", prog, in)
			require.Contains(t, plainOut, "40     120     560")
			r := startGDBRun(t, prog, in)
			out := gdbBatch(t, gdb, prog, r.port, "set sysroot "+root,
				"break main", "continue", "break _exit", "continue", "echo ==EXIT==\\n",
				"reverse-continue", "delete", "reverse-continue", "continue")
			st := r.wait(t)
			require.Equal(t, plainSt, st, "gdb output:\n%s", out)
			require.Contains(t, out, "Breakpoint 2, ")
			require.Equal(t, 2, strings.Count(out, "Breakpoint 1, main"), out)
			require.Contains(t, out, "No more reverse-execution history.")
			require.Equal(t, plainOut, r.stdout.String(), "the output, once")
		})
	}
}

// TestGDBReverseFinish: reverse-finish from the third fib_rec call goes
// back to the call instruction in its caller (the return address gdb
// showed less the call's length), and reverse-next stays in that frame.
func TestGDBReverseFinish(t *testing.T) {
	gdb := requireGDB(t)
	for _, c := range []struct {
		arch    string
		callLen uint64 // bl; brasl
	}{{"aarch64", 4}, {"s390x", 6}} {
		t.Run(c.arch, func(t *testing.T) {
			prog := "../../programs/bin/" + c.arch + "-O2/fib"
			r := startGDBRun(t, prog, "7")
			out := gdbBatch(t, gdb, prog, r.port, "break fib_rec", "continue", "continue", "continue",
				"echo ==IN==\\n", "bt", "delete", "reverse-finish", "echo ==CALLER==\\n", "bt", "info registers pc",
				"reverse-next", "echo ==NEXT==\\n", "bt 1", "kill")
			r.wait(t)
			sec := sections(out)
			in := frames(t, frameRE, sec["IN"])
			require.GreaterOrEqual(t, len(in), 3, out)
			require.Contains(t, sec["IN"], "#0  fib_rec (n=n@entry=5)", out)
			require.Contains(t, sec["CALLER"], "#0  0x", out)
			require.Contains(t, sec["CALLER"], " in fib_rec (n=n@entry=6)", out)
			pc := hexAll(t, pcRE, sec["CALLER"])
			require.Len(t, pc, 1, out)
			require.Equal(t, in[1].pc-c.callLen, pc[0], "at the call:\n%s", out)
			caller := frames(t, frameRE, sec["CALLER"])
			require.Equal(t, in[2:], caller[1:], "the frames above are the same:\n%s", out)
			require.Contains(t, sec["NEXT"], "fib_rec (n=n@entry=6)", out)
		})
	}
}

// TestGDBReverseThreads: in a threaded program reverse-continue stops at
// the breakpoint hit met backwards in the thread that met it; info
// threads and another thread's backtrace are what they were at that hit
// going forward; with scheduler locking, reverse-stepi steps back the
// selected thread; the run then ends as without gdb.
func TestGDBReverseThreads(t *testing.T) {
	gdb := requireGDB(t)
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := "../../programs/threads/bin/" + arch + "-thr-O2/worksplit"
			plainSt, plainOut, _ := run(t, "run", prog)
			r := startGDBRun(t, prog)
			out := gdbBatch(t, gdb, prog, r.port, "break work", "continue", "continue",
				"echo ==FWD==\\n", "info threads", "thread 1", "bt", "echo ==END==\\n",
				"continue", "reverse-continue",
				"echo ==BACK==\\n", "info threads", "thread 1", "bt", "echo ==END==\\n",
				"set scheduler-locking on", "echo ==STEP==\\n", "reverse-stepi", "info threads", "echo ==END==\\n",
				"set scheduler-locking off", "delete", "continue")
			st := r.wait(t)
			require.Equal(t, plainSt, st, "gdb output:\n%s", out)
			require.Equal(t, plainOut, r.stdout.String(), "the output, once")
			sec := sections(out)
			fwd, back := strings.Split(sec["FWD"], "==END==")[0], strings.Split(sec["BACK"], "==END==")[0]
			require.Contains(t, fwd, "Thread 1000.1001")
			require.Contains(t, fwd, "#1  ")
			require.Equal(t, fwd, back, "the threads and the main thread's stack at the same hit")
			hits := regexp.MustCompile(`Thread (\d+) "worksplit" hit Breakpoint 1, work \(arg=(0x[0-9a-f]+)\)`).FindAllStringSubmatch(out, -1)
			require.Len(t, hits, 4, out)
			require.Equal(t, hits[1][1:], hits[3][1:], "reverse-continue stops at the second hit:\n%s", out)
			step := sec["STEP"]
			require.Regexp(t, `\* 1 +Thread 1000\.1000 "worksplit" `, step, "the selected thread stepped back:\n%s", out)
			require.NotContains(t, step, "received signal", out)
		})
	}
}

// TestGDBSchedulerLocking: with set scheduler-locking on, advancing one
// worker through its loop (half a million instructions) leaves the other
// threads where they were; with it off they run meanwhile.
func TestGDBSchedulerLocking(t *testing.T) {
	gdb := requireGDB(t)
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := "../../programs/threads/bin/" + arch + "-thr-O2/worksplit"
			threads := map[string]string{}
			for _, mode := range []string{"on", "off"} {
				r := startGDBRun(t, prog)
				out := gdbBatch(t, gdb, prog, r.port, "break work", "continue", "continue", "delete",
					"echo ==BEFORE==\\n", "info threads", "set scheduler-locking "+mode, "thread 2", "advance 16",
					"echo ==AFTER==\\n", "info threads", "echo ==END==\\n", "kill")
				r.wait(t)
				sec := sections(out)
				require.Contains(t, sec["AFTER"], `* 2    Thread 1000.1001 "worksplit" work (arg=0x0) at src/worksplit.c:16`, out)
				third := regexp.MustCompile(`(?m)^[* ] +3 +(.*)$`)
				before, after := third.FindStringSubmatch(sec["BEFORE"]), third.FindStringSubmatch(sec["AFTER"])
				require.NotNil(t, before, out)
				require.NotNil(t, after, out)
				require.Contains(t, before[1], "work (arg=0x1)", out)
				threads[mode] = before[1] + "\n" + after[1]
			}
			on := strings.Split(threads["on"], "\n")
			off := strings.Split(threads["off"], "\n")
			require.Equal(t, on[0], on[1], "locked: thread 3 did not run")
			require.NotEqual(t, off[0], off[1], "unlocked: thread 3 ran")
		})
	}
}
