package profile

import (
	"fmt"
	"strings"

	"simrun/sim/spe"
	"simrun/sim/spe/codes"
)

// Sample is one SPE record decoded and symbolized: the model every sink
// (pprof, folded stacks, script text, JSON Lines, the HTML report) reads.
// Fields whose packet the record lacks have their Has flag false.
type Sample struct {
	Index  int // record number in the AUX stream, from 0
	Offset int // byte offset of the record in the AUX stream

	Time    uint64 // Timestamp packet: virtual ns since the start of the run
	HasTime bool
	CPU     int    // the CPU whose SPE unit wrote it (0 with one)
	Context uint32 // Context packet (CONTEXTIDR_EL1: the running thread's tid)
	HasCtx  bool
	// Pid and Comm are the sampled process's id and name in a run of
	// several processes (0 and "": the recording's, Summary.PID, Comm).
	Pid  uint32
	Comm string

	PC uint64 // virtual address of the sampled operation
	EL uint8  // exception level it ran at
	NS bool   // non-secure

	Op Op

	VA, PA, Target, PrevTarget             uint64
	HasVA, HasPA, HasTarget, HasPrevTarget bool

	// Lat are the counter packets in cycles: total, issue, translation
	// (index spe.CountTot, CountIss, CountXlt).
	Lat    [3]uint16
	HasLat [3]bool

	Events    uint64 // the Events packet's bits (spe.Ev*)
	HasEvents bool

	DataSource    uint16
	HasDataSource bool

	// Callchain is the call stack at the sampled operation, leaf first:
	// Callchain[0] is PC.  Frames symbolizes it, in the same order.
	Callchain []uint64
	Frames    []Frame

	// Packets are the record's packets as decoded (padding left out).
	Packets []spe.Packet

	// bin is the program the sample was symbolized with (its process's
	// in a run of several): Frames' objects are its and its Shared.
	bin *Binary
}

// Object is the path of the file whose code holds the sampled pc: the
// program or one of its shared objects ("" when none does, e.g. the
// signal trampoline's page or code the program generated).
func (s *Sample) Object() string {
	if o := s.bin.ObjectAt(s.PC); o != nil {
		return o.Path
	}
	return ""
}

// MainTid is the guest process's pid, its main thread's tid: the thread
// of a record without a CONTEXT packet.
const MainTid = 1000

// Tid is the thread the sample was taken in: the CONTEXT packet's
// CONTEXTIDR_EL1, which Linux sets to the running thread's tid at each
// context switch (CONFIG_PID_IN_CONTEXTIDR); MainTid without one.
func (s *Sample) Tid() uint32 {
	if s.HasCtx {
		return s.Context
	}
	return MainTid
}

// Threaded reports whether the samples come from more than one thread:
// the outputs then name each sample's thread (pprof's tid label, folded
// stacks rooted at COMM-TID), and stay as they were for one thread.
func Threaded(samples []Sample) bool {
	for i := range samples {
		if samples[i].Tid() != samples[0].Tid() {
			return true
		}
	}
	return false
}

// Op is the Operation Type packet.
type Op struct {
	Class uint8  // spe.ClassOther, ClassLdSt, ClassBranch
	Sub   uint8  // the packet's payload (subclass and flags)
	Kind  string // "load", "store", "branch" or "other"
	Desc  string // perf's words: "LD GP-REG", "B COND", ...
}

// Latency indices of Sample.Lat, and the sample values of a profile.
const (
	LatTotal = spe.CountTot
	LatIssue = spe.CountIss
	LatXlat  = spe.CountXlt
)

// Decode turns an AUX byte stream into samples symbolized with bin (nil:
// no symbols).  chains, if not nil, holds the callchain of record i, leaf
// first, starting with the sampled pc; a record without one gets its pc
// alone.  This is the one place records become samples.
func Decode(data []byte, bin *Binary, chains [][]uint64) ([]Sample, error) {
	return decode(data, bin, nil, nil, chains)
}

// Image is one program a process of a run ran (a run of several
// processes has one per process and execve): its symbols, and the
// process's id and name that its samples get.
type Image struct {
	Bin  *Binary
	Pid  uint32
	Comm string
}

// DecodeTagged is Decode of a run of several programs: record i is
// symbolized with images[tags[i]].Bin and gets its Pid and Comm (bin
// past the end of tags, or for a tag out of range).
func DecodeTagged(data []byte, bin *Binary, images []Image, tags []int, chains [][]uint64) ([]Sample, error) {
	return decode(data, bin, images, tags, chains)
}

