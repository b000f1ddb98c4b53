// Package difftest runs a program under qemu-user and under simrun side by
// side and compares them: the register state before every instruction for
// a prefix of the run (lockstep), then stdout, exit status and the exact
// number of retired instructions.
package difftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"simrun/internal/oracle"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// Options select what is compared.
type Options struct {
	Args     []string // argv[1:]
	Lockstep int      // compare registers for this many instructions (0: none)
	FP       bool     // include SIMD&FP registers in the lockstep comparison
	CPU      string   // qemu's -cpu model (see oracle.Options.CPU)
	// Sysroot is where both look up a dynamic program's interpreter and
	// libraries (qemu's -L; simrun's linux.Config.Sysroot).
	Sysroot string
	// Dir is the working directory of both runs ("" = the current one).
	Dir string
	// SimDir, if set, is simrun's working directory instead of Dir: for
	// programs that write files, so that the two runs, which go side by
	// side, do not meet. Give both paths one length (getcwd returns it).
	SimDir string
	// Slack, if not 0, stops simrun's run Slack instructions past qemu's
	// count: a simulator bug that keeps the program running for ever
	// then ends in a mismatch instead of a hang.
	Slack uint64
}

// Result summarises a comparison.
type Result struct {
	Insns    uint64 // qemu's retired instructions
	Compared uint64 // instructions compared in lockstep
	Stdout   []byte
	Status   int
	Fault    string // simrun's fault message when the guest died of a signal
	// Adopted counts values simrun took from qemu so that the lockstep
	// comparison can go on: syscall results that are the host's (process
	// and thread ids) and getrandom bytes (see adoptRandom).
	Adopted int
}

var errLockstepDone = errors.New("lockstep part done")

// Mismatch describes the first difference found.
type Mismatch struct {
	Prog string
	Msg  string
}

func (m *Mismatch) Error() string { return m.Prog + ": " + m.Msg }

// Compare compares prog under qemu and simrun. A *Mismatch error means they
// disagree; other errors mean one of them could not run.
func Compare(ctx context.Context, prog string, opt Options) (*Result, error) {
	data, err := os.ReadFile(prog)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cfg := linux.Config{Args: append([]string{prog}, opt.Args...), Stdout: &out, Seed: 1, Sysroot: opt.Sysroot, Dir: opt.Dir}
	if opt.SimDir != "" {
		cfg.Dir = opt.SimDir
	}
	if opt.Lockstep > 0 {
		cfg.ReservedFDs = 1 // the traced qemu's log holds descriptor 3
	}
	m, err := linux.New(prog, data, cfg)
	if err != nil {
		return nil, err
	}
	d := &differ{prog: prog, m: m, fp: opt.FP}
	qopt := oracle.Options{FP: opt.FP, Args: opt.Args, CPU: opt.CPU, Sysroot: opt.Sysroot, Dir: opt.Dir}
	var res *oracle.Result
	if opt.Lockstep > 0 {
		// Single-stepped qemu is slow: stop it once the lockstep part is
		// done and count the rest with a normal run.
		res, err = oracle.Trace(ctx, prog, qopt, func(r *oracle.Record) error {
			if d.n >= uint64(opt.Lockstep) {
				return errLockstepDone
			}
			return d.step(r)
		})
		if errors.Is(err, errLockstepDone) {
			res, err = oracle.Count(ctx, prog, qopt)
		}
	} else {
		res, err = oracle.Count(ctx, prog, qopt)
	}
	if err != nil {
		if mm, ok := err.(*Mismatch); ok {
			return nil, mm
		}
		return nil, fmt.Errorf("qemu: %w", err)
	}
	if opt.Slack != 0 {
		m.MaxInsns = res.Insns + opt.Slack
	}
	// Finish simrun's run and compare the outcome.
	exit, err := m.Run()
	if err != nil {
		return nil, err
	}
	r := &Result{Insns: res.Insns, Compared: d.n, Stdout: res.Stdout, Status: res.Status, Adopted: d.adopted}
	var problems []string
	if !bytes.Equal(out.Bytes(), res.Stdout) {
		problems = append(problems, fmt.Sprintf("stdout differs:\n  qemu:   %q\n  simrun: %q", clip(res.Stdout), clip(out.Bytes())))
	}
	qs := res.Status
	if res.Signal != 0 {
		qs = 128 + res.Signal
	}
	if exit.Status != qs {
		msg := fmt.Sprintf("exit status: qemu %d, simrun %d", qs, exit.Status)
		if exit.Fault != nil {
			msg += " (" + exit.Fault.Error() + ")"
		}
		problems = append(problems, msg)
	}
	// A guest killed by a signal: qemu logged the faulting instruction too,
	// but it did not retire (a syscall that raised the signal did).
	retired := res.Insns
	if res.Signal != 0 && retired > 0 && (exit.Fault == nil || !exit.Fault.Retired) {
		retired--
	}
	// qemu's count includes each instruction whose fault raised a
	// signal the guest handled (it ran, then the handler did): so does
	// simrun's here.
	if m.Insns+m.TakenFaults != retired {
		problems = append(problems, fmt.Sprintf("retired instructions: qemu %d, simrun %d (and %d faulting)", retired, m.Insns, m.TakenFaults))
	}
	r.Insns = retired
	if exit.Fault != nil {
		r.Fault = exit.Fault.Error()
	}
	if len(problems) > 0 {
		return r, &Mismatch{Prog: prog, Msg: strings.Join(problems, "; ")}
	}
	return r, nil
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:200:200], "..."...)
	}
	return b
}

