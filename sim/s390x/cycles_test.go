package s390x

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/timingtest"
)

// TestHandDerivedCycles times small s390x sequences on every preset
// against cycle counts worked out by hand, by the rules
// sim/arm64/cycles_test.go states (one operation a cycle, issue when the
// sources are ready, unit and memory latencies, Mispred after a
// mispredicted branch). Every sequence ends with "lghi %r2,0; svc 1":
// the lghi issues at cycle c, the svc (which reads r1-r4) at c+1, so
// every total is c+2. Counts: neoverse-n1, neoverse-v2, slow-memory.
func TestHandDerivedCycles(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []string
		want [3]uint64
	}{
		// 8 dependent aghi: one a cycle (ALU latency 1): 8 + 2.
		{"add chain", rep(8, "a75b0001"), [3]uint64{10, 10, 10}}, // aghi %r5,1
		// msgr chain: issues at 0, L, 2L, 3L: 3L+3 with L = 3, 2, 4.
		{"multiply chain", rep(4, "b90c0055"), [3]uint64{12, 9, 15}}, // msgr %r5,%r5
		// lghi %r8,3 then three dsgr %r6,%r8 (each reads r7 and r8,
		// writes r6:r7): issues at 1, 1+D, 1+2D; total 1+2D+1+2 with
		// D = 12, 12, 30.
		{"divide chain", append([]string{"a7890003"}, rep(3, "b90d0068")...), [3]uint64{28, 28, 64}},
		// lg of the cold stack (TLB walk, every level missed), agr
		// waiting for it, lg of the same line (TLB+L1D), agr waiting:
		// TLB+Walk+DRAM + 1 + TLB+L1D + 1 + 2.
		//   N1: 271 + 1 + 5 + 1 + 2 = 280; V2: 289 + 1 + 5 + 1 + 2 = 298;
		//   slow: 1002 + 1 + 10 + 1 + 2 = 1016
		{"cold load, then a hit", []string{"e350f0000004", "b9080095", "e360f0080004", "b9080096"}, [3]uint64{280, 298, 1016}},
		// stg then lg of its address: the store fills the TLB and the
		// line, the load hits both: 1 + TLB+L1D + 1 + 2.
		{"store then load", []string{"e350f0100024", "e360f0100004", "b9080096"}, [3]uint64{9, 9, 14}},
		// lghi %r5,7; ltgr %r5,%r5; jne over a nopr: the branch, taken
		// and predicted not taken, issues at 2 (it waits for the
		// condition code), completes at 3: total 3+M+2 with M = 11, 12, 20.
		{"mispredicted branch", []string{"a7590007", "b9020055", "a7740003", "0700"}, [3]uint64{16, 17, 25}},
		// lghi %r5,3; brctg %r5,. : taken (miss), taken (miss), not taken
		// (miss), each 1 + M: 1 + 3(1+M) + 2.
		{"count loop", []string{"a7590003", "a7570000"}, [3]uint64{39, 42, 66}},
		// adbr, mdbr, ddbr on f4 in a chain, adbr %f7,%f4 waiting for
		// the divide: issues at 0, F, 2F, 2F+FD; total 2F+FD+3 with
		// F = 3, 2, 6 and FD = 10, 10, 30.
		{"fp chain", []string{"b31a0045", "b31c0044", "b31d0045", "b31a0074"}, [3]uint64{19, 17, 45}},
		// larl %r5,f; basr %r14,%r5; j end; nopr; f: br %r14; end: a
		// call through a register the target buffer does not hold (cold:
		// mispredicted), and the return the return stack predicts: larl
		// at 0, basr issues at 1 and completes at 2, br %r14 at 2+M
		// (predicted), j at 3+M: total 6+M with M = 11, 12, 20.
		{"indirect call, predicted return", []string{"c05000000007", "0de5", "a7f40004", "0700", "07fe"}, [3]uint64{17, 18, 26}},
		// larl %r14,end; br %r14; nopr; end: a return with the return
		// stack empty mispredicts: br issues at 1, completes at 2, the
		// next dispatches at 2+M: total 4+M.
		{"return, empty return stack", []string{"c0e000000005", "07fe", "0700"}, [3]uint64{15, 16, 24}},
		// llilh %r6..%r10 with 0x41..0x45: five lines of the data
		// segment 64 KiB apart, in one L1D set on every preset; the
		// fifth lg evicts the first line, which the sixth reloads from
		// the L2 (N1, V2) or, on slow-memory, whose L2 loses it too, from
		// the LLC (the set arithmetic is arm64's case of the same name).
		// llilh at 0-4, lg at 5-10, agr %r11,%r4 waiting for the reload
		// at 10+L: total 13+L with L = 1+11, 1+12, 2+120.
		{"L1D eviction, reload from L2 or LLC", []string{"a56e0041", "a57e0042", "a58e0043", "a59e0044", "a5ae0045",
			"e34060000004", "e34070000004", "e34080000004", "e34090000004", "e340a0000004", "e34060000004", "b90800b4"},
			[3]uint64{25, 26, 135}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := mustHex(append(tc.code, "a7290000", "0a01")...) // lghi %r2,0; svc 1
			path := filepath.Join(t.TempDir(), "seq")
			require.NoError(t, os.WriteFile(path, prog(code, make([]byte, 5<<16)), 0o755)) // data at 0x410000
			timingtest.RequireCycles(t, path, tc.want)
		})
	}
}

func rep(n int, insn string) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = insn
	}
	return s
}
