package main

// Worked examples in README.md and docs/*.md are produced by this test,
// so none can go stale.
//
// An example is a fenced block of kind "console" directly after a line
//
//	<!-- example: NAME -->
//
// Its lines starting with "$ " are commands (a command line ending in
// "\" goes on on the next line); the lines after a command, up to the
// next command, are what it prints, stdout and stderr together as a
// terminal shows them. Each example runs in a fresh temporary directory
// that holds the repository's programs/ and cmd/ (symbolic links) and
// bin/simrun; PATH starts with that bin/, so `simrun` and `bin/simrun`
// are this test binary acting as simrun (mainStatus, as main calls it).
// Each command runs in its own `bash -c`, in order; `$?` is the status of
// the previous command. The environment is the test's, with LC_ALL=C.
//
// Only two things are normalized: trailing blanks on each output line are
// dropped, and the output ends with one newline. Anything else that
// varies (wall time, absolute paths, perf's random tips) must be left out
// by the command itself, where the reader sees how (grep, head).
//
// go test ./cmd/simrun -run TestDocs -update rewrites the outputs in the
// Markdown files. Every console block must be marked, and no indented
// code line may start with "$ ": a command shown with its output is an
// example or it is not shown.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"simrun/internal/oracle"
	"simrun/programs"
)

// docsMainEnv, when "1" in the environment, makes the test binary act
// as simrun (see TestMain).
const docsMainEnv = "SIMRUN_DOCS_MAIN"

// docsMain runs the test binary as the simrun command.
func docsMain() int {
	os.Unsetenv(docsMainEnv)
	// The guests of the examples start with an empty environment (as
	// with --clean-env), so that what they print does not depend on the
	// machine's (docs/cli.md says so).
	hostEnviron = func() []string { return nil }
	catchInterrupts()
	return mainStatus(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// repoRoot is the repository's top directory.
func repoRoot() string { return filepath.Dir(programs.Dir()) }

// docFiles lists the Markdown files whose examples are checked, relative
// to the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	more, err := filepath.Glob(filepath.Join(repoRoot(), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		files = append(files, filepath.Join("docs", filepath.Base(f)))
	}
	sort.Strings(files[1:])
	return files
}

type docCommand struct {
	lines []string // as shown, "$ " included
	want  []string // the output shown
}

// script is the command as bash reads it.
func (c docCommand) script() string {
	s := strings.Join(c.lines, "\n")
	return strings.TrimPrefix(s, "$ ")
}

type docExample struct {
	name        string
	line        int // of the opening fence, 1-based
	first, last int // body lines: lines[first:last]
	cmds        []docCommand
}

var exampleMarker = regexp.MustCompile(`^<!-- example: ([A-Za-z0-9_.-]+) -->\s*$`)

