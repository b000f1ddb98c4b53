package s390x_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/difftest"
	"simrun/sim/oracle"
	_ "simrun/sim/s390x"
)

// lockstepInsns is how far every bundled binary is compared register by
// register (general, condition code, vector/FP) with qemu's trace.
const lockstepInsns = 500000

// TestQemuDifferential runs every bundled s390x binary under qemu-s390x
// and simrun: same stdout, exit status and retired-instruction count, and
// the same registers before each of the first lockstepInsns instructions.
func TestQemuDifferential(t *testing.T) {
	oracle.Require(t, "s390x")
	bins := programs.Binaries("s390x")
	require.NotEmpty(t, bins)
	for _, b := range bins {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			res, err := difftest.Run(context.Background(), b.Path, difftest.Options{Args: b.Args, Lockstep: lockstepInsns, FP: true})
			require.NoError(t, err)
			t.Logf("%d instructions, %d compared in lockstep", res.Insns, res.Compared)
			require.Equal(t, min(res.Insns, lockstepInsns), res.Compared)
		})
	}
}
