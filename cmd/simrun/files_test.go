//go:build linux

package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/internal/oracle"
	"simrun/programs"
)

// noTemps asserts that no temporary output file is left in the dirs.
func noTemps(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "left behind: %s", filepath.Join(d, e.Name()))
		}
	}
}

// copyProgram copies a bundled program into dir.
func copyProgram(t *testing.T, config, name, dir string) string {
	t.Helper()
	b, err := programs.Find(config, name)
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o755))
	return p
}

// readFIFO makes a FIFO at path and reads it whole in the background.
func readFIFO(t *testing.T, path string) <-chan []byte {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o644))
	got := make(chan []byte, 1)
	go func() {
		b, err := os.ReadFile(path)
		assert.NoError(t, err)
		got <- b
	}()
	return got
}

func isFIFO(t *testing.T, path string) bool {
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return fi.Mode()&os.ModeNamedPipe != 0
}

// TestOutputFiles: each command writes a FIFO in place, follows a
// symbolic link and keeps it, and refuses an output that is an input or
// another output before the program runs.
func TestOutputFiles(t *testing.T) {
	dir := t.TempDir()
	prog := copyProgram(t, "aarch64-O2", "listchase", dir)
	progData, err := os.ReadFile(prog)
	require.NoError(t, err)

	t.Run("record to a FIFO", func(t *testing.T) {
		fifo := filepath.Join(dir, "record.fifo")
		got := readFIFO(t, fifo)
		st, _, stderr := run(t, "record", "-o", fifo, prog)
		require.Equal(t, 36, st, stderr)
		assert.True(t, bytes.HasPrefix(<-got, []byte("PERFILE2")), "the reader got the perf.data")
		assert.True(t, isFIFO(t, fifo), "the FIFO stays a FIFO")
	})
	t.Run("record through a symlink", func(t *testing.T) {
		target := filepath.Join(dir, "real.data")
		require.NoError(t, os.WriteFile(target, []byte("old"), 0o600))
		link := filepath.Join(dir, "link.data")
		require.NoError(t, os.Symlink("real.data", link))
		st, _, stderr := run(t, "record", "-o", link, prog)
		require.Equal(t, 36, st, stderr)
		to, err := os.Readlink(link)
		require.NoError(t, err, "the link stays")
		assert.Equal(t, "real.data", to)
		data, err := os.ReadFile(target)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(data, []byte("PERFILE2")), "the target is replaced")
		fi, err := os.Stat(target)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "with its mode")
	})
	t.Run("sframe through a symlink, run --trace-json to a FIFO", func(t *testing.T) {
		target := filepath.Join(dir, "s.sframe")
		link := filepath.Join(dir, "s.link")
		require.NoError(t, os.Symlink(target, link))
		st, _, stderr := run(t, "sframe", "-o", link, prog)
		require.Equal(t, 0, st, stderr)
		assert.FileExists(t, target)
		fifo := filepath.Join(dir, "trace.fifo")
		got := readFIFO(t, fifo)
		hello := bundled("aarch64-O2", "hello")
		want, _, _ := run(t, "run", hello)
		st, _, stderr = run(t, "run", "--trace-json", fifo, hello)
		require.Equal(t, want, st, stderr)
		lines := strings.Split(strings.TrimSpace(string(<-got)), "\n")
		assert.Contains(t, lines[0], `"kind":"header"`)
		assert.Contains(t, lines[len(lines)-1], `"kind":"exit"`)
		assert.True(t, isFIFO(t, fifo))
	})
	t.Run("refused before the program runs", func(t *testing.T) {
		x := filepath.Join(dir, "X")
		data := filepath.Join(dir, "ok.data")
		st, _, stderr := run(t, "record", "-o", data, prog)
		require.Equal(t, 36, st, stderr)
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"record", "-o", prog, prog}, "simrun record: cannot write " + prog + ": it is the program " + prog},
			{[]string{"record", "-o", "./" + filepath.Base(prog), prog}, "it is the program"},
			{[]string{"record", "-o", filepath.Join(dir, "a.data"), "--format", "perf,json=" + prog, prog}, "it is the program"},
			{[]string{"record", "-o", x, "--aux", x, prog}, "cannot write " + x + ": it is also the output " + x},
			{[]string{"run", "--trace-json", prog, prog}, "simrun run: cannot write " + prog + ": it is the program"},
			{[]string{"sframe", "-o", prog, prog}, "simrun sframe: cannot write " + prog + ": it is the input"},
			{[]string{"report", "-o", data, data}, "simrun report: cannot write " + data + ": it is the recording"},
			{[]string{"report", "-o", prog, data}, "it is the program"},
		} {
			wd, err := os.Getwd()
			require.NoError(t, err)
			require.NoError(t, os.Chdir(dir)) // for ./listchase
			st, stdout, stderr := run(t, c.args...)
			require.NoError(t, os.Chdir(wd))
			assert.Equal(t, 2, st, "%v: %s", c.args, stderr)
			assert.Contains(t, stderr, c.want, "%v", c.args)
			assert.Empty(t, stdout, "%v: the program must not have run", c.args)
		}
		after, err := os.ReadFile(prog)
		require.NoError(t, err)
		assert.Equal(t, progData, after, "the program is untouched")
		assert.NoFileExists(t, x)
		assert.NoFileExists(t, filepath.Join(dir, "a.data"))
	})
	t.Run("report to a full device", func(t *testing.T) {
		data := filepath.Join(dir, "ok.data")
		full := "/dev/full"
		if os.Geteuid() == 0 {
			// A node of our own: the old rename-over-it code replaced
			// /dev/full itself when run as root.
			full = filepath.Join(dir, "full")
			require.NoError(t, syscall.Mknod(full, syscall.S_IFCHR|0o666, 1<<8|7))
		}
		st, _, stderr := run(t, "report", "-o", full, data)
		assert.Equal(t, 1, st, stderr)
		assert.Contains(t, stderr, full+": no space left on device")
		fi, err := os.Stat(full)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "the device stays a device")
	})
	noTemps(t, dir)
}

