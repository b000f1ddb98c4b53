package spe

// CU is the outcome chosen for a CONSTRAINED UNPREDICTABLE setting.
type CU uint8

const (
	CUFilterOff CU = iota // behave as if the filter were disabled
	CURejectAll           // record no samples

	// The same two values read better for the profiling buffer's choices.
	CURaiseEvent = CUFilterOff // raise a buffer management event (PMBSR.S=1)
	CUDiscard    = CURejectAll // silently discard the record
)

// Choices are simrun's decisions where the Arm ARM leaves the behaviour
// CONSTRAINED UNPREDICTABLE (one field per setting; DefaultChoices gives the
// defaults). Each field says what the setting is, what the architecture
// permits, what simrun does by default and why.
//
// Besides these knobs, simrun fixes the following (no knob), each for the
// reason given:
//   - PMSIRR.INTERVAL = 0 gives an UNKNOWN sampling interval (Arm ARM
//     D24.7.15, PMSIRR_EL1). simrun reloads the counter with the unit's
//     minimum interval (PMSIDR.Interval, e.g. 1024 on neoverse-n1), so a
//     zero interval samples as if the minimum had been programmed: that is
//     the densest rate the unit advertises, and it never divides by zero
//     or stalls sampling. A nonzero INTERVAL below that minimum is
//     architecturally only "likely to cause sample collisions"
//     (PMSIDR_EL1.Interval), not unpredictable: it is used as written.
//   - PMSCR.PCT selects the timestamp clock; its reserved value 0b10 is
//     treated as some non-reserved value (pseudocode
//     Unpredictable_PMSCR_PCT). simrun has one clock (the timing model's
//     nanoseconds), so every PCT value, 0b10 included, gives the same
//     timestamps and no choice is left to make.
//   - PMBPTR bits [Align-1:0] (PMBIDR.Align > 0) are read/write, so a
//     misaligned pointer is possible (see MisalignedPointer).
//   - A PMBPTR whose top byte differs from LIMIT's breaks the pointer
//     restrictions of Arm ARM D17.7.4 (rule RPGGHS), which permit, among
//     others, writing to any address the owning regime can write or
//     raising any MMU fault. simrun translates the pointer as it stands, as
//     the pseudocode SPEWriteToBuffer does: its owning regime maps only the
//     AUX area, so the write takes a stage 1 translation fault (PMBSR EC
//     0x24, FSC 0x07) with PMBPTR left at the faulting address — the
//     behaviour software already handles for any unmapped buffer page.
//   - PMBLIMITR.PMFZ (freeze the PMU on a management event) has nothing to
//     freeze: simrun models no PMU event counters besides SPE's own.
type Choices struct {
	// EmptyEventFilter: PMSFCR.FE=1 while PMSEVFR_EL1 has no filterable
	// bit set; likewise FnE=1 with PMSNEVFR_EL1 empty. The architecture
	// permits recording no samples or behaving as if that filter were off
	// (Arm ARM D24.7, PMSFCR_EL1.FE/FnE; pseudocode Unpredictable_BADPMSFCR
	// in SPEFilterByEvents). Default: as if the filter were off — an empty
	// "must have" set constrains nothing.
	EmptyEventFilter CU
	// BothEventFilters: FE=FnE=1 with the same bit set in PMSEVFR and
	// PMSNEVFR; the pseudocode makes both rejections CONSTRAINED
	// UNPREDICTABLE booleans. Default: reject everything, since no sample
	// can both have and lack an event, so the two filters contradict each
	// other.
	BothEventFilters CU
	// EmptyTypeFilter: PMSFCR.FT=1 on a unit without FEAT_SPE_EFT and no
	// B/LD/ST bit set (Arm ARM D24.7, PMSFCR_EL1.FT; SPEFilterByType).
	// Default: as if FT were 0, for the same reason as EmptyEventFilter.
	EmptyTypeFilter CU
	// ZeroMinLatency: PMSFCR.FL=1 with PMSLATFR.MINLAT=0 (Arm ARM D24.7,
	// PMSFCR_EL1.FL; SPEFilterByLatency). Default: as if FL were 0 — every
	// latency is at least 0, so this also equals the filter's plain reading.
	ZeroMinLatency CU
	// ReservedFM: PMBLIMITR.FM = 0b01 or 0b11, or 0b10 (discard) on a unit
	// before SPEv1p2 where it is reserved too. The SPE text does not say
	// what a reserved FM does (Arm ARM D24.7.2, PMBLIMITR_EL1.FM), so the
	// general rule for reserved values applies: behave as some
	// non-reserved value. Default: fill mode, the only mode every SPE
	// version has; CURejectAll makes it discard mode.
	ReservedFM CU
	// BadPointer: a record is about to be written while PMBPTR >
	// LIMIT - 2^MaxSize (the pointer at, beyond or too close to the limit,
	// including a LIMIT below 2^MaxSize), which breaks the pointer
	// restrictions of Arm ARM D17.7.4 (rule RPGGHS). Default
	// (CURaiseEvent): a buffer-full management event (PMBSR EC 0, BSC
	// 0b000001, as SPEBufferIsFull would report) before any byte is
	// written, PMBPTR unchanged, counted as SAMPLE_BUFFER_FULL — an event
	// Linux's arm_spe_pmu driver already handles, so the condition is
	// visible rather than silent; CUDiscard: the record is silently
	// discarded.
	BadPointer CU
	// MisalignedPointer: PMBPTR not a multiple of 2^PMBIDR.Align when a
	// record is about to be written, UNPREDICTABLE (Arm ARM Table D17-11,
	// which names an Alignment fault among the outcomes). Default
	// (CURaiseEvent): that Alignment fault management event, PMBSR EC 0x24
	// (stage 1 data abort), FSC 0b100001, PMBPTR unchanged, nothing
	// written, so the error is visible to software; CUDiscard: the record
	// is silently discarded.
	MisalignedPointer CU
}

