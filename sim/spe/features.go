// Package spe is a virtual Arm Statistical Profiling Extension unit: the
// SPE system registers as typed bit fields, the sampler (interval counter
// with jitter, collisions), the five filters, record encoding, the
// profiling buffer with its syndromes, a front end that programs it the
// way Linux's arm_spe_pmu driver does, and the packet decoder with perf's
// dump text.
//
// Facts follow the Arm ARM (DDI0487 M.a.a): chapter D17 "The Statistical
// Profiling Extension", D18 "SPE Sample Record Specification", the SPE
// registers in D24.7 and the SPE* pseudocode functions of J1.1; the
// driver and decoder reproduce Linux's drivers/perf/arm_spe_pmu.c and
// tools/perf/util/arm-spe-decoder. Every IMPLEMENTATION DEFINED or
// CONSTRAINED UNPREDICTABLE choice is a field of Choices with a documented
// default (see Choices in filter.go and ARCHITECTURE.md).
package spe

import "fmt"

// Version is the SPE architecture version, as ID_AA64DFR0_EL1.PMSVer.
type Version uint8

const (
	V1p0 Version = 1 + iota // FEAT_SPE
	V1p1                    // alignment event, SVE
	V1p2                    // discard mode, inverted event filter, SAMPLE_FEED_* events
	V1p3                    // MOPS/MTE op types
	V1p4                    // L2/snoop events, data-source filter
	V1p5                    // EXC, nVM, CRR required
)

func (v Version) String() string {
	if v == 0 {
		return "none"
	}
	return fmt.Sprintf("SPEv1p%d", v-1)
}

// Features is what an implementation has; it decides the ID registers and
// which register fields exist (the others are RES0).
type Features struct {
	Version  Version
	ArchInst bool  // population = architectural instructions (simrun always samples those)
	LDS      bool  // Data Source packets
	ERnd     bool  // jitter through the secondary counter ECOUNT
	FnE      bool  // inverted event filter (PMSNEVFR); mandatory from v1p2
	FDS      bool  // data-source filter (PMSDSFR); needs LDS and v1p4
	PBT      bool  // previous branch target address packet
	CRR      bool  // call/return recording in branch op types; needs v1p4
	EFT      bool  // extended type filter: FP, SIMD and the TYPEm masks
	FPF      bool  // FP/ASE bits in the "Other" op type; comes with EFT
	Count16  bool  // 16-bit saturating counters (else 12-bit)
	MaxSize  uint8 // log2 of the largest record (6..11)
	Align    uint8 // log2 of the record alignment (0..11), <= MaxSize
	Interval uint8 // PMSIDR.Interval code: recommended minimum interval
	// Events the timing model can raise beyond the base set, so the
	// filterable mask matches (LLC access/miss are optional before v1p4).
	LLCEvents bool
}

// Validate reports a feature set the architecture does not allow.
func (f *Features) Validate() error {
	switch {
	case f.Version == 0 || f.Version > V1p5:
		return fmt.Errorf("SPE version %d: need 1 (v1p0) to 6 (v1p5)", f.Version)
	case f.Version >= V1p2 && !f.FnE:
		return fmt.Errorf("%v requires FEAT_SPE_FnE", f.Version)
	case f.FnE && f.Version < V1p2:
		return fmt.Errorf("FEAT_SPE_FnE requires SPEv1p2")
	case f.FDS && (f.Version < V1p4 || !f.LDS):
		return fmt.Errorf("FEAT_SPE_FDS requires SPEv1p4 and FEAT_SPE_LDS")
	case f.CRR && f.Version < V1p4:
		return fmt.Errorf("FEAT_SPE_CRR requires SPEv1p4")
	case f.Version >= V1p5 && !f.CRR:
		return fmt.Errorf("SPEv1p5 requires FEAT_SPE_CRR")
	case f.FPF != f.EFT:
		return fmt.Errorf("FEAT_SPE_FPF and FEAT_SPE_EFT come together")
	case f.MaxSize < 6 || f.MaxSize > 11:
		return fmt.Errorf("record MaxSize 2^%d: must be 64 bytes to 2 KiB", f.MaxSize)
	case f.Align > f.MaxSize:
		return fmt.Errorf("record alignment 2^%d exceeds MaxSize 2^%d", f.Align, f.MaxSize)
	}
	if _, ok := intervalMin[f.Interval]; !ok {
		return fmt.Errorf("PMSIDR.Interval code %d is not defined", f.Interval)
	}
	return nil
}

// intervalMin maps PMSIDR.Interval codes to the minimum interval in
// operations.
var intervalMin = map[uint8]uint32{0: 256, 2: 512, 3: 768, 4: 1024, 5: 1536, 6: 2048, 7: 3072, 8: 4096}

// MinInterval is the recommended minimum sampling interval.
func (f *Features) MinInterval() uint32 { return intervalMin[f.Interval] }

// CounterMax is the saturation value of the latency counters.
func (f *Features) CounterMax() uint32 {
	if f.Count16 {
		return 0xffff
	}
	return 0xfff
}

// Presets are SPE implementations of the CPU presets (same names as the
// timing-model presets in sim/cpu).
var Presets = map[string]Features{
	// Neoverse N1: SPEv1p0 with data source, 12-bit counters, 64-byte
	// records, no alignment, 1024-operation minimum interval. (The real N1
	// samples micro-ops; simrun samples architectural instructions.)
	"neoverse-n1": {Version: V1p0, ArchInst: true, LDS: true, MaxSize: 6, Align: 0, Interval: 4, LLCEvents: true},
	// Neoverse V2: SPEv1p2 with the inverted event filter, ERnd and a
	// previous-branch-target packet.
	"neoverse-v2": {Version: V1p2, ArchInst: true, LDS: true, FnE: true, ERnd: true, PBT: true, MaxSize: 6, Interval: 4, LLCEvents: true},
	// A teaching unit with everything: SPEv1p5 with EFT, FDS, CRR, PBT,
	// 16-bit counters and 64-byte-aligned records.
	"spe-max": {Version: V1p5, ArchInst: true, LDS: true, ERnd: true, FnE: true, FDS: true, PBT: true, CRR: true,
		EFT: true, FPF: true, Count16: true, MaxSize: 7, Align: 6, Interval: 0, LLCEvents: true},
}

// PMSIDR is the read-only ID register for f.
func (f *Features) PMSIDR() uint64 {
	var v uint64 = 0b111 // FE, FT, FL always
	set := func(b bool, bit uint) {
		if b {
			v |= 1 << bit
		}
	}
	set(f.ArchInst, 3)
	set(f.LDS, 4)
	set(f.ERnd, 5)
	set(f.FnE, 6)
	set(f.FDS, 7)
	v |= uint64(f.Interval) << 8
	v |= uint64(f.MaxSize) << 12
	cs := uint64(0b0010)
	if f.Count16 {
		cs = 0b0011
	}
	v |= cs << 16
	set(f.PBT, 24)
	set(f.CRR, 25)
	set(f.EFT, 26)
	set(f.FPF, 27)
	return v
}

// PMBIDR is the buffer ID register: F=1 (hardware access-flag updates,
// required from v1p3), EA = 0b0001 (external aborts ignored: guest memory
// has none), P=0, Align.
func (f *Features) PMBIDR() uint64 {
	return 1<<5 | 0b0001<<8 | uint64(f.Align)
}
