package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/record"
	"simrun/sim/unwind"
)

// explainFault says where a fault happened, for the one-line message
// (" in FUNC+0xOFF (FILE:LINE)"), and the stack below it as the SFrame
// tracer walks it from the faulting context (the registers before the
// faulting instruction), one line per frame as gdb's backtrace prints
// them:
//
//	#0  0x400698 in last_value+0x8 (crash.c:12)
//	#1  0x4006c4 in sum_lists+0x24 (crash.c:19)
//	(SFrame walk: outermost frame)
//
// It costs nothing until a run faults. A program without symbols or
// unwinding data gets neither (the message stays as it was).
func explainFault(m *cpu.Machine, f *cpu.Fault) (where string, stack []string) {
	if m.Image == nil {
		return "", nil
	}
	bin, _ := profile.OpenBinary(m.Image.Path, m.Image.Bias)
	p := linux.Of(m)
	name := func(pc uint64, call bool) string {
		look := pc
		if call {
			look-- // the call instruction, not the one after it
		}
		if pc >= m.Image.Start && pc < m.Image.End {
			fr := bin.Symbolize(look)
			if fr.Func == "" {
				return ""
			}
			s := fmt.Sprintf("%s+0x%x", fr.Func, pc-(look-fr.Offset))
			if w := fr.Where(); w != "" {
				s += " (" + w + ")"
			}
			return s
		}
		if p != nil {
			if c, ok := p.CodeAt(pc); ok {
				return fmt.Sprintf("%s+0x%x", filepath.Base(c.Path), pc-c.Start+c.Pgoff)
			}
		}
		return ""
	}
	if n := name(f.PC, false); n != "" {
		where = " in " + n
	}
	tr, err := record.ProcessTracer(m, unwind.Options{Method: unwind.MethodSFrame})
	if err != nil {
		return where, nil
	}
	var w unwind.Walk
	tr.Walk(m.Mem, f.PC, unwind.CoreRegs(m), &w)
	if len(w.PCs) < 2 && where == "" {
		return "", nil
	}
	for i, pc := range w.PCs {
		line := fmt.Sprintf("    #%-2d 0x%x", i, pc)
		if n := name(pc, i > 0); n != "" {
			line += " in " + n
		}
		stack = append(stack, line)
	}
	stop := w.Stop.Kind.String()
	if why := w.Stop.Why(tr.ABI); why != "" && !w.Stop.Kind.End() {
		stop += ": " + why
	}
	stack = append(stack, "    (SFrame walk: "+strings.TrimSpace(stop)+")")
	return where, stack
}
