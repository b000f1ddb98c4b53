package unwind_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"simrun/programs"
	"simrun/sim/unwind"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenPrograms are the bundled programs whose SFrame dumps are kept
// under testdata/: a plain recursive program, the s390x leaf functions
// that keep RA and FP in floating-point registers, and the calling
// convention zoo.
var goldenPrograms = []string{"callconv", "fib", "leaffpr"}

// TestProgramDumps compares `simrun sframe` of bundled programs, for
// every configuration and both versions, with testdata/ (go test
// -update rewrites it after a deliberate change).
func TestProgramDumps(t *testing.T) {
	for _, c := range programs.Configs {
		for _, version := range []uint8{2, 3} {
			var out bytes.Buffer
			for _, name := range goldenPrograms {
				b, err := programs.Find(c.Name, name)
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(b.Path)
				if err != nil {
					t.Fatal(err)
				}
				r, err := unwind.ReadSFrame(filepath.Join("programs", "bin", c.Name, name), data, unwind.SFrameOptions{Version: version})
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range r.Warnings {
					fmt.Fprintf(&out, "warning: %#x: %s\n", w.PC, w)
				}
				if err := r.Dump(&out); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join("testdata", fmt.Sprintf("%s.v%d.txt", c.Name, version))
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./sim/unwind -run TestProgramDumps -update)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s differs from the dump (if the change is deliberate: go test ./sim/unwind -run TestProgramDumps -update)", file)
			}
		}
	}
}
