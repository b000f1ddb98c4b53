// Package profile writes what simrun measured in the formats people's
// tools read: perf.data with Arm SPE AUX data (read by stock Linux perf).
package profile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// perf.data constants (tools/perf/util/header.h, include/uapi/linux/perf_event.h).
const (
	perfMagic    = 0x32454c4946524550 // "PERFILE2"
	attrSize     = 128                // PERF_ATTR_SIZE_VER7
	fileAttrSize = attrSize + 16      // attr + ids section

	recMMAP         = 1
	recCOMM         = 3
	recEXIT         = 4
	recFORK         = 7
	recSAMPLE       = 9
	recMMAP2        = 10
	recAUX          = 11
	recITRACEStart  = 12
	recFinishRound  = 68
	recAuxtraceInfo = 70
	recAuxtrace     = 71
	recTimeConv     = 79

	sampleIP         = 1 << 0
	sampleTID        = 1 << 1
	sampleTime       = 1 << 2
	sampleAddr       = 1 << 3
	sampleCallchain  = 1 << 5
	sampleCPU        = 1 << 7
	samplePeriod     = 1 << 8
	sampleIdentifier = 1 << 16
	sampleDataSrc    = 1 << 15
	samplePhysAddr   = 1 << 19

	featBuildID    = 2
	featHostname   = 3
	featOSRelease  = 4
	featVersion    = 5
	featArch       = 6
	featNRCPUs     = 7
	featCPUDesc    = 8
	featCPUID      = 9
	featTotalMem   = 10
	featCmdline    = 11
	featEventDesc  = 12
	featCPUTopo    = 13
	featNUMATopo   = 14
	featMemTopo    = 22
	featPMUMapping = 16
	featAuxtrace   = 18

	auxtraceARMSPE = 4
	miscUser       = 2
	miscCommExec   = 0x2000
	typeHardware   = 0
	typeSoftware   = 1
	swDummy        = 9
	swCPUClock     = 0
)

// SPEType is the PMU type number the arm_spe_0 event gets (any dynamic PMU
// number; perf matches it against AUXTRACE_INFO).
const SPEType = 10

// Map is one mapping of the program image.
type Map struct {
	Start, Len, Pgoff uint64
	Prot              uint32 // PROT_READ=1, PROT_WRITE=2, PROT_EXEC=4
	Filename          string
	// BuildID, when not empty (at most 20 bytes), goes into the record
	// in place of the device and inode (PERF_RECORD_MISC_MMAP_BUILD_ID,
	// as Linux writes it for perf record --buildid-mmap): perf then finds
	// the file's symbols by build-id.
	BuildID []byte
}

// SideKind says what a Side record is.
type SideKind uint8

const (
	SideFork SideKind = iota + 1 // PERF_RECORD_FORK
	SideComm                     // PERF_RECORD_COMM
	SideMmap                     // PERF_RECORD_MMAP2
	SideExit                     // PERF_RECORD_EXIT
)

// Side is one side-band record of a recording of several processes (see
// PerfData.Side): what the kernel tells perf as the tasks it follows
// fork, exec, map code and exit.
type Side struct {
	Kind                 SideKind
	Time                 uint64 // ns
	Pid, Tid, PPid, PTid uint32
	Comm                 string // SideComm
	Exec                 bool   // SideComm: named by execve (PERF_RECORD_MISC_COMM_EXEC)
	Map                  Map    // SideMmap
}

// AuxChunk is one piece of SPE data as perf record copied it out of the
// AUX area, with the PERF_RECORD_AUX that announced it.
type AuxChunk struct {
	Offset uint64 // position in the AUX ring
	Data   []byte
	Flags  uint64 // PERF_AUX_FLAG_*
	Time   uint64 // ns
}

// Callchain is a sample record carrying a call stack (issue: callchains on
// SPE samples): ip, time and the callchain of one SPE record.
type Callchain struct {
	IP, Time uint64
	Stack    []uint64 // innermost first, starting with IP
	Tid      uint32   // the sampled thread (0: the process's main thread, PID)
	Pid      uint32   // its process (0: PID)
}

