// Package shared locates the SFrame conformance suite from binutils (the
// gas cfi-sframe tests, libsframe decode inputs, byte-exact binutils 2.46
// outputs; see its INDEX.md), found beside the repository in
// ../shared/sframe, for the unwinding tests, which read it in place.
package shared

import (
	"path/filepath"
	"testing"

	"simrun/internal/shareddata"
)

// Dir returns the absolute path of the shared test-data folder holding the
// suite. Without the suite the test skips, naming the missing path, or
// fails when CI is set (shareddata.Require).
func Dir(t testing.TB) string {
	t.Helper()
	index := shareddata.Require(t, "sframe/INDEX.md", "the SFrame conformance suite from binutils (gas cfi-sframe tests, libsframe decode inputs, objdump --sframe outputs), kept beside the repository as ../shared/sframe")
	return filepath.Dir(filepath.Dir(index))
}

// SFrame returns the path of a file of the suite (under ../shared/sframe).
func SFrame(t testing.TB, parts ...string) string {
	return filepath.Join(append([]string{Dir(t), "sframe"}, parts...)...)
}