// TestInputChecks: every command that reads a file whole checks it
// first: /dev/zero, a directory, a FIFO, an empty, truncated or enormous
// file is a one-line error and exit status 1, in bounded memory.
func TestInputChecks(t *testing.T) {
	dir := t.TempDir()
	prog := copyProgram(t, "aarch64-O2", "hello", dir)
	code, err := os.ReadFile(prog)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "truncated")
	require.NoError(t, os.WriteFile(truncated, code[:3], 0o755))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o755))
	enormous := filepath.Join(dir, "enormous")
	f, err := os.Create(enormous)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(4<<30)) // sparse
	require.NoError(t, f.Close())
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	inputs := map[string]string{
		"/dev/zero": "is a character device",
		dir:         "is a directory",
		fifo:        "is a FIFO",
		empty:       "is empty",
		truncated:   "3 bytes is too short for an ELF file",
		enormous:    "4.0 GiB is too large",
	}
	commands := [][]string{
		{"run"}, {"record", "-o", filepath.Join(dir, "perf.data")}, {"spe", "dump"},
		{"report", "-o", filepath.Join(dir, "r.html")}, {"sframe"}, {"unwind", "check"},
	}
	for _, cmd := range commands {
		for in, want := range inputs {
			if in == truncated {
				switch cmd[0] {
				case "spe":
					continue // a raw SPE stream: three bad packets, as perf report -D shows them
				case "report", "sframe":
					want = "" // not an ELF file to these: they say what else is wrong
				}
			}
			args := append(append([]string{}, cmd...), in)
			st, stdout, stderr := run(t, args...)
			assert.Equal(t, 1, st, "%v: %s", args, stderr)
			assert.Contains(t, stderr, "simrun: "+in+": "+want, "%v", args)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "%v: one line: %q", args, stderr)
			assert.Empty(t, stdout)
		}
	}
	noTemps(t, dir)
}

// a64PrintThenLoop writes "go\n" to stdout, then loads in a loop
// forever: a guest that has surely started when its line arrives.
func a64PrintThenLoop() []byte {
	words := []uint32{
		0xd2800020, // mov x0, #1
		0xd2a00821, // movz x1, #0x41, lsl #16 (the data segment)
		0xd2800062, // mov x2, #3
		0xd2800808, // mov x8, #64 (write)
		0xd4000001, // svc #0
		0xf9400020, // loop: ldr x0, [x1]
		0x17ffffff, // b loop
	}
	return elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), append([]byte("go\n"), make([]byte, 61)...))
}

