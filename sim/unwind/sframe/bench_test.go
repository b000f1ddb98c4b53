package sframe_test

import (
	"encoding/binary"
	"math/rand"
	"testing"

	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/sframe"
)

// BenchmarkFind looks up random pcs in a sorted section of 25,000
// functions (2 to 9 rows each), decoded from its bytes.
func BenchmarkFind(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	s := &sframe.Section{Version: 3, Flags: sframe.SFRAME_F_FDE_SORTED | sframe.SFRAME_F_FDE_FUNC_START_PCREL,
		ABI: abi.SFrameAArch64LE, Order: binary.LittleEndian}
	pc := int64(0x10000)
	for i := 0; i < 25000; i++ {
		size := uint32(16 + rng.Intn(600)*4)
		f := sframe.FDE{Start: pc, Size: size}
		n := 2 + rng.Intn(8)
		for j := 0; j < n; j++ {
			f.FREs = append(f.FREs, sframe.FRE{Start: uint32(j) * size / uint32(n) &^ 3,
				CFA: sframe.Rule{Kind: sframe.RuleReg, Reg: 31, Off: int64(16 * j)}})
		}
		s.FDEs = append(s.FDEs, f)
		pc += int64(size) + int64(rng.Intn(4))*4
	}
	raw, err := sframe.Encode(s, sframe.EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if s, err = sframe.Decode(raw); err != nil {
		b.Fatal(err)
	}
	pcs := make([]int64, 4096)
	for i := range pcs {
		f := &s.FDEs[rng.Intn(len(s.FDEs))]
		pcs[i] = f.Start + rng.Int63n(int64(f.Size))
	}
	x, err := sframe.NewIndex(s)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := x.Find(pcs[i&4095]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/lookup")
	b.ReportMetric(float64(len(s.FDEs)), "FDEs")
}
