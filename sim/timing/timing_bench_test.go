package timing

import (
	"testing"

	"simrun/sim/cpu"
)

func BenchmarkTimingALU(b *testing.B) {
	p, _ := PresetByName("neoverse-n1")
	t := New(p)
	// One straight-line run of 4096 operations, a pattern of 16 repeated.
	infos := make([]cpu.OpInfo, 4096)
	for i := range infos {
		infos[i] = cpu.NewOpInfo(4)
		infos[i].AddSrc(uint8(i % 16))
		infos[i].AddSrc(uint8(i%16 + 1))
		infos[i].AddDst(uint8(i%16 + 2))
	}
	batch := cpu.NewBatch(len(infos), 2)
	batch.Begin(infos, 0x400000, 0)
	batch.Finish(len(infos))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.TimeBatch(batch, 0, nil, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(infos)), "ns/op-timed")
}
