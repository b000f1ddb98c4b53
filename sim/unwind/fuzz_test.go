package unwind_test

import (
	"debug/elf"
	"encoding/binary"
	"testing"

	"simrun/sim/cpu"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
	"simrun/sim/unwind/sframe"
)

// FuzzWalk walks hostile stacks: the bytes give the registers, the policy
// and the stack contents, with the hand-built SFrame sections of
// walk_test.go and the frame chain.  A walk must end with a reason within
// the depth limit and never panic.
func FuzzWalk(f *testing.F) {
	f.Add([]byte("\x00\x00\x0c\x10\x00\x00\x00\x00\xc0\xef\x07\x00\x00\x00\x00\x00\xc0\xef\x07\x00\x00\x00\x00\x00"))
	f.Add([]byte("\x01\x0f\x10\x10\x00\x00\x00\x00\x00\xef\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x07\xf0\x00"))
	f.Add(make([]byte, 300))
	sections := map[elf.Machine]*sframe.Section{elf.EM_AARCH64: aarch64Section(), elf.EM_S390: s390xSection()}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 24 {
			return
		}
		mach, order := elf.EM_AARCH64, binary.ByteOrder(binary.LittleEndian)
		if data[0]&1 != 0 {
			mach, order = elf.EM_S390, binary.BigEndian
		}
		a, err := abi.ForMachine(mach, order)
		if err != nil {
			t.Fatal(err)
		}
		p := unwind.DefaultPolicy()
		p.RAMinus1 = data[1]&1 != 0
		p.IgnoreTopmost = data[1]&2 != 0
		p.KeepPAC = data[1]&4 != 0
		if data[1]&8 != 0 {
			p.Gap = unwind.GapFP
		}
		p.MaxDepth = 1 + int(data[1]>>4)*8
		pc := uint64(0x1000)*uint64(1+data[2]%4) + uint64(data[3]&0x3f)
		sp := binary.LittleEndian.Uint64(data[8:])
		fp := binary.LittleEndian.Uint64(data[16:])
		if data[0]&2 != 0 { // keep SP and FP on the stack most of the time
			sp = stackTop - 0x1000 + sp%0x1000
			fp = stackTop - 0x1000 + fp%0x1000
		}
		mem := cpu.NewMemory()
		if err := mem.Map(stackTop-0x10000, 0x10000, cpu.PermRW); err != nil {
			t.Fatal(err)
		}
		words := data[24:]
		for i := 0; i+8 <= len(words) && i < 0x1000; i += 8 {
			mem.Store(stackTop-0x1000+uint64(i), 8, binary.LittleEndian.Uint64(words[i:]), order)
		}
		r := regs{int(a.SP): sp, int(a.FP): fp, int(a.RA): binary.LittleEndian.Uint64(data[4:]) & 0xffff, 16: sp, 17: fp}
		trs := []*unwind.Tracer{unwind.NewChainTracer(a, nil, p)}
		tr, err := unwind.NewTracerFor(a, sections[mach], 0, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
		for _, tr := range trs {
			var w unwind.Walk
			tr.WalkDetail(mem, pc, r, &w)
			if len(w.PCs) == 0 || len(w.PCs) > p.MaxDepth {
				t.Fatalf("%s: %d frames (limit %d)", tr.Method, len(w.PCs), p.MaxDepth)
			}
			if w.Stop.Kind == unwind.StopNone {
				t.Fatalf("%s: the walk ended without a reason", tr.Method)
			}
			_ = w.Stop.Format(a)
			for i := range w.Frames {
				_ = w.Frames[i].Row.Format(a)
			}
		}
	})
}
