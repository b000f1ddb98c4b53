package timing

import (
	"fmt"
	"testing"

	"simrun/sim/cpu"
)

// loopOps describes the test loops' operations: a load of r2 through r1
// (8 bytes), an add r3 = r2 + r3, a conditional direct branch on r3 and a
// jump.
func loopOps() (load, add, cond, jump cpu.OpInfo) {
	load = testOp(cpu.ClassLoad, cpu.UnitLoad, 2, 1)
	load.Access = 8
	add = testOp(cpu.ClassOther, cpu.UnitALU, 3, 2, 3)
	cond = testOp(cpu.ClassBranch, cpu.UnitBranch, cpu.RegNone, 3)
	cond.Flags = cpu.OpConditional
	jump = testOp(cpu.ClassBranch, cpu.UnitBranch, cpu.RegNone)
	return load, add, cond, jump
}

// iteration logs a run of the loop body described by infos, at pc, from
// the batch's n-th operation, its two loads at ea and ea+8.
func iteration(b *cpu.Batch, infos []cpu.OpInfo, pc uint64, n int, ea uint64) {
	b.Runs = append(b.Runs, cpu.Run{Infos: infos, PC: pc, Start: uint32(n)})
	b.Vals[n], b.Vals[n+1] = ea, ea+8
}

// loopBatch builds a batch of episodes of a loop whose body is one run:
// two loads (of a pointer that walks stride bytes per iteration), an add,
// two conditional branches that are never taken (inner), another add and
// the closing conditional branch back to the start. Each episode runs the
// body iters times; its last iteration falls through to a jump back to
// the start: in the same run (one operation longer) or, every other
// episode, in a run of its own (as where the body ends a code page),
// except in the batch's last episode, which falls through out of the
// batch. It returns the batch and the pc after it.
func loopBatch(episodes, iters int, stride uint64) (*cpu.Batch, uint64) {
	const base = 0x10000
	load, add, cond, jump := loopOps()
	infos := []cpu.OpInfo{load, load, add, cond, cond, add, cond, jump}
	body := len(infos) - 1
	b := cpu.NewBatch(episodes*iters*(body+1)+1, 2)
	n, ea := 0, uint64(0x800000)
	for e := 0; e < episodes; e++ {
		for it := 0; it < iters; it++ {
			iteration(b, infos, base, n, ea)
			ea += stride
			n += body
			if it == iters-1 && e < episodes-1 {
				if e%2 == 1 {
					b.Runs = append(b.Runs, cpu.Run{Infos: infos[body:], PC: base + 4*uint64(body), Start: uint32(n)})
				}
				n++ // the jump
			}
		}
	}
	b.Finish(n)
	return b, base + 4*uint64(body)
}

// jumpLoopBatch builds a batch of episodes of a loop whose body is one run
// closed by a jump back to its start: two loads (as in loopBatch), an
// add, a conditional branch that leaves the loop when taken, another add
// and the jump. Each episode runs the body iters times; the last leaves
// through the conditional branch to a run of one jump back to the start
// (except in the batch's last episode, which leaves the batch there). It
// returns the batch and the pc after it.
func jumpLoopBatch(episodes, iters int, stride uint64) (*cpu.Batch, uint64) {
	const base, exit = 0x10000, 0x20000
	load, add, cond, jump := loopOps()
	infos := []cpu.OpInfo{load, load, add, cond, add, jump}
	const leave = 4 // the operations of the last iteration
	b := cpu.NewBatch(episodes*(iters*len(infos)+1), 2)
	n, ea := 0, uint64(0x800000)
	for e := 0; e < episodes; e++ {
		for it := 0; it < iters; it++ {
			iteration(b, infos, base, n, ea)
			ea += stride
			if it < iters-1 {
				n += len(infos)
				continue
			}
			n += leave
			if e < episodes-1 {
				b.Runs = append(b.Runs, cpu.Run{Infos: infos[len(infos)-1:], PC: exit, Start: uint32(n)})
				n++
			}
		}
	}
	b.Finish(n)
	return b, exit
}

// TestRepeatsExact: loops timed together (Model.repeats), closed by a
// conditional branch (loopBatch) or by a jump (jumpLoopBatch), give the
// same cycles, statistics and predictor state as every operation timed on
// its own, with the closing branch's counter at 2 when a loop is entered
// (the episodes before left it there), with a predictor so small that
// the inner and the closing branch share a counter, and with accesses
// that leave the hot lines now and then.
func TestRepeatsExact(t *testing.T) {
	loops := map[string]func(episodes, iters int, stride uint64) (*cpu.Batch, uint64){"cond": loopBatch, "jump": jumpLoopBatch}
	for kind, loop := range loops {
		for _, bpBits := range []int{12, 1, 0} {
			for _, iters := range []int{1, 2, 3, 40} {
				for _, stride := range []uint64{0, 8, 64, 4096} {
					name := fmt.Sprintf("%s/bp%d/iters%d/stride%d", kind, bpBits, iters, stride)
					p := Presets[0]
					p.BPBits = bpBits
					var got [2]*Model
					for k, noBlocks := range []bool{true, false} {
						tm := New(&p)
						tm.NoBlocks = noBlocks
						for range 3 { // the counters start cold, then warm
							b, next := loop(30, iters, stride)
							tm.TimeBatch(b, next, nil, nil)
						}
						got[k] = tm
					}
					ref, tm := got[0], got[1]
					if ref.cycle != tm.cycle || ref.Stats != tm.Stats || string(ref.bp) != string(tm.bp) {
						t.Errorf("%s: summarised cycle %d, stats %+v, predictor %v; one by one %d, %+v, %v",
							name, tm.cycle, tm.Stats, tm.bp, ref.cycle, ref.Stats, ref.bp)
					}
				}
			}
		}
	}
}
