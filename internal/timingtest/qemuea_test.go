package timingtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/sim/cpu"
)

func TestCompareAccesses(t *testing.T) {
	info := cpu.OpInfo{Access: 8}
	ops := []LoggedAccess{
		{N: 2, PC: 0x100, Addr: 0x5000, Info: info},
		{N: 4, PC: 0x108, Addr: 0x6000, Info: info},
		{N: 7, PC: 0x110, Addr: 0x7000, Info: info},
	}
	q := []oracle.MemAccess{
		{N: 2, PC: 0x100, Addr: 0x5000, Size: 8},
		{N: 2, PC: 0x100, Addr: 0x5008, Size: 8},
		{N: 4, PC: 0x108, Addr: 0x6000, Size: 8, Store: true},
		{N: 7, PC: 0x110, Addr: 0x7000, Size: 8},
	}
	for _, tc := range []struct {
		name     string
		ops      []LoggedAccess
		q        []oracle.MemAccess
		covered  uint64
		checked  int
		noAccess int
		bad      string // "" = none
	}{
		{"equal", ops, q, 10, 3, 0, ""},
		{"covered up to instruction 7", ops, q, 7, 2, 1, ""},
		{"an address differs", ops, append(q[:3:3], oracle.MemAccess{N: 7, PC: 0x110, Addr: 0x7001, Size: 8}), 10, 2, 0,
			"instruction 7 at 0x110 (, 8-byte access): simrun logs 0x7000, qemu accessed load 8@0x7001"},
		{"the second access's address does not count", ops, append(q[1:2:2], q[2:]...), 10, 2, 0, "simrun logs 0x5000, qemu accessed load 8@0x5008"},
		{"another pc", ops, append(q[:3:3], oracle.MemAccess{N: 7, PC: 0x114, Addr: 0x7000, Size: 8}), 10, 2, 0, "instruction 7: simrun at 0x110, qemu at 0x114"},
		{"qemu made no access", ops, q[:3], 10, 2, 1, ""},
		{"simrun describes no access", ops[:2], q, 10, 2, 0, "instruction 7 at 0x110: qemu accessed load 8@0x7000, simrun describes no access"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bad problems
			checked, noAccess := compareAccesses(tc.ops, tc.q, tc.covered, &bad)
			require.Equal(t, tc.checked, checked)
			require.Len(t, noAccess, tc.noAccess)
			if tc.bad == "" {
				require.Empty(t, bad)
			} else {
				require.Len(t, bad, 1)
				require.True(t, strings.Contains(bad[0], tc.bad), bad[0])
			}
		})
	}
}
