package arm64

import (
	"math/rand"
	"testing"

	"simrun/sim/cpu"
)

// loggedEA is the value Run logs for in (described by info) under form f
// in the current state: f.value, or dynamicEA for the forms that call it.
func (c *Core) loggedEA(f *eaForm, in *inst, info *cpu.OpInfo) uint64 {
	if f.call {
		return c.dynamicEA(in, info)
	}
	return f.value(&c.x, in)
}

// TestInlineEA: for every decoded instruction that logs a value and
// whose form the log computes inline, the inline value is dynamicEA's,
// every instruction of one op has one form (the core keeps it per op),
// and the form noEA of an op that logs nothing gives 0. Random words
// cover the load/store space; the branches with a logged stack pointer
// are added by hand (their encodings are too sparse).
func TestInlineEA(t *testing.T) {
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
	for i := 0; i < 2_000_000; i++ {
		words = append(words, rng.Uint32())
	}
	names := map[eaForm]string{
		{rn: true, immMask: ^uint64(0)}: "base+imm", {rn: true}: "base", {reg: rSP}: "sp", {call: true}: "call",
	}
	seen := map[string]int{}
	formOf := map[op]eaForm{} // the core keeps one form per op: the first one described
	for _, w := range words {
		in := decode(w, 0x400000)
		info := describe(&in)
		var c Core
		for r := range c.x[:33] {
			c.x[r] = rng.Uint64()
		}
		c.x[rZR] = 0
		c.nzcv = rng.Uint32() & 15
		if !info.LogsEA() {
			if got := c.loggedEA(&noEA, &in, &info); got != 0 {
				t.Fatalf("%#08x (op %d) logs nothing, the form noEA gives %#x", w, in.op, got)
			}
			continue
		}
		f := eaFormOf(in.op, &info)
		name, ok := names[f]
		if !ok {
			t.Fatalf("%#08x (op %d): unnamed form %+v", w, in.op, f)
		}
		seen[name]++
		if first, ok := formOf[in.op]; ok && first != f {
			t.Fatalf("%#08x (op %d): form %s, another instruction of its op had %s", w, in.op, name, names[first])
		}
		formOf[in.op] = f
		if f.call {
			continue
		}
		if got, want := c.loggedEA(&f, &in, &info), c.dynamicEA(&in, &info); got != want {
			t.Fatalf("%#08x (op %d, form %s): inline %#x, dynamicEA %#x", w, in.op, name, got, want)
		}
	}
	for _, name := range names {
		if seen[name] == 0 {
			t.Errorf("no instruction of form %s was checked", name)
		}
	}
}
