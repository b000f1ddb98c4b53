package spe

// Events packet bits (E[n]) and the names perf prints for them.
const (
	EvException   = 1 << 0
	EvRetired     = 1 << 1
	EvL1DAccess   = 1 << 2
	EvL1DRefill   = 1 << 3
	EvTLBAccess   = 1 << 4
	EvTLBWalk     = 1 << 5
	EvNotTaken    = 1 << 6
	EvMispredict  = 1 << 7
	EvLLCAccess   = 1 << 8
	EvLLCMiss     = 1 << 9
	EvRemote      = 1 << 10
	EvMisaligned  = 1 << 11
	EvL2DAccess   = 1 << 19
	EvL2DMiss     = 1 << 20
	EvHITM        = 1 << 21
	EvRecentFetch = 1 << 22
	EvSnooped     = 1 << 23
)

type eventBit struct {
	bit  uint
	perf string // perf's name
	desc string
}

var eventBits = []eventBit{
	{0, "EXCEPTION-GEN", "generated an exception"},
	{1, "RETIRED", "architecturally retired"},
	{2, "L1D-ACCESS", "level 1 data cache access"},
	{3, "L1D-REFILL", "level 1 data cache refill"},
	{4, "TLB-ACCESS", "TLB access"},
	{5, "TLB-REFILL", "TLB walk"},
	{6, "NOT-TAKEN", "not taken / condition failed"},
	{7, "MISPRED", "mispredicted branch"},
	{8, "LLC-ACCESS", "last level cache access"},
	{9, "LLC-REFILL", "last level cache miss"},
	{10, "REMOTE-ACCESS", "remote access"},
	{11, "ALIGNMENT", "misalignment penalty"},
	{16, "TXN", "transactional"},
	{17, "SVE-PARTIAL-PRED", "partial or empty predicate"},
	{18, "SVE-EMPTY-PRED", "empty predicate"},
	{19, "L2D-ACCESS", "level 2 data cache access"},
	{20, "L2D-MISS", "level 2 data cache miss"},
	{21, "HITM", "cache data modified"},
	{22, "LFB", "recently fetched line hit"},
	{23, "SNOOPED", "data snooped"},
	{24, "STREAMING-SVE", "streaming SVE mode"},
	{25, "SMCU", "executed on an SMCU"},
}

// EventName is perf's name for event bit n ("" if none).
func EventName(n uint) string {
	for _, e := range eventBits {
		if e.bit == n {
			return e.perf
		}
	}
	return ""
}

// EventByName finds an event bit by perf's name or by number.
func EventByName(name string) (uint, bool) {
	for _, e := range eventBits {
		if e.perf == name {
			return e.bit, true
		}
	}
	return 0, false
}

// filterableEvents is the mask of event bits PMSEVFR/PMSNEVFR can filter
// on this implementation (Arm ARM D24.7 PMSEVFR_EL1, and the mask built by
// the pseudocode SPEFilterByEvents). simrun implements no IMPDEF
// events, no SVE/SME and no remote accesses; it does raise L1D access,
// TLB access and (with LLCEvents) the last-level cache events, so those
// are filterable before v1p4 too (an IMPDEF choice).
func filterableEvents(f *Features) uint64 {
	m := uint64(EvRetired | EvL1DRefill | EvTLBWalk | EvMispredict | EvL1DAccess | EvTLBAccess)
	if f.LLCEvents {
		m |= EvLLCAccess | EvLLCMiss
	}
	if f.FnE {
		m |= EvNotTaken
	}
	if f.Version >= V1p1 {
		m |= EvMisaligned
	}
	if f.Version >= V1p4 {
		m |= EvL2DAccess | EvL2DMiss | EvHITM | EvRecentFetch | EvSnooped
	}
	return m
}
