package arm64

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
	b, err := m.Mem.ReadBytes(c.pc, 4)
	if err != nil {
		return 0
	}
	in := decode(binary.LittleEndian.Uint32(b), c.pc)
	info := describe(&in)
	return c.dynamicValue(&in, &info)
}

// TestLoggedValuesSelfConsistentPrograms: every value Execute logs in the
// bundled programs (stored inside the hot cases or got from dynamicValue) is
// dynamicValue's before the operation ran.
func TestLoggedValuesSelfConsistentPrograms(t *testing.T) {
	timingtest.CheckLoggedValuesSelfConsistentAll(t, "arm64", slowPathEA)
}

// TestLoggedValuesSelfConsistentRandom: the same for random instruction words, one
// step each from random registers (most load or store somewhere
// unmapped and fault: their value is logged before the access). The
// branches with a logged stack pointer are added by hand (their
// encodings are too sparse).
func TestLoggedValuesSelfConsistentRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	words := []uint32{
		0x94000010, // bl
		0xd63f0020, // blr x1
		0xd61f0040, // br x2
		0xd65f03c0, // ret
		0xa9bf7bfd, // stp x29, x30, [sp, #-16]!
		0xa8c17bfd, // ldp x29, x30, [sp], #16
		0xf9400421, // ldr x1, [x1, #8]
	}
	for len(words) < 256<<10 {
		words = append(words, rng.Uint32())
	}
	m := timingtest.TimedImage(t, elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), nil))
	c := m.Core.(*Core)
	var paths timingtest.Paths
	for i, w := range words {
		pc := uint64(0x400000 + 4*i)
		in := decode(w, pc)
		info := describe(&in)
		if !info.LogsValue() || in.op == opUndef {
			continue
		}
		for r := range c.x[:33] {
			c.x[r] = rng.Uint64()
		}
		c.x[rZR] = 0
		c.nzcv = rng.Uint32() & 15
		c.pc = pc
		want := c.dynamicValue(&in, &info)
		got := timingtest.StepValue(c.log, c.vals, want, func() { c.Execute(1) })
		require.Equal(t, want, got, "%#08x (op %v) at %#x: logged value", w, in.op, pc)
		paths.Add(loggedInCase(in.op))
	}
	paths.RequireBoth(t)
}
