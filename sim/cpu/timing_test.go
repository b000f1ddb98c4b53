package cpu

import "testing"

// TestPredictorIndexByAlignment: two conditional branches a halfword
// apart (s390x), one always taken and one never, train separate counters
// with PCShift 1; indexed by pc>>2 they share one and keep mispredicting.
func TestPredictorIndexByAlignment(t *testing.T) {
	p, _ := PresetByName("neoverse-n1")
	cond := NewOpInfo(2)
	cond.Class, cond.Unit, cond.Flags = ClassBranch, UnitBranch, OpConditional
	jump := NewOpInfo(4)
	jump.Class, jump.Unit = ClassBranch, UnitBranch
	// A@0x1000 taken to X@0x2000, X jumps to B@0x1002, B falls through to
	// C@0x1004, C jumps back to A.
	var ops []Retired
	for i := 0; i < 64; i++ {
		ops = append(ops, Retired{Info: &cond, PC: 0x1000}, Retired{Info: &jump, PC: 0x2000},
			Retired{Info: &cond, PC: 0x1002}, Retired{Info: &jump, PC: 0x1004})
	}
	mispredicts := func(shift uint) uint64 {
		tm := NewTiming(p)
		tm.PCShift = shift
		tm.Run(ops, 0x1000, nil, nil) // warm-up
		before := tm.Stats.Mispredicts
		tm.Run(ops, 0x1000, nil, nil)
		return tm.Stats.Mispredicts - before
	}
	if n := mispredicts(1); n != 0 {
		t.Errorf("PCShift 1: %d mispredictions after training", n)
	}
	if n := mispredicts(2); n == 0 {
		t.Errorf("PCShift 2: the two branches should share a counter")
	}
}
