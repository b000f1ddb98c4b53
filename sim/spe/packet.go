package spe

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"simrun/sim/spe/codes"
)

// PacketKind is the kind of a decoded SPE packet.
type PacketKind uint8

const (
	PktBad PacketKind = iota
	PktPad
	PktEnd
	PktTimestamp
	PktAddress
	PktCounter
	PktContext
	PktOpType
	PktEvents
	PktDataSource
)

var pktNames = [...]string{"BAD", "PAD", "END", "TS", "ADDR", "COUNTER", "CONTEXT", "OP-TYPE", "EV", "DATA-SOURCE"}

func (k PacketKind) String() string { return pktNames[k] }

// Packet is one decoded packet.
type Packet struct {
	Kind    PacketKind
	Index   uint8 // address/counter index, context index, op-type class, or payload size for events
	Payload uint64
	Len     int // bytes including the header(s)
}

// Decoding errors.
var (
	ErrNeedMore  = errors.New("truncated packet")
	ErrBadPacket = errors.New("bad packet")
)

// DecodePacket decodes the packet at the start of b, recognising headers in
// the order perf's arm_spe_get_packet does (Linux
// tools/perf/util/arm-spe-decoder/arm-spe-pkt-decoder.c). Runs of padding up to 16 bytes are one
// packet, as perf prints them.
func DecodePacket(b []byte) (Packet, error) {
	if len(b) == 0 {
		return Packet{}, ErrNeedMore
	}
	b0 := b[0]
	payload := func(kind PacketKind, index uint8, hdrLen int, sz uint) (Packet, error) {
		n := 1 << sz
		if len(b) < hdrLen+n {
			return Packet{}, ErrNeedMore
		}
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[hdrLen+i])
		}
		return Packet{Kind: kind, Index: index, Payload: v, Len: hdrLen + n}, nil
	}
	sz := uint(b0>>4) & 3
	switch {
	case b0 == hdrPad:
		n := 1
		for n < len(b) && n < 16 && b[n] == hdrPad {
			n++
		}
		return Packet{Kind: PktPad, Len: n}, nil
	case b0 == hdrEnd:
		return Packet{Kind: PktEnd, Len: 1}, nil
	case b0 == hdrTS:
		return payload(PktTimestamp, 0, 1, 3)
	case b0&0xcf == 0x42:
		return payload(PktEvents, uint8(sz), 1, sz)
	case b0&0xcf == 0x43:
		return payload(PktDataSource, uint8(sz), 1, sz)
	case b0&0xfc == 0x64:
		return payload(PktContext, b0&3, 1, sz)
	case b0&0xfc == 0x48:
		return payload(PktOpType, b0&3, 1, sz)
	case b0&0xfc == 0x20: // extended header
		if len(b) < 2 {
			return Packet{}, ErrNeedMore
		}
		h := b[1]
		idx := (b0&3)<<3 | h&7
		switch {
		case h&0xf8 == 0xb0:
			return payload(PktAddress, idx, 2, uint(h>>4)&3)
		case h&0xf8 == 0x98:
			return payload(PktCounter, idx, 2, uint(h>>4)&3)
		}
		return Packet{}, ErrBadPacket
	case b0&0xf8 == 0xb0:
		return payload(PktAddress, b0&7, 1, sz)
	case b0&0xf8 == 0x98:
		return payload(PktCounter, b0&7, 1, sz)
	}
	return Packet{}, ErrBadPacket
}

// Desc is the packet's description in the words of `perf report -D` as
// Debian's perf 6.1 prints it.
func (p *Packet) Desc() string {
	v := p.Payload
	switch p.Kind {
	case PktPad, PktEnd:
		return p.Kind.String()
	case PktTimestamp:
		return fmt.Sprintf("TS %d", v)
	case PktDataSource:
		return fmt.Sprintf("DATA-SOURCE %d", v)
	case PktContext:
		return fmt.Sprintf("CONTEXT 0x%x el%d", v, p.Index+1)
	case PktAddress:
		addr := v &^ (0xff << 56)
		el, ns := v>>61&3, v>>63
		switch p.Index {
		case AddrPC:
			return fmt.Sprintf("PC 0x%x el%d ns=%d", addr, el, ns)
		case AddrTGT:
			return fmt.Sprintf("TGT 0x%x el%d ns=%d", addr, el, ns)
		case AddrVA:
			return fmt.Sprintf("VA 0x%x", v)
		case AddrPA:
			return fmt.Sprintf("PA 0x%x ns=%d ch=%d pat=%x", addr, ns, v>>62&1, v>>56&0xf)
		}
		return fmt.Sprintf("ADDR 0x%x (%d)", v, p.Index)
	case PktCounter:
		s := fmt.Sprintf("LAT %d ", uint16(v))
		switch p.Index {
		case CountTot:
			s += "TOT"
		case CountIss:
			s += "ISSUE"
		case CountXlt:
			s += "XLAT"
		}
		return s
	case PktEvents:
		var sb strings.Builder
		sb.WriteString("EV")
		for _, e := range codes.Events {
			if e.Bit > 18 || (e.Bit >= 12 && e.Bit <= 16) {
				continue // perf 6.1 names bits 0-11, 17 and 18
			}
			if e.Bit >= 8 && p.Index == 0 {
				continue // a 1-byte payload holds bits 7:0 only
			}
			if v>>e.Bit&1 == 1 {
				sb.WriteString(" " + e.Perf)
			}
		}
		return sb.String()
	case PktOpType:
		return opTypeDesc(p.Index, v)
	}
	return "BAD"
}

