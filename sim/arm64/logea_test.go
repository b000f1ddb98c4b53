package arm64

import (
	"math/rand"
	"testing"
)

// TestInlineEA: for every decoded instruction that logs a value and
// whose kind the log computes inline, the inline value is dynamicEA's,
// and every instruction of one op has one kind (the core keeps it per op).
// Random words cover the load/store space; the branches with a logged
// stack pointer are added by hand (their encodings are too sparse).
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
	kinds := map[eaKind]int{}
	kindOf := map[op]eaKind{} // the core keeps one kind per op: the first one described
	for _, w := range words {
		in := decode(w, 0x400000)
		info := describe(&in)
		if !info.LogsEA() {
			continue
		}
		k := eaKindOf(in.op, &info)
		kinds[k]++
		if first, ok := kindOf[in.op]; ok && first != k {
			t.Fatalf("%#08x (op %d): kind %d, another instruction of its op had %d", w, in.op, k, first)
		}
		kindOf[in.op] = k
		if k == eaCall {
			continue
		}
		var c Core
		for r := range c.x[:33] {
			c.x[r] = rng.Uint64()
		}
		c.nzcv = rng.Uint32() & 15
		if got, want := c.inlineEA(k, &in), c.dynamicEA(&in, &info); got != want {
			t.Fatalf("%#08x (op %d, kind %d): inline %#x, dynamicEA %#x", w, in.op, k, got, want)
		}
	}
	for _, k := range []eaKind{eaBaseImm, eaBase, eaSP, eaCall} {
		if kinds[k] == 0 {
			t.Errorf("no instruction of kind %d was checked", k)
		}
	}
}
