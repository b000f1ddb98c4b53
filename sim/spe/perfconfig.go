package spe

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Config is a perf event specification for the arm_spe PMU, as the Linux
// driver sees it: perf_event_attr.config..config4 split into terms.
type Config struct {
	TSEnable, PAEnable, PCTEnable, Jitter        bool
	BranchFilter, LoadFilter, StoreFilter        bool
	Discard                                      bool
	BranchMask, LoadMask, StoreMask              bool
	SIMDFilter, SIMDMask, FloatFilter, FloatMask bool
	EventFilter                                  uint64 // config1
	MinLatency                                   uint64 // config2[11:0] (or [15:0] with 16-bit counters)
	InvEventFilter                               uint64 // config3
	InvDataSrcFilter                             uint64 // config4
	Period                                       uint64 // -c
	Context                                      bool   // PMSCR.CX (simrun: on unless context=0)
	// The privilege levels sampled, from perf's event modifiers after the
	// closing '/' (u, k, h; none given: user space only, as perf record
	// for a user without perf_event_paranoid rights): PMSCR.E0SPE and
	// E1SPE, and the perf_event_attr exclude_* bits.
	ExcludeUser, IncludeKernel bool
}

// term describes one format attribute of /sys/bus/event_source/devices/arm_spe_0/format.
type term struct {
	name  string
	field string // where perf puts it ("config:0", ...)
	bits  uint   // width
	set   func(c *Config, v uint64)
	need  func(f *Features) string // "" if available, else the missing feature
}

func flag(p func(c *Config) *bool) func(c *Config, v uint64) {
	return func(c *Config, v uint64) { *p(c) = v != 0 }
}

func needEFT(f *Features) string {
	if f.EFT {
		return ""
	}
	return "FEAT_SPE_EFT"
}

var terms = []term{
	{"ts_enable", "config:0", 1, flag(func(c *Config) *bool { return &c.TSEnable }), nil},
	{"pa_enable", "config:1", 1, flag(func(c *Config) *bool { return &c.PAEnable }), nil},
	{"pct_enable", "config:2", 1, flag(func(c *Config) *bool { return &c.PCTEnable }), nil},
	{"jitter", "config:16", 1, flag(func(c *Config) *bool { return &c.Jitter }), nil},
	{"branch_filter", "config:32", 1, flag(func(c *Config) *bool { return &c.BranchFilter }), nil},
	{"load_filter", "config:33", 1, flag(func(c *Config) *bool { return &c.LoadFilter }), nil},
	{"store_filter", "config:34", 1, flag(func(c *Config) *bool { return &c.StoreFilter }), nil},
	{"discard", "config:35", 1, flag(func(c *Config) *bool { return &c.Discard }), func(f *Features) string {
		if f.Version >= V1p2 {
			return ""
		}
		return "SPEv1p2 (discard mode)"
	}},
	{"branch_filter_mask", "config:36", 1, flag(func(c *Config) *bool { return &c.BranchMask }), needEFT},
	{"load_filter_mask", "config:37", 1, flag(func(c *Config) *bool { return &c.LoadMask }), needEFT},
	{"store_filter_mask", "config:38", 1, flag(func(c *Config) *bool { return &c.StoreMask }), needEFT},
	{"simd_filter", "config:39", 1, flag(func(c *Config) *bool { return &c.SIMDFilter }), needEFT},
	{"simd_filter_mask", "config:40", 1, flag(func(c *Config) *bool { return &c.SIMDMask }), needEFT},
	{"float_filter", "config:41", 1, flag(func(c *Config) *bool { return &c.FloatFilter }), needEFT},
	{"float_filter_mask", "config:42", 1, flag(func(c *Config) *bool { return &c.FloatMask }), needEFT},
	{"event_filter", "config1:0-63", 64, func(c *Config, v uint64) { c.EventFilter = v }, nil},
	{"min_latency", "config2:0-11", 12, func(c *Config, v uint64) { c.MinLatency = v }, nil},
	{"inv_event_filter", "config3:0-63", 64, func(c *Config, v uint64) { c.InvEventFilter = v }, func(f *Features) string {
		if f.FnE {
			return ""
		}
		return "FEAT_SPE_FnE"
	}},
	{"inv_data_src_filter", "config4:0-63", 64, func(c *Config, v uint64) { c.InvDataSrcFilter = v }, func(f *Features) string {
		if f.FDS {
			return ""
		}
		return "FEAT_SPE_FDS"
	}},
	// simrun's own: record CONTEXTIDR (the pid) in Context packets.
	{"context", "simrun", 1, flag(func(c *Config) *bool { return &c.Context }), nil},
}

