package timingtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/cpu"
)

// LoggedAccess is one retired operation with a data access (its
// description's Access is not 0), as simrun's core logged it.
type LoggedAccess struct {
	N    uint64 // index of the operation in the run, from 0
	PC   uint64
	Addr uint64 // Retired.Addr: the address SPE samples
	Info cpu.OpInfo
	Code []byte // the instruction's bytes (up to 6; fewer at the end of a mapping)
}

// accessLogger collects the LoggedAccess of the first max operations.
type accessLogger struct {
	n, max uint64
	ops    []LoggedAccess
}

func (l *accessLogger) Want(*cpu.Batch) []int { return nil }

func (l *accessLogger) Retired(m *cpu.Machine, b *cpu.Batch, _ []int, _ []cpu.OpTiming) {
	for i := range b.Len() {
		if l.n < l.max {
			l.add(m, b.At(i))
		}
		l.n++
	}
}

func (l *accessLogger) add(m *cpu.Machine, r cpu.Retired) {
	if r.Info.Access == 0 {
		return
	}
	var code []byte
	for n := 6; n > 0 && code == nil; n-- {
		code, _ = m.Mem.ReadBytes(r.PC, n)
	}
	l.ops = append(l.ops, LoggedAccess{N: l.n, PC: r.PC, Addr: r.Addr(), Info: *r.Info, Code: append([]byte(nil), code...)})
}

// loggedAccesses runs the program at path with the timing model on and
// returns every operation with a data access among the first max, and
// the machine (stopped at the exit, its memory still readable, Insns
// the instructions it retired).
func loggedAccesses(t *testing.T, path string, args []string, max uint64) ([]LoggedAccess, *cpu.Machine) {
	t.Helper()
	m := timedProgram(t, path, args)
	l := &accessLogger{max: max}
	m.Consumers = append(m.Consumers, l)
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	return l.ops, m
}

// RegsRule gives the address SPE samples for an operation of which qemu's
// plugin sees no access (qemu 7.2 performs some instructions' accesses
// in helpers that touch the host's memory directly, without calling the
// plugin), by the instruction's architectural definition: Family names
// the operation's instruction family from its bytes ("" = no rule), Addr
// computes the address from qemu's registers just before it (rec),
// reading the guest's memory (what an EXECUTE executes) with read.
type RegsRule struct {
	Family func(op *LoggedAccess) string
	Addr   func(op *LoggedAccess, rec *oracle.Record, read func(addr uint64, n int) ([]byte, error)) (uint64, error)
}

// AddressCheck compares the addresses simrun logs with qemu's.
type AddressCheck struct {
	// Limit is the number of qemu's accesses traced per program; the
	// instructions before the limit-th are compared.
	Limit int
	// Regs checks the operations qemu's plugin shows no access of, with
	// qemu's register trace (single-stepped, slow): only among the first
	// RegsWithin instructions, and only until Quota operations of their
	// family have been checked (in ByRegs, shared by the programs).
	Regs       *RegsRule
	RegsWithin uint64
	Quota      int
	ByRegs     map[string]int
}

// AddressStats says what Check compared in one program.
type AddressStats struct {
	Checked   int            // addresses equal to qemu's first access of the instruction
	ByRegs    int            // addresses equal to the Regs rule's from qemu's registers
	Unchecked map[string]int // operations not compared, by reason
	Insns     uint64         // instructions covered
}

// CheckAll runs Check on each of bins in a subtest of its own, logs what
// each compared, and returns how many addresses equalled qemu's accesses.
func (c *AddressCheck) CheckAll(t *testing.T, bins []programs.Binary) int {
	t.Helper()
	checked := 0
	for _, b := range bins {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			st := c.Check(t, b)
			t.Logf("%d instructions: %d addresses equal to qemu's, %d to qemu's registers' (%v), not compared %v", st.Insns, st.Checked, st.ByRegs, c.ByRegs, st.Unchecked)
			checked += st.Checked
		})
	}
	return checked
}

// Check runs the bundled program b under simrun and under qemu-user with
// the memory trace plugin. For every operation with a data access, the
// address simrun logs (Retired.Addr, what SPE samples) must be the address
// of qemu's first access of the same dynamic instruction (same index in
// the run, same pc). In the bundled programs that rule holds for every
// instruction qemu shows accesses of, also where it makes several: pairs
// and multiple loads and stores (LDP, STP, LMG, STMG, a 16-byte LDR/STR
// as two 8-byte accesses: the lowest address first, although qemu's LMG
// probes its last doubleword second), AdvSIMD LD1 and LD2 structure
// loads, load/store exclusives and s390x interlocked-access and
// compare-and-swap instructions (load, then store), and s390x CLC, SRST,
// XC and EXECUTE/EXRL of CLC (the first operand comes first). The
// operations qemu shows no access of (arm64 DC ZVA; s390x MVC, XC, NC,
// OC, MVST, and EXECUTE of those) go to Regs. Check also fails when qemu
// made accesses for an instruction simrun describes as accessing no
// memory, and when the two ran a different number of instructions.
func (c *AddressCheck) Check(t *testing.T, b programs.Binary) AddressStats {
	t.Helper()
	opt := oracle.Options{Args: b.Args, CPU: b.Config.QemuCPU()}
	q, err := oracle.MemTrace(context.Background(), b.Path, opt, c.Limit)
	require.NoError(t, err)
	// the instructions whose accesses are all in q
	covered := q.Insns
	if q.Total > uint64(len(q.Accesses)) {
		covered = q.Accesses[len(q.Accesses)-1].N
	}
	ops, m := loggedAccesses(t, b.Path, b.Args, covered)
	require.Equal(t, q.Insns, m.Insns, "instructions executed by qemu and simrun")
	st := AddressStats{Unchecked: map[string]int{}, Insns: covered}
	var bad problems
	var noAccess []*LoggedAccess
	st.Checked, noAccess = compareAccesses(ops, q.Accesses, covered, &bad)
	c.checkByRegs(t, b, opt, m, noAccess, &st, bad.add)
	if len(bad) > 0 {
		t.Errorf("%s: addresses against qemu's:\n%s", b.Path, bad)
	}
	return st
}