type differ struct {
	prog      string
	m         *cpu.Machine
	fp        bool
	n         uint64
	st        cpu.State
	flagsLive bool // NZCV/cc start undefined; compare once either side set them
	qf0, sf0  uint64
	prevPC    uint64
	prevText  string
	exit      *cpu.Exit
	adopt     bool   // the last instruction was a host-dependent syscall
	adoptName string // which one
	adopted   int
	random    [][2]uint64 // guest ranges getrandom filled (address, length)
}

// hostDependent are the syscalls whose results come from the host under
// qemu (process and thread ids): the differ gives simrun qemu's value.
var hostDependent = []string{"getpid", "gettid", "getppid", "set_tid_address"}

// step compares the state before qemu's record r with simrun's, then
// executes one simrun instruction.
func (d *differ) step(r *oracle.Record) error {
	m := d.m
	if m.Exited() {
		why := ""
		if d.exit != nil && d.exit.Fault != nil {
			why = ": " + d.exit.Fault.Error()
		}
		return &Mismatch{Prog: d.prog, Msg: fmt.Sprintf("simrun ended after %d instructions%s; qemu goes on at pc 0x%x", m.Insns, why, r.PC)}
	}
	if d.adopt {
		d.adopt = false
		d.adopted++
		v := r.R[m.Arch.SyscallResult]
		m.Core.SetSyscallResult(v)
		if p := linux.Of(m); p != nil && d.adoptName != "getppid" {
			p.AdoptSelfID(v) // the program now names itself by qemu's id
		}
	}
	m.Core.State(&d.st)
	if d.n == 0 {
		d.qf0, d.sf0 = uint64(r.F), d.st.Flags
	}
	if !d.flagsLive && (uint64(r.F) != d.qf0 || d.st.Flags != d.sf0) {
		d.flagsLive = true
	}
	var diffs []string
	if d.st.PC != r.PC {
		diffs = append(diffs, fmt.Sprintf("pc: qemu 0x%x simrun 0x%x", r.PC, d.st.PC))
	}
	names := m.Arch.GPRNames
	for i, v := range d.st.GPR {
		if r.R[i] != v {
			diffs = append(diffs, fmt.Sprintf("%s: qemu 0x%x simrun 0x%x", names[i], r.R[i], v))
		}
	}
	if d.flagsLive && uint64(r.F) != d.st.Flags {
		diffs = append(diffs, fmt.Sprintf("%s: qemu %d simrun %d", m.Arch.FlagsName, r.F, d.st.Flags))
	}
	if d.fp && uint64(r.FPSR) != d.st.FPSR {
		diffs = append(diffs, fmt.Sprintf("fpsr: qemu 0x%08x simrun 0x%08x", r.FPSR, d.st.FPSR))
	}
	if d.fp {
		for i, v := range d.st.Vec {
			if i < len(r.V) && r.V[i] != v {
				diffs = append(diffs, fmt.Sprintf("v%d: qemu 0x%016x%016x simrun 0x%016x%016x", i, r.V[i][0], r.V[i][1], v[0], v[1]))
			}
		}
	}
	if len(diffs) > 0 && d.adoptRandom(r) {
		return d.step(r)
	}
	if len(diffs) > 0 {
		where := "at the start"
		if d.n > 0 {
			where = fmt.Sprintf("after instruction %d at pc 0x%x (%s)", d.n-1, d.prevPC, d.prevText)
		}
		return &Mismatch{Prog: d.prog, Msg: fmt.Sprintf("state differs %s, before pc 0x%x:\n  %s", where, r.PC, strings.Join(diffs, "\n  "))}
	}
	d.prevPC, d.prevText = d.st.PC, d.disasm(d.st.PC)
	// The arguments are read before the step (the result overwrites the
	// first on s390x), the number after it: s390x's svc names it in the
	// instruction, which Core.Syscall knows only once it ran.
	_, args := m.Core.Syscall()
	calls := m.Syscalls
	exit, err := m.RunFor(1)
	if err != nil {
		return err
	}
	nr, _ := m.Core.Syscall()
	if m.Syscalls > calls && nr == m.Arch.Syscalls["getrandom"] {
		d.random = append(d.random, [2]uint64{args[0], min(args[1], 1<<16)})
	}
	if m.Syscalls > calls {
		for _, name := range hostDependent {
			if n, ok := m.Arch.Syscalls[name]; ok && n == nr {
				d.adopt, d.adoptName = true, name
			}
		}
	}
	d.exit = exit
	d.n++
	return nil
}

// adoptRandom handles the one input qemu takes from the host that reaches
// registers in ordinary programs: getrandom's bytes (glibc's malloc keys
// its tcache with them). When a general register differs and simrun's
// value is a doubleword of what its getrandom wrote, simrun takes qemu's
// value for both the memory and the register. It reports whether it
// changed anything.
func (d *differ) adoptRandom(r *oracle.Record) bool {
	m := d.m
	w, ok := m.Core.(cpu.GPRWriter)
	if !ok || len(d.random) == 0 {
		return false
	}
	changed := false
	for i, v := range d.st.GPR {
		if r.R[i] == v {
			continue
		}
		for _, rg := range d.random {
			for off := uint64(0); off+8 <= rg[1]; off++ {
				b, err := m.Mem.ReadBytes(rg[0]+off, 8)
				if err != nil || m.Arch.ByteOrder.Uint64(b) != v {
					continue
				}
				m.Arch.ByteOrder.PutUint64(b, r.R[i])
				if m.Mem.Poke(rg[0]+off, b) == nil {
					w.SetGPR(i, r.R[i])
					d.adopted++
					changed = true
				}
			}
		}
	}
	return changed
}

func (d *differ) disasm(pc uint64) string {
	a := d.m.Arch
	b, err := d.m.Mem.ReadBytes(pc, a.MaxInsnLen)
	if err != nil || a.Disasm == nil {
		return "?"
	}
	t, _ := a.Disasm(b, pc)
	return t
}