func decode(data []byte, bin0 *Binary, images []Image, tags []int, chains [][]uint64) ([]Sample, error) {
	recs, err := spe.Records(data)
	if err != nil {
		return nil, err
	}
	out := make([]Sample, 0, len(recs))
	for i := range recs {
		s, err := decodeRecord(i, &recs[i])
		if err != nil {
			return nil, err
		}
		if i < len(chains) && len(chains[i]) > 0 {
			if chains[i][0] != s.PC {
				return nil, fmt.Errorf("SPE record %d at offset 0x%x: callchain starts at 0x%x, not at the sampled pc 0x%x", i, s.Offset, chains[i][0], s.PC)
			}
			s.Callchain = chains[i]
		} else {
			s.Callchain = []uint64{s.PC}
		}
		s.Frames = make([]Frame, len(s.Callchain))
		bin := bin0
		if i < len(tags) && tags[i] >= 0 && tags[i] < len(images) {
			im := &images[tags[i]]
			bin, s.Pid, s.Comm = im.Bin, im.Pid, im.Comm
		}
		for j, pc := range s.Callchain {
			s.Frames[j] = bin.Symbolize(pc)
		}
		s.bin = bin
		out = append(out, s)
	}
	return out, nil
}

func decodeRecord(i int, r *spe.Record) (Sample, error) {
	s := Sample{Index: i, Offset: r.Offset, Packets: r.Packets}
	hasPC, hasOp := false, false
	for k := range r.Packets {
		p := &r.Packets[k]
		v := p.Payload
		switch p.Kind {
		case spe.PktTimestamp:
			s.Time, s.HasTime = v, true
		case spe.PktContext:
			s.Context, s.HasCtx = uint32(v), true
		case spe.PktAddress:
			addr := v &^ (0xff << 56)
			switch p.Index {
			case spe.AddrPC:
				s.PC, s.EL, s.NS, hasPC = addr, uint8(v>>61&3), v>>63 == 1, true
			case spe.AddrTGT:
				s.Target, s.HasTarget = addr, true
			case spe.AddrVA:
				s.VA, s.HasVA = v, true // the full VA, tag byte included
			case spe.AddrPA:
				s.PA, s.HasPA = addr, true
			case spe.AddrPBT:
				s.PrevTarget, s.HasPrevTarget = addr, true
			}
		case spe.PktCounter:
			if int(p.Index) < len(s.Lat) {
				s.Lat[p.Index], s.HasLat[p.Index] = uint16(v), true
			}
		case spe.PktEvents:
			s.Events, s.HasEvents = v, true
		case spe.PktDataSource:
			s.DataSource, s.HasDataSource = uint16(v), true
		case spe.PktOpType:
			hasOp = true
			s.Op = Op{Class: p.Index, Sub: uint8(v), Desc: p.Desc()}
			switch {
			case p.Index == spe.ClassLdSt && v&1 == 1:
				s.Op.Kind = "store"
			case p.Index == spe.ClassLdSt:
				s.Op.Kind = "load"
			case p.Index == spe.ClassBranch:
				s.Op.Kind = "branch"
			default:
				s.Op.Kind = "other"
			}
		}
	}
	if !hasPC {
		return s, fmt.Errorf("SPE record %d at offset 0x%x has no PC address packet", i, r.Offset)
	}
	if !hasOp {
		return s, fmt.Errorf("SPE record %d at offset 0x%x has no operation type packet", i, r.Offset)
	}
	return s, nil
}

// EventNames are perf's names of the sample's event bits, lowest bit
// first ("E[n]" for a bit perf has no name for).
func (s *Sample) EventNames() []string {
	var names []string
	for n := uint(0); n < 64; n++ {
		if s.Events>>n&1 == 1 {
			name := codes.EventName(n)
			if name == "" {
				name = fmt.Sprintf("E[%d]", n)
			}
			names = append(names, name)
		}
	}
	return names
}

// Leaf is the sampled function's frame.
func (s *Sample) Leaf() Frame { return s.Frames[0] }

// Stack is the callchain's function names root first, joined by sep
// (the folded-stack form).
func (s *Sample) Stack(sep string) string {
	names := make([]string, len(s.Frames))
	for i := range s.Frames {
		names[len(s.Frames)-1-i] = s.Frames[i].FuncName()
	}
	return strings.Join(names, sep)
}
