package report

import (
	"debug/elf"
	"fmt"

	"simrun/sim/profile"
	"simrun/sim/unwind"
	"simrun/sim/unwind/sframe"
)

// SFrameRow is one row of a function's SFrame table: the rules that hold
// from Start (inclusive) to End (exclusive).
type SFrameRow struct {
	Start, End uint64
	CFA        string
	FP, RA     string
	// InRegister names what sits in a register rather than in a stack
	// slot ("RA in f0", "FP in f4"): the s390x leaf-function cases that
	// an unwinder reading only stack slots gets wrong.
	InRegister  []string
	RAUndefined bool // outermost frame
}

// SFrameTable is a function's SFrame FDE drawn as rows.
type SFrameTable struct {
	Func    string
	Start   uint64
	Size    uint32
	Emitted bool   // made from .eh_frame (the file has no .sframe)
	Version uint8  // SFrame version
	Note    string // why there are no rows, if there are none
	Rows    []SFrameRow
}

// SFrames reads the SFrame section of the program (its own .sframe, or one
// emitted from .eh_frame the way gas would) and returns the table of each
// function in funcs; a function without an FDE gets a Note.
func SFrames(bin *profile.Binary, data []byte, funcs []profile.Func) ([]SFrameTable, error) {
	rep, err := unwind.ReadSFrame(bin.Path, data, unwind.SFrameOptions{VMA: 0})
	if err != nil {
		return nil, err
	}
	out := make([]SFrameTable, len(funcs))
	for i, f := range funcs {
		out[i] = SFrameTable{Func: f.Name, Start: f.Start, Emitted: rep.Emitted}
		if rep.Section == nil {
			out[i].Note = "the program has neither .sframe nor .eh_frame"
			continue
		}
		s := rep.Section
		out[i].Version = s.Version
		var fde *sframe.FDE
		for j := range s.FDEs {
			if uint64(int64(rep.Addr)+s.FDEs[j].Start)+bin.Bias == f.Start {
				fde = &s.FDEs[j]
			}
		}
		if fde == nil {
			out[i].Note = "no SFrame FDE for this function"
			if rep.Emitted {
				out[i].Note += " (gas would not have emitted one from its CFI)"
			}
			continue
		}
		out[i].Size = fde.Size
		if fde.PCType == sframe.PCMask {
			out[i].Note = fmt.Sprintf("PC type MASK: the rows repeat every %d bytes", fde.RepSize)
		}
		for k, fre := range fde.FREs {
			end := uint64(fde.Size)
			if k+1 < len(fde.FREs) {
				end = uint64(fde.FREs[k+1].Start)
			}
			row := SFrameRow{Start: f.Start + uint64(fre.Start), End: f.Start + end, RAUndefined: fre.RAUndefined}
			if !fre.RAUndefined {
				row.CFA = ruleText(bin.ELF.Machine, fre.CFA, true)
				row.FP = ruleText(bin.ELF.Machine, fre.FP, false)
				row.RA = ruleText(bin.ELF.Machine, fre.RA, false)
				if fre.MangledRA {
					row.RA += " (signed)"
				}
				for _, x := range []struct {
					what string
					r    sframe.Rule
				}{{"RA", fre.RA}, {"FP", fre.FP}} {
					if x.r.Kind == sframe.RuleReg && !x.r.Deref {
						row.InRegister = append(row.InRegister, fmt.Sprintf("%s in %s", x.what, dwarfReg(bin.ELF.Machine, x.r.Reg)))
					}
				}
			}
			out[i].Rows = append(out[i].Rows, row)
		}
	}
	return out, nil
}

// ruleText spells a rule with register names: "sp+16", "[cfa-8]" (a stack
// slot), "f0" (in a register), "same" (unchanged / still in place).
func ruleText(m elf.Machine, r sframe.Rule, cfa bool) string {
	switch r.Kind {
	case sframe.RuleNone:
		if cfa {
			return "?"
		}
		return "same"
	case sframe.RulePadding:
		return "not saved"
	case sframe.RuleCFA:
		if r.Deref {
			return fmt.Sprintf("[cfa%+d]", r.Off)
		}
		return fmt.Sprintf("cfa%+d", r.Off)
	}
	base := dwarfReg(m, r.Reg)
	s := base
	if r.Off != 0 || cfa {
		s = fmt.Sprintf("%s%+d", base, r.Off)
	}
	if r.Deref {
		return "[" + s + "]"
	}
	return s
}

var s390xFPR = []string{"f0", "f2", "f4", "f6", "f1", "f3", "f5", "f7", "f8", "f10", "f12", "f14", "f9", "f11", "f13", "f15"}

// dwarfReg names DWARF register n of the machine.
func dwarfReg(m elf.Machine, n uint32) string {
	switch m {
	case elf.EM_AARCH64:
		switch {
		case n == 29:
			return "fp"
		case n == 30:
			return "lr"
		case n == 31:
			return "sp"
		case n < 29:
			return fmt.Sprintf("x%d", n)
		case n >= 64 && n < 96:
			return fmt.Sprintf("v%d", n-64)
		}
	case elf.EM_S390:
		switch {
		case n == 15:
			return "sp"
		case n < 16:
			return fmt.Sprintf("r%d", n)
		case n < 32:
			return s390xFPR[n-16]
		}
	}
	return fmt.Sprintf("reg%d", n)
}
