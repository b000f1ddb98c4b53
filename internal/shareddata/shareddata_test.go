package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of ending
// the goroutine, so Missing's two outcomes can be checked.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = sprintf(format, a...) }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = sprintf(format, a...) }
func (r *recorder) Fatal(a ...any)                 { r.failed = sprint(a...) }

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		skip, fail bool
	}{{"", true, false}, {"true", false, true}, {"1", false, true}} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			Missing(r, "/nowhere/shared/sframe", "the SFrame suite")
			if got := r.skipped != ""; got != tc.skip {
				t.Errorf("skipped %q, want skip %v", r.skipped, tc.skip)
			}
			if got := r.failed != ""; got != tc.fail {
				t.Errorf("failed %q, want failure %v", r.failed, tc.fail)
			}
			msg := r.skipped + r.failed
			if !strings.Contains(msg, "/nowhere/shared/sframe") || !strings.Contains(msg, "the SFrame suite") {
				t.Errorf("message %q does not name the path and the data", msg)
			}
		})
	}
}

func TestRoot(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	// this package sits at MODULE/internal/shareddata
	wd, _ := os.Getwd()
	want := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(wd))), "shared")
	if root != want {
		t.Errorf("Root() = %s, want %s", root, want)
	}
}

func TestRequirePresent(t *testing.T) {
	t.Setenv("CI", "true")
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Skip("no shared folder beside the repository; TestMissing covers the other case")
	}
	r := &recorder{TB: t}
	if p := Require(r, ".", "the shared folder"); p != root || r.failed != "" || r.skipped != "" {
		t.Errorf("Require(.) = %s (failed %q, skipped %q), want %s", p, r.failed, r.skipped, root)
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
func sprint(a ...any) string                 { return fmt.Sprint(a...) }
