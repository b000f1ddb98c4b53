package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
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

// browserPath finds Debian's chromium for the browser test: missing, the
// test is skipped with the reason, except under CI, where it fails (CI
// installs chromium; a green run must not hide a report never opened).
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (apt-get install chromium): CI must open the report in a browser")
	}
	t.Skip("chromium is not installed (apt-get install chromium): the report is not tested in a browser")
	return ""
}

// artifactDir is where the browser test keeps its screenshots:
// $SIMRUN_ARTIFACTS when set (CI keeps it), else a temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("SIMRUN_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// TestReportInBrowser drives the report of each architecture in headless
// Chromium as a person would: the page fits 1280 px without sideways
// scrolling, the flame graph's frames hold the recording's weights, a
// search highlights a function and says its share, clicking a frame
// zooms into it, the icicle button flips the graph, hovering shows the
// details, and clicking table headers sorts the functions.  Screenshots
// are kept as artifacts.
func TestReportInBrowser(t *testing.T) {
	chromium := browserPath(t)
	artifacts := artifactDir(t)
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
				assert.Contains(t, string(html), "s390x guest, timed on a Neoverse-N1-like model")
			} else {
				assert.Contains(t, string(html), "Neoverse-N1-like core (neoverse-n1 preset")
				assert.NotContains(t, string(html), "guest, timed on")
			}
			// Self-contained: no external scripts, styles, images or fetches.
			for _, re := range []string{`(?i)<(script|link|img|iframe)[^>]+(src|href)=`, `(?i)url\(`, `(?i)\bfetch\(|XMLHttpRequest|@import`} {
				assert.NotRegexp(t, re, string(html))
			}

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			actx, cancelA := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
				chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
				chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-gpu", true))...)
			defer cancelA()
			bctx, cancelB := chromedp.NewContext(actx)
			defer cancelB()
			eval := func(js string) any {
				t.Helper()
				v, err := chromedp.Run(bctx, chromedp.Evaluate[any](js))
				require.NoError(t, err, js)
				return v
			}
			evalF := func(js string) float64 {
				t.Helper()
				v, ok := eval(js).(float64)
				require.True(t, ok, js)
				return v
			}
			evalS := func(js string) string {
				t.Helper()
				v, ok := eval(js).(string)
				require.True(t, ok, js)
				return v
			}
			shot := func(name string, png []byte) {
				t.Helper()
				p := filepath.Join(artifacts, "report-"+arch+"-"+name+".png")
				require.NoError(t, os.WriteFile(p, png, 0o644))
				t.Logf("screenshot: %s", p)
			}
			require.NoError(t, chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("#flame .frame"))))

			// The page fits 1280 px: no sideways scrolling.
			assert.Equal(t, 1280.0, evalF(`window.innerWidth`))
			assert.LessOrEqual(t, evalF(`document.documentElement.scrollWidth`), 1280.0, "the page scrolls sideways at 1280 px")
			assert.Regexp(t, fmt.Sprintf(`^flame graph: \d+ frames, %d samples in \d+ stacks$`, total), evalS(`document.getElementById("fg-status").textContent`))

			// The frames: the root holds every sample, and the frames of
			// each function add up to its weight in the folded stacks; rows
			// are at least 18 px high.
			var frames []struct {
				Name  string  `json:"name"`
				Value int     `json:"value"`
				Depth int     `json:"depth"`
				H     float64 `json:"h"`
			}
			raw, err := chromedp.Run(bctx, chromedp.Evaluate[[]byte](`Array.from(document.querySelectorAll("#flame .frame")).map(e => ({name: e.dataset.name, value: +e.dataset.value, depth: +e.dataset.depth, h: e.getBoundingClientRect().height}))`))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &frames))
			got := map[string]int{}
			for _, f := range frames {
				assert.GreaterOrEqual(t, f.H, 18.0, "frame %s", f.Name)
				if f.Depth == 0 {
					assert.Equal(t, "all", f.Name)
					assert.Equal(t, total, f.Value)
					continue
				}
				got[f.Name] += f.Value
			}
			assert.Equal(t, weights, got, "flame graph frames")
			full, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			require.NoError(t, err)
			shot("page", full)

			// Search for a function: its frames (and only they) light up,
			// and the share matches its samples.
			const fn = "rng_below"
			require.Positive(t, weights[fn])
			require.NoError(t, chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS("#fg-search"), fn)))
			matched := evalS(`Array.from(document.querySelectorAll("#flame .frame.match")).map(e => e.dataset.name).join(",")`)
			assert.NotEmpty(t, matched)
			for _, m := range strings.Split(matched, ",") {
				assert.Equal(t, fn, m)
			}
			assert.Equal(t, fmt.Sprintf("matched 1 function: %.1f%% of samples", 100*float64(weights[fn])/float64(total)),
				evalS(`document.getElementById("fg-match").textContent`))
			png, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS("#flamegraph + p + .fg-controls"), chromedp.NodeVisible))
			require.NoError(t, err)
			require.NotEmpty(t, png)

			// Hover: the tooltip names the function and its mean latency.
			tip := evalS(`(() => { const e = document.querySelector('#flame .frame[data-name="` + fn + `"]'); const r = e.getBoundingClientRect();
				e.dispatchEvent(new MouseEvent("mousemove", {bubbles: true, clientX: r.left + 2, clientY: r.top + 2}));
				return document.getElementById("fg-tip").textContent; })()`)
			assert.Contains(t, tip, fn)
			assert.Contains(t, tip, "mean total latency:")
			flame, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID("flame"), chromedp.NodeVisible))
			require.NoError(t, err)
			shot("search", flame)

			// Click the frame: it zooms to the full width.
			width := func() float64 {
				return evalF(`document.querySelector('#flame .frame[data-name="` + fn + `"]').getBoundingClientRect().width`)
			}
			before := width()
			require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#flame .frame[data-name="`+fn+`"]`), chromedp.NodeVisible)))
			after := width()
			assert.Greater(t, after, before, "clicking %s zooms into it", fn)
			assert.InDelta(t, evalF(`document.getElementById("flame").clientWidth`), after, 2)
			assert.Equal(t, fn, evalS(`document.getElementById("flame").dataset.zoom`))
			flame, err = chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID("flame"), chromedp.NodeVisible))
			require.NoError(t, err)
			shot("zoom", flame)
			require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("reset"), chromedp.NodeVisible)))
			assert.InDelta(t, before, width(), 1, "reset zoom")

			// Icicle: the root moves to the top.
			root := `document.querySelector('#flame .frame[data-depth="0"]').style.top`
			assert.NotEqual(t, "0px", evalS(root))
			require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("fg-orient"), chromedp.NodeVisible)))
			assert.Equal(t, "0px", evalS(root))

			// The function table: its counts, its links, and sorting.
			var rows [][]string
			raw, err = chromedp.Run(bctx, chromedp.Evaluate[[]byte](`Array.from(document.querySelectorAll("#funcs tbody tr")).map(r => [r.dataset.func, r.cells[1].textContent])`))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &rows))
			table := map[string]int{}
			for _, r := range rows {
				n, _ := strconv.Atoi(r[1])
				table[r[0]] = n
			}
			assert.Equal(t, leaf, table, "function table")
			assert.Equal(t, 1.0, evalF(`document.querySelectorAll('#funcs a[href="#fn-main"]').length + document.querySelectorAll('h3[id="fn-main"]').length - 1`), "main links to its section")
			column := func(col int) []float64 {
				var v []float64
				raw, err := chromedp.Run(bctx, chromedp.Evaluate[[]byte](fmt.Sprintf(`Array.from(document.querySelectorAll("#funcs tbody tr")).map(r => parseFloat(r.cells[%d].dataset.v))`, col)))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(raw, &v))
				return v
			}
			// "mean total": descending on the first click, ascending on the second.
			require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#funcs thead th:nth-child(5)"), chromedp.NodeVisible)))
			lat := column(4)
			assert.True(t, sort.IsSorted(sort.Reverse(sort.Float64Slice(lat))), "descending: %v", lat)
			assert.Equal(t, "descending", evalS(`document.querySelector("#funcs thead th:nth-child(5)").getAttribute("aria-sort")`))
			require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#funcs thead th:nth-child(5)"), chromedp.NodeVisible)))
			lat = column(4)
			assert.True(t, sort.Float64sAreSorted(lat), "ascending: %v", lat)
			names := evalS(`(() => { document.querySelector("#funcs thead th:nth-child(1)").click(); return Array.from(document.querySelectorAll("#funcs tbody tr")).map(r => r.dataset.func).join("\n"); })()`)
			assert.True(t, sort.StringsAreSorted(strings.Split(names, "\n")), names)
			tbl, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.ID("funcs"), chromedp.NodeVisible))
			require.NoError(t, err)
			shot("table", tbl)

			// The annotated disassembly of main sums to main's samples,
			// shown in windows (fewer rows than main has instructions).
			assert.Equal(t, float64(leaf["main"]), evalF(`Array.from(document.querySelectorAll('table.dis[data-func="main"] tr[data-samples]')).reduce((s, r) => s + +r.dataset.samples, 0)`))
			assert.Positive(t, evalF(`document.querySelectorAll('table.dis[data-func="main"] tr.gap').length`))
			assert.Positive(t, evalF(`document.querySelectorAll('table.src[data-func="main"] tr.hot').length`), "main's sampled source lines")
			assert.Equal(t, 1.0, evalF(`document.querySelectorAll('table.sframe[data-func="main"]').length`))
			assert.Equal(t, fmt.Sprint(reportInsns[arch]), evalS(`document.getElementById("insns").textContent`))
			// Still no sideways scrolling with everything drawn and sorted.
			assert.LessOrEqual(t, evalF(`document.documentElement.scrollWidth`), 1280.0)
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

