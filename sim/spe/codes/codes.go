// Package codes holds the SPE packet encodings that the timing model
// (sim/cpu), which raises events and names data sources, and the SPE unit
// (sim/spe), which writes them into packets, must agree on: one
// definition for both, and the names perf prints for them.
package codes

import "fmt"

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

// Event is one bit of the Events packet payload.
type Event struct {
	Bit  uint
	Perf string // perf's name
	Desc string
}

// Events lists the bits the Arm ARM defines for the Events packet, lowest
// first.
var Events = []Event{
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
	for _, e := range Events {
		if e.Bit == n {
			return e.Perf
		}
	}
	return ""
}

// EventByName finds an event bit by perf's name or by number.
func EventByName(name string) (uint, bool) {
	for _, e := range Events {
		if e.Perf == name {
			return e.Bit, true
		}
	}
	return 0, false
}

// Data sources in the Neoverse encoding (the Data Source packet's payload
// as Neoverse N1/V1/N2 cores fill it and perf decodes it).
const (
	DSL1D          = 0x0
	DSL2           = 0x8
	DSPeerCore     = 0x9
	DSLocalCluster = 0xa
	DSLLC          = 0xb // system cache
	DSPeerCluster  = 0xc
	DSRemote       = 0xd
	DSDRAM         = 0xe
)

// DataSourceName names a data source in the Neoverse encoding ("0xN"
// for the others).
func DataSourceName(ds uint16) string {
	switch ds {
	case DSL1D:
		return "L1D"
	case DSL2:
		return "L2"
	case DSPeerCore:
		return "peer-core"
	case DSLocalCluster:
		return "local-cluster"
	case DSLLC:
		return "system-cache"
	case DSPeerCluster:
		return "peer-cluster"
	case DSRemote:
		return "remote"
	case DSDRAM:
		return "DRAM"
	}
	return fmt.Sprintf("0x%x", ds)
}
