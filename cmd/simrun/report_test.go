package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/oracle"
	"simrun/sim/profile"
)

// recordForReport records listchase (the config's build) into dir and
// returns the perf.data path, the samples per leaf function (0 for
// functions only on the stacks), the flame graph's weight per function
// (each frame of a stack counts, so recursion counts once per level) and
// the number of samples.
func recordForReport(t *testing.T, config, dir string) (string, map[string]int, map[string]int, int) {
	t.Helper()
	b, err := programs.Find(config, "listchase")
	require.NoError(t, err)
	data := filepath.Join(dir, "perf.data")
	st, _, stderr := run(t, "record", "-e", "arm_spe/ts_enable=1/", "-c", "1024", "-o", data, "--format", "perf,folded", b.Path)
	require.Equal(t, 36, st, stderr)
	folded, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
	require.NoError(t, err)
	leaf, frames := map[string]int{}, map[string]int{}
	total := 0
	for _, l := range strings.Split(strings.TrimSpace(string(folded)), "\n") {
		i := strings.LastIndexByte(l, ' ')
		n, err := strconv.Atoi(l[i+1:])
		require.NoError(t, err)
		stack := strings.Split(l[:i], ";")
		for _, fn := range stack {
			frames[fn] += n
			leaf[fn] += 0
		}
		leaf[stack[len(stack)-1]] += n
		total += n
	}
	return data, leaf, frames, total
}

// reportConfigs are the builds recorded for the browser test, and
// reportInsns their listchase runs' instruction counts.
var (
	reportConfigs = map[string]string{"arm64": "aarch64-O2", "s390x": "s390x-O2"}
	reportInsns   = map[string]int{"arm64": 131225, "s390x": 134994}
)

// TestReportInBrowser loads the report in headless Chromium: the script
// runs (the flame graph is drawn by it), the flame graph's frames and the
// function table hold the recording's counts, and a screenshot is saved
// as a test artifact.
func TestReportInBrowser(t *testing.T) {
	chromium := oracle.RequireTool(t, "chromium", "chromium")
	for _, arch := range recordArches {
		t.Run(arch, func(t *testing.T) {
			dir := t.TempDir()
			data, leaf, weights, total := recordForReport(t, reportConfigs[arch], dir)
			page := filepath.Join(dir, "report.html")
			st, _, stderr := run(t, "report", "-o", page, data)
			require.Equal(t, 0, st, stderr)
			assert.Contains(t, stderr, fmt.Sprintf("%d samples", total))
			html, err := os.ReadFile(page)
			require.NoError(t, err)
			if arch == "s390x" {
				assert.Contains(t, string(html), "the timing and SPE model of an Arm core, driving an s390x guest")
			} else {
				assert.NotContains(t, string(html), "driving an")
			}
			// Self-contained: no external scripts, styles, images or fetches.
			for _, re := range []string{`(?i)<(script|link|img|iframe)[^>]+(src|href)=`, `(?i)url\(`, `(?i)\bfetch\(|XMLHttpRequest|@import`} {
				assert.NotRegexp(t, re, string(html))
			}

			browser := func(args ...string) string {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
					"--user-data-dir=" + t.TempDir(), "--window-size=1280,2000", "--virtual-time-budget=5000"}
				cmd := exec.CommandContext(ctx, chromium, append(append(base, args...), "file://"+page)...)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				require.NoError(t, cmd.Run(), "chromium: %s", errb.String())
				return out.String()
			}
			dom := browser("--dump-dom")
			status := regexp.MustCompile(`<p id="fg-status"[^>]*>([^<]*)</p>`).FindStringSubmatch(dom)
			require.NotNil(t, status, "no flame graph status in the DOM")
			assert.Regexp(t, fmt.Sprintf(`^flame graph: \d+ frames, %d samples in \d+ stacks$`, total), status[1])

			// The flame graph's frames, drawn by the page's script: the root
			// holds every sample, and the frames of each function add up to
			// its weight in the folded stacks.
			frames := regexp.MustCompile(`<div class="frame"[^>]*data-name="([^"]*)" data-value="(\d+)" data-depth="(\d+)"`).FindAllStringSubmatch(dom, -1)
			require.NotEmpty(t, frames)
			got := map[string]int{}
			for _, f := range frames {
				n, _ := strconv.Atoi(f[2])
				if f[3] == "0" {
					assert.Equal(t, "all", f[1])
					assert.Equal(t, total, n)
					continue
				}
				got[f[1]] += n
			}
			assert.Equal(t, weights, got, "flame graph frames")

			// The function table.
			rows := regexp.MustCompile(`<tr data-func="([^"]*)"><td class="mono">[^<]*</td><td class="n">(\d+)</td>`).FindAllStringSubmatch(dom, -1)
			table := map[string]int{}
			for _, r := range rows {
				n, _ := strconv.Atoi(r[2])
				table[r[1]] = n
			}
			assert.Equal(t, leaf, table, "function table")
			assert.Contains(t, dom, fmt.Sprintf(`<td class="n" id="insns">%d</td>`, reportInsns[arch]))
			assert.Contains(t, dom, `class="sframe" data-func="main"`)
			// The annotated disassembly of main sums to main's samples.
			sum := 0
			for _, m := range regexp.MustCompile(`data-samples="(\d+)"`).FindAllStringSubmatch(dom[strings.Index(dom, `class="disasm" data-func="main"`):strings.Index(dom, `class="sframe" data-func="main"`)], -1) {
				n, _ := strconv.Atoi(m[1])
				sum += n
			}
			assert.Equal(t, leaf["main"], sum, "main's annotated instructions")

			artifacts := os.Getenv("SIMRUN_ARTIFACTS")
			if artifacts == "" {
				artifacts = t.TempDir()
			}
			require.NoError(t, os.MkdirAll(artifacts, 0o755))
			shot, err := filepath.Abs(filepath.Join(artifacts, "report-"+arch+".png"))
			require.NoError(t, err)
			os.Remove(shot)
			browser("--screenshot=" + shot)
			st2, err := os.Stat(shot)
			require.NoError(t, err, "no screenshot")
			assert.Greater(t, st2.Size(), int64(10000))
			t.Logf("screenshot: %s", shot)
		})
	}
}

