package linux_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
)

// signalLockstep covers each signal program's whole run: every handler
// entry and every return through rt_sigreturn is compared register by
// register with qemu.
const signalLockstep = 500000

// partLockstep are the signal programs too long to single-step qemu
// through: the first N instructions (the first handler's entry included)
// in lockstep, then stdout, status and instruction count of the whole
// run. backtrace's unwinder reads the whole program's unwind tables.
var partLockstep = map[string]int{"backtrace": 100_000}

// TestQemuSignalPrograms runs each bundled signal program
// (programs/signals) under qemu-user and under simrun: same stdout (which
// dumps the signal frames byte for byte), exit status and retired
// instructions, and the same registers, SIMD&FP included, before every
// instruction.
func TestQemuSignalPrograms(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		oracle.Require(t, arch)
	}
	bins := programs.SignalBinaries("")
	require.NotEmpty(t, bins)
	for _, b := range bins {
		b := b
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			lockstep, whole := signalLockstep, true
			if n, ok := partLockstep[b.Name]; ok {
				lockstep, whole = n, false
			}
			res, err := difftest.Compare(context.Background(), b.Path, difftest.Options{
				Lockstep: lockstep, FP: true, CPU: b.Config.QemuCPU()})
			require.NoError(t, err)
			t.Logf("%d instructions, %d compared in lockstep, status %d, %s", res.Insns, res.Compared, res.Status, res.Fault)
			if whole {
				// The whole run in lockstep (and the instruction that
				// faulted fatally, which qemu logs, if any).
				require.GreaterOrEqual(t, res.Compared, res.Insns)
			} else {
				require.Equal(t, uint64(lockstep), res.Compared)
			}
			require.NotEmpty(t, res.Stdout)
		})
	}
}