// Thread is a thread the process created after its main one: perf.data
// gets a FORK record at Start (ns) and, if it exited (End != 0), an EXIT
// record at End, as Linux writes them for the threads of a task perf
// follows (perf_event_task: pid and ppid the process's, tid the new
// thread's, ptid its creator's).  The thread's samples then carry its
// tid and perf names them by the process's comm, which the thread
// inherits.
type Thread struct {
	Tid, Parent uint32
	Start, End  uint64
}

// PerfData is an Arm SPE recording of one process.
type PerfData struct {
	MIDR    uint64 // selects perf's data-source decoding (Neoverse N1: 0x410fd0c0)
	CPUDesc string
	Cmdline []string
	Config  [5]uint64 // config, config1..config4 of the arm_spe event
	Period  uint64
	PID     uint32
	Comm    string
	Maps    []Map
	Threads []Thread // threads after the main one
	// Side, when not empty, are every process's and thread's records in
	// time order, the first process's COMM first: they replace those
	// made from PID, Comm, Maps and Threads (which still name the
	// recorded task of ITRACE_START and the samples without a Pid).
	Side    []Side
	Chunks  []AuxChunk
	Samples []Callchain // optional call stacks, recorded on the dummy event
	// MaxStack is the frame cap of those stacks (attr.sample_max_stack of
	// their event; 0: none given). A stack over MaxCallchainFrames does
	// not fit a perf record and makes WriteTo fail.
	MaxStack uint16
	// ExcludeUser and IncludeKernel are the event's privilege levels
	// (perf's u/k modifiers): attr.exclude_user, !attr.exclude_kernel.
	ExcludeUser, IncludeKernel bool
	Start                      uint64 // ns: time of COMM/MMAP2 (<= the first SPE timestamp)
	End                        uint64 // ns: time of EXIT
	Hostname                   string
	// Arch is the guest's uname machine for the arch feature (HEADER_ARCH;
	// "" = "aarch64"): perf picks the register names and the address
	// conventions of its annotate and unwind code by it.
	Arch string
	// Simrun, if not empty, is written as simrun's own feature section
	// (bit FeatSimrun): perf skips feature bits it does not know.
	Simrun []byte
}

// Event ids: keep clear of perf's synthesized ids (id + 1000000000).
const (
	idSPE       = 17
	idDummy     = 18
	idCallchain = 19
)

type buf struct {
	bytes.Buffer
}

func (b *buf) u16(v uint16) { binary.Write(b, binary.LittleEndian, v) }
func (b *buf) u32(v uint32) { binary.Write(b, binary.LittleEndian, v) }
func (b *buf) u64(v uint64) { binary.Write(b, binary.LittleEndian, v) }

// str writes a NUL-terminated string padded to a multiple of align.
func (b *buf) str(s string, align int) {
	n := len(s) + 1
	n = (n + align - 1) / align * align
	b.WriteString(s)
	b.Write(make([]byte, n-len(s)))
}

// perfString is a feature string: u32 length then the padded string.
func (b *buf) perfString(s string) {
	n := (len(s) + 1 + 63) / 64 * 64
	b.u32(uint32(n))
	b.WriteString(s)
	b.Write(make([]byte, n-len(s)))
}

func (p *PerfData) speAttr() []byte {
	var a buf
	a.u32(SPEType)
	a.u32(attrSize)
	a.u64(p.Config[0])
	a.u64(p.Period)
	a.u64(sampleIP | sampleTID | sampleTime | sampleCPU | sampleIdentifier | sampleDataSrc | samplePhysAddr)
	a.u64(0)                              // read_format
	a.u64(p.excludeBits() | 1<<0 | 1<<18) // disabled, exclude_*, sample_id_all
	a.u32(0)                              // wakeup_events
	a.u32(0)                              // bp_type
	a.u64(p.Config[1])
	a.u64(p.Config[2])
	a.Write(make([]byte, attrSize-a.Len()))
	return a.Bytes()
}

// excludeBits are attr's exclude_user (bit 4), exclude_kernel (5) and
// exclude_hv (6) for the event's privilege levels.
func (p *PerfData) excludeBits() uint64 {
	b := uint64(1 << 6)
	if p.ExcludeUser {
		b |= 1 << 4
	}
	if !p.IncludeKernel {
		b |= 1 << 5
	}
	return b
}