func opTypeDesc(class uint8, v uint64) string {
	var sb strings.Builder
	flag := func(bit uint, s string) {
		if v>>bit&1 == 1 {
			sb.WriteString(s)
		}
	}
	switch class {
	case ClassOther:
		if v&0x89 == 0x08 {
			fmt.Fprintf(&sb, "SVE-OTHER EVLEN %d", 32<<(v>>4&7))
			flag(1, " FP")
			flag(2, " PRED")
			return sb.String()
		}
		sb.WriteString("OTHER")
		if v&1 == 1 {
			sb.WriteString(" COND-SELECT")
		} else {
			sb.WriteString(" INSN-OTHER")
		}
	case ClassLdSt:
		if v&1 == 1 {
			sb.WriteString("ST")
		} else {
			sb.WriteString("LD")
		}
		if v&0xe2 == 0x02 {
			flag(2, " AT")
			flag(3, " EXCL")
			flag(4, " AR")
		}
		switch v & 0xfe {
		case 0x04:
			sb.WriteString(" SIMD-FP")
		case 0x00:
			sb.WriteString(" GP-REG")
		case 0x10:
			sb.WriteString(" UNSPEC-REG")
		case 0x30:
			sb.WriteString(" NV-SYSREG")
		case 0x14:
			sb.WriteString(" MTE-TAG")
		case 0x20:
			sb.WriteString(" MEMCPY")
		case 0x24:
			sb.WriteString(" MEMSET")
		}
		if v&0x0a == 0x08 {
			fmt.Fprintf(&sb, " EVLEN %d", 32<<(v>>4&7))
			flag(2, " PRED")
			flag(7, " SG")
		}
	case ClassBranch:
		sb.WriteString("B")
		flag(0, " COND")
		if v&0xfe == 0x02 { // perf 6.1: IND only without the CR/GCS bits
			sb.WriteString(" IND")
		}
	default:
		return fmt.Sprintf("OP-TYPE 0x%x (%d)", v, class)
	}
	return sb.String()
}

// Dump writes data as `perf report -D` prints an AUX buffer: a line per
// packet with its offset, bytes and description; undecodable bytes are
// printed one at a time as "Bad packet!".
func Dump(w io.Writer, data []byte) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, ".\n. ... ARM SPE data: size %#x bytes\n", len(data))
	for off := 0; off < len(data); {
		p, err := DecodePacket(data[off:])
		n := p.Len
		if err != nil {
			n = 1
		}
		fmt.Fprintf(&sb, ".  %08x: ", off)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, " %02x", data[off+i])
		}
		sb.WriteString(strings.Repeat("   ", max(0, 16-n)))
		if err != nil {
			sb.WriteString(" Bad packet!\n")
		} else {
			sb.WriteString(" " + p.Desc() + "\n")
		}
		off += n
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// Record is one decoded sample record: its packets up to and including
// the Timestamp or End.
type Record struct {
	Offset  int
	Packets []Packet
}

// Records splits an AUX byte stream into records, skipping padding between
// them. An error names the offset of the first undecodable byte.
func Records(data []byte) ([]Record, error) {
	var recs []Record
	var cur *Record
	for off := 0; off < len(data); {
		p, err := DecodePacket(data[off:])
		if err != nil {
			return recs, fmt.Errorf("SPE data offset 0x%x: %w (byte 0x%02x)", off, err, data[off])
		}
		if p.Kind != PktPad {
			if cur == nil {
				recs = append(recs, Record{Offset: off})
				cur = &recs[len(recs)-1]
			}
			cur.Packets = append(cur.Packets, p)
			if p.Kind == PktEnd || p.Kind == PktTimestamp {
				cur = nil
			}
		}
		off += p.Len
	}
	if cur != nil {
		return recs, fmt.Errorf("SPE data: record at offset 0x%x has no End or Timestamp", cur.Offset)
	}
	return recs, nil
}

// Get returns the record's first packet of kind k with index idx.
func (r *Record) Get(k PacketKind, idx uint8) (uint64, bool) {
	for _, p := range r.Packets {
		if p.Kind == k && (k == PktEvents || k == PktOpType || k == PktDataSource || p.Index == idx) {
			if k == PktOpType {
				return p.Payload | uint64(p.Index)<<8, true
			}
			return p.Payload, true
		}
	}
	return 0, false
}
