package arm64_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/difftest"
	"simrun/sim/oracle"
)

// lockstepInsns is how far every bundled binary is compared register by
// register (general, NZCV, SIMD&FP) with qemu's trace.
const lockstepInsns = 500000

// TestQemuDifferential runs every bundled arm64 binary under qemu-aarch64
// and simrun: same stdout, exit status and retired-instruction count, and
// the same registers before each of the first lockstepInsns instructions.
func TestQemuDifferential(t *testing.T) {
	oracle.Require(t, "arm64")
	bins := programs.Binaries("arm64")
	require.NotEmpty(t, bins)
	for _, b := range bins {
		b := b
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			res, err := difftest.Run(context.Background(), b.Path, difftest.Options{Args: b.Args, Lockstep: lockstepInsns, FP: true})
			require.NoError(t, err)
			t.Logf("%d instructions, %d compared in lockstep", res.Insns, res.Compared)
			require.Equal(t, min(res.Insns, lockstepInsns), res.Compared)
		})
	}
}