// dummyAttr is the tracking event (mmap, comm, task records), as perf
// record adds it beside an AUX event.
func (p *PerfData) dummyAttr() []byte {
	var a buf
	a.u32(typeSoftware)
	a.u32(attrSize)
	a.u64(swDummy)
	a.u64(1)
	a.u64(sampleIP | sampleTID | sampleTime | sampleCPU | sampleIdentifier)
	a.u64(0)
	// disabled, exclude_kernel, exclude_hv, mmap, comm, task, sample_id_all, mmap2, comm_exec
	a.u64(1<<0 | 1<<5 | 1<<6 | 1<<8 | 1<<9 | 1<<13 | 1<<18 | 1<<23 | 1<<24)
	a.Write(make([]byte, attrSize-a.Len()))
	return a.Bytes()
}

// callchainAttr is the event of the call-stack samples: a software event
// (perf script prints no frames for samples of the dummy event), one
// sample per SPE record.
func (p *PerfData) callchainAttr() []byte {
	var a buf
	a.u32(typeSoftware)
	a.u32(attrSize)
	a.u64(swCPUClock)
	a.u64(p.Period)
	a.u64(sampleIP | sampleTID | sampleTime | sampleCPU | sampleIdentifier | sampleCallchain)
	a.u64(0)
	a.u64(p.excludeBits() | 1<<0 | 1<<18) // disabled, exclude_*, sample_id_all
	a.Write(make([]byte, attrSize-a.Len()))
	b := a.Bytes()
	// sample_max_stack (attr offset 108): the frame cap the callchains
	// were taken with, as perf record sets it (perf evlist -v shows it).
	binary.LittleEndian.PutUint16(b[108:], p.MaxStack)
	return b
}

// trailer is the sample_id of kernel records: TID, TIME, CPU, IDENTIFIER.
func (p *PerfData) trailer(b *buf, t uint64, id uint64) { p.trailerTid(b, t, id, p.PID) }

// trailerTid is the sample_id trailer of a record about thread tid.
func (p *PerfData) trailerTid(b *buf, t uint64, id uint64, tid uint32) {
	p.trailerPid(b, t, id, p.PID, tid)
}

// trailerPid is the sample_id trailer of a record about thread tid of
// process pid.
func (p *PerfData) trailerPid(b *buf, t uint64, id uint64, pid, tid uint32) {
	b.u32(pid)
	b.u32(tid)
	b.u64(t)
	b.u32(0) // cpu
	b.u32(0)
	b.u64(id)
}

// MaxRecordSize is the largest perf record: perf_event_header.size is a
// 16-bit byte count, header included.
const MaxRecordSize = 0xffff

// MaxCallchainFrames is the most frames a callchain sample of PerfData
// can carry within MaxRecordSize: the header takes 8 bytes, the sample's
// fixed fields (identifier, ip, pid/tid, time, cpu, the callchain's nr)
// 48, PERF_CONTEXT_USER 8, and each frame 8.
const MaxCallchainFrames = (MaxRecordSize - 8 - 48 - 8) / 8

var recordNames = map[uint32]string{recMMAP: "MMAP", recCOMM: "COMM", recEXIT: "EXIT", recFORK: "FORK", recSAMPLE: "SAMPLE",
	recMMAP2: "MMAP2", recAUX: "AUX", recITRACEStart: "ITRACE_START", recFinishRound: "FINISHED_ROUND",
	recAuxtraceInfo: "AUXTRACE_INFO", recAuxtrace: "AUXTRACE", recTimeConv: "TIME_CONV"}

// record wraps a body into a perf_event_header record. A record whose
// size does not fit the header's 16 bits is an error: perf would read a
// wrapped size and lose its place in the file.
// taskRecord is the body of a PERF_RECORD_FORK or PERF_RECORD_EXIT
// (include/uapi/linux/perf_event.h): the task, its parent, the time, and
// the sample_id trailer of the task itself.
//
//	u32 pid, ppid; u32 tid, ptid; u64 time; sample_id
func (p *PerfData) taskRecordPid(pid, tid, ppid, ptid uint32, t uint64) []byte {
	var b buf
	b.u32(pid)
	b.u32(ppid)
	b.u32(tid)
	b.u32(ptid)
	b.u64(t)
	p.trailerPid(&b, t, idDummy, pid, tid)
	return b.Bytes()
}

