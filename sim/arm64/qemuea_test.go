package arm64

import (
	"encoding/binary"
	"testing"

	"simrun/internal/oracle"
	"simrun/internal/timingtest"
	"simrun/programs"
)

// zvaRule is the register rule for the one arm64 instruction whose
// access qemu 7.2's plugin interface does not show: DC ZVA, Xt (SYS #3,
// C7, C4, #1, Xt: 0xd50b7420 | t) zeroes the naturally aligned block
// holding Xt, of 4 << DCZID_EL0.BS bytes (Arm ARM, DC ZVA and the
// pseudocode of AArch64.DC: the address is aligned down to the block);
// BS is 4 (64 bytes) on qemu's cortex-a72 and max models. Xt = 31 is XZR.
var zvaRule = &timingtest.RegsRule{
	Family: func(op *timingtest.LoggedAccess) string {
		if len(op.Code) >= 4 && binary.LittleEndian.Uint32(op.Code)&^0x1f == 0xd50b7420 {
			return "dc zva"
		}
		return ""
	},
	Addr: func(op *timingtest.LoggedAccess, rec *oracle.Record, _ func(uint64, int) ([]byte, error)) (uint64, error) {
		t := binary.LittleEndian.Uint32(op.Code) & 0x1f
		if t == 31 {
			return 0, nil
		}
		return rec.R[t] &^ 63, nil
	},
}

// TestAddressesAgainstQemu is the oracle test for the addresses simrun
// logs (and SPE samples): they are the ones qemu-user computes, for every
// load and store of the bundled programs (the freestanding ones and a
// representative part of the glibc ones, whose string functions use DC
// ZVA and SIMD loads and stores).
func TestAddressesAgainstQemu(t *testing.T) {
	oracle.RequireMemTrace(t, "arm64")
	bins := programs.Binaries("arm64")
	for _, b := range programs.GlibcBinaries("arm64") {
		if b.Name == "jumps" || b.Name == "printf" || b.Name == "strings" || b.Name == "sortsearch" {
			bins = append(bins, b)
		}
	}
	c := &timingtest.AddressCheck{Limit: 1 << 21, Regs: zvaRule, RegsWithin: 1 << 20, Quota: 50}
	checked := c.CheckAll(t, bins)
	if c.ByRegs["dc zva"] == 0 || checked < 100000 {
		t.Errorf("only %d addresses checked against qemu's accesses, %v against its registers", checked, c.ByRegs)
	}
}
