package s390x

import (
	"errors"
	"fmt"

	"simrun/sim/cpu"
)

// Program interruptions end the process with the signal Linux delivers for
// them: operation and specification exceptions SIGILL, fixed-point divide
// SIGFPE, addressing and protection SIGSEGV.

var (
	errOddPC  = errors.New("specification exception: instruction address is odd")
	errDivide = errors.New("fixed-point divide exception (SIGFPE)")
	errNoExec = errors.New("decoded op has no executor")
)

// truncatedError is an instruction cut off by the end of executable memory.
type truncatedError struct {
	have, want int
	mf         cpu.MemFault
}

func (e truncatedError) Error() string {
	return fmt.Sprintf("instruction needs %d bytes, only %d are executable (%v)", e.want, e.have, e.mf)
}

func (e truncatedError) Unwrap() error { return e.mf }

func stopFault(f *cpu.Fault) cpu.Stop { return cpu.Stop{Kind: cpu.StopFault, Fault: f} }

// accessFault is the memory's last failure as a fault (the caller sets
// its pc).
func (c *Core) accessFault() *cpu.Fault {
	mf := c.mem.Fault
	return &cpu.Fault{Kind: cpu.MemFaultKind(mf), Addr: mf.Addr, Err: mf}
}

// memFault is accessFault at pc, as a stop.
func (c *Core) memFault(pc uint64) cpu.Stop {
	f := c.accessFault()
	f.PC = pc
	return stopFault(f)
}

// oddPCFault is the specification exception of fetching at an odd
// address: Linux sends SIGILL.
func oddPCFault(pc uint64) cpu.Stop {
	return stopFault(&cpu.Fault{PC: pc, Kind: cpu.FaultAlignment, Sig: cpu.SIGILL, Err: errOddPC})
}

func divideFault(pc uint64) cpu.Stop {
	return stopFault(&cpu.Fault{PC: pc, Kind: cpu.FaultSignal, Sig: cpu.SIGFPE, Err: errDivide})
}

func specFault(pc uint64, reason int64) cpu.Stop {
	return stopFault(&cpu.Fault{PC: pc, Kind: cpu.FaultUndefined,
		Err: fmt.Errorf("specification exception: %s", specReasons[reason])})
}

func internalFault(pc uint64, in *inst) cpu.Stop {
	return stopFault(&cpu.Fault{PC: pc, Kind: cpu.FaultInternal, Err: fmt.Errorf("%w: %v", errNoExec, in.op)})
}

// undefFault tells opcodes the architecture does not define from ones
// simrun does not implement, with x/arch's tables as the judge.
func (c *Core) undefFault(pc uint64, in *inst) cpu.Stop {
	b, err := c.mem.ReadBytes(pc, int(in.ln))
	if err == nil {
		if name, ok := asmName(b); ok {
			return stopFault(&cpu.Fault{PC: pc, Kind: cpu.FaultUnsupported, Err: fmt.Errorf("simrun does not implement %s", name)})
		}
	}
	return stopFault(&cpu.Fault{PC: pc, Kind: cpu.FaultUndefined, Err: errors.New("operation exception")})
}