// TestReportBadInput: a file simrun did not write, a missing program or
// an unwritable output is a clear error, and nothing is left behind.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	data, _, _, _ := recordForReport(t, "aarch64-O2", dir)
	out := t.TempDir()

	elf, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	plain := filepath.Join(dir, "plain.data") // a perf.data without simrun's section
	var b bytes.Buffer
	_, err = (&profile.PerfData{Comm: "x", PID: 1}).WriteTo(&b)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(plain, b.Bytes(), 0o644))
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("hello\n"), 0o644))
	truncated := filepath.Join(dir, "trunc.data")
	full, err := os.ReadFile(data)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(truncated, full[:200], 0o644))

	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{text}, 1, text + ": not a perf.data file written by simrun record (no PERFILE2 magic)"},
		{[]string{elf.Path}, 1, "not a perf.data file written by simrun record (no PERFILE2 magic)"},
		{[]string{plain}, 1, plain + ": not a perf.data file written by simrun record (it has no simrun section)"},
		{[]string{truncated}, 1, "runs past the end of the file"},
		{[]string{filepath.Join(dir, "nope.data")}, 1, "no such file or directory"},
		{[]string{"--prog", text, data}, 1, "not an ELF file"},
		{[]string{"--prog", s390xProg(t), data}, 1, "the program is for s390x, the recording " + data + " for arm64"},
		{[]string{"-o", filepath.Join(dir, "missing", "r.html"), data}, 1, "cannot write " + filepath.Join(dir, "missing", "r.html")},
		{[]string{"--top", "0", data}, 2, "--top must be at least 1"},
		{[]string{data, data}, 2, "give one recording"},
	} {
		args := c.args
		if !strings.HasPrefix(strings.Join(args, " "), "-o") {
			args = append([]string{"-o", filepath.Join(out, "r.html")}, args...)
		}
		st, stdout, stderr := run(t, append([]string{"report"}, args...)...)
		assert.Equal(t, c.status, st, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Empty(t, stdout)
		assert.NotContains(t, stderr, "panic")
	}
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")

	// The recorded program moved: the error says how to point at it.
	b2, err := programs.Find("aarch64-O2", "listchase")
	require.NoError(t, err)
	moved := filepath.Join(dir, "lc")
	code, err := os.ReadFile(b2.Path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(moved, code, 0o755))
	d2 := filepath.Join(dir, "moved.data")
	st, _, stderr := run(t, "record", "-o", d2, moved)
	require.Equal(t, 36, st, stderr)
	require.NoError(t, os.Remove(moved))
	st, _, stderr = run(t, "report", "-o", filepath.Join(out, "r.html"), d2)
	assert.Equal(t, 1, st)
	assert.Contains(t, stderr, "the recorded program "+moved+" is gone (give its copy with --prog)")
	st, _, stderr = run(t, "report", "-o", filepath.Join(out, "r.html"), "--prog", b2.Path, d2)
	assert.Equal(t, 0, st, stderr)
	st, stdout, _ := run(t, "report", "-o", "-", data)
	assert.Equal(t, 0, st)
	assert.True(t, strings.HasPrefix(stdout, "<!DOCTYPE html>"))
}

func s390xProg(t *testing.T) string {
	b, err := programs.Find("s390x-O2", "hello")
	require.NoError(t, err)
	return b.Path
}
