// Package shared locates the test data in ../shared (beside the module
// root) for the unwinding tests, which read it in place.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of ../shared, or skips t when it is not
// there.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(filepath.Join(s, "sframe", "INDEX.md")); err != nil {
				t.Skipf("test data %s/sframe is not present (it sits beside the module root, as ../shared): skipped", s)
			}
			return s
		}
		if filepath.Dir(d) == d {
			t.Fatal("no go.mod above the working directory")
		}
	}
}

// SFrame returns the path of a file under ../shared/sframe.
func SFrame(t testing.TB, parts ...string) string {
	return filepath.Join(append([]string{Dir(t), "sframe"}, parts...)...)
}
