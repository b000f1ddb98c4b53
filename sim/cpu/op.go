package cpu

// OpClass is the coarse kind of a retired operation, as SPE classifies it.
type OpClass uint8

const (
	ClassOther OpClass = iota
	ClassLoad
	ClassStore
	ClassLoadAtomic // read-modify-write atomics, compare-and-swap
	ClassBranch
)

func (c OpClass) String() string {
	switch c {
	case ClassLoad:
		return "load"
	case ClassStore:
		return "store"
	case ClassLoadAtomic:
		return "atomic"
	case ClassBranch:
		return "branch"
	}
	return "other"
}

// OpFlags qualify an operation.
type OpFlags uint32

const (
	OpFP          OpFlags = 1 << iota // floating-point operation or FP register transfer
	OpSIMD                            // vector (AdvSIMD / z vector facility) operation
	OpConditional                     // conditional branch, select or compare
	OpCondPassed                      // the condition held (branch taken)
	OpIndirect                        // register-indirect branch
	OpLink                            // branch with link (call)
	OpReturn                          // function return
	OpExclusive                       // load/store exclusive
	OpAcquire                         // acquire semantics
	OpRelease                         // release semantics
	OpPair                            // two registers transferred
	OpSyscall                         // supervisor call
	OpSIMDFPReg                       // load/store of SIMD&FP registers
	// OpStorageToStorage marks an operation with two storage operands (the
	// s390x mvc, xc, nc, oc, clc): Op.VA and Op.Access describe the first
	// operand, the sampled access; the second is read from another address.
	OpStorageToStorage
)

// Op is what one retired instruction was. Cores fill it on request
// (Core.NextOp, just before the instruction executes) for the sampled
// operation or for tracing, never on the hot path.
type Op struct {
	PC     uint64
	Size   uint8 // instruction length in bytes
	Class  OpClass
	Flags  OpFlags
	Access uint8  // bytes accessed by a load/store (the sampled access)
	VA     uint64 // data virtual address of a load/store
	Target uint64 // branch target (when taken or unconditional)
}