// TermNames lists the accepted terms.
func TermNames() []string {
	var n []string
	for _, t := range terms {
		n = append(n, t.name)
	}
	sort.Strings(n)
	return n
}

// ParseEvent parses a perf event such as
// "arm_spe/ts_enable=1,load_filter=1,min_latency=32/" (also "arm_spe_0//"
// or just "arm_spe") and validates it against f as the driver's event_init
// does. Errors quote the event in perf's words.
func ParseEvent(spec string, f *Features) (*Config, error) {
	c := &Config{Context: true}
	pmu, body, ok := strings.Cut(spec, "/")
	if pmu != "arm_spe" && pmu != "arm_spe_0" {
		return nil, fmt.Errorf("event syntax error: '%s': unknown PMU '%s' (simrun has arm_spe, also called arm_spe_0)", spec, pmu)
	}
	if ok {
		i := strings.LastIndexByte(body, '/')
		if i < 0 {
			return nil, fmt.Errorf("event syntax error: '%s': missing the closing '/'", spec)
		}
		if err := c.modifiers(spec, body[i+1:]); err != nil {
			return nil, err
		}
		body = body[:i]
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(body, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, hasVal := strings.Cut(item, "=")
		var t *term
		for i := range terms {
			if terms[i].name == name {
				t = &terms[i]
			}
		}
		if t == nil {
			return nil, fmt.Errorf("event syntax error: '%s': unknown term '%s' for pmu 'arm_spe_0' (valid terms: %s)", spec, name, strings.Join(TermNames(), ","))
		}
		if seen[name] {
			return nil, fmt.Errorf("event syntax error: '%s': term '%s' given twice", spec, name)
		}
		seen[name] = true
		v := uint64(1)
		if hasVal {
			var err error
			v, err = strconv.ParseUint(val, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("event syntax error: '%s': value '%s' of term '%s' is not a number", spec, val, name)
			}
		}
		width := t.bits
		if name == "min_latency" && f.Count16 {
			width = 16
		}
		if width < 64 && v>>width != 0 {
			return nil, fmt.Errorf("event syntax error: '%s': value 0x%x too big for format (%s), it must fit in %d bits", spec, v, t.field, width)
		}
		if t.need != nil && v != 0 {
			if miss := t.need(f); miss != "" {
				return nil, fmt.Errorf("arm_spe_0: %s=%#x needs %s, which this %v unit does not have (event_init fails with EOPNOTSUPP)", name, v, miss, f.Version)
			}
		}
		t.set(c, v)
	}
	mask := filterableEvents(f)
	if bad := c.EventFilter &^ mask; bad != 0 {
		return nil, fmt.Errorf("arm_spe_0: event_filter=%#x: bits %s cannot be filtered on this %v unit (EOPNOTSUPP)", c.EventFilter, bitList(bad), f.Version)
	}
	if bad := c.InvEventFilter &^ mask; bad != 0 {
		return nil, fmt.Errorf("arm_spe_0: inv_event_filter=%#x: bits %s cannot be filtered on this %v unit (EOPNOTSUPP)", c.InvEventFilter, bitList(bad), f.Version)
	}
	return c, nil
}

// modifiers applies perf's event modifiers (the letters after the
// closing '/'): u, k and h choose the privilege levels (any of them given
// excludes the others); the rest perf accepts (G, H, I, p, P, S, D, W, e)
// change nothing for one user-space program on one simulated CPU.
func (c *Config) modifiers(spec, mods string) error {
	if mods == "" {
		return nil
	}
	var user, kernel bool
	for _, m := range mods {
		switch m {
		case 'u':
			user = true
		case 'k':
			kernel = true
		case 'h', 'G', 'H', 'I', 'p', 'P', 'S', 'D', 'W', 'e':
		default:
			return fmt.Errorf("event syntax error: '%s': unknown event modifier '%c' (perf's: u, k, h, G, H, I, p, P, S, D, W, e)", spec, m)
		}
	}
	if strings.ContainsAny(mods, "ukh") {
		c.ExcludeUser, c.IncludeKernel = !user, kernel
	}
	return nil
}

// MaxPeriod is the largest sample period PMSIRR can hold: INTERVAL
// (bits 31:8) all ones.
const MaxPeriod = 0xffffff00

// SamplePeriod is the period the driver programs for a requested one, as
// Linux's arm_spe_pmu sanitises it: below the unit's minimum interval it
// is raised to the minimum, above MaxPeriod clamped to MaxPeriod, and
// otherwise rounded down to a multiple of 256 (PMSIRR.INTERVAL holds bits
// 31:8). note, if not empty, says in one line what changed.
func SamplePeriod(period uint64, f *Features) (programmed uint64, note string, err error) {
	minP := uint64(f.MinInterval())
	switch {
	case period == 0:
		return 0, "", fmt.Errorf("sample period 0: SPE needs a period (-c N, N >= %d)", minP)
	case period < minP:
		return minP, fmt.Sprintf("sample period %d is below this unit's minimum interval: using %d (PMSIDR.Interval)", period, minP), nil
	case period > MaxPeriod:
		return MaxPeriod, fmt.Sprintf("sample period %d does not fit PMSIRR.INTERVAL: using the largest, %d (0x%x)", period, uint64(MaxPeriod), MaxPeriod), nil
	case period&0xff != 0:
		p := period &^ 0xff
		return p, fmt.Sprintf("sample period %d rounded down to %d (PMSIRR.INTERVAL counts in 256s)", period, p), nil
	}
	return period, "", nil
}

// Interval is the PMSIRR value for a sample period: SamplePeriod's
// programmed period in bits 31:8.
func Interval(period uint64, f *Features) (uint64, error) {
	v, _, err := SamplePeriod(period, f)
	return v, err
}

// Program returns the register values the driver writes for c.
func (c *Config) Program(f *Features) (map[Reg]uint64, error) {
	irr, err := Interval(c.Period, f)
	if err != nil {
		return nil, err
	}
	if c.Jitter {
		irr |= 1
	}
	var scr uint64
	if !c.ExcludeUser {
		scr |= pmscrE0SPE // the guest runs at EL0
	}
	if c.IncludeKernel {
		scr |= pmscrE1SPE // no simulated code runs at EL1: nothing more is sampled
	}
	if c.TSEnable {
		scr |= pmscrTS
	}
	if c.PAEnable {
		scr |= pmscrPA
	}
	if c.PCTEnable {
		scr |= 0b01 << 6
	}
	if c.Context {
		scr |= pmscrCX
	}
	var fcr uint64
	set := func(b bool, bit uint) {
		if b {
			fcr |= 1 << bit
		}
	}
	set(c.BranchFilter, 16)
	set(c.LoadFilter, 17)
	set(c.StoreFilter, 18)
	set(c.FloatFilter, 19)
	set(c.SIMDFilter, 20)
	set(c.BranchMask, 48)
	set(c.LoadMask, 49)
	set(c.StoreMask, 50)
	set(c.FloatMask, 51)
	set(c.SIMDMask, 52)
	if fcr != 0 {
		fcr |= 1 << 1 // FT
	}
	set(c.EventFilter != 0, 0)
	set(c.MinLatency != 0, 2)
	set(c.InvEventFilter != 0, 3)
	set(c.InvDataSrcFilter != 0, 4)
	regs := map[Reg]uint64{PMSCR: scr, PMSIRR: irr, PMSFCR: fcr, PMSEVFR: c.EventFilter, PMSLATFR: c.MinLatency}
	if f.FnE {
		regs[PMSNEVFR] = c.InvEventFilter
	}
	if f.FDS {
		regs[PMSDSFR] = ^c.InvDataSrcFilter
	}
	return regs, nil
}

// ConfigWords are the perf_event_attr config fields for c (for perf.data).
func (c *Config) ConfigWords() (config, config1, config2, config3, config4 uint64) {
	b := func(v bool, bit uint) uint64 {
		if v {
			return 1 << bit
		}
		return 0
	}
	config = b(c.TSEnable, 0) | b(c.PAEnable, 1) | b(c.PCTEnable, 2) | b(c.Jitter, 16) |
		b(c.BranchFilter, 32) | b(c.LoadFilter, 33) | b(c.StoreFilter, 34) | b(c.Discard, 35) |
		b(c.BranchMask, 36) | b(c.LoadMask, 37) | b(c.StoreMask, 38) | b(c.SIMDFilter, 39) |
		b(c.SIMDMask, 40) | b(c.FloatFilter, 41) | b(c.FloatMask, 42)
	return config, c.EventFilter, c.MinLatency, c.InvEventFilter, c.InvDataSrcFilter
}
