package cpu

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// FaultKind classifies why an instruction could not complete.
type FaultKind uint8

const (
	FaultUnmapped    FaultKind = iota + 1 // data access to an unmapped address
	FaultPermission                       // data access without permission
	FaultFetch                            // instruction fetch from unmapped or non-executable memory
	FaultUndefined                        // not a valid instruction
	FaultUnsupported                      // valid, but not implemented by simrun
	FaultAlignment                        // misaligned pc or access that must be aligned
	FaultBreakpoint                       // brk / trap instruction
	FaultSyscall                          // unsupported syscall under --strict, or a syscall that cannot proceed
	FaultInsnLimit                        // --max-insns reached
	FaultSignal                           // the guest sent itself a fatal signal
	FaultInternal                         // a simulator bug caught at run time
	FaultOutOfMemory                      // the guest needed memory past its limit (Memory.SetLimit)
	FaultBus                              // access to a page of a file mapping past the file's end
)

var faultNames = [...]string{
	FaultUnmapped:    "unmapped address",
	FaultPermission:  "permission denied",
	FaultFetch:       "bad instruction fetch",
	FaultUndefined:   "undefined instruction",
	FaultUnsupported: "unsupported instruction",
	FaultAlignment:   "alignment fault",
	FaultBreakpoint:  "breakpoint",
	FaultSyscall:     "syscall",
	FaultInsnLimit:   "instruction limit reached",
	FaultSignal:      "signal",
	FaultInternal:    "internal error",
	FaultOutOfMemory: "out of memory",
	FaultBus:         "bus error",
}

func (k FaultKind) String() string {
	if int(k) < len(faultNames) && faultNames[k] != "" {
		return faultNames[k]
	}
	return fmt.Sprintf("fault(%d)", k)
}

// Signal numbers (identical on arm64 and s390x Linux).
const (
	SIGILL  = 4
	SIGTRAP = 5
	SIGABRT = 6
	SIGBUS  = 7
	SIGFPE  = 8
	SIGKILL = 9
	SIGSEGV = 11
	SIGXCPU = 24
	SIGSYS  = 31
)

// Fault is an instruction that could not complete. It is a value: the run
// ends with it, and its Error is the one-line message users see.
type Fault struct {
	Arch   string
	PC     uint64
	Insn   []byte // the instruction bytes (as far as they could be read)
	Disasm string // disassembly, if it decodes
	Kind   FaultKind
	Addr   uint64 // data address for memory faults
	Sig    int    // for FaultSignal: the signal number; for other kinds, if set, the signal instead of the kind's usual one
	Err    error  // detail
	// Retired is set when the instruction at PC retired and the run
	// ended after it (a syscall that raised a fatal signal).
	Retired bool
}

func (f *Fault) Error() string {
	s := fmt.Sprintf("%s fault at pc 0x%x", f.Arch, f.PC)
	if len(f.Insn) > 0 {
		s += " (" + hex.EncodeToString(f.Insn)
		if f.Disasm != "" {
			s += " " + f.Disasm
		}
		s += ")"
	}
	s += ": " + f.Kind.String()
	var mf MemFault
	switch {
	case errors.As(f.Err, &mf) && (f.Kind == FaultUnmapped || f.Kind == FaultPermission || f.Kind == FaultBus):
		// The kind already says unmapped or denied: the access says the rest.
		at := " "
		if f.Kind != FaultUnmapped {
			at = " at "
		}
		s += fmt.Sprintf("%s0x%x (%s of %s)", at, mf.Addr, mf.Access, byteCount(mf.Size))
		if f.Kind == FaultBus {
			s += ", past the end of the mapped file"
		}
	case f.Err != nil:
		s += ": " + f.Err.Error()
	}
	return s
}

func (f *Fault) Unwrap() error { return f.Err }

// byteCount is "1 byte" or "N bytes".
func byteCount(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// Signal is the Linux signal that would end the process.
func (f *Fault) Signal() int {
	if f.Sig != 0 {
		return f.Sig
	}
	switch f.Kind {
	case FaultUnmapped, FaultPermission, FaultFetch:
		return SIGSEGV
	case FaultUndefined, FaultUnsupported:
		return SIGILL
	case FaultAlignment, FaultBus:
		return SIGBUS
	case FaultBreakpoint:
		return SIGTRAP
	case FaultSyscall:
		return SIGSYS
	case FaultInsnLimit:
		return SIGXCPU
	case FaultSignal:
		return f.Sig
	case FaultOutOfMemory:
		return SIGKILL // as Linux's out-of-memory killer ends a process
	}
	return SIGABRT
}

// ExitStatus is the shell's status for a process ended by the fault.
func (f *Fault) ExitStatus() int { return 128 + f.Signal() }

// MemFaultKind maps a failed data access to a fault kind.
func MemFaultKind(mf MemFault) FaultKind {
	if mf.Limit != 0 {
		return FaultOutOfMemory
	}
	if mf.PastEOF {
		return FaultBus
	}
	if mf.Access == AccessExec {
		return FaultFetch
	}
	if mf.Unmapped {
		return FaultUnmapped
	}
	return FaultPermission
}

// Fetching reports whether the fault is of fetching an instruction from
// memory that cannot be executed, before any instruction began: qemu's
// traces show no instruction for it (they do for a misaligned pc).
func (f *Fault) Fetching() bool { return f.Kind == FaultFetch }
