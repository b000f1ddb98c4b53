package main

import (
	"bytes"
	"strings"
	"testing"

	"simrun/programs"
)

func TestBadMode(t *testing.T) {
	var out, errs bytes.Buffer
	if rc := run([]string{"-mode", "fast", "x"}, &out, &errs); rc != 2 || !strings.Contains(errs.String(), "want plain, timed or spe") {
		t.Errorf("exit %d, %q", rc, errs.String())
	}
}

func TestBadRuns(t *testing.T) {
	var out, errs bytes.Buffer
	if rc := run([]string{"-runs", "0", "x"}, &out, &errs); rc != 2 || !strings.Contains(errs.String(), "want at least 1") {
		t.Errorf("exit %d, %q", rc, errs.String())
	}
}

func TestRuns(t *testing.T) {
	bin, err := programs.Find("s390x-O2", "hello")
	if err != nil {
		t.Fatal(err) // the bundled programs are part of the repository
	}
	var out, errs bytes.Buffer
	if rc := run([]string{"-runs", "3", bin.Path}, &out, &errs); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != lines[1] || lines[1] != lines[2] || !strings.HasSuffix(lines[0], " instructions") {
		t.Errorf("three runs printed %q", out.String())
	}
}

func TestModes(t *testing.T) {
	bin, err := programs.Find("aarch64-O2", "hello")
	if err != nil {
		t.Fatal(err) // the bundled programs are part of the repository
	}
	var want string
	for _, mode := range []string{"plain", "timed", "spe"} {
		var out, errs bytes.Buffer
		if rc := run([]string{"-mode", mode, bin.Path}, &out, &errs); rc != 0 {
			t.Fatalf("-mode %s: exit %d: %s", mode, rc, errs.String())
		}
		if !strings.HasSuffix(out.String(), " instructions\n") || out.String() == "0 instructions\n" {
			t.Fatalf("-mode %s: %q", mode, out.String())
		}
		if want == "" {
			want = out.String()
		} else if out.String() != want {
			t.Errorf("-mode %s: %q, plain %q", mode, out.String(), want)
		}
	}
}
