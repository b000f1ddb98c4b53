package linux_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// lockstepInsns is how far each dynamic program is compared register by
// register with qemu's trace: past ld.so's relocation of libc and into
// main.
const lockstepInsns = 500000

// TestQemuDynamicPrograms runs each bundled dynamically linked program
// (programs/dynamic, gcc's default output) under qemu-user -L SYSROOT and
// under simrun with the same sysroot: same stdout, exit status and
// retired-instruction count, and the same registers before each of the
// first lockstepInsns instructions. The programs read their own source and
// build, list and remove files in a temporary directory.
func TestQemuDynamicPrograms(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		oracle.Require(t, arch)
	}
	bins := programs.DynamicBinaries("")
	require.NotEmpty(t, bins)
	for _, b := range bins {
		b := b
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			sysroot := linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))
			requireSysroot(t, sysroot)
			// The two runs go side by side: each works in a directory of
			// its own, both named with one length.
			dir := t.TempDir()
			qdir, sdir := filepath.Join(dir, "q"), filepath.Join(dir, "s")
			require.NoError(t, os.Mkdir(qdir, 0o755))
			require.NoError(t, os.Mkdir(sdir, 0o755))
			args := []string{programs.DynamicSource("wc"), "work"}
			wantOut, wantStatus, expErr := b.Expected() // the glibc programs' recorded results
			if expErr == nil {
				args = nil // recorded with no arguments
			}
			lockstep := lockstepInsns
			if b.Name == "files" {
				// It reads the inode numbers and the directory order of
				// the files it makes, which differ between the two
				// directories: compare what it prints, not its steps.
				compareOutput(t, b, args, sysroot, qdir, sdir)
				return
			}
			res, err := difftest.Compare(context.Background(), b.Path, difftest.Options{
				Args: args, Lockstep: lockstep, FP: true, CPU: b.Config.QemuCPU(), Sysroot: sysroot, Dir: qdir, SimDir: sdir})
			require.NoError(t, err)
			t.Logf("%d instructions, %d compared in lockstep, %d host values adopted", res.Insns, res.Compared, res.Adopted)
			require.Equal(t, min(res.Insns, uint64(lockstep)), res.Compared)
			if expErr == nil {
				// Dynamically linked, they print what their static
				// builds print.
				require.Equal(t, wantStatus, res.Status, "stdout: %s", res.Stdout)
				require.Equal(t, string(wantOut), string(res.Stdout))
				return
			}
			require.Equal(t, 0, res.Status, "stdout: %s", res.Stdout)
			require.NotEmpty(t, res.Stdout)
		})
	}
}

func requireSysroot(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "lib")); err != nil {
		if os.Getenv("SIMRUN_ALLOW_NO_QEMU") != "" {
			t.Skipf("no sysroot %s (SIMRUN_ALLOW_NO_QEMU set)", dir)
		}
		t.Fatalf("no sysroot %s: install Debian's libc6-dev-arm64-cross and libc6-dev-s390x-cross", dir)
	}
}

// compareOutput runs b under qemu in qdir and under simrun in sdir and
// compares stdout and exit status.
func compareOutput(t *testing.T, b programs.Binary, args []string, sysroot, qdir, sdir string) {
	res, err := oracle.Count(context.Background(), b.Path, oracle.Options{Args: args, CPU: b.Config.QemuCPU(), Sysroot: sysroot, Dir: qdir})
	require.NoError(t, err)
	var out bytes.Buffer
	m, err := linux.Load(b.Path, linux.Config{Args: append([]string{b.Path}, args...), Stdout: &out, Seed: 1, Dir: sdir})
	require.NoError(t, err)
	exit, err := m.Run()
	require.NoError(t, err)
	require.Equal(t, string(res.Stdout), out.String())
	require.Equal(t, res.Status, exit.Status)
	t.Logf("qemu %d instructions, simrun %d", res.Insns, m.Insns)
}
