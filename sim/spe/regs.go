package spe

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"simrun/sim/spe/codes"
)

// Reg names an SPE system register.
type Reg uint8

const (
	PMSCR Reg = iota
	PMSICR
	PMSIRR
	PMSFCR
	PMSEVFR
	PMSNEVFR
	PMSLATFR
	PMSDSFR
	PMSIDR
	PMBLIMITR
	PMBPTR
	PMBSR
	PMBIDR
	numRegs
)

// Field is one bit field of a register.
type Field struct {
	Name   string
	Hi, Lo uint
	Doc    string
	// Present reports whether the field exists for a feature set (nil:
	// always); absent fields are RES0.
	Present func(f *Features) bool
	// Values names individual values for explain output.
	Values map[uint64]string
}

func (fl Field) mask() uint64 {
	w := fl.Hi - fl.Lo + 1
	if w == 64 {
		return ^uint64(0)
	}
	return (1<<w - 1) << fl.Lo
}

// Get extracts the field from a register value.
func (fl Field) Get(v uint64) uint64 { return (v & fl.mask()) >> fl.Lo }

// RegInfo describes one register.
type RegInfo struct {
	Reg      Reg
	Name     string // as the Arm ARM spells it, with _EL1
	ReadOnly bool
	Present  func(f *Features) bool
	Fields   []Field
}

func has(v Version) func(*Features) bool { return func(f *Features) bool { return f.Version >= v } }
func withFnE(f *Features) bool           { return f.FnE }
func withFDS(f *Features) bool           { return f.FDS }
func withEFT(f *Features) bool           { return f.EFT }
func withERnd(f *Features) bool          { return f.ERnd }
func withCount16(f *Features) bool       { return f.Count16 }
func withCount12(f *Features) bool       { return !f.Count16 }

// eventFields are the PMSEVFR/PMSNEVFR bits (bit n filters event E[n]).
func eventFields() []Field {
	var fs []Field
	for _, e := range codes.Events {
		e := e
		fs = append(fs, Field{Name: "E[" + fmt.Sprint(e.Bit) + "]", Hi: e.Bit, Lo: e.Bit, Doc: e.Desc,
			Present: func(f *Features) bool { return filterableEvents(f)>>e.Bit&1 == 1 }})
	}
	return fs
}