// TestReportSharedObjects: the recording keeps where the shared objects
// were mapped, so simrun report names libc's functions in a dynamically
// linked program's samples as the record's own outputs do.
func TestReportSharedObjects(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join("..", "..", "programs", "dynamic", "bin", "aarch64-dyn-O2", "sortsearch")
	data := filepath.Join(dir, "perf.data")
	st, _, errs := run(t, "record", "-c", "1024", "--format", "perf,folded,json", "-o", data, prog)
	require.Contains(t, []int{0, 2}, st, errs) // sortsearch exits with its own status
	folded, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
	require.NoError(t, err)
	require.Contains(t, string(folded), ";qsort_r;", "record names libc's functions")
	js, err := os.ReadFile(filepath.Join(dir, "perf.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(js), `"objects":[{"path":"`)
	require.NoError(t, profile.CheckJSON(bytes.NewReader(js)), "the run's objects are in the schema")
	page := filepath.Join(dir, "report.html")
	st, _, errs = run(t, "report", "-o", page, data)
	require.Equal(t, 0, st, errs)
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(html), ">qsort_r<", "report names them too")
	assert.Contains(t, string(html), ">strcmp<")
	// The samples by object: the program's and libc's.
	assert.Regexp(t, `id="by-object">.*<td class="mono">libc\.so\.6</td>`, string(html))
	assert.Regexp(t, `id="by-object">.*<td class="mono">sortsearch</td>`, string(html))
}
