package timing

import (
	"testing"

	"simrun/sim/cpu"
)

// TestPredictorIndexByAlignment: two conditional branches a halfword
// apart (s390x), one always taken and one never, train separate counters
// with PCShift 1; indexed by pc>>2 they share one and keep mispredicting.
func TestPredictorIndexByAlignment(t *testing.T) {
	p, _ := PresetByName("neoverse-n1")
	cond := cpu.NewOpInfo(2)
	cond.Class, cond.Unit, cond.Flags = cpu.ClassBranch, cpu.UnitBranch, cpu.OpConditional
	jump := cpu.NewOpInfo(4)
	jump.Class, jump.Unit = cpu.ClassBranch, cpu.UnitBranch
	// A@0x1000 taken to X@0x2000, X jumps to B@0x1002, B falls through to
	// C@0x1004, C jumps back to A.
	var ops []cpu.Retired
	for i := 0; i < 64; i++ {
		ops = append(ops, cpu.Retired{Info: &cond, PC: 0x1000}, cpu.Retired{Info: &jump, PC: 0x2000},
			cpu.Retired{Info: &cond, PC: 0x1002}, cpu.Retired{Info: &jump, PC: 0x1004})
	}
	mispredicts := func(shift uint) uint64 {
		tm := New(p)
		tm.PCShift = shift
		b := cpu.BatchOf(ops, shift)
		tm.TimeBatch(b, 0x1000, nil, nil) // warm-up
		before := tm.Stats.Mispredicts
		tm.TimeBatch(b, 0x1000, nil, nil)
		return tm.Stats.Mispredicts - before
	}
	if n := mispredicts(1); n != 0 {
		t.Errorf("PCShift 1: %d mispredictions after training", n)
	}
	if n := mispredicts(2); n == 0 {
		t.Errorf("PCShift 2: the two branches should share a counter")
	}
}

// TestTargetBuffer: an indirect branch that keeps its target is predicted
// once the buffer holds it; one that alternates targets, or two that map
// to the same entry, keep mispredicting; two in different entries do not.
func TestTargetBuffer(t *testing.T) {
	p, _ := PresetByName("neoverse-n1")
	ind := cpu.NewOpInfo(4)
	ind.Class, ind.Unit, ind.Flags = cpu.ClassBranch, cpu.UnitBranch, cpu.OpIndirect
	entries := uint64(1) << p.BTBBits
	alias := 0x1000 + entries<<2 // same entry as 0x1000 with PCShift 2
	cases := []struct {
		name string
		pcs  []uint64 // the branches, each jumping to the next (the last to the first)
		want bool     // mispredictions after training
	}{
		{"one target", []uint64{0x1000}, false},
		{"two branches, two entries", []uint64{0x1000, 0x1004}, false},
		{"two branches, one entry", []uint64{0x1000, alias}, true},
	}
	for _, c := range cases {
		var ops []cpu.Retired
		for i := 0; i < 32; i++ {
			for _, pc := range c.pcs {
				ops = append(ops, cpu.Retired{Info: &ind, PC: pc})
			}
		}
		tm := New(p)
		b := cpu.BatchOf(ops, 2)
		tm.TimeBatch(b, c.pcs[0], nil, nil) // warm-up
		before := tm.Stats.Mispredicts
		tm.TimeBatch(b, c.pcs[0], nil, nil)
		if got := tm.Stats.Mispredicts - before; (got != 0) != c.want {
			t.Errorf("%s: %d mispredictions after training", c.name, got)
		}
	}
	// One branch alternating between two targets.
	var ops []cpu.Retired
	for i := 0; i < 32; i++ {
		ops = append(ops, cpu.Retired{Info: &ind, PC: 0x1000}, cpu.Retired{Info: &ind, PC: 0x3000},
			cpu.Retired{Info: &ind, PC: 0x1000}, cpu.Retired{Info: &ind, PC: 0x4000})
	}
	tm := New(p)
	tm.TimeBatch(cpu.BatchOf(ops, 2), 0x1000, nil, nil)
	if tm.Stats.Mispredicts < uint64(len(ops))/2 {
		t.Errorf("alternating targets: %d mispredictions of %d branches", tm.Stats.Mispredicts, len(ops))
	}
}

// testOp describes a 4-byte operation of class on unit that writes dst
// and reads srcs (RegNone: none).
func testOp(class cpu.OpClass, unit cpu.Unit, dst uint8, srcs ...uint8) cpu.OpInfo {
	in := cpu.NewOpInfo(4)
	in.Class, in.Unit = class, unit
	for _, r := range srcs {
		in.AddSrc(r)
	}
	in.AddDst(dst)
	return in
}