// Registers lists every SPE register with its fields.
var Registers = []RegInfo{
	{Reg: PMSCR, Name: "PMSCR_EL1", Fields: []Field{
		{Name: "E0SPE", Hi: 0, Lo: 0, Doc: "sample at EL0"},
		{Name: "E1SPE", Hi: 1, Lo: 1, Doc: "sample at EL1"},
		{Name: "CX", Hi: 3, Lo: 3, Doc: "record CONTEXTIDR_EL1 in a Context packet"},
		{Name: "PA", Hi: 4, Lo: 4, Doc: "collect data physical addresses"},
		{Name: "TS", Hi: 5, Lo: 5, Doc: "record a Timestamp packet (else End)"},
		{Name: "PCT", Hi: 7, Lo: 6, Doc: "timestamp counter", Values: map[uint64]string{0: "virtual", 1: "physical", 2: "reserved", 3: "guest physical"}},
	}},
	{Reg: PMSICR, Name: "PMSICR_EL1", Fields: []Field{
		{Name: "COUNT", Hi: 31, Lo: 0, Doc: "primary interval down-counter"},
		{Name: "ECOUNT", Hi: 63, Lo: 56, Doc: "secondary counter for random jitter", Present: withERnd},
	}},
	{Reg: PMSIRR, Name: "PMSIRR_EL1", Fields: []Field{
		{Name: "RND", Hi: 0, Lo: 0, Doc: "add random jitter to the interval"},
		{Name: "INTERVAL", Hi: 31, Lo: 8, Doc: "interval reload value (x256 operations)"},
	}},
	{Reg: PMSFCR, Name: "PMSFCR_EL1", Fields: []Field{
		{Name: "FE", Hi: 0, Lo: 0, Doc: "event filter (PMSEVFR_EL1)"},
		{Name: "FT", Hi: 1, Lo: 1, Doc: "operation type filter"},
		{Name: "FL", Hi: 2, Lo: 2, Doc: "latency filter (PMSLATFR_EL1.MINLAT)"},
		{Name: "FnE", Hi: 3, Lo: 3, Doc: "inverted event filter (PMSNEVFR_EL1)", Present: withFnE},
		{Name: "FDS", Hi: 4, Lo: 4, Doc: "data source filter (PMSDSFR_EL1)", Present: withFDS},
		{Name: "B", Hi: 16, Lo: 16, Doc: "type filter: branches"},
		{Name: "LD", Hi: 17, Lo: 17, Doc: "type filter: loads (incl. atomics returning a value)"},
		{Name: "ST", Hi: 18, Lo: 18, Doc: "type filter: stores (incl. all atomics)"},
		{Name: "FP", Hi: 19, Lo: 19, Doc: "type filter: floating-point operations", Present: withEFT},
		{Name: "SIMD", Hi: 20, Lo: 20, Doc: "type filter: SIMD operations", Present: withEFT},
		{Name: "Bm", Hi: 48, Lo: 48, Doc: "B belongs to the AND group", Present: withEFT},
		{Name: "LDm", Hi: 49, Lo: 49, Doc: "LD belongs to the AND group", Present: withEFT},
		{Name: "STm", Hi: 50, Lo: 50, Doc: "ST belongs to the AND group", Present: withEFT},
		{Name: "FPm", Hi: 51, Lo: 51, Doc: "FP belongs to the AND group", Present: withEFT},
		{Name: "SIMDm", Hi: 52, Lo: 52, Doc: "SIMD belongs to the AND group", Present: withEFT},
	}},
	{Reg: PMSEVFR, Name: "PMSEVFR_EL1", Fields: eventFields()},
	{Reg: PMSNEVFR, Name: "PMSNEVFR_EL1", Present: withFnE, Fields: eventFields()},
	{Reg: PMSLATFR, Name: "PMSLATFR_EL1", Fields: []Field{
		// MINLAT[15:12] is RES0 with 12-bit counters (PMSIDR.CountSize
		// 0b0010): one field per counter size.
		{Name: "MINLAT", Hi: 15, Lo: 0, Doc: "minimum total latency to record", Present: withCount16},
		{Name: "MINLAT", Hi: 11, Lo: 0, Doc: "minimum total latency to record", Present: withCount12},
	}},
	{Reg: PMSDSFR, Name: "PMSDSFR_EL1", Present: withFDS, Fields: []Field{
		{Name: "S", Hi: 63, Lo: 0, Doc: "bit m set: record loads whose data source is m"},
	}},
	{Reg: PMSIDR, Name: "PMSIDR_EL1", ReadOnly: true, Fields: []Field{
		{Name: "FE", Hi: 0, Lo: 0, Doc: "event filter implemented"},
		{Name: "FT", Hi: 1, Lo: 1, Doc: "type filter implemented"},
		{Name: "FL", Hi: 2, Lo: 2, Doc: "latency filter implemented"},
		{Name: "ArchInst", Hi: 3, Lo: 3, Doc: "samples architectural instructions (else micro-ops)"},
		{Name: "LDS", Hi: 4, Lo: 4, Doc: "Data Source packets"},
		{Name: "ERnd", Hi: 5, Lo: 5, Doc: "jitter added after the interval expires (ECOUNT)"},
		{Name: "FnE", Hi: 6, Lo: 6, Doc: "inverted event filter"},
		{Name: "FDS", Hi: 7, Lo: 7, Doc: "data source filter"},
		{Name: "Interval", Hi: 11, Lo: 8, Doc: "recommended minimum interval",
			Values: map[uint64]string{0: "256", 2: "512", 3: "768", 4: "1024", 5: "1536", 6: "2048", 7: "3072", 8: "4096"}},
		{Name: "MaxSize", Hi: 15, Lo: 12, Doc: "largest record, log2 bytes"},
		{Name: "CountSize", Hi: 19, Lo: 16, Doc: "counter size", Values: map[uint64]string{2: "12-bit saturating", 3: "16-bit saturating"}},
		{Name: "Format", Hi: 23, Lo: 20, Doc: "record format"},
		{Name: "PBT", Hi: 24, Lo: 24, Doc: "previous branch target packet"},
		{Name: "CRR", Hi: 25, Lo: 25, Doc: "call/return recording"},
		{Name: "EFT", Hi: 26, Lo: 26, Doc: "extended type filter"},
		{Name: "FPF", Hi: 27, Lo: 27, Doc: "FP/ASE bits in Other op types"},
	}},
	{Reg: PMBLIMITR, Name: "PMBLIMITR_EL1", Fields: []Field{
		{Name: "E", Hi: 0, Lo: 0, Doc: "profiling buffer enabled"},
		{Name: "FM", Hi: 2, Lo: 1, Doc: "buffer mode", Values: map[uint64]string{0: "fill", 1: "reserved", 2: "discard", 3: "reserved"}},
		{Name: "PMFZ", Hi: 5, Lo: 5, Doc: "freeze PMU counters on a management event", Present: has(V1p2)},
		{Name: "LIMIT", Hi: 63, Lo: 12, Doc: "LIMIT:Zeros(12) = first byte after the buffer"},
	}},
	{Reg: PMBPTR, Name: "PMBPTR_EL1", Fields: []Field{
		{Name: "PTR", Hi: 63, Lo: 0, Doc: "next byte to write"},
	}},
	{Reg: PMBSR, Name: "PMBSR_EL1", Fields: []Field{
		{Name: "MSS", Hi: 15, Lo: 0, Doc: "syndrome: BSC (EC 0) or FSC (EC 0x24/0x25)"},
		{Name: "COLL", Hi: 16, Lo: 16, Doc: "a sample collision happened"},
		{Name: "S", Hi: 17, Lo: 17, Doc: "management event pending: profiling stopped"},
		{Name: "EA", Hi: 18, Lo: 18, Doc: "external abort"},
		{Name: "DL", Hi: 19, Lo: 19, Doc: "partial record lost"},
		{Name: "EC", Hi: 31, Lo: 26, Doc: "event class",
			Values: map[uint64]string{0: "other buffer management event", 0x1e: "GPC fault", 0x1f: "IMPDEF", 0x24: "stage 1 data abort", 0x25: "stage 2 data abort"}},
	}},
	{Reg: PMBIDR, Name: "PMBIDR_EL1", ReadOnly: true, Fields: []Field{
		{Name: "Align", Hi: 3, Lo: 0, Doc: "record alignment, log2 bytes"},
		{Name: "P", Hi: 4, Lo: 4, Doc: "programming not allowed"},
		{Name: "F", Hi: 5, Lo: 5, Doc: "hardware access flag and dirty state management"},
		{Name: "EA", Hi: 11, Lo: 8, Doc: "external abort handling", Values: map[uint64]string{0: "not described", 1: "ignored", 2: "SError"}},
	}},
}