// problems collects the first 20 differences found.
type problems []string

func (p *problems) add(format string, a ...any) {
	if len(*p) < 20 {
		*p = append(*p, fmt.Sprintf(format, a...))
	} else if len(*p) == 20 {
		*p = append(*p, "...")
	}
}

func (p problems) String() string {
	var b strings.Builder
	for _, l := range p {
		b.WriteString("\t" + l + "\n")
	}
	return b.String()
}

// compareAccesses compares simrun's operations with a data access (ops,
// in order) with qemu's accesses q of the instructions before covered:
// each operation's logged address must be the address of qemu's first
// access of the same instruction (index and pc), and qemu must make no
// access for an instruction that is not among ops. It returns how many
// addresses were equal and the operations qemu made no access of, and
// adds every difference to bad.
func compareAccesses(ops []LoggedAccess, q []oracle.MemAccess, covered uint64, bad *problems) (checked int, noAccess []*LoggedAccess) {
	byN := map[uint64][]oracle.MemAccess{}
	for _, a := range q {
		if a.N < covered {
			byN[a.N] = append(byN[a.N], a)
		}
	}
	for i := range ops {
		op := &ops[i]
		qa := byN[op.N]
		delete(byN, op.N)
		switch {
		case len(qa) == 0:
			noAccess = append(noAccess, op)
		case qa[0].PC != op.PC:
			bad.add("instruction %d: simrun at %#x, qemu at %#x", op.N, op.PC, qa[0].PC)
		case op.Addr != qa[0].Addr:
			bad.add("instruction %d at %#x (% x, %d-byte access): simrun logs %#x, qemu accessed %s", op.N, op.PC, op.Code, op.Info.Access, op.Addr, fmtAccesses(qa))
		default:
			checked++
		}
	}
	var rest []uint64
	for n := range byN {
		rest = append(rest, n)
	}
	slices.Sort(rest)
	for _, n := range rest {
		bad.add("instruction %d at %#x: qemu accessed %s, simrun describes no access", n, byN[n][0].PC, fmtAccesses(byN[n]))
	}
	return checked, noAccess
}

// errEnough stops a register trace early.
var errEnough = errors.New("enough")

// checkByRegs checks the operations qemu's plugin saw no access of with
// c.Regs, within c.RegsWithin instructions and the families' quota.
func (c *AddressCheck) checkByRegs(t *testing.T, b programs.Binary, opt oracle.Options, m *cpu.Machine, ops []*LoggedAccess, st *AddressStats, report func(string, ...any)) {
	t.Helper()
	if c.ByRegs == nil {
		c.ByRegs = map[string]int{}
	}
	var want []*LoggedAccess
	planned := map[string]int{}
	for _, op := range ops {
		family := ""
		if c.Regs != nil {
			family = c.Regs.Family(op)
		}
		switch {
		case family == "":
			st.Unchecked["qemu shows no access; no register rule"]++
			report("instruction %d at %#x (% x): qemu shows no access and there is no register rule", op.N, op.PC, op.Code)
		case op.N >= c.RegsWithin || c.ByRegs[family]+planned[family] >= c.Quota:
			st.Unchecked["qemu shows no access; beyond the register check"]++
		default:
			planned[family]++
			want = append(want, op)
		}
	}
	if len(want) == 0 {
		return
	}
	read := func(addr uint64, n int) ([]byte, error) { return m.Mem.ReadBytes(addr, n) }
	k := 0
	opt.Max = int(want[len(want)-1].N) + 1
	_, err := oracle.Trace(context.Background(), b.Path, opt, func(r *oracle.Record) error {
		for ; k < len(want) && want[k].N == r.N; k++ {
			op := want[k]
			if r.PC != op.PC {
				report("instruction %d: simrun at %#x, qemu's trace at %#x", op.N, op.PC, r.PC)
				continue
			}
			family := c.Regs.Family(op)
			addr, err := c.Regs.Addr(op, r, read)
			if err != nil {
				report("instruction %d at %#x (% x, %s): %v", op.N, op.PC, op.Code, family, err)
				continue
			}
			if addr != op.Addr {
				report("instruction %d at %#x (% x, %s): simrun logs %#x, qemu's registers give %#x", op.N, op.PC, op.Code, family, op.Addr, addr)
				continue
			}
			c.ByRegs[family]++
			st.ByRegs++
		}
		if k == len(want) {
			return errEnough
		}
		return nil
	})
	if err != errEnough {
		require.NoError(t, err)
		require.Equal(t, len(want), k, "operations seen in qemu's register trace")
	}
}

func fmtAccesses(q []oracle.MemAccess) string {
	s := ""
	for i, a := range q {
		if i > 0 {
			s += ", "
		}
		if i == 4 && len(q) > 5 {
			return s + fmt.Sprintf("... (%d in all)", len(q))
		}
		kind := "load"
		if a.Store {
			kind = "store"
		}
		s += fmt.Sprintf("%s %d@%#x", kind, a.Size, a.Addr)
	}
	return s
}
