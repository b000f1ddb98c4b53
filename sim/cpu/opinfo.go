package cpu

import "unsafe"

// The description of retired operations that the cores fill and the
// timing model (sim/timing) reads: per decoded instruction an OpInfo,
// made once; per retired operation a Retired record, made from the
// Batch the core logs. Branch outcomes follow from consecutive pcs.

// Unit is an execution resource class.
type Unit uint8

const (
	UnitALU Unit = iota
	UnitMul
	UnitDiv
	UnitFP
	UnitFPDiv
	UnitSIMD
	UnitLoad
	UnitStore
	UnitAtomic
	UnitBranch
	UnitSys
	// NumUnits bounds the units: a power of two, so Unit&(NumUnits-1)
	// indexes a table of NumUnits without a bounds check.
	NumUnits = 16
)

// Register ids in OpInfo: general registers 0-31, flags 32, vector/FP
// registers 64-95. Unused source slots hold RegNone (always ready), unused
// destination slots RegSink (written, never read), so the model needs no
// loops.
const (
	RegFlags = 32
	RegVec   = 64
	RegNone  = 0xff
	RegSink  = 0xfe
)

// NewOpInfo returns an empty description (no registers) of an
// instruction of size bytes.
func NewOpInfo(size uint8) OpInfo {
	return OpInfo{Valid: true, Size: size, Src: 0xffffffff, Dst: RegSink * 0x010101}
}

// OpInfo is the static description of a decoded instruction.
//
// Registers are packed one id per byte so the model reads them with one
// load: Src holds four sources (RegNone where unused), Dst three
// destinations in bytes 0-2 (RegSink where unused).
type OpInfo struct {
	Src    uint32
	Dst    uint32
	Unit   Unit
	Class  OpClass
	Valid  bool
	Size   uint8 // instruction bytes
	Access uint8 // bytes accessed by a load/store
	NSrc   uint8
	NDst   uint8
	// Varies marks a description that is not the only one of its address
	// (an s390x EXECUTE's target): a summarised run ends with it, so
	// the check of its last description covers it.
	Varies bool
	Flags  OpFlags
	// CoreOp is the core's own: a core that marks an instruction's slot
	// for logging (its logged value computed before it runs) keeps the
	// instruction's operation code here.
	CoreOp uint16
	// Summary is the timing model's (sim/timing): its summary of the
	// straight-line run that starts here, once made. An unsafe.Pointer so
	// that this package need not know the model's type and the field stays
	// one word (the cores keep an OpInfo per instruction slot).
	Summary unsafe.Pointer
}

// AddSrc and AddDst record register dependencies (RegNone and registers
// beyond capacity are ignored).
func (o *OpInfo) AddSrc(r uint8) {
	if r != RegNone && o.NSrc < 4 {
		sh := 8 * uint(o.NSrc)
		o.Src = o.Src&^(0xff<<sh) | uint32(r)<<sh
		o.NSrc++
	}
}

func (o *OpInfo) AddDst(r uint8) {
	if r != RegNone && o.NDst < 3 {
		sh := 8 * uint(o.NDst)
		o.Dst = o.Dst&^(0xff<<sh) | uint32(r)<<sh
		o.NDst++
	}
}

// Logged is what the value a core logs for an operation (Batch.Vals)
// means, by the operation's description (OpInfo.Logged).
type Logged uint8

const (
	LogsNothing Logged = iota // no value
	LogsAddr                  // a load's or store's data address (Retired.Addr)
	LogsCond                  // a conditional non-branch operation: 1 if its condition held (Retired.CondPassed)
	LogsSP                    // a call or indirect branch: the stack pointer before it (Retired.SP)
)

// Logged is what the value logged for an operation so described means.
// A branch logs the stack pointer whatever else it is; an access its
// address, conditional or not.
func (o *OpInfo) Logged() Logged {
	switch {
	case o.Class == ClassBranch:
		if o.Flags&(OpLink|OpIndirect) != 0 {
			return LogsSP
		}
	case o.Access != 0:
		return LogsAddr
	case o.Flags&OpConditional != 0:
		return LogsCond
	}
	return LogsNothing
}

// LogsValue reports whether the log entry of an operation so described
// carries a value (Logged is not LogsNothing): loads and stores,
// conditional non-branch operations, calls and indirect branches.
func (o *OpInfo) LogsValue() bool { return o.Logged() != LogsNothing }

// SrcReg and DstReg return register i.
func (o *OpInfo) SrcReg(i int) uint8 { return uint8(o.Src >> (8 * i)) }
func (o *OpInfo) DstReg(i int) uint8 { return uint8(o.Dst >> (8 * i)) }

// Slots is the Infos entries (Run.Infos) an operation so described spans
// when there is one entry per 1<<shift bytes (at least 1: a walk always
// moves on).
func (o *OpInfo) Slots(shift uint) int { return max(int(o.Size)>>shift, 1) }

// Retired is one retired operation (Batch.At, Batch.Ops).
type Retired struct {
	Info *OpInfo
	PC   uint64
	// val is the value the core logged (0 if Info logs none): one word
	// that means what Info.Logged says, read through Addr, CondPassed
	// or SP, which give it only where it has that meaning.
	val uint64
}

// NewRetired is the record of an operation described by in at pc whose
// logged value is val (for tests and tools: BatchOf).
func NewRetired(in *OpInfo, pc, val uint64) Retired {
	return Retired{Info: in, PC: pc, val: val}
}

// Addr is the data address of a load or store (of a storage-to-storage
// operation, its first operand's), else 0.
func (r *Retired) Addr() uint64 {
	if r.Info.Logged() == LogsAddr {
		return r.val
	}
	return 0
}

// CondPassed reports whether the condition of a conditional non-branch
// operation held (false for other operations).
func (r *Retired) CondPassed() bool {
	return r.Info.Logged() == LogsCond && r.val != 0
}

// SP is the stack pointer before a call or indirect branch (the shadow
// call stack sees non-local exits by it), else 0.
func (r *Retired) SP() uint64 {
	if r.Info.Logged() == LogsSP {
		return r.val
	}
	return 0
}

// Value is the logged value whatever it means: for checks of the log
// itself, which compare it with a core's other way of computing it.
func (r *Retired) Value() uint64 { return r.val }

// OpTiming is what the timing model says about one operation: what a
// RetireConsumer gets for the operations it wants in detail.
type OpTiming struct {
	Dispatch, Issue, Complete uint64 // cycles
	XlatLat                   uint32
	Events                    uint64
	DS                        uint8
	DSValid                   bool
	Taken                     bool // branch taken (or condition passed)
	Next                      uint64
}