// Info returns the description of r.
func Info(r Reg) *RegInfo { return &Registers[r] }

// RegByName finds a register by name, with or without the _EL1 suffix, in
// any case.
func RegByName(name string) (Reg, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	for _, ri := range Registers {
		if n == ri.Name || n+"_EL1" == ri.Name {
			return ri.Reg, nil
		}
	}
	var names []string
	for _, ri := range Registers {
		names = append(names, ri.Name)
	}
	return 0, fmt.Errorf("unknown SPE register %q (known: %s)", name, strings.Join(names, ", "))
}

// ParseRegWrite reads a register write NAME=VALUE (simrun record's
// --spe-reg): a register name as RegByName takes it and a number in Go
// syntax (0x, 0b, 0o prefixes, _ separators), at most 64 bits.
func ParseRegWrite(s string) (Reg, uint64, error) {
	name, val, ok := strings.Cut(s, "=")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want NAME=VALUE", s)
	}
	reg, err := RegByName(name)
	if err != nil {
		return 0, 0, err
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(strings.TrimSpace(val), "_", ""), 0, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, 0, fmt.Errorf("%s: value %q does not fit in 64 bits", Info(reg).Name, val)
		}
		return 0, 0, fmt.Errorf("%s: value %q is not a number", Info(reg).Name, val)
	}
	return reg, v, nil
}

// WritableMask is the set of bits that exist in r for f.
func (ri *RegInfo) WritableMask(f *Features) uint64 {
	var m uint64
	for _, fl := range ri.Fields {
		if fl.Present == nil || fl.Present(f) {
			m |= fl.mask()
		}
	}
	return m
}

