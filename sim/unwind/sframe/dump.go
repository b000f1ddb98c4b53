package sframe

import (
	"bufio"
	"fmt"
	"io"

	"simrun/sim/unwind/abi"
)

// Dump prints s the way `objdump --sframe=NAME` (binutils 2.46) prints
// it after the file header: "Contents of the SFrame section NAME:", the
// header, then each function with its rows.  vma is the section's
// address (function addresses are vma + FDE.Start).
//
// objdump 2.46 refuses version 1 sections; Dump prints them in the same
// layout (as binutils 2.40 did).
func Dump(w io.Writer, s *Section, name string, vma uint64) error {
	bw := bufio.NewWriter(w)
	a, err := abi.ForSFrame(s.ABI)
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "Contents of the SFrame section %s:", name)
	fmt.Fprintf(bw, "\n  Header :\n\n")
	fmt.Fprintf(bw, "    Version: SFRAME_VERSION_%d\n", s.Version)
	var flags []string
	if s.Flags&SFRAME_F_FDE_SORTED != 0 {
		flags = append(flags, "SFRAME_F_FDE_SORTED")
	}
	if s.Flags&SFRAME_F_FRAME_POINTER != 0 && s.Version < SFRAME_VERSION_3 {
		flags = append(flags, "SFRAME_F_FRAME_POINTER")
	}
	if s.Flags&SFRAME_F_FDE_FUNC_START_PCREL != 0 {
		flags = append(flags, "SFRAME_F_FDE_FUNC_START_PCREL")
	}
	if len(flags) == 0 {
		fmt.Fprintf(bw, "    Flags: NONE\n")
	}
	for i, f := range flags {
		prefix, more := "Flags: ", ""
		if i > 0 {
			prefix = " "
		}
		if i < len(flags)-1 {
			more = ","
		}
		fmt.Fprintf(bw, "%11s%s%s\n", prefix, f, more)
	}
	if s.FixedFP != 0 {
		fmt.Fprintf(bw, "    CFA fixed FP offset: %d\n", s.FixedFP)
	}
	if s.FixedRA != 0 {
		fmt.Fprintf(bw, "    CFA fixed RA offset: %d\n", s.FixedRA)
	}
	fmt.Fprintf(bw, "    Num FDEs: %d\n", len(s.FDEs))
	fmt.Fprintf(bw, "    Num FREs: %d\n", s.NumFREs())
	fmt.Fprintf(bw, "\n  Function Index :\n")
	for i := range s.FDEs {
		f := &s.FDEs[i]
		pc := vma + uint64(f.Start)
		fmt.Fprintf(bw, "\n    func idx [%d]: pc = %#x, size = %d bytes", i, pc, f.Size)
		switch {
		case f.Signal && f.Flex:
			bw.WriteString(`, attr = "SF"`)
		case f.Signal:
			bw.WriteString(`, attr = "S"`)
		case f.Flex:
			bw.WriteString(`, attr = "F"`)
		}
		if f.PAuthKeyB && a.PAuth {
			bw.WriteString(", pauth = B key")
		}
		bw.WriteString("\n")
		mark := ""
		if f.PCType == PCMask {
			mark = "[m]"
		}
		fmt.Fprintf(bw, "    %-7s%-8s %-10s%-10s%-13s\n", "STARTPC", mark, "CFA", "FP", "RA")
		for j := range f.FREs {
			fre := &f.FREs[j]
			addr := uint64(fre.Start)
			if f.PCType == PCInc {
				addr += pc
			}
			fmt.Fprintf(bw, "    %016x  ", addr)
			if fre.RAUndefined {
				bw.WriteString("RA undefined\n")
				continue
			}
			ra := dumpRA(s, a, f, fre)
			if fre.MangledRA {
				ra += "[s]"
			} else {
				ra += "   "
			}
			fmt.Fprintf(bw, "%-10s%-10s%-13s\n", dumpCFA(a, f, fre.CFA), dumpSlot(a, f, fre.FP), ra)
		}
	}
	return bw.Flush()
}

func dumpCFA(a *abi.ABI, f *FDE, r Rule) string {
	if f.Flex {
		return flexText(a, r)
	}
	return fmt.Sprintf("%s+%d", a.RegName(r.Reg), r.Off)
}

// dumpSlot prints an FP (or RA) rule: "u" when absent, "c-16" for a stack
// slot, "r16" for a version 2 s390x register.
func dumpSlot(a *abi.ABI, f *FDE, r Rule) string {
	switch {
	case r.Kind == RuleNone:
		return "u"
	case r.Kind == RulePadding:
		return "U"
	case f.Flex:
		return flexText(a, r)
	case r.Kind == RuleReg:
		return fmt.Sprintf("r%d", r.Reg)
	}
	return fmt.Sprintf("c%+d", r.Off)
}

func dumpRA(s *Section, a *abi.ABI, f *FDE, fre *FRE) string {
	if s.FixedRA != 0 && (!f.Flex || fre.RA.Kind == RuleNone) {
		return "f"
	}
	return dumpSlot(a, f, fre.RA)
}

// flexText formats a control word + offset pair: "sp+160", "r10+320",
// "c-48", and "(fp-8)" for a dereferenced register.
func flexText(a *abi.ABI, r Rule) string {
	base := "c"
	if r.Kind == RuleReg {
		base = a.RegName(r.Reg)
	}
	t := fmt.Sprintf("%s%+d", base, r.Off)
	if r.Kind == RuleReg && r.Deref {
		t = "(" + t + ")"
	}
	return t
}
