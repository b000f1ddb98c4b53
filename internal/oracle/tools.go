package oracle

import (
	"os"
	"os/exec"
	"testing"
)

// RequireTool fails t when an external program a test depends on (a cross
// compiler, binutils) is missing, naming the Debian package to install;
// with SIMRUN_ALLOW_NO_QEMU=1 it skips instead, as Require does.
func RequireTool(t testing.TB, tool, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	msg := tool + " not installed (apt-get install " + debianPackage + ")"
	if os.Getenv("SIMRUN_ALLOW_NO_QEMU") == "1" {
		t.Skip(msg + " (skipped: SIMRUN_ALLOW_NO_QEMU=1)")
	}
	t.Fatal(msg + " (set SIMRUN_ALLOW_NO_QEMU=1 to skip instead)")
	return ""
}
