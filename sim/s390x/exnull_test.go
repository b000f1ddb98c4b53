package s390x

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// TestExecuteBranchToNull: an EXECUTE whose target is a branch to address
// 0 raises the fetch fault there (Execute must look the page up, not run
// a slot of the EXECUTE's page).
func TestExecuteBranchToNull(t *testing.T) {
	code := mustHex(
		"a7190000",     // lghi %r1,0
		"c02000000006", // larl %r2,.+12 (the br below)
		"44002000",     // ex %r0,0(%r2)
		"0a01",         // svc 1 (not reached)
		"07f1",         // br %r1 (the EXECUTE's target)
	)
	for _, observed := range []bool{false, true} {
		m, err := linux.New("exnull", prog(code, nil), linux.Config{MaxInsns: 100})
		require.NoError(t, err)
		if observed {
			m.Observer = func(*cpu.Machine) error { return nil }
		}
		exit, err := m.Run()
		require.NoError(t, err)
		require.NotNil(t, exit.Fault, "observed %v", observed)
		require.Equal(t, cpu.FaultFetch, exit.Fault.Kind, "observed %v: %v", observed, exit.Fault)
		require.Equal(t, uint64(0), exit.Fault.PC, "observed %v: %v", observed, exit.Fault)
	}
}
