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

func TestModes(t *testing.T) {
	bin, err := programs.Find("aarch64-O2", "hello")
	if err != nil {
		t.Skip(err)
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