// legacySide is the records of PID, Comm, Maps and Threads: the process's
// COMM (exec) and mappings at Start, a FORK per thread, an EXIT per
// thread that ended and the process's EXIT at End.
func (p *PerfData) legacySide() []Side {
	out := []Side{{Kind: SideComm, Time: p.Start, Pid: p.PID, Tid: p.PID, Comm: p.Comm, Exec: true}}
	for _, m := range p.Maps {
		out = append(out, Side{Kind: SideMmap, Time: p.Start, Pid: p.PID, Tid: p.PID, Map: m})
	}
	for _, t := range p.Threads {
		out = append(out, Side{Kind: SideFork, Time: t.Start, Pid: p.PID, Tid: t.Tid, PPid: p.PID, PTid: t.Parent})
	}
	for _, t := range p.Threads {
		if t.End != 0 {
			out = append(out, Side{Kind: SideExit, Time: t.End, Pid: p.PID, Tid: t.Tid, PPid: p.PID, PTid: t.Tid})
		}
	}
	return append(out, Side{Kind: SideExit, Time: p.End, Pid: p.PID, Tid: p.PID, PPid: 1, PTid: 1})
}

// recordHeaderBuildID is PERF_RECORD_HEADER_BUILD_ID, one entry of the
// HEADER_BUILD_ID feature; miscBuildIDSize (PERF_RECORD_MISC_BUILD_ID_SIZE)
// says its size byte holds the build-id's length.
const (
	recordHeaderBuildID = 67
	miscBuildIDSize     = 1 << 15
)

// buildIDTable is the HEADER_BUILD_ID feature perf record writes at the
// end of a recording: for each file the recording maps, its build-id and
// name as the MMAP records name it, so perf buildid-list and perf report
// (--symfs, ~/.debug) find the right file. An entry is
//
//	header (type 67, misc USER|BUILD_ID_SIZE, size)
//	s32 pid (-1: the host machine's)
//	u8 build_id[20], u8 size, u8 pad[3]
//	filename, NUL-padded to 64-byte multiples
//
// A file that is gone, or has no build-id, has no entry.
func (p *PerfData) buildIDTable() []byte {
	var b buf
	seen := map[string]bool{}
	add := func(name string, id []byte) {
		if seen[name] {
			return
		}
		seen[name] = true
		if len(id) == 0 || len(id) > 20 {
			return
		}
		n := (len(name) + 1 + 63) / 64 * 64
		b.u32(recordHeaderBuildID)
		b.u16(miscUser | miscBuildIDSize)
		b.u16(uint16(36 + n))
		b.u32(0xffffffff)
		var raw [24]byte
		copy(raw[:], id)
		raw[20] = byte(len(id))
		b.Write(raw[:])
		b.WriteString(name)
		b.Write(make([]byte, n-len(name)))
	}
	for _, m := range p.Maps {
		id := m.BuildID
		if len(id) == 0 && !seen[m.Filename] {
			if f, err := os.Open(m.Filename); err == nil {
				id = ReadBuildID(f)
				f.Close()
			}
		}
		add(m.Filename, id)
	}
	for _, s := range p.Side {
		if s.Kind == SideMmap {
			add(s.Map.Filename, s.Map.BuildID)
		}
	}
	return b.Bytes()
}

// miscMmapBuildID is PERF_RECORD_MISC_MMAP_BUILD_ID: the MMAP2 record
// holds a build-id where the device and inode would be.
const miscMmapBuildID = 1 << 14

func mmapMisc(m *Map) uint16 {
	if len(m.BuildID) > 0 {
		return miscUser | miscMmapBuildID
	}
	return miscUser
}

