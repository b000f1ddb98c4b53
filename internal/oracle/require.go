package oracle

import (
	"os"
	"testing"
)

// Require is for the project's differential tests: it fails t (t.Fatal)
// when the qemu-user binary for arch is not installed, because a missing
// oracle must not let those tests pass silently.  With the environment
// variable SIMRUN_ALLOW_NO_QEMU=1 it skips the test instead.
func Require(t testing.TB, arch string) {
	t.Helper()
	err := Available(arch)
	if err == nil {
		return
	}
	if os.Getenv("SIMRUN_ALLOW_NO_QEMU") == "1" {
		t.Skipf("%v (skipped: SIMRUN_ALLOW_NO_QEMU=1)", err)
		return
	}
	t.Fatalf("%v (set SIMRUN_ALLOW_NO_QEMU=1 to skip instead)", err)
}

// RequireMemTrace is for the tests that use MemTrace: when the qemu-user
// binary for arch or the host gcc that builds the plugin is missing, it
// skips t saying which, and fails t instead when the environment
// variable CI is set (CI must not pass by skipping its oracle).
func RequireMemTrace(t testing.TB, arch string) {
	t.Helper()
	err := Available(arch)
	if err == nil {
		err = PluginAvailable()
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (CI is set: a missing oracle fails the test)", err)
		return
	}
	t.Skipf("%v (skipped; with CI set this fails)", err)
}
