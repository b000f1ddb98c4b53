package spe

import (
	"encoding/binary"

	"simrun/sim/cpu"
)

// Packet headers (Arm ARM D18.1 and D18.2, SPE Sample Record
// Specification). A short header byte is
//
//	 7  6 5  4 3     0
//	┌────┬────┬───────┐
//	│ hi │ SZ │  lo   │   payload = 1<<SZ bytes, little-endian
//	└────┴────┴───────┘
//
// and an extended header is 0b001000_II followed by a short header
// carrying the low three index bits.
const (
	hdrPad      = 0x00
	hdrEnd      = 0x01
	hdrTS       = 0x71
	hdrEvents   = 0x42 // | SZ<<4
	hdrDataSrc  = 0x43 // | SZ<<4
	hdrContext  = 0x64 // | index
	hdrOpType   = 0x48 // | class
	hdrAddr     = 0xb0 // | index (short), 8-byte payload
	hdrCounter  = 0x98 // | index (short), 2-byte payload
	hdrExtended = 0x20 // | index[4:3]
)

// Address packet indices.
const (
	AddrPC   = 0
	AddrTGT  = 1
	AddrVA   = 2
	AddrPA   = 3
	AddrPBT  = 4
	CountTot = 0
	CountIss = 1
	CountXlt = 2
)

// Operation Type classes (header bits 1:0).
const (
	ClassOther  = 0
	ClassLdSt   = 1
	ClassBranch = 2
)

// Sample is everything recorded about one sampled operation.
type Sample struct {
	Op       cpu.Op // the core's classification (PC, class, flags, access, target)
	EL       uint8  // exception level the op ran at (0 for user programs)
	NS       bool   // Non-secure
	Taken    bool   // branch taken / condition passed
	Lat      [3]uint32
	XlatOK   bool // translation latency recorded (a data access happened)
	Events   uint64
	DS       uint16
	DSValid  bool
	PA       uint64
	PAValid  bool
	PBT      uint64
	PBTValid bool
	TS       uint64
	TSValid  bool
	Context  uint32
	CtxValid bool
}

// TypeFlags are the sample's operation-type flags for the type filter
// (Arm ARM D17.5.1 type definitions; pseudocode SPEFilterByType).
func (s *Sample) TypeFlags() uint8 {
	var f uint8
	switch s.Op.Class {
	case cpu.ClassBranch:
		f |= FlagB
	case cpu.ClassLoad:
		f |= FlagLD
	case cpu.ClassStore:
		f |= FlagST
	case cpu.ClassLoadAtomic:
		f |= FlagLD | FlagST
	}
	if s.Op.Flags&cpu.OpFP != 0 {
		f |= FlagFP
	}
	if s.Op.Flags&cpu.OpSIMD != 0 {
		f |= FlagSIMD
	}
	return f
}

// opType returns the Operation Type class and payload (Arm ARM D18.2,
// Operation Type packet; pseudocode SPEConstructClass).
func opType(f *Features, op *cpu.Op) (class, payload byte) {
	switch op.Class {
	case cpu.ClassBranch:
		var v byte
		if op.Flags&cpu.OpConditional != 0 {
			v |= 1 // COND
		}
		if op.Flags&cpu.OpIndirect != 0 {
			v |= 2 // IND
		}
		if f.CRR {
			switch {
			case op.Flags&cpu.OpLink != 0:
				v |= 1 << 3
			case op.Flags&cpu.OpReturn != 0:
				v |= 2 << 3
			default:
				v |= 3 << 3
			}
		}
		return ClassBranch, v
	case cpu.ClassLoad, cpu.ClassStore, cpu.ClassLoadAtomic:
		var ldst byte // 0: reads memory (load, atomic returning a value), 1: store
		if op.Class == cpu.ClassStore {
			ldst = 1
		}
		atomic := op.Class == cpu.ClassLoadAtomic
		excl := op.Flags&cpu.OpExclusive != 0
		ar := op.Flags&(cpu.OpAcquire|cpu.OpRelease) != 0
		switch {
		case atomic || excl || ar: // extended: 000 AR EXCL AT 1 LDST
			v := byte(0b10) | ldst
			if atomic {
				v |= 1 << 2
			}
			if excl {
				v |= 1 << 3
			}
			if ar {
				v |= 1 << 4
			}
			return ClassLdSt, v
		case op.Flags&cpu.OpSIMDFPReg != 0:
			return ClassLdSt, 0x04 | ldst
		}
		return ClassLdSt, ldst
	}
	var v byte
	if op.Flags&cpu.OpConditional != 0 {
		v |= 1 // COND: conditional select or compare
	}
	if f.FPF {
		if op.Flags&cpu.OpFP != 0 {
			v |= 2
		}
		if op.Flags&cpu.OpSIMD != 0 {
			v |= 4
		}
	}
	return ClassOther, v
}

