package spe

import (
	"fmt"
	"math/rand/v2"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// PMBSR fields.
const (
	pmbsrCOLL  = 1 << 16
	pmbsrS     = 1 << 17
	pmbsrDL    = 1 << 19
	pmbsrECSh  = 26
	ecBuffer   = 0x00
	ecStage1   = 0x24
	bscFull    = 0x01
	fscXlateL3 = 0b000111 // translation fault, level 3
	fscPermL3  = 0b001111 // permission fault, level 3
	fscAlign   = 0b100001 // alignment fault
	pmblimitrE = 1
	fmDiscard  = 0b10
	pmscrE0SPE = 1 << 0
	pmscrE1SPE = 1 << 1
	pmscrCX    = 1 << 3
	pmscrPA    = 1 << 4
	pmscrTS    = 1 << 5
)

// Unit is one virtual SPE unit.
type Unit struct {
	Features Features
	Choices  Choices
	Regs     *Regs
	PMU      PMU

	// Mem is the owning translation regime: the address space the profiling
	// buffer lives in (the kernel's mapping of perf's AUX area).
	Mem *cpu.Memory
	// OnManagement is called when a management event sets PMBSR.S (the
	// profiling buffer interrupt); the driver handles it and normally
	// restarts profiling.
	OnManagement func()
	// ContextID is CONTEXTIDR_EL1 (Linux puts the pid there).
	ContextID uint32

	s        sampler
	inFlight bool
	doneAt   uint64 // completion cycle of the sample in flight
	pbt      uint64 // previous taken branch target
	pbtValid bool
	frames   map[uint64]uint64 // virtual page -> simulated physical frame
	Written  uint64            // records written to the buffer
	scratch  []byte
}

// NewUnit returns a unit with features f, its registers at reset.
func NewUnit(f Features, seed uint64) (*Unit, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	u := &Unit{Features: f, Choices: DefaultChoices(), frames: map[uint64]uint64{}}
	u.Regs = NewRegs(&u.Features)
	u.s = sampler{f: &u.Features, r: u.Regs, rng: rand.New(rand.NewPCG(seed, 0x5be))}
	return u, nil
}

// Enabled reports whether profiling is enabled at EL0: the buffer is on,
// no management event is pending and PMSCR.E0SPE is set.
func (u *Unit) Enabled() bool {
	r := u.Regs
	return r.Get(PMBLIMITR)&pmblimitrE != 0 && r.Get(PMBSR)&pmbsrS == 0 && r.Get(PMSCR)&pmscrE0SPE != 0
}

// NextSelection counts population members up to the next one the
// interval counter selects and returns how many that is (>= 1); the
// caller runs that many operations, the last of which is the selected one.
// SAMPLE_POP is counted for all of them.
func (u *Unit) NextSelection() uint64 {
	n := u.s.next()
	u.PMU.SamplePop += n
	return n
}

// CountOnly counts n population members that end a run early (the program
// exited before the next selection): SAMPLE_POP and the interval counter,
// so a later resume continues exactly.
func (u *Unit) CountOnly(n uint64) {
	u.PMU.SamplePop += n
	for ; n > 0; n-- {
		u.s.member()
	}
}

// Start begins sampling the selected operation issued at cycle issue. It
// returns false on a collision (a sample still in flight): PMBSR.COLL is
// set and the operation is not sampled.
func (u *Unit) Start(issue uint64) bool {
	if u.inFlight && issue < u.doneAt {
		u.PMU.SampleCollision++
		u.Regs.v[PMBSR] |= pmbsrCOLL
		return false
	}
	u.inFlight = true
	return true
}

// TakenBranch notes a taken branch's target for the previous-branch-target
// packet (FEAT_SPE_PBT).
func (u *Unit) TakenBranch(target uint64) { u.pbt, u.pbtValid = target, true }

// Complete finishes the sample started by Start: s carries what the core
// and the timing model know (the op, latencies, events, data source);
// done is the completion cycle and ts the timestamp. It applies the
// filters and writes the record.
func (u *Unit) Complete(s *Sample, done, ts uint64) {
	u.doneAt = done
	u.PMU.SampleFeed++
	r := u.Regs
	scr := r.Get(PMSCR)
	s.NS = true
	if s.Op.Class == cpu.ClassBranch && u.Features.PBT && u.pbtValid {
		s.PBT, s.PBTValid = u.pbt, true
	}
	if s.Op.Flags&cpu.OpConditional != 0 && !s.Taken {
		s.Events |= codes.EvNotTaken
	}
	if scr&pmscrTS != 0 {
		s.TS, s.TSValid = ts, true
	}
	if scr&pmscrCX != 0 {
		s.Context, s.CtxValid = u.ContextID, true
	}
	if scr&pmscrPA != 0 && s.Op.Access != 0 {
		s.PA, s.PAValid = u.physical(s.Op.VA), true
	}
	in := FilterInput{Events: s.Events, Flags: s.TypeFlags(), TotalLat: s.Lat[CountTot],
		IsLoad: s.Op.Class == cpu.ClassLoad || s.Op.Class == cpu.ClassLoadAtomic, DSValid: s.DSValid, DS: s.DS}
	keep := filter(&u.Features, r, &u.Choices, in, &u.PMU)
	if !keep || u.discarding() {
		return
	}
	u.scratch = Encode(u.scratch[:0], &u.Features, s)
	u.write(u.scratch)
}

// Finish ends the sample in flight when the sampled operation did not
// complete (the program ended).
func (u *Unit) Finish() { u.inFlight = false }

func (u *Unit) discarding() bool {
	switch fm := u.Regs.Get(PMBLIMITR) >> 1 & 3; {
	case fm == 0:
		return false
	case fm == fmDiscard && u.Features.Version >= V1p2:
		return true
	default: // reserved: 0b01, 0b11, and 0b10 before SPEv1p2 (Choices.ReservedFM)
		return u.Choices.ReservedFM == CURejectAll
	}
}

// physical maps a data address to a simulated physical address: frames are
// handed out in the order pages are first sampled, from 0x80000000.
func (u *Unit) physical(va uint64) uint64 {
	vpn := va >> cpu.PageShift
	pfn, ok := u.frames[vpn]
	if !ok {
		pfn = 0x80000 + uint64(len(u.frames))
		u.frames[vpn] = pfn
	}
	return pfn<<cpu.PageShift | va&cpu.PageMask
}

// limit is the first address after the buffer.
func (u *Unit) limit() uint64 { return u.Regs.Get(PMBLIMITR) &^ 0xfff }

// full is the buffer-full condition for a pointer: no room for a record of
// the maximum size below the limit (Arm ARM D17, pseudocode
// SPEBufferIsFull).
func (u *Unit) full(ptr uint64) bool {
	max := uint64(1) << u.Features.MaxSize
	return u.limit() < max || ptr > u.limit()-max
}

// write stores a record at PMBPTR byte by byte (Arm ARM D17.7, pseudocode
// SPEWriteToBuffer). Before any byte: a pointer too close to (or past)
// the limit is Choices.BadPointer's case, a misaligned one
// Choices.MisalignedPointer's. A byte whose address does not translate
// (simrun's owning regime maps only the AUX area) or is not writable stops
// profiling with a stage 1 data abort syndrome, PMBPTR left at the
// faulting byte (DebugWriteFault), DL set if part of the record was
// written. After a complete record, the buffer-full check
// (SPEBufferIsFull).
func (u *Unit) write(rec []byte) {
	r := u.Regs
	start := r.v[PMBPTR]
	if u.full(start) {
		if u.Choices.BadPointer == CURaiseEvent {
			u.PMU.SampleBufferFull++
			u.management(ecBuffer<<pmbsrECSh | pmbsrS | bscFull)
		}
		return
	}
	if start&(1<<u.Features.Align-1) != 0 {
		if u.Choices.MisalignedPointer == CURaiseEvent {
			u.management(ecStage1<<pmbsrECSh | pmbsrS | fscAlign)
		}
		return
	}
	for _, b := range rec {
		ptr := r.v[PMBPTR]
		// (ptr < limit always holds: start <= LIMIT - 2^MaxSize and no
		// record is longer than 2^MaxSize; the check keeps the SPU's
		// promise never to write at or beyond the limit regardless.)
		if ptr >= u.limit() || !u.Mem.Store8(ptr, b) {
			fsc := uint64(fscXlateL3)
			if ptr < u.limit() && !u.Mem.Fault.Unmapped {
				fsc = fscPermL3
			}
			bsr := uint64(ecStage1)<<pmbsrECSh | pmbsrS | fsc
			if ptr != start {
				bsr |= pmbsrDL // part of this record was written
			}
			u.management(bsr)
			return
		}
		r.v[PMBPTR] = ptr + 1
	}
	u.Written++
	if u.full(r.v[PMBPTR]) {
		u.PMU.SampleBufferFull++
		u.management(ecBuffer<<pmbsrECSh | pmbsrS | bscFull)
	}
}

// WriteReg writes a register as software's MSR does, reporting bits that
// are RES0 on this unit (Regs.SetChecked). A write that sets PMBSR.S
// asserts the buffer interrupt at once, as a management event would (the
// PMBIRQ level follows PMBSR.S, Arm ARM D17; pseudocode SPECycle).
func (u *Unit) WriteReg(reg Reg, v uint64) error {
	if err := u.Regs.SetChecked(reg, v); err != nil {
		return err
	}
	if reg == PMBSR && v&pmbsrS != 0 && u.OnManagement != nil {
		u.OnManagement()
	}
	return nil
}

// management records a management event (if none is pending) and raises
// the interrupt.
func (u *Unit) management(bsr uint64) {
	r := u.Regs
	if r.v[PMBSR]&pmbsrS != 0 {
		return
	}
	r.v[PMBSR] = r.v[PMBSR]&(pmbsrCOLL|pmbsrDL) | bsr
	if u.OnManagement != nil {
		u.OnManagement()
	}
}

// Syndrome describes PMBSR for messages.
func Syndrome(bsr uint64) string {
	ec := bsr >> pmbsrECSh & 0x3f
	mss := bsr & 0xffff
	switch {
	case ec == ecBuffer && mss == bscFull:
		return "buffer full"
	case ec == ecStage1 && mss&0x3f == fscAlign:
		return "stage 1 data abort on buffer write: alignment fault (FSC 0x21)"
	case ec == ecStage1:
		return fmt.Sprintf("stage 1 data abort on buffer write (FSC 0x%02x)", mss&0x3f)
	}
	return fmt.Sprintf("EC 0x%02x MSS 0x%04x", ec, mss)
}
