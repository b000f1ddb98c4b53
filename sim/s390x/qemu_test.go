package s390x_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
	_ "simrun/sim/s390x"
)

// lockstepInsns is how far every bundled binary is compared register by
// register (general, condition code, vector/FP) with qemu's trace.
const lockstepInsns = 500000

// TestQemuDifferential runs every bundled s390x binary, the freestanding
// ones and the glibc ones, under qemu-s390x (as the CPU model simrun shows
// the guest, programs.S390xQemuCPU) and simrun: same stdout, exit status
// and retired-instruction count, and the same registers before each of
// the first lockstepInsns instructions; stdout and status also match
// expected/.
func TestQemuDifferential(t *testing.T) {
	oracle.Require(t, "s390x")
	bins := append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...)
	require.NotEmpty(t, bins)
	for _, b := range bins {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			res, err := difftest.Compare(context.Background(), b.Path, difftest.Options{Args: b.Args, Lockstep: lockstepInsns, FP: true, CPU: b.Config.QemuCPU()})
			require.NoError(t, err)
			t.Logf("%d instructions, %d compared in lockstep, %d host values adopted", res.Insns, res.Compared, res.Adopted)
			require.Equal(t, min(res.Insns, lockstepInsns), res.Compared)
			want, status, err := b.Expected()
			require.NoError(t, err)
			require.Equal(t, string(want), string(res.Stdout), "stdout against expected/")
			require.Equal(t, status, res.Status, "status against expected/")
		})
	}
}