// parseExamples finds the examples of one file and reports what breaks
// the rules.
func parseExamples(lines []string) ([]docExample, []string) {
	var exs []docExample
	var errs []string
	names := map[string]bool{}
	fence := ""  // the open fence, "" outside one
	marked := "" // the name of the marker just seen
	markLine := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`~") == "" {
				fence = ""
			}
			continue
		}
		if m := exampleMarker.FindStringSubmatch(trimmed); m != nil {
			marked, markLine = m[1], i+1
			if names[marked] {
				errs = append(errs, fmt.Sprintf("line %d: example %q twice", i+1, marked))
			}
			names[marked] = true
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			for _, c := range trimmed[3:] {
				if c != rune(fence[0]) {
					break
				}
				fence += string(c)
			}
			kind := strings.TrimSpace(strings.TrimLeft(trimmed, "`~"))
			if kind != "console" {
				if marked != "" {
					errs = append(errs, fmt.Sprintf("line %d: example %q is not a console block", i+1, marked))
					marked = ""
				}
				continue
			}
			if marked == "" {
				errs = append(errs, fmt.Sprintf("line %d: a console block without <!-- example: NAME --> before it (its output would not be checked)", i+1))
			}
			ex := docExample{name: marked, line: i + 1, first: i + 1}
			j := i + 1
			for ; j < len(lines) && !(strings.HasPrefix(strings.TrimSpace(lines[j]), fence) && strings.Trim(strings.TrimSpace(lines[j]), "`~") == ""); j++ {
				bl := lines[j]
				switch {
				case strings.HasPrefix(bl, "$ "):
					ex.cmds = append(ex.cmds, docCommand{lines: []string{bl}})
					for strings.HasSuffix(bl, "\\") && j+1 < len(lines) {
						j++
						bl = lines[j]
						ex.cmds[len(ex.cmds)-1].lines = append(ex.cmds[len(ex.cmds)-1].lines, bl)
					}
				case len(ex.cmds) == 0:
					errs = append(errs, fmt.Sprintf("line %d: example %q: output before the first command", j+1, ex.name))
				default:
					ex.cmds[len(ex.cmds)-1].want = append(ex.cmds[len(ex.cmds)-1].want, bl)
				}
			}
			if j == len(lines) {
				errs = append(errs, fmt.Sprintf("line %d: example %q: the block is not closed", i+1, ex.name))
				return exs, errs
			}
			ex.last = j
			if len(ex.cmds) == 0 {
				errs = append(errs, fmt.Sprintf("line %d: example %q has no command", i+1, ex.name))
			}
			if marked != "" {
				exs = append(exs, ex)
			}
			marked, fence = "", ""
			i = j
			continue
		}
		if marked != "" && trimmed != "" {
			errs = append(errs, fmt.Sprintf("line %d: the example marker of line %d is not followed by a ```console block", i+1, markLine))
			marked = ""
		}
		if strings.HasPrefix(l, "    $ ") || strings.HasPrefix(l, "\t$ ") {
			errs = append(errs, fmt.Sprintf("line %d: an indented command; show it in a marked console block so a test produces its output", i+1))
		}
	}
	if marked != "" {
		errs = append(errs, fmt.Sprintf("line %d: the example marker is not followed by a ```console block", markLine))
	}
	return exs, errs
}

