package s390x

import (
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/internal/timingtest"
	"simrun/sim/cpu"
)

// Self-consistency tests of the logged values: the core logs them on a
// fast path (inside the hot executor cases) or a slow one (dynamicValue), and
// these tests check the fast path against the slow one. They are not an
// oracle for the addresses: TestAddressesAgainstQemu (qemuea_test.go)
// compares those with the ones qemu-user computes.

// slowPathEA is the value the log must hold for the operation at the
// stopped machine's pc: dynamicValue of its freshly decoded instruction.
func slowPathEA(m *cpu.Machine) uint64 {
	c := m.Core.(*Core)
	for n := 6; n > 0; n -= 2 {
		if b, err := m.Mem.ReadBytes(c.pc, n); err == nil {
			in := decode(b)
			info := describe(&in)
			return c.dynamicValue(&in, &info, c.pc)
		}
	}
	return 0
}

// TestLoggedValuesSelfConsistentPrograms: every value Execute logs in the
// bundled programs (stored inside the hot cases or got from dynamicValue) is
// dynamicValue's before the operation ran.
func TestLoggedValuesSelfConsistentPrograms(t *testing.T) {
	timingtest.CheckLoggedValuesSelfConsistentAll(t, "s390x", slowPathEA)
}

// TestLoggedValuesSelfConsistentRandom: the same for random instructions, one step
// each from random registers (most load or store somewhere unmapped and
// fault: their value is logged before the access). ex and exrl log their
// target's value, which the slow path here does not model; they are left out.
func TestLoggedValuesSelfConsistentRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	code := make([]byte, 6<<16)
	rng.Read(code)
	m := timingtest.TimedImage(t, elftest.Code(elf.EM_S390, binary.BigEndian, code, nil))
	c := m.Core.(*Core)
	var paths timingtest.Paths
	for off := 0; off+6 <= len(code); off += 6 {
		pc := uint64(0x400000 + off)
		in := decode(code[off : off+6])
		info := describe(&in)
		if !info.LogsValue() || in.op == opUndef || in.op == opEX || in.op == opEXRL {
			continue
		}
		for r := range c.r[:16] {
			c.r[r] = rng.Uint64()
		}
		c.cc = uint8(rng.Intn(4))
		c.pc = pc
		want := c.dynamicValue(&in, &info, pc)
		got := timingtest.StepValue(c.log, c.vals, want, func() { c.Execute(1) })
		require.Equal(t, want, got, "% x (op %d) at %#x: logged value", code[off:off+int(in.ln)], in.op, pc)
		paths.Add(loggedInCase(in.op))
	}
	paths.RequireBoth(t)
}
