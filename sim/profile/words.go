package profile

import (
	"fmt"
	"strings"

	"simrun/sim/spe"
	"simrun/sim/spe/codes"
)

// SPERegisters are the sampling-control registers a report shows, in the
// order the driver programs them, with f's optional ones only when the
// unit has them.
func SPERegisters(f *spe.Features) []spe.Reg {
	regs := []spe.Reg{spe.PMSCR, spe.PMSIRR, spe.PMSFCR, spe.PMSEVFR}
	if f.FnE {
		regs = append(regs, spe.PMSNEVFR)
	}
	regs = append(regs, spe.PMSLATFR)
	if f.FDS {
		regs = append(regs, spe.PMSDSFR)
	}
	return regs
}

// DescribeSPE says in sentences what a unit with features f and these
// register values samples and records.
func DescribeSPE(f *spe.Features, regs map[spe.Reg]uint64) []string {
	var out []string
	say := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	scr, irr, fcr := regs[spe.PMSCR], regs[spe.PMSIRR], regs[spe.PMSFCR]
	interval := (irr >> 8 & 0xffffff) * 256
	jitter := ""
	if irr&1 == 1 {
		jitter = ", with random jitter"
	}
	var els []string
	if scr&1 != 0 {
		els = append(els, "EL0")
	}
	if scr&2 != 0 {
		els = append(els, "EL1")
	}
	if len(els) == 0 {
		els = []string{"no exception level (sampling is off)"}
	}
	say("Selects one operation in every %d (PMSIRR_EL1.INTERVAL%s) at %s.", interval, jitter, strings.Join(els, " and "))

	bit := func(n uint) bool { return fcr>>n&1 == 1 }
	var filters int
	if bit(1) {
		filters++
		names := []string{"branches", "loads", "stores", "floating-point operations", "SIMD operations"}
		n := 3
		ctrl, tmask := fcr>>16&0b111, uint64(0)
		if f.EFT {
			n, ctrl, tmask = 5, fcr>>16&0b11111, fcr>>48&0b11111
		}
		var any, must, mustNot []string
		for i := 0; i < n; i++ {
			switch {
			case tmask>>i&1 == 1 && ctrl>>i&1 == 1:
				must = append(must, names[i])
			case tmask>>i&1 == 1:
				mustNot = append(mustNot, names[i])
			case ctrl>>i&1 == 1:
				any = append(any, names[i])
			}
		}
		var parts []string
		if len(any) > 0 {
			parts = append(parts, "keeps "+orList(any))
		}
		if len(must) > 0 {
			parts = append(parts, "only "+andList(must))
		}
		if len(mustNot) > 0 {
			parts = append(parts, "no "+orList(mustNot))
		}
		if len(parts) == 0 {
			parts = []string{"on with no type selected"}
		}
		say("Type filter (PMSFCR_EL1.FT): %s.", strings.Join(parts, "; "))
	}
	if bit(0) {
		filters++
		if ev := eventList(regs[spe.PMSEVFR]); ev != "" {
			say("Event filter (PMSEVFR_EL1): keeps operations that raised every one of %s.", ev)
		} else {
			say("Event filter (PMSFCR_EL1.FE) on with no event selected.")
		}
	}
	if f.FnE && bit(3) {
		filters++
		if ev := eventList(regs[spe.PMSNEVFR]); ev != "" {
			say("Inverted event filter (PMSNEVFR_EL1): drops operations that raised any of %s.", ev)
		} else {
			say("Inverted event filter (PMSFCR_EL1.FnE) on with no event selected.")
		}
	}
	if bit(2) {
		filters++
		say("Latency filter (PMSLATFR_EL1.MINLAT): keeps operations whose total latency is at least %d cycles.", regs[spe.PMSLATFR]&0xffff)
	}
	if f.FDS && bit(4) {
		filters++
		var ds []string
		for i := uint(0); i < 64; i++ {
			if regs[spe.PMSDSFR]>>i&1 == 1 {
				ds = append(ds, codes.DataSourceName(uint16(i)))
			}
		}
		if len(ds) == 64 {
			say("Data-source filter (PMSDSFR_EL1): keeps loads from every data source.")
		} else {
			say("Data-source filter (PMSDSFR_EL1): keeps loads whose data source is %s.", orList(ds))
		}
	}
	if filters == 0 {
		say("No filter: every selected operation is recorded.")
	}
	rec := []string{"the PC, the operation type, its events and latencies"}
	if scr>>5&1 == 1 {
		rec = append(rec, "a timestamp")
	}
	if scr>>4&1 == 1 {
		rec = append(rec, "data physical addresses")
	}
	if scr>>3&1 == 1 {
		rec = append(rec, "the context (pid)")
	}
	say("Each record holds %s.", andList(rec))
	return out
}

func eventList(v uint64) string {
	var names []string
	for n := uint(0); n < 64; n++ {
		if v>>n&1 == 1 {
			name := codes.EventName(n)
			if name == "" {
				name = fmt.Sprintf("E[%d]", n)
			}
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

func joinList(s []string, word string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + word + " " + s[len(s)-1]
}

func orList(s []string) string  { return joinList(s, "or") }
func andList(s []string) string { return joinList(s, "and") }