// exampleDir makes the directory an example runs in.
func exampleDir(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"programs", "cmd"} {
		if err := os.Symlink(filepath.Join(repoRoot(), name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec '%s' \"$@\"\n", docsMainEnv, strings.ReplaceAll(exe, "'", `'\''`))
	if err := os.WriteFile(filepath.Join(dir, "bin", "simrun"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var usesPerf = regexp.MustCompile(`(^|[|;&(]\s*)perf\s`)

// runExample runs the commands of ex and returns their outputs.
func runExample(t *testing.T, ex docExample) [][]string {
	t.Helper()
	dir := exampleDir(t)
	env := append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "LC_ALL=C")
	var outs [][]string
	status := 0
	for _, c := range ex.cmds {
		if usesPerf.MatchString(c.script()) {
			if _, err := exec.LookPath("perf"); err != nil {
				oracle.RequireTool(t, "perf", "linux-perf")
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", fmt.Sprintf("(exit %d)\n%s", status, c.script()))
		cmd.Dir = dir
		cmd.Env = env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		if timedOut {
			t.Fatalf("%s: timed out", c.script())
		}
		status = 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", c.script(), err)
		}
		outs = append(outs, normalizeOutput(out.String()))
	}
	return outs
}

// normalizeOutput drops trailing blanks on each line and the final newline.
func normalizeOutput(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// TestDocsExamples runs every worked example of the README and docs/ and
// compares what it prints with what the page shows.
func TestDocsExamples(t *testing.T) {
	for _, file := range docFiles(t) {
		path := filepath.Join(repoRoot(), file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		exs, errs := parseExamples(lines)
		for _, e := range errs {
			t.Errorf("%s:%s", file, e)
		}
		changed := false
		for i := len(exs) - 1; i >= 0; i-- {
			ex := exs[i]
			t.Run(file+"/"+ex.name, func(t *testing.T) {
				outs := runExample(t, ex)
				var body []string
				for k, c := range ex.cmds {
					body = append(body, c.lines...)
					body = append(body, outs[k]...)
					if !*update && strings.Join(outs[k], "\n") != strings.Join(normalizeOutput(strings.Join(c.want, "\n")), "\n") {
						t.Errorf("%s:%d: %s prints\n%s\nand the page shows\n%s\n(go test ./cmd/simrun -run TestDocs -update rewrites the page)",
							file, ex.line, c.script(), strings.Join(outs[k], "\n"), strings.Join(c.want, "\n"))
					}
				}
				if *update && !t.Failed() {
					lines = append(lines[:ex.first:ex.first], append(body, lines[ex.last:]...)...)
					changed = true
				}
			})
		}
		if changed {
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestParseExamples checks the rules the examples' parser enforces.
func TestParseExamples(t *testing.T) {
	cases := []struct {
		name  string
		doc   string
		cmds  []string // the scripts found
		wants []int    // output lines per command
		errs  []string // substrings of the errors, in order
	}{
		{"one example", "text\n<!-- example: a -->\n```console\n$ simrun run x\nout 1\nout 2\n$ echo $?\n0\n```\n",
			[]string{"simrun run x", "echo $?"}, []int{2, 1}, nil},
		{"continuation", "<!-- example: a -->\n```console\n$ simrun record \\\n    -c 1024 p\nout\n```\n",
			[]string{"simrun record \\\n    -c 1024 p"}, []int{1}, nil},
		{"no output", "<!-- example: a -->\n```console\n$ simrun x\n```\n", []string{"simrun x"}, []int{0}, nil},
		{"unmarked console block", "```console\n$ simrun x\nout\n```\n", nil, nil, []string{"without <!-- example"}},
		{"marker before another block", "<!-- example: a -->\n```sh\nsimrun x\n```\n", nil, nil, []string{"not a console block"}},
		{"marker before text", "<!-- example: a -->\ntext\n", nil, nil, []string{"not followed by"}},
		{"marker at the end", "<!-- example: a -->\n", nil, nil, []string{"not followed by"}},
		{"indented command", "text\n\n    $ simrun run x\n    out\n", nil, nil, []string{"indented command"}},
		{"dollar inside another fence is fine", "```sh\n$ not checked\n```\n", nil, nil, nil},
		{"output first", "<!-- example: a -->\n```console\nout\n$ simrun x\n```\n", []string{"simrun x"}, []int{0}, []string{"output before the first command"}},
		{"unclosed", "<!-- example: a -->\n```console\n$ simrun x\n", nil, nil, []string{"not closed"}},
		{"twice", "<!-- example: a -->\n```console\n$ x\n```\n<!-- example: a -->\n```console\n$ y\n```\n",
			[]string{"x", "y"}, []int{0, 0}, []string{"twice"}},
		{"empty", "<!-- example: a -->\n```console\n```\n", nil, nil, []string{"has no command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exs, errs := parseExamples(strings.Split(c.doc, "\n"))
			var cmds []string
			var wants []int
			for _, ex := range exs {
				for _, cmd := range ex.cmds {
					cmds = append(cmds, cmd.script())
					wants = append(wants, len(cmd.want))
				}
			}
			if fmt.Sprint(cmds) != fmt.Sprint(c.cmds) || fmt.Sprint(wants) != fmt.Sprint(c.wants) {
				t.Errorf("commands %q with %v output lines, want %q with %v", cmds, wants, c.cmds, c.wants)
			}
			if len(errs) != len(c.errs) {
				t.Fatalf("errors %q, want %q", errs, c.errs)
			}
			for i, e := range errs {
				if !strings.Contains(e, c.errs[i]) {
					t.Errorf("error %q, want one containing %q", e, c.errs[i])
				}
			}
		})
	}
}

// TestNormalizeOutput pins the two normalizations the examples document.
func TestNormalizeOutput(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n\n", nil},
		{"a  \nb\t\n", []string{"a", "b"}},
		{"  a\n\nb", []string{"  a", "", "b"}},
	}
	for _, c := range cases {
		if got := normalizeOutput(c.in); fmt.Sprint(got) != fmt.Sprint(c.want) || len(got) != len(c.want) {
			t.Errorf("normalizeOutput(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
