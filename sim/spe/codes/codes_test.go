package codes

import (
	"math/bits"
	"testing"
)

// Every named constant is a bit of the table, with the perf name perf
// prints for it; the table is ordered and names each bit once.
func TestEventsTable(t *testing.T) {
	consts := map[string]uint64{
		"EXCEPTION-GEN": EvException, "RETIRED": EvRetired, "L1D-ACCESS": EvL1DAccess,
		"L1D-REFILL": EvL1DRefill, "TLB-ACCESS": EvTLBAccess, "TLB-REFILL": EvTLBWalk,
		"NOT-TAKEN": EvNotTaken, "MISPRED": EvMispredict, "LLC-ACCESS": EvLLCAccess,
		"LLC-REFILL": EvLLCMiss, "REMOTE-ACCESS": EvRemote, "ALIGNMENT": EvMisaligned,
		"L2D-ACCESS": EvL2DAccess, "L2D-MISS": EvL2DMiss, "HITM": EvHITM,
		"LFB": EvRecentFetch, "SNOOPED": EvSnooped,
	}
	for name, v := range consts {
		if bits.OnesCount64(v) != 1 {
			t.Errorf("%s = %#x: not one bit", name, v)
			continue
		}
		bit, ok := EventByName(name)
		if !ok || uint64(1)<<bit != v {
			t.Errorf("%s: constant bit %d, table bit %d (found %v)", name, bits.TrailingZeros64(v), bit, ok)
		}
		if got := EventName(uint(bits.TrailingZeros64(v))); got != name {
			t.Errorf("EventName(%d) = %q, want %q", bits.TrailingZeros64(v), got, name)
		}
	}
	for i := 1; i < len(Events); i++ {
		if Events[i].Bit <= Events[i-1].Bit {
			t.Errorf("table out of order at bit %d", Events[i].Bit)
		}
	}
	if EventName(63) != "" {
		t.Error("an undefined bit has a name")
	}
}

func TestDataSourceName(t *testing.T) {
	for ds, want := range map[uint16]string{DSL1D: "L1D", DSL2: "L2", DSPeerCore: "peer-core",
		DSLLC: "system-cache", DSDRAM: "DRAM", 0x7: "0x7"} {
		if got := DataSourceName(ds); got != want {
			t.Errorf("DataSourceName(%#x) = %q, want %q", ds, got, want)
		}
	}
}
