package cpu

import "testing"

func BenchmarkTimingALU(b *testing.B) {
	p, _ := PresetByName("neoverse-n1")
	t := NewTiming(p)
	infos := make([]OpInfo, 16)
	for i := range infos {
		infos[i] = NewOpInfo(4)
		infos[i].AddSrc(uint8(i))
		infos[i].AddSrc(uint8(i + 1))
		infos[i].AddDst(uint8(i + 2))
	}
	ops := make([]Retired, 4096)
	for i := range ops {
		ops[i] = Retired{Info: &infos[i%16], PC: uint64(0x400000 + 4*i)}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.Run(ops, 0, nil, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ops)), "ns/op-timed")
}
