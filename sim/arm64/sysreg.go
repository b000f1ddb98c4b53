package arm64

import (
	"encoding/binary"
	"fmt"

	"simrun/sim/cpu"
)

var littleEndian = binary.LittleEndian

// Values of the ID and cache registers user space can read: those of
// qemu's cortex-a72 as Linux shows them (and agreeing with HWCAP, see
// arch.go).
const (
	valMIDR  = 0x410fd083 // Arm Cortex-A72 r0p3
	valMPIDR = 0x80000000
	valCTR   = 0x8444c004 // 64-byte I/D cache lines, PIPT I-cache
	valDCZID = 4          // DC ZVA zeroes 64-byte blocks
	cntFreq  = 1000000000 // the counter ticks in virtual nanoseconds
	zvaBytes = 4 << valDCZID
)

// idAA64 returns the sanitised ID_AA64*_EL1 value Linux shows to user
// space, for the features simrun has.
func idAA64(enc uint32) uint64 {
	crm, op2 := field(enc, 3, 4), field(enc, 0, 3)
	switch {
	case crm == 4 && op2 == 0: // ID_AA64PFR0_EL1: EL0 AArch64, FP and AdvSIMD present (0)
		return 0x0000000000000011
	case crm == 6 && op2 == 0: // ID_AA64ISAR0_EL1: CRC32 = 1, SHA2 = 1, SHA1 = 1, AES = 2 (with PMULL)
		return 0x0000000000011120
	}
	return 0
}

// FPCR bits simrun honours: DN (default NaN). AHP, FZ and directed rounding
// are refused with a clear fault rather than silently ignored.
const (
	fpcrAHP   = 1 << 26
	fpcrDN    = 1 << 25
	fpcrFZ    = 1 << 24
	fpcrRMode = 3 << 22
	fpcrFZ16  = 1 << 19
	fpsrMask  = 0x0800009f // QC, IDC, IXC, UFC, OFC, DZC, IOC
)

func (c *Core) readSysReg(id uint8, enc uint32) uint64 {
	switch id {
	case sysNZCV:
		return uint64(c.nzcv) << 28
	case sysFPCR:
		return uint64(c.fpcr)
	case sysFPSR:
		return uint64(c.fpsr)
	case sysTPIDR:
		return c.tpidr
	case sysTPIDRRO:
		return c.tpidrro
	case sysCNTVCT, sysCNTPCT:
		return c.m.VirtualNanos()
	case sysCNTFRQ:
		return cntFreq
	case sysDCZID:
		return valDCZID
	case sysCTR:
		return valCTR
	case sysMIDR:
		return valMIDR
	case sysMPIDR:
		return valMPIDR
	case sysREVIDR:
		return 0
	case sysIDAA64:
		return idAA64(enc)
	}
	return 0
}

func (c *Core) writeSysReg(pc uint64, id uint8, v uint64) *cpu.Fault {
	switch id {
	case sysNZCV:
		c.nzcv = uint32(v>>28) & 15
	case sysFPCR:
		if v&(fpcrAHP|fpcrRMode|fpcrFZ16) != 0 {
			return &cpu.Fault{PC: pc, Kind: cpu.FaultUnsupported,
				Err: fmt.Errorf("msr fpcr, 0x%x: simrun implements round-to-nearest only, without alternative half precision or FZ16 (FPCR.DN and FZ are supported)", v)}
		}
		c.fpcr = uint32(v) & (fpcrDN | fpcrFZ)
	case sysFPSR:
		c.fpsr = uint32(v) & fpsrMask
	case sysTPIDR:
		c.tpidr = v
	}
	return nil
}

// dcZva zeroes the naturally aligned block holding addr.
func (c *Core) dcZva(addr uint64) bool {
	a := addr &^ (zvaBytes - 1)
	if !c.checkWrite(a, zvaBytes) {
		return false
	}
	for i := uint64(0); i < zvaBytes; i += 8 {
		c.mem.Store64LE(a+i, 0)
	}
	return true
}