// Regs is the register file of one SPE unit.
type Regs struct {
	f *Features
	v [numRegs]uint64
}

// NewRegs returns the registers at reset: every field 0 (the architecture
// leaves most UNKNOWN; simrun picks 0), ID registers per f.
func NewRegs(f *Features) *Regs {
	r := &Regs{f: f}
	r.v[PMSIDR] = f.PMSIDR()
	r.v[PMBIDR] = f.PMBIDR()
	return r
}

// Get reads a register.
func (r *Regs) Get(reg Reg) uint64 { return r.v[reg] }

// Set writes a register as software would: bits of absent fields are RES0
// and dropped, ID registers ignore writes.
func (r *Regs) Set(reg Reg, v uint64) {
	ri := &Registers[reg]
	if ri.ReadOnly || (ri.Present != nil && !ri.Present(r.f)) {
		return
	}
	r.v[reg] = v & ri.WritableMask(r.f)
}

// SetChecked writes a register and reports bits that are RES0 on this
// implementation (for programming registers by hand).
func (r *Regs) SetChecked(reg Reg, v uint64) error {
	ri := &Registers[reg]
	if ri.ReadOnly {
		return fmt.Errorf("%s is read-only", ri.Name)
	}
	if ri.Present != nil && !ri.Present(r.f) {
		return fmt.Errorf("%s is not implemented by this %v unit", ri.Name, r.f.Version)
	}
	if bad := v &^ ri.WritableMask(r.f); bad != 0 {
		return fmt.Errorf("%s = 0x%x: bits %s are RES0 on this %v unit", ri.Name, v, bitList(bad), r.f.Version)
	}
	r.v[reg] = v
	return nil
}

func bitList(v uint64) string {
	var s []string
	for i := 63; i >= 0; i-- {
		if v>>i&1 == 1 {
			s = append(s, fmt.Sprint(i))
		}
	}
	return strings.Join(s, ",")
}

// Explain describes every field of value v of reg for f, one per line.
func Explain(f *Features, reg Reg, v uint64) string {
	ri := &Registers[reg]
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s = 0x%016x (%v)\n", ri.Name, v, f.Version)
	fields := append([]Field(nil), ri.Fields...)
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Lo > fields[j].Lo })
	var known uint64
	writable := ri.WritableMask(f)
	for _, fl := range fields {
		present := fl.Present == nil || fl.Present(f)
		known |= fl.mask()
		x := fl.Get(v)
		if !present && v&fl.mask()&^writable == 0 {
			continue // nothing set beyond the present field of the same name
		}
		if reg == PMSEVFR || reg == PMSNEVFR {
			if x == 0 && present {
				continue
			}
		}
		bits := fmt.Sprintf("[%d]", fl.Lo)
		if fl.Hi != fl.Lo {
			bits = fmt.Sprintf("[%d:%d]", fl.Hi, fl.Lo)
		}
		val := fmt.Sprintf("0x%x", x)
		if fl.Hi == fl.Lo {
			val = fmt.Sprint(x)
		}
		if name, ok := fl.Values[x]; ok {
			val += " (" + name + ")"
		}
		switch {
		case fl.Name == "INTERVAL" && x == 0:
			val += fmt.Sprintf(" = UNKNOWN interval (simrun: the minimum, %d operations)", f.MinInterval())
		case fl.Name == "INTERVAL":
			val += fmt.Sprintf(" = %d operations", x*256)
		case fl.Name == "LIMIT":
			val += fmt.Sprintf(" (limit address 0x%x)", x<<12)
		case fl.Name == "MaxSize" || fl.Name == "Align":
			val += fmt.Sprintf(" (%d bytes)", 1<<x)
		}
		note := ""
		if !present {
			if x == 0 {
				continue
			}
			note = "  RES0 on this unit: the write is ignored"
		}
		fmt.Fprintf(&sb, "  %-9s %-8s %-24s %s%s\n", fl.Name, bits, val, fl.Doc, note)
	}
	if rest := v &^ known; rest != 0 {
		fmt.Fprintf(&sb, "  bits %s are RES0\n", bitList(rest))
	}
	return sb.String()
}
