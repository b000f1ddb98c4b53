package spe

import "simrun/sim/spe/codes"

// filterableEvents is the mask of event bits PMSEVFR/PMSNEVFR can filter
// on this implementation (Arm ARM D24.7 PMSEVFR_EL1, and the mask built by
// the pseudocode SPEFilterByEvents). simrun implements no IMPDEF
// events, no SVE/SME and no remote accesses; it does raise L1D access,
// TLB access and (with LLCEvents) the last-level cache events, so those
// are filterable before v1p4 too (an IMPDEF choice).
func filterableEvents(f *Features) uint64 {
	m := uint64(codes.EvRetired | codes.EvL1DRefill | codes.EvTLBWalk | codes.EvMispredict | codes.EvL1DAccess | codes.EvTLBAccess)
	if f.LLCEvents {
		m |= codes.EvLLCAccess | codes.EvLLCMiss
	}
	if f.FnE {
		m |= codes.EvNotTaken
	}
	if f.Version >= V1p1 {
		m |= codes.EvMisaligned
	}
	if f.Version >= V1p4 {
		m |= codes.EvL2DAccess | codes.EvL2DMiss | codes.EvHITM | codes.EvRecentFetch | codes.EvSnooped
	}
	return m
}