// mmap2 is the body of a PERF_RECORD_MMAP2 (include/uapi/linux/perf_event.h):
//
//	u32 pid, tid; u64 addr, len, pgoff;
//	union { u32 maj, min; u64 ino, ino_generation;
//	        u8 build_id_size, __reserved_1; u16 __reserved_2; u8 build_id[20]; };
//	u32 prot, flags; char filename[]; sample_id
func (p *PerfData) mmap2(r *Side) []byte {
	m := &r.Map
	var mm buf
	mm.u32(r.Pid)
	mm.u32(r.Tid)
	mm.u64(m.Start)
	mm.u64(m.Len)
	mm.u64(m.Pgoff)
	if id := m.BuildID; len(id) > 0 {
		var u [24]byte
		n := copy(u[4:], id)
		u[0] = byte(n)
		mm.Write(u[:])
	} else {
		mm.u32(0) // maj
		mm.u32(0) // min
		mm.u64(0) // ino
		mm.u64(0) // ino_generation
	}
	mm.u32(m.Prot)
	mm.u32(2) // MAP_PRIVATE
	mm.str(m.Filename, 8)
	p.trailerPid(&mm, r.Time, idDummy, r.Pid, r.Tid)
	return mm.Bytes()
}

func record(out *buf, typ uint32, misc uint16, body []byte) error {
	if n := 8 + len(body); n > MaxRecordSize {
		return fmt.Errorf("PERF_RECORD_%s of %d bytes is over perf's %d-byte record limit", recordNames[typ], n, MaxRecordSize)
	}
	out.u32(typ)
	out.u16(misc)
	out.u16(uint16(8 + len(body)))
	out.Write(body)
	return nil
}