// DefaultChoices returns simrun's default choices.
func DefaultChoices() Choices { return Choices{BothEventFilters: CURejectAll} }

// Operation-type flags of a sample, in PMSFCR.TYPE order.
const (
	FlagB    = 1 << 0
	FlagLD   = 1 << 1
	FlagST   = 1 << 2
	FlagFP   = 1 << 3
	FlagSIMD = 1 << 4
)

// PMU counts the SPE-related PMU events (D14.2).
type PMU struct {
	SamplePop, SampleFeed, SampleFiltrate, SampleCollision, SampleBufferFull     uint64
	FeedBr, FeedLd, FeedSt, FeedFP, FeedSIMD, FeedOp, FeedEvent, FeedLat, FeedDS uint64
}

// Add adds o's counts to p's (the counts of several CPUs' units).
func (p *PMU) Add(o *PMU) {
	p.SamplePop += o.SamplePop
	p.SampleFeed += o.SampleFeed
	p.SampleFiltrate += o.SampleFiltrate
	p.SampleCollision += o.SampleCollision
	p.SampleBufferFull += o.SampleBufferFull
	p.FeedBr += o.FeedBr
	p.FeedLd += o.FeedLd
	p.FeedSt += o.FeedSt
	p.FeedFP += o.FeedFP
	p.FeedSIMD += o.FeedSIMD
	p.FeedOp += o.FeedOp
	p.FeedEvent += o.FeedEvent
	p.FeedLat += o.FeedLat
	p.FeedDS += o.FeedDS
}

// FilterInput is what the filters look at.
type FilterInput struct {
	Events   uint64
	Flags    uint8 // FlagB...
	IsLoad   bool  // load or atomic returning a value (data-source filter scope)
	TotalLat uint32
	DSValid  bool
	DS       uint16
}

// filter evaluates all five filters (event, inverted event, type, latency,
// data source), counting their PMU events, and reports whether the sample
// is kept, as the Arm ARM pseudocode SPECollectRecord does with
// SPEFilterByEvents, SPEFilterByType, SPEFilterByLatency and
// SPEFilterByDataSource (Arm ARM D17.5).
func filter(f *Features, r *Regs, ch *Choices, in FilterInput, pmu *PMU) bool {
	fcr := r.Get(PMSFCR)
	bit := func(n uint) bool { return fcr>>n&1 == 1 }
	cu := func(c CU) bool { return c == CURejectAll }

	// Event and inverted event filters.
	mask := filterableEvents(f)
	e := in.Events & mask
	evfr := r.Get(PMSEVFR) & mask
	isEvt := ^e&evfr == 0
	rejEvent := bit(0) && (evfr == 0 && cu(ch.EmptyEventFilter) || evfr != 0 && !isEvt)
	isNEvt, rejNEvent := true, false
	if f.FnE {
		nevfr := r.Get(PMSNEVFR) & mask
		isNEvt = e&nevfr == 0
		rejNEvent = bit(3) && (nevfr == 0 && cu(ch.EmptyEventFilter) || nevfr != 0 && !isNEvt)
		if bit(0) && bit(3) && evfr&nevfr != 0 {
			rejEvent = cu(ch.BothEventFilters)
			rejNEvent = rejEvent
		}
	}
	if isEvt && isNEvt {
		pmu.FeedEvent++
	}

	// Operation type filter, with the EFT OR and AND groups.
	flags := uint64(in.Flags)
	ctrl := fcr >> 16 & 0b111
	var tmask uint64
	if f.EFT {
		ctrl = fcr >> 16 & 0b11111
		tmask = fcr >> 48 & 0b11111
	}
	ctrlOr, ctrlAnd := ctrl&^tmask, ctrl&tmask
	isOp := (ctrlOr == 0 || flags&ctrlOr != 0) && flags&tmask == ctrlAnd
	count := func(ok bool, c *uint64) {
		if ok {
			*c++
		}
	}
	count(flags&FlagB != 0, &pmu.FeedBr)
	count(flags&FlagLD != 0, &pmu.FeedLd)
	count(flags&FlagST != 0, &pmu.FeedSt)
	count(flags&FlagFP != 0, &pmu.FeedFP)
	count(flags&FlagSIMD != 0, &pmu.FeedSIMD)
	count(isOp && (ctrl != 0 || tmask != 0), &pmu.FeedOp)
	rejType := false
	if bit(1) {
		if f.EFT || ctrl != 0 {
			rejType = !isOp
		} else {
			rejType = cu(ch.EmptyTypeFilter)
		}
	}

	// Latency filter.
	minLat := uint32(r.Get(PMSLATFR) & 0xffff)
	isLat := in.TotalLat >= minLat
	count(isLat, &pmu.FeedLat)
	rejLatency := bit(2) && (minLat == 0 && cu(ch.ZeroMinLatency) || minLat != 0 && !isLat)

	// Data source filter: loads with a data source only.
	rejDS := false
	if f.FDS && in.DSValid && in.IsLoad {
		isDS := r.Get(PMSDSFR)>>(in.DS&63)&1 == 1
		count(isDS, &pmu.FeedDS)
		rejDS = bit(4) && !isDS
	}

	keep := !(rejNEvent || rejEvent || rejType || rejLatency || rejDS)
	count(keep, &pmu.SampleFiltrate)
	return keep
}