// buildSimrun builds this command into a test directory, for the
// tests that signal it.
func buildSimrun(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build simrun with")
	}
	bin := filepath.Join(t.TempDir(), "simrun")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// started runs simrun with args and returns once the guest printed its
// line; wait then signals nothing and returns the exit status and
// stderr.
func started(t *testing.T, bin string, args ...string) (cmd *exec.Cmd, wait func() (int, string)) {
	t.Helper()
	cmd = exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, "go\n", line)
	return cmd, func() (int, string) {
		io.Copy(io.Discard, out)
		err := cmd.Wait()
		if err != nil {
			_, ok := err.(*exec.ExitError)
			require.True(t, ok, "%v", err)
		}
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
}

// TestInterrupt: SIGINT or SIGTERM stops the guest, every output is
// written from what was recorded, and simrun exits 128+signal; a second
// signal ends it at once with no temporary file left.
func TestInterrupt(t *testing.T) {
	bin := buildSimrun(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "loop")
	require.NoError(t, os.WriteFile(prog, a64PrintThenLoop(), 0o755))

	t.Run("record SIGINT", func(t *testing.T) {
		data := filepath.Join(dir, "perf.data")
		jsonl := filepath.Join(dir, "perf.jsonl")
		cmd, wait := started(t, bin, "record", "-c", "1024", "--callchain", "none", "--format", "perf,json", "-o", data, prog)
		time.Sleep(50 * time.Millisecond) // some samples
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		st, stderr := wait()
		assert.Equal(t, 130, st, stderr)
		assert.Regexp(t, `\[ simrun record: wrote .*perf.data, .*perf.jsonl: [1-9][0-9]* SPE records, .*, interrupted by SIGINT after [0-9]+ instructions: recording truncated \]`, stderr)
		j, err := os.ReadFile(jsonl)
		require.NoError(t, err)
		assert.Contains(t, string(j), `interrupted by SIGINT after`)
		assert.Contains(t, string(j), `"exit_status":130`)
		noTemps(t, dir)

		// simrun report reads it, and so does perf.
		st, out, errs := run(t, "report", "-o", "-", data)
		require.Equal(t, 0, st, errs)
		assert.Contains(t, out, "interrupted by SIGINT")
		if perf, err := exec.LookPath("perf"); err == nil {
			out, err := exec.Command(perf, "report", "-D", "-i", data).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "ARM SPE data")
			assert.NotContains(t, string(out), "properly terminated")
		} else {
			oracle.RequireTool(t, "perf", "linux-perf")
		}
	})

	t.Run("run SIGTERM with a trace to a FIFO", func(t *testing.T) {
		fifo := filepath.Join(dir, "trace.fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		last := make(chan string, 1)
		go func() { // keeps the last line only: the trace of a loop is long
			f, err := os.Open(fifo)
			if !assert.NoError(t, err) {
				last <- ""
				return
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			var l string
			for sc.Scan() {
				l = sc.Text()
			}
			last <- l
		}()
		cmd, wait := started(t, bin, "run", "--trace-json", fifo, prog)
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		st, stderr := wait()
		assert.Equal(t, 143, st, stderr)
		assert.Contains(t, stderr, "interrupted by SIGTERM after")
		l := <-last
		assert.Contains(t, l, `"kind":"exit"`)
		assert.Contains(t, l, `"status":143`)
		assert.True(t, isFIFO(t, fifo))
	})

	t.Run("a second SIGINT aborts", func(t *testing.T) {
		sub := t.TempDir()
		fifo := filepath.Join(sub, "nobody.fifo") // no reader: writing it blocks
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		jsonl := filepath.Join(sub, "x.jsonl")
		cmd, wait := started(t, bin, "record", "--callchain", "none", "--format", "json="+jsonl+",perf", "-o", fifo, prog)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		// The JSON Lines are written to their temporary file, then simrun
		// waits for a reader of the FIFO.
		deadline := time.Now().Add(20 * time.Second)
		for {
			m, _ := filepath.Glob(filepath.Join(sub, ".x.jsonl.*.tmp"))
			if len(m) > 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "no temporary file appeared")
			time.Sleep(10 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		st, stderr := wait()
		assert.Equal(t, 130, st, stderr)
		assert.Contains(t, stderr, "simrun: SIGINT: stopped at once, 1 partly written outputs removed")
		assert.NoFileExists(t, jsonl)
		assert.True(t, isFIFO(t, fifo))
		noTemps(t, sub)
	})
}