// WriteFile writes the recording to path, atomically (a temporary file
// renamed into place), so a failed run leaves nothing half-written.
func (p *PerfData) WriteFile(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = p.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// WriteTo writes the perf.data file.
func (p *PerfData) WriteTo(w io.Writer) (int64, error) {
	const hdrSize = 104
	attrs := [][]byte{p.speAttr(), p.dummyAttr()}
	ids := []uint64{idSPE, idDummy}
	names := []string{"arm_spe_0//u", "dummy:u"}
	if len(p.Samples) > 0 {
		attrs, ids, names = append(attrs, p.callchainAttr()), append(ids, idCallchain), append(names, "spe-callchain:u")
	}
	attrsOff := uint64(hdrSize)
	idsOff := attrsOff + uint64(len(attrs))*fileAttrSize
	dataOff := idsOff + uint64(len(ids))*8

	// Data section.
	var rerr error // the first record that does not fit
	record := func(out *buf, typ uint32, misc uint16, b []byte) {
		if err := record(out, typ, misc, b); err != nil && rerr == nil {
			rerr = err
		}
	}
	var d buf
	var auxIndex []uint64 // file offsets of AUXTRACE records
	var tc buf            // TIME_CONV: shift 0, mult 1, zero 0: timestamps are ns
	tc.u64(0)
	tc.u64(1)
	tc.u64(0)
	tc.u64(0)
	tc.u64(0)
	tc.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	record(&d, recTimeConv, 0, tc.Bytes())
	var ai buf
	ai.u32(auxtraceARMSPE)
	ai.u32(0)
	ai.u64(SPEType) // priv[0]: PMU type (metadata v1, what perf 6.1 reads)
	ai.u64(1)       // priv[1]: per-cpu mmaps
	record(&d, recAuxtraceInfo, 0, ai.Bytes())

	side := p.Side
	if len(side) == 0 {
		side = p.legacySide()
	}
	// ITRACE_START follows the first process's COMM and mappings.
	itrace := false
	itraceStart := func() {
		if itrace {
			return
		}
		itrace = true
		var it buf
		it.u32(p.PID)
		it.u32(p.PID)
		p.trailer(&it, p.Start, idSPE)
		record(&d, recITRACEStart, 0, it.Bytes())
	}
	var exits []Side // the EXITs of PID and Threads go after the data
	for i, r := range side {
		if i > 0 && r.Kind != SideMmap {
			itraceStart()
		}
		switch r.Kind {
		case SideComm:
			var comm buf
			comm.u32(r.Pid)
			comm.u32(r.Tid)
			comm.str(r.Comm, 8)
			p.trailerPid(&comm, r.Time, idDummy, r.Pid, r.Tid)
			misc := uint16(0)
			if r.Exec {
				misc = miscCommExec
			}
			record(&d, recCOMM, misc, comm.Bytes())
		case SideMmap:
			record(&d, recMMAP2, mmapMisc(&r.Map), p.mmap2(&r))
		case SideFork:
			record(&d, recFORK, 0, p.taskRecordPid(r.Pid, r.Tid, r.PPid, r.PTid, r.Time))
		case SideExit:
			if len(p.Side) == 0 {
				exits = append(exits, r)
				continue
			}
			record(&d, recEXIT, 0, p.taskRecordPid(r.Pid, r.Tid, r.PPid, r.PTid, r.Time))
		}
	}
	itraceStart()
	for i, s := range p.Samples {
		if len(s.Stack) > MaxCallchainFrames {
			return 0, fmt.Errorf("perf.data: callchain sample %d has %d frames: over perf's %d-byte record limit (at most %d frames fit; cap them, as simrun record's --max-stack does)",
				i, len(s.Stack), MaxRecordSize, MaxCallchainFrames)
		}
		var sb buf
		sb.u64(idCallchain) // IDENTIFIER comes first in a sample
		sb.u64(s.IP)
		tid, pid := s.Tid, s.Pid
		if tid == 0 {
			tid = p.PID
		}
		if pid == 0 {
			pid = p.PID
		}
		sb.u32(pid)
		sb.u32(tid)
		sb.u64(s.Time)
		sb.u32(0) // cpu
		sb.u32(0)
		sb.u64(uint64(len(s.Stack)) + 1)
		sb.u64(0xfffffffffffffe00) // PERF_CONTEXT_USER
		for _, pc := range s.Stack {
			sb.u64(pc)
		}
		record(&d, recSAMPLE, miscUser, sb.Bytes())
	}
	for _, c := range p.Chunks {
		var ax buf
		ax.u64(c.Offset)
		size := uint64(len(c.Data))
		ax.u64(size)
		ax.u64(c.Flags)
		p.trailer(&ax, c.Time, idSPE)
		record(&d, recAUX, 0, ax.Bytes())
	}
	for i, c := range p.Chunks {
		data := c.Data
		for len(data)%8 != 0 {
			data = append(data, 0) // PAD packets
		}
		auxIndex = append(auxIndex, dataOff+uint64(d.Len()))
		var at buf
		at.u64(uint64(len(data)))
		at.u64(c.Offset)
		at.u64(uint64(i) + 1) // reference
		at.u32(0)             // idx: the queue of cpu 0
		at.u32(0xffffffff)    // tid -1: per-cpu buffer
		at.u32(0)             // cpu
		at.u32(0)
		record(&d, recAuxtrace, 0, at.Bytes()) // header.size counts only these 48 bytes
		d.Write(data)
	}
	record(&d, recFinishRound, 0, nil)
	for _, r := range exits {
		record(&d, recEXIT, 0, p.taskRecordPid(r.Pid, r.Tid, r.PPid, r.PTid, r.Time))
	}
	record(&d, recFinishRound, 0, nil)

	if rerr != nil {
		return 0, fmt.Errorf("perf.data: %w", rerr)
	}

	// Features, in ascending bit order.
	type feat struct {
		bit  uint
		body []byte
	}
	fstr := func(s string) []byte {
		var b buf
		b.perfString(s)
		return b.Bytes()
	}
	var nr buf
	nr.u32(1)
	nr.u32(1)
	var cl buf
	cl.u32(uint32(len(p.Cmdline)))
	for _, a := range p.Cmdline {
		cl.perfString(a)
	}
	var ed buf
	ed.u32(uint32(len(attrs)))
	ed.u32(attrSize)
	for i, name := range names {
		ed.Write(attrs[i])
		ed.u32(1)
		ed.perfString(name)
		ed.u64(ids[i])
	}
	// The machine's shape, which perf c2c report and perf mem need to
	// place each sample's CPU (they refuse a file without a NUMA node
	// map): one CPU, its own core and socket, one node holding it and
	// the guest's memory.
	var ct buf
	ct.u32(1) // sibling sockets (core lists)
	ct.perfString("0")
	ct.u32(1) // sibling threads
	ct.perfString("0")
	ct.u32(0) // cpu 0: core id
	ct.u32(0) // socket id
	ct.u32(1) // sibling dies
	ct.perfString("0")
	ct.u32(0)             // cpu 0: die id
	const memKB = 4 << 20 // what the guest sees in /proc/meminfo's MemTotal
	var tm buf
	tm.u64(memKB)
	var nt buf
	nt.u32(1) // nodes
	nt.u32(0) // node 0
	nt.u64(memKB)
	nt.u64(memKB)
	nt.perfString("0")
	// Which node each physical memory block is on (perf c2c maps the
	// sampled physical addresses to nodes with it): node 0 holds the
	// 4 GiB from 0x80000000, where the SPE unit hands out frames
	// (spe.Unit.physical).
	const memBlock = 128 << 20
	var mt buf
	mt.u64(1) // version
	mt.u64(memBlock)
	mt.u64(1)  // nodes
	mt.u64(0)  // node 0
	mt.u64(48) // its bitmap's bits: blocks 0 to 47
	mt.u64(48)
	mt.u64((1<<48 - 1) &^ (1<<(0x80000000/memBlock) - 1))
	bid := p.buildIDTable()
	var pm buf
	pm.u32(3)
	pm.u32(typeSoftware)
	pm.perfString("software")
	pm.u32(SPEType)
	pm.perfString("arm_spe_0")
	pm.u32(8)
	pm.perfString("armv8_pmuv3_0")
	var ax buf
	ax.u64(uint64(len(auxIndex)))
	for _, off := range auxIndex {
		ax.u64(off)
		ax.u64(48)
	}
	hostname := p.Hostname
	if hostname == "" {
		hostname = "simrun"
	}
	arch := p.Arch
	if arch == "" {
		arch = "aarch64"
	}
	var feats []feat
	if len(bid) > 0 {
		feats = append(feats, feat{featBuildID, bid})
	}
	feats = append(feats, []feat{
		{featHostname, fstr(hostname)},
		{featOSRelease, fstr("6.1.0-simrun")},
		{featVersion, fstr("6.1.192")},
		{featArch, fstr(arch)},
		{featNRCPUs, nr.Bytes()},
		{featCPUDesc, fstr(p.CPUDesc)},
		{featCPUID, fstr(fmt.Sprintf("0x%016x", p.MIDR))},
		{featTotalMem, tm.Bytes()},
		{featCmdline, cl.Bytes()},
		{featEventDesc, ed.Bytes()},
		{featCPUTopo, ct.Bytes()},
		{featNUMATopo, nt.Bytes()},
		{featPMUMapping, pm.Bytes()},
		{featAuxtrace, ax.Bytes()},
		{featMemTopo, mt.Bytes()},
	}...)
	if len(p.Simrun) > 0 {
		feats = append(feats, feat{FeatSimrun, p.Simrun})
	}
	featOff := dataOff + uint64(d.Len())
	var sections, bodies buf
	pos := featOff + uint64(len(feats))*16
	var bitmap [4]uint64
	for _, f := range feats {
		bitmap[f.bit/64] |= 1 << (f.bit % 64)
		sections.u64(pos)
		sections.u64(uint64(len(f.body)))
		bodies.Write(f.body)
		pos += uint64(len(f.body))
	}

	var h buf
	h.u64(perfMagic)
	h.u64(hdrSize)
	h.u64(fileAttrSize)
	h.u64(attrsOff)
	h.u64(uint64(len(attrs)) * fileAttrSize)
	h.u64(dataOff)
	h.u64(uint64(d.Len()))
	h.u64(0) // event_types
	h.u64(0)
	for _, w := range bitmap {
		h.u64(w)
	}
	for i, a := range attrs {
		h.Write(a)
		h.u64(idsOff + uint64(i)*8)
		h.u64(8)
	}
	for _, id := range ids {
		h.u64(id)
	}
	var total int64
	for _, part := range [][]byte{h.Bytes(), d.Bytes(), sections.Bytes(), bodies.Bytes()} {
		n, err := w.Write(part)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// ReadAuxtrace returns the SPE data of every PERF_RECORD_AUXTRACE in a
// perf.data file, in file order.
func ReadAuxtrace(data []byte) ([][]byte, error) {
	if len(data) < 104 || binary.LittleEndian.Uint64(data) != perfMagic {
		return nil, fmt.Errorf("not a perf.data file (no PERFILE2 magic)")
	}
	off := binary.LittleEndian.Uint64(data[40:])
	size := binary.LittleEndian.Uint64(data[48:])
	if off > uint64(len(data)) || size > uint64(len(data))-off {
		return nil, fmt.Errorf("perf.data: data section 0x%x+0x%x runs past the end of the file (0x%x bytes)", off, size, len(data))
	}
	var chunks [][]byte
	for pos, end := off, off+size; pos < end; {
		if end-pos < 8 {
			return nil, fmt.Errorf("perf.data offset 0x%x: truncated record header", pos)
		}
		typ := binary.LittleEndian.Uint32(data[pos:])
		rsize := uint64(binary.LittleEndian.Uint16(data[pos+6:]))
		if rsize < 8 || rsize > end-pos {
			return nil, fmt.Errorf("perf.data offset 0x%x: record size %d out of range", pos, rsize)
		}
		next := pos + rsize
		if typ == recAuxtrace {
			if rsize < 48 {
				return nil, fmt.Errorf("perf.data offset 0x%x: short AUXTRACE record", pos)
			}
			n := binary.LittleEndian.Uint64(data[pos+8:])
			if n > end-next {
				return nil, fmt.Errorf("perf.data offset 0x%x: AUXTRACE data of 0x%x bytes runs past the data section", pos, n)
			}
			chunks = append(chunks, data[next:next+n])
			next += n
		}
		pos = next
	}
	return chunks, nil
}

// FeatSimrun is the feature bit of simrun's section in perf.data: the
// last of the 256 bits, far above the features perf defines (perf reads
// only the sections of bits below its HEADER_LAST_FEATURE).
const FeatSimrun = 255

// ReadFeature returns the contents of feature section bit of a perf.data
// file, or nil if the file does not have that feature.
func ReadFeature(data []byte, bit uint) ([]byte, error) {
	if len(data) < 104 || binary.LittleEndian.Uint64(data) != perfMagic {
		return nil, fmt.Errorf("not a perf.data file (no PERFILE2 magic)")
	}
	if bit >= 256 {
		return nil, fmt.Errorf("perf.data feature bit %d out of range", bit)
	}
	le := binary.LittleEndian
	dataOff, dataSize := le.Uint64(data[40:]), le.Uint64(data[48:])
	if dataOff > uint64(len(data)) || dataSize > uint64(len(data))-dataOff {
		return nil, fmt.Errorf("perf.data: data section 0x%x+0x%x runs past the end of the file (0x%x bytes)", dataOff, dataSize, len(data))
	}
	var bitmap [4]uint64
	for i := range bitmap {
		bitmap[i] = le.Uint64(data[72+8*i:])
	}
	if bitmap[bit/64]>>(bit%64)&1 == 0 {
		return nil, nil
	}
	idx := uint64(0) // sections are in ascending bit order
	for b := uint(0); b < bit; b++ {
		idx += bitmap[b/64] >> (b % 64) & 1
	}
	entry := dataOff + dataSize + idx*16
	if entry > uint64(len(data)) || uint64(len(data))-entry < 16 {
		return nil, fmt.Errorf("perf.data: feature table entry %d at 0x%x runs past the end of the file", idx, entry)
	}
	off, size := le.Uint64(data[entry:]), le.Uint64(data[entry+8:])
	if off > uint64(len(data)) || size > uint64(len(data))-off {
		return nil, fmt.Errorf("perf.data: feature %d section 0x%x+0x%x runs past the end of the file (0x%x bytes)", bit, off, size, len(data))
	}
	return data[off : off+size], nil
}