// TestStallCycles: the stall count (kept as what remains of the cycles
// once dispatches and pipeline refills are taken out) equals the sum of
// every operation's issue minus dispatch cycle, with loads that miss,
// dependent multiplies and mispredicted branches; summarised runs count
// the same.
func TestStallCycles(t *testing.T) {
	p, _ := PresetByName("slow-memory")
	load := testOp(cpu.ClassLoad, cpu.UnitLoad, 1, 2)
	load.Access = 8
	mul := testOp(cpu.ClassOther, cpu.UnitMul, 2, 1)
	cond := testOp(cpu.ClassBranch, cpu.UnitBranch, cpu.RegNone)
	cond.Flags = cpu.OpConditional
	jump := testOp(cpu.ClassBranch, cpu.UnitBranch, cpu.RegNone)
	var ops []cpu.Retired
	x := uint64(1)
	for i := 0; i < 200; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		ops = append(ops, cpu.NewRetired(&load, 0x1000, x>>40&^7), cpu.Retired{Info: &mul, PC: 0x1004},
			cpu.Retired{Info: &cond, PC: 0x1008})
		if x>>63 != 0 { // falls through to a jump back
			ops = append(ops, cpu.Retired{Info: &jump, PC: 0x100c})
		}
	}
	want := make([]int, len(ops))
	for i := range want {
		want[i] = i
	}
	detailed := New(p)
	out := make([]cpu.OpTiming, len(ops))
	detailed.TimeBatch(cpu.BatchOf(ops, 2), 0x1000, want, out)
	var sum uint64
	for _, d := range out {
		sum += d.Issue - d.Dispatch
	}
	if detailed.Stats.StallCycles != sum || sum == 0 {
		t.Errorf("stall cycles %d, per-operation sum %d", detailed.Stats.StallCycles, sum)
	}
	if detailed.Stats.Mispredicts == 0 || detailed.Stats.L1DRefill == 0 {
		t.Errorf("the case needs mispredictions and misses: %+v", detailed.Stats)
	}
	summarised := New(p)
	summarised.TimeBatch(cpu.BatchOf(ops, 2), 0x1000, nil, nil)
	if summarised.Stats != detailed.Stats {
		t.Errorf("summarised %+v, detailed %+v", summarised.Stats, detailed.Stats)
	}
}

// TestLongForm: a loop body whose first conditional branch is mostly not
// taken gets a long form through it; timed with it, with the short forms
// where the branch is taken or the predictor expects it taken, and with
// detail wanted for some operations, the model gives the same cycles and
// counts as when every operation is timed alone.
func TestLongForm(t *testing.T) {
	p, _ := PresetByName("neoverse-n1")
	// 0x1000 ldr x1,[x2]; add x3,x1; b.cond 0x1014; mul x2,x3; add x4,x2;
	// 0x1014 b.cond 0x1000 (the loop)
	code := []cpu.OpInfo{
		testOp(cpu.ClassLoad, cpu.UnitLoad, 1, 2), testOp(cpu.ClassOther, cpu.UnitALU, 3, 1), testOp(cpu.ClassBranch, cpu.UnitBranch, cpu.RegNone),
		testOp(cpu.ClassOther, cpu.UnitMul, 2, 3), testOp(cpu.ClassOther, cpu.UnitALU, 4, 2), testOp(cpu.ClassBranch, cpu.UnitBranch, cpu.RegNone),
	}
	code[0].Access = 8
	code[2].Flags, code[5].Flags = cpu.OpConditional, cpu.OpConditional
	// batches of iterations; the inner branch is taken in runs of a few
	// iterations now and then, so its counter moves both ways.
	var batches []*cpu.Batch
	x := uint64(7)
	for k := 0; k < 40; k++ {
		b := cpu.NewBatch(cpu.LogBatch, 2)
		n := 0
		for n+6 <= cpu.LogBatch-6 {
			x = x*6364136223846793005 + 1442695040888963407
			b.Begin(code, 0x1000, uint64(n))
			b.Vals[n] = 0x8000 + x>>52&^7
			if x>>58 < 6 { // taken: the run ends at it, the next starts at 0x1014
				n += 3
				b.Begin(code[5:], 0x1014, uint64(n))
				n++
				continue
			}
			n += 6
		}
		b.Finish(n)
		batches = append(batches, b)
	}
	run := func(noBlocks bool, want []int) (*Model, []cpu.OpTiming) {
		tm := New(p)
		tm.NoBlocks = noBlocks
		var out []cpu.OpTiming
		for _, b := range batches {
			o := make([]cpu.OpTiming, len(want))
			tm.TimeBatch(b, 0x1000, want, o)
			out = append(out, o...)
		}
		return tm, out
	}
	want := []int{1, 2, 300, 301, 302, 303, 304, 305}
	alone, outAlone := run(true, want)
	summarised, outSummarised := run(false, want)
	if summarised.Stats != alone.Stats || summarised.cycle != alone.cycle {
		t.Errorf("summarised %+v, operation by operation %+v", summarised.Stats, alone.Stats)
	}
	for k := range outAlone {
		if outSummarised[k] != outAlone[k] {
			t.Errorf("wanted operation %d: summarised %+v, alone %+v", k, outSummarised[k], outAlone[k])
		}
	}
	if blk := (*timingBlock)(code[0].Summary); blk == nil || blk.long == nil || len(blk.long.inner) != 1 {
		t.Fatalf("no long form with one inner branch")
	}
	if alone.Stats.Mispredicts == 0 || alone.Stats.NotTaken == 0 {
		t.Errorf("the case needs mispredictions and branches not taken: %+v", alone.Stats)
	}
}