// addrMeta is byte 7 of a PC/target address payload: NS, EL, NSE = 0.
func addrMeta(ns bool, el uint8) uint64 {
	var b uint64
	if ns {
		b |= 0x80
	}
	return (b | uint64(el&3)<<5) << 56
}

func putAddr(rec []byte, index int, v uint64) []byte {
	if index >= 8 {
		rec = append(rec, hdrExtended|byte(index>>3&3))
	}
	rec = append(rec, hdrAddr|byte(index&7))
	return binary.LittleEndian.AppendUint64(rec, v)
}

// Encode appends the record for s in the order the Arm pseudocode uses
// (context, counters, addresses, data source, operation type, events,
// timestamp or end), padded with 0x00 to the implementation's alignment.
func Encode(rec []byte, f *Features, s *Sample) []byte {
	start := len(rec)
	if s.CtxValid {
		rec = append(rec, hdrContext)
		rec = binary.LittleEndian.AppendUint32(rec, s.Context)
	}
	max := f.CounterMax()
	for i, lat := range s.Lat {
		if i == CountXlt && !s.XlatOK {
			continue
		}
		rec = append(rec, hdrCounter|byte(i))
		rec = binary.LittleEndian.AppendUint16(rec, uint16(min(lat, max)))
	}
	meta := addrMeta(s.NS, s.EL)
	const va56 = 1<<56 - 1
	rec = putAddr(rec, AddrPC, s.Op.PC&va56|meta)
	if s.Op.Class == cpu.ClassBranch && s.Taken {
		rec = putAddr(rec, AddrTGT, s.Op.Target&va56|meta)
	}
	if s.Op.Access != 0 {
		// TBI applies to user addresses: the full 64-bit VA, tag included.
		rec = putAddr(rec, AddrVA, s.Op.VA)
		if s.PAValid {
			var ns uint64
			if s.NS {
				ns = 1 << 63
			}
			rec = putAddr(rec, AddrPA, s.PA&va56|ns)
		}
	}
	if f.PBT && s.PBTValid && s.Op.Class == cpu.ClassBranch {
		rec = putAddr(rec, AddrPBT, s.PBT&va56|meta)
	}
	if f.LDS && s.DSValid {
		rec = append(rec, hdrDataSrc|1<<4)
		rec = binary.LittleEndian.AppendUint16(rec, s.DS)
	}
	class, sub := opType(f, &s.Op)
	rec = append(rec, hdrOpType|class, sub)
	rec = append(rec, hdrEvents|1<<4) // 2-byte events payload: bits 15:0
	if s.Events>>16 != 0 {
		rec[len(rec)-1] = hdrEvents | 2<<4 // 4 bytes when v1p4 events are set
		rec = binary.LittleEndian.AppendUint32(rec, uint32(s.Events))
	} else {
		rec = binary.LittleEndian.AppendUint16(rec, uint16(s.Events))
	}
	if s.TSValid {
		// Padding goes before the final packet, as Neoverse cores do, so
		// the record still ends with its terminator.
		rec = pad(rec, start, 9, f.Align)
		rec = append(rec, hdrTS)
		rec = binary.LittleEndian.AppendUint64(rec, s.TS)
	} else {
		rec = pad(rec, start, 1, f.Align)
		rec = append(rec, hdrEnd)
	}
	return rec
}

// pad appends 0x00 bytes so that the record from start, after a final
// packet of tail bytes, is a multiple of 2^align bytes.
func pad(rec []byte, start, tail int, align uint8) []byte {
	a := 1 << align
	for (len(rec)-start+tail)%a != 0 {
		rec = append(rec, hdrPad)
	}
	return rec
}
