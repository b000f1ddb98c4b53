// Package difftest runs a program under qemu-user and under simrun side by
// side and compares them: the register state before every instruction for
// a prefix of the run (lockstep), then stdout, exit status and the exact
// number of retired instructions.
package difftest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"simrun/sim/cpu"
	"simrun/sim/oracle"
)

// Options select what is compared.
type Options struct {
	Args     []string // argv[1:]
	Lockstep int      // compare registers for this many instructions (0: none)
	FP       bool     // include SIMD&FP registers in the lockstep comparison
}

// Result summarises a comparison.
type Result struct {
	Insns    uint64 // qemu's retired instructions
	Compared uint64 // instructions compared in lockstep
	Stdout   []byte
	Status   int
	Fault    string // simrun's fault message when the guest died of a signal
}

// Mismatch describes the first difference found.
type Mismatch struct {
	Prog string
	Msg  string
}

func (m *Mismatch) Error() string { return m.Prog + ": " + m.Msg }

// Run compares prog under qemu and simrun. A *Mismatch error means they
// disagree; other errors mean one of them could not run.
func Run(ctx context.Context, prog string, opt Options) (*Result, error) {
	data, err := os.ReadFile(prog)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	m, err := cpu.New(prog, data, cpu.Config{Args: append([]string{prog}, opt.Args...), Stdout: &out, Seed: 1})
	if err != nil {
		return nil, err
	}
	d := &differ{prog: prog, m: m, fp: opt.FP}
	qopt := oracle.Options{FP: opt.FP, Args: opt.Args}
	var res *oracle.Result
	if opt.Lockstep > 0 {
		qopt.Max = opt.Lockstep
		res, err = oracle.Trace(ctx, prog, qopt, d.step)
	} else {
		res, err = oracle.Count(ctx, prog, qopt)
	}
	if err != nil {
		if mm, ok := err.(*Mismatch); ok {
			return nil, mm
		}
		return nil, fmt.Errorf("qemu: %w", err)
	}
	// Finish simrun's run and compare the outcome.
	exit, err := m.Run()
	if err != nil {
		return nil, err
	}
	r := &Result{Insns: res.Insns, Compared: d.n, Stdout: res.Stdout, Status: res.Status}
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
	// but it did not retire.
	retired := res.Insns
	if res.Signal != 0 && retired > 0 {
		retired--
	}
	if m.Insns != retired {
		problems = append(problems, fmt.Sprintf("retired instructions: qemu %d, simrun %d", retired, m.Insns))
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
}

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
	if d.fp {
		for i, v := range d.st.Vec {
			if i < len(r.V) && r.V[i] != v {
				diffs = append(diffs, fmt.Sprintf("v%d: qemu 0x%016x%016x simrun 0x%016x%016x", i, r.V[i][0], r.V[i][1], v[0], v[1]))
			}
		}
	}
	if len(diffs) > 0 {
		where := "at the start"
		if d.n > 0 {
			where = fmt.Sprintf("after instruction %d at pc 0x%x (%s)", d.n-1, d.prevPC, d.prevText)
		}
		return &Mismatch{Prog: d.prog, Msg: fmt.Sprintf("state differs %s, before pc 0x%x:\n  %s", where, r.PC, strings.Join(diffs, "\n  "))}
	}
	d.prevPC, d.prevText = d.st.PC, d.disasm(d.st.PC)
	exit, err := m.RunFor(1)
	if err != nil {
		return err
	}
	d.exit = exit
	d.n++
	return nil
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
